"""The transport: the WebSocket endpoint's session, the sans-I/O inbound limits, one handler per
command, the HTTP routes, the live lobby, the connection registry and the process's background
loops; the server's own uvicorn protocols.

May import everything below it: ``server.service``, ``server.fanout``, ``server.storage``,
``server.boundary``, ``server.strategy``, ``server.domain``, ``server.ops``, ``server.settings``.
"""

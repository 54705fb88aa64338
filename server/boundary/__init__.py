"""The one protocol <-> domain boundary: engine commands from protocol messages, protocol events
and views from domain states, error codes; each event encoded once for every connection.

May import: ``server.strategy``, ``server.domain``, ``server.game``, ``server.solver``,
``protocol``, ``server.ops``.
"""

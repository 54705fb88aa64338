"""The service: the only place that orders side effects and draws dice. Commands on a room
(cached record -> apply -> one store call), seat commands, timers, absent players, computers'
moves, leases.

May import: ``server.fanout``, ``server.storage``, ``server.boundary``, ``server.strategy``,
``server.domain``, ``server.game``, ``server.ops``, ``server.settings``.
"""

"""Fan-out: per-process subscriptions over sharded pub/sub, one room's ordered gap-free delivery
to this process's connections, the pub/sub connection per node.

May import: ``server.storage``, ``server.boundary``, ``server.domain``, ``server.ops``, ``redis``.
"""

"""Storage: the narrow interface the service needs (``interface``) and its Redis / Redis Cluster
implementation (``redis_store``, the Lua scripts, the pipelined script calls, replica waits).
Every fault of the storage leaves this package as one retryable error
(``interface.StorageUnavailableError``).

May import: ``server.boundary`` (events already encoded), ``server.domain``, ``server.ops``,
``redis``.
"""

"""redis-py's asyncio ``RedisCluster``, kept from failing healthy masters' commands during a
failover.

When a command meets a dead node, redis-py marks its slot map stale, and the next command, for
whatever slot, first reloads it (``RedisCluster.initialize``): ``CLUSTER SLOTS`` from any
reachable node, then ``COMMAND`` (the command table) from the *default node*. That default is
the first master in its node list, which during the failover window is often the dead master
itself (it is still listed until its replica is promoted). The ``COMMAND`` call then fails,
and redis-py closes the connections to every node and raises the dead node's error out of the
unrelated command, before its retry loop: a roll for a room on a healthy master was refused
with "Error 111 connecting to <the dead master>" (seen in about one failover run in four).

The command table does not change while the cluster runs, so it is fetched once; later
reloads only point the parser at the new default node (used for ``COMMAND GETKEYS``).
"""

from __future__ import annotations

from typing import Any, Final

from redis._parsers.commands import AsyncCommandsParser
from redis.asyncio.cluster import ClusterNode, RedisCluster

__all__ = ["cluster_client"]

#: PRIVATE API: this module relies on internals of redis-py's Cluster client (its command-table
#: parser), checked against these versions; tests/test_private_api.py fails when an installed
#: version differs: re-read this module against the new version, then update the pin.
PRIVATE_API: Final = {"redis": "8.1.0"}


class _CommandTableOnce(AsyncCommandsParser):
    async def initialize(self, node: ClusterNode | None = None) -> None:
        if node is not None:
            self.node = node
        if not self.commands:
            await super().initialize(node)


def cluster_client(url: str, **kwargs: Any) -> RedisCluster:
    """``RedisCluster.from_url(url, **kwargs)`` that fetches the command table only once."""
    client = RedisCluster.from_url(url, **kwargs)
    client.commands_parser = _CommandTableOnce()
    return client

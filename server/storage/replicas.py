"""A script, then ``WAIT`` for replicas, on ONE connection to the node that owns the keys.

``WAIT n timeout`` blocks until ``n`` replicas acknowledged every write made *by the connection
it runs on*: it has to follow the script on the same connection, or it says nothing about the
script's writes. :meth:`ReplicaWait.eval` sends both in one round trip (a pipeline of two
commands on one connection), so the wait costs no extra round trip of its own, only the time
the replica takes to acknowledge.

On a single Redis that is a plain two-command pipeline. On a Cluster it is the node that owns
the first key's slot: the pair goes through that node's own pipeline (one connection of its
pool), because the cluster client's pipeline, when a node fails, closes the connections to
every node and so fails commands for healthy masters too. A node that does not answer makes the
slot map stale: it is refreshed (at most every ``REFRESH_SECONDS``) and the error is raised as
usual (``unavailable``); a ``MOVED`` reply (the slot has a new master) refreshes it and the
pair is sent once more.

How many replicas to wait for: ``required`` when set; else, on a Cluster, 1 when the slot's
master has a replica in the slot map (refreshed when a wait falls short, so a replica that
died and was forgotten by the cluster is no longer waited for) and 0 otherwise; on a single
Redis 0 (no wait at all).
"""

from __future__ import annotations

import logging
import time
from typing import Any, Final

import redis.exceptions
from redis.asyncio.cluster import PipelineCommand, RedisCluster

__all__ = ["ReplicaWait"]

#: PRIVATE API: this module relies on internals of redis-py's Cluster client (its nodes manager and
#: slot cache), checked against these versions; tests/test_private_api.py fails when an installed
#: version differs: re-read this module against the new version, then update the pin.
PRIVATE_API: Final = {"redis": "8.1.0"}

log = logging.getLogger("yahtzee.store")

REFRESH_SECONDS = 0.5


class ReplicaWait:
    """Runs scripts followed by ``WAIT`` on the connection that ran them."""

    def __init__(self, client: Any, required: int | None, timeout_seconds: float) -> None:
        self.client = client
        self.cluster = isinstance(client, RedisCluster)
        self.required = required
        self.timeout_ms = max(1, round(timeout_seconds * 1000))
        self._refreshed_at = 0.0

    @property
    def enabled(self) -> bool:
        """Whether any write may have to wait (else callers use their plain path)."""
        return self.required != 0 and (self.cluster or bool(self.required))

    def replicas_for(self, key: str) -> int:
        """How many replicas a write to ``key`` waits for."""
        if self.required is not None:
            return self.required
        if not self.cluster:
            return 0
        nodes = self.client.nodes_manager.slots_cache.get(self.client.keyslot(key)) or []
        return 1 if len(nodes) > 1 else 0

    async def eval(
        self, script: Any, keys: list[str], args: list[Any], wanted: int
    ) -> tuple[Any, int]:
        """Run ``script`` (a registered script), then ``WAIT`` for ``wanted`` (> 0) replicas;
        returns the script's reply and how many replicas confirmed it."""
        for attempt in range(3):
            commands: list[tuple[Any, ...]] = [
                ("EVALSHA", script.sha, len(keys), *keys, *args),
                ("WAIT", wanted, self.timeout_ms),
            ]
            replies = await self._send(keys[0], commands)
            reply = replies[0]
            if attempt < 2 and isinstance(reply, redis.exceptions.NoScriptError):
                await self.client.script_load(script.script)  # a Cluster: on every master
                continue
            moved = redis.exceptions.MovedError | redis.exceptions.AskError
            if attempt < 2 and isinstance(reply, moved):
                await self.refresh(force=True)
                continue
            for value in replies:
                if isinstance(value, Exception):
                    raise value
            confirmed = int(replies[1])
            if confirmed < wanted:
                await self.refresh()  # a replica that is gone for good drops out of the map
            return reply, confirmed
        raise redis.exceptions.TryAgainError("the slot kept moving")  # pragma: no cover

    async def _send(self, key: str, commands: list[tuple[Any, ...]]) -> list[Any]:
        if not self.cluster:
            pipe = self.client.pipeline(transaction=False)
            for command in commands:
                pipe.execute_command(*command)
            replies: list[Any] = await pipe.execute(raise_on_error=False)
            return replies
        node = self.client.get_node_from_key(key)  # SlotNotCoveredError: transient
        queued = [PipelineCommand(i, *command) for i, command in enumerate(commands)]
        try:
            await node.execute_pipeline(queued)
        except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError):
            # Like the cluster client: fresh connections next time, and a fresh slot map.
            node.update_active_connections_for_reconnect()
            await node.disconnect_free_connections()
            self.client.nodes_manager.move_node_to_end_of_cached_nodes(node.name)
            await self.refresh()
            raise
        results = [command.result for command in queued]
        if any(
            isinstance(r, redis.exceptions.ConnectionError | redis.exceptions.TimeoutError)
            for r in results
        ):
            await self.refresh()
        return results

    async def refresh(self, *, force: bool = False) -> None:
        """Reload the Cluster's slot map (at most every ``REFRESH_SECONDS`` unless forced); a
        failure is left for the next call to meet."""
        if not self.cluster:
            return
        now = time.monotonic()
        if not force and now - self._refreshed_at < REFRESH_SECONDS:
            return
        self._refreshed_at = now
        try:
            await self.client.nodes_manager.initialize()
        except (redis.exceptions.RedisError, OSError) as exc:
            log.warning("cluster slot map not refreshed: %s", exc)

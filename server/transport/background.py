"""The process's background loops: deadlines and expired leases, lease renewal, spectator
counts. Each loop survives Redis errors (it logs, counts and tries again next period)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

import redis.exceptions

from protocol.transport import CloseCode
from server.fanout.feed import raise_if_cancelling
from server.ops.collector import CHECK_SECONDS, PacedCollector
from server.ops.memory import release_free_memory, trim_available
from server.service.outcomes import UnavailableError
from server.transport.runtime import Runtime

__all__ = ["collector_loop", "start_loops"]

log = logging.getLogger("yahtzee.background")

SPECTATOR_COUNT_SECONDS = 1.0


async def _every(
    rt: Runtime, name: str, seconds: float, job: Callable[[], Awaitable[None]]
) -> None:
    while True:
        try:
            await job()
        except (redis.exceptions.RedisError, OSError, UnavailableError) as exc:
            # (UnavailableError: a room's transition met a failing Redis node)
            raise_if_cancelling()
            rt.metrics.redis_errors.labels(name).inc()
            log.warning("%s: %s", name, exc)
        except Exception:
            raise_if_cancelling()
            log.exception("%s failed", name)
        await asyncio.sleep(seconds)


async def _timers(rt: Runtime) -> None:
    await rt.upkeep.fire_due_timers()
    await rt.upkeep.sweep_player_leases()


async def _renew(rt: Runtime) -> None:
    """Renew this process's player and spectator leases. A player whose seat another
    connection holds by now (a lost kick) is closed (1000)."""
    spectators: dict[str, list[str]] = {}
    players: list[tuple[str, str, str]] = []
    for connection in list(rt.connections.values()):
        room_id, player = connection.room, connection.player
        if room_id is None:
            continue
        if player is None:
            spectators.setdefault(room_id, []).append(connection.conn_id)
            continue
        cached = rt.service.cached(room_id)
        owner = cached.record.owners.get(player) if cached is not None else None
        if owner is not None and owner != connection.conn_id:
            connection.close(CloseCode.NORMAL)
            continue
        players.append((room_id, player, connection.conn_id))
    # every player lease in one round trip: at tens of thousands of connections, one round
    # trip each was most of an idle process's work
    await rt.upkeep.renew_leases(players, rt.player_lease_ms)
    await rt.upkeep.renew_spectators(spectators, rt.spectator_lease_ms)


def start_loops(rt: Runtime) -> list[asyncio.Task[None]]:
    """Start the loops; the caller cancels the tasks at shutdown."""
    renew_every = rt.player_lease_ms / 3000
    return [
        asyncio.create_task(
            _every(rt, "timer", rt.settings.timer_poll_seconds, lambda: _timers(rt)), name="timers"
        ),
        asyncio.create_task(_every(rt, "leases", renew_every, lambda: _renew(rt)), name="leases"),
        asyncio.create_task(
            _every(rt, "spectators", SPECTATOR_COUNT_SECONDS, rt.upkeep.flush_spectator_counts),
            name="spectator-counts",
        ),
        *_webhook_loop(rt),
        *_heap_trim_loop(rt),
        asyncio.create_task(
            _every(rt, "quickplay", rt.settings.quick_play_poll_seconds, rt.quickplay.tick),
            name="quick-play",
        ),
    ]


def _heap_trim_loop(rt: Runtime) -> list[asyncio.Task[None]]:
    """Give the C heap's free pages back every ``malloc_trim_seconds`` (on glibc): without it,
    what a burst freed below the heap's top stays resident for the process's life
    (:mod:`server.ops.memory`). A trim takes about 0.2 ms here."""
    seconds = rt.settings.malloc_trim_seconds
    if not seconds or not trim_available():
        return []

    async def trim() -> None:
        rt.metrics.heap_trim_seconds.inc(release_free_memory())

    return [asyncio.create_task(_every(rt, "heap-trim", seconds, trim), name="heap-trim")]


def collector_loop(rt: Runtime, collector: PacedCollector) -> asyncio.Task[None]:
    """Ask the garbage collector every second whether a collection is due
    (:mod:`server.ops.collector`): a count read, nothing more, until one is."""

    async def tick() -> None:
        if collector.tick():
            # the loop stopped for it: a latency spike at this moment has its cause here
            log.info(
                "garbage collection (%s): %d objects freed in %.0f ms, %d alive",
                "full" if collector.last_full else "new objects",
                collector.last_collected,
                collector.last_seconds * 1000,
                collector.alive_after_last,
            )

    return asyncio.create_task(_every(rt, "collector", CHECK_SECONDS, tick), name="collector")


def _webhook_loop(rt: Runtime) -> list[asyncio.Task[None]]:
    """The reminder webhook's sender, when one is configured."""
    sender = rt.webhooks
    if sender is None:
        return []

    async def send() -> None:
        await sender.send_due()

    seconds = rt.settings.webhook_poll_seconds
    return [asyncio.create_task(_every(rt, "webhook", seconds, send), name="webhook")]

"""Prometheus metrics, one registry per application (no process-global state)."""

from __future__ import annotations

from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

__all__ = ["Metrics"]


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.connections = Gauge(
            "yahtzee_connections",
            "Open WebSocket connections on this process, by role.",
            ["role"],
            registry=self.registry,
        )
        self.rooms = Gauge(
            "yahtzee_rooms",
            "Rooms in Redis by status (read from the room index when scraped).",
            ["status"],
            registry=self.registry,
        )
        self.commands = Counter(
            "yahtzee_commands",
            "Client commands handled, by type and outcome (ok, cached, or the error code).",
            ["type", "outcome"],
            registry=self.registry,
        )
        self.command_seconds = Histogram(
            "yahtzee_command_seconds",
            "Time from receiving a command to sending its ack or error.",
            ["type"],
            buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5),
            registry=self.registry,
        )
        self.redis_errors = Counter(
            "yahtzee_redis_errors",
            "Errors talking to Redis, by place.",
            ["where"],
            registry=self.registry,
        )
        self.cas_conflicts = Counter(
            "yahtzee_cas_conflicts",
            "Room transitions retried because another writer moved the version first.",
            registry=self.registry,
        )
        self.slow_clients = Counter(
            "yahtzee_slow_clients_closed",
            "Connections closed because their send queue was full.",
            registry=self.registry,
        )
        self.heap_trim_seconds = Counter(
            "yahtzee_heap_trim_seconds",
            "Seconds spent giving the C heap's free pages back to the system (malloc_trim).",
            registry=self.registry,
        )
        self.gc_seconds = Histogram(
            "yahtzee_gc_collection_seconds",
            "Garbage collections the server ran (Python's automatic collection is off "
            "while it serves), by how long they stopped the event loop.",
            buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0),
            registry=self.registry,
        )
        self.gc_collected = Counter(
            "yahtzee_gc_collected_objects",
            "Objects in garbage cycles those collections freed.",
            registry=self.registry,
        )
        self.timer_fired = Counter(
            "yahtzee_turn_timers_fired",
            "Turns played automatically by this process after their deadline.",
            registry=self.registry,
        )

        self.refused = Counter(
            "yahtzee_refused",
            "Connections and frames refused before any command ran, by reason (a handshake "
            "refused, the connection cap, an invalid UTF-8 text frame, ...).",
            ["reason"],
            registry=self.registry,
        )

        self._children: dict[tuple[str, str], tuple[Any, Any]] = {}

    def command(self, kind: str, outcome: str) -> tuple[Any, Any]:
        """The counter and the latency histogram of one command type and outcome (their labelled
        children looked up once, not at every command)."""
        children = self._children.get((kind, outcome))
        if children is None:
            children = (self.commands.labels(kind, outcome), self.command_seconds.labels(kind))
            self._children[(kind, outcome)] = children
        return children

    def collection(self, seconds: float, collected: int) -> None:
        """Count one garbage collection (:class:`server.ops.collector.PacedCollector`)."""
        self.gc_seconds.observe(seconds)
        self.gc_collected.inc(collected)

    def render(self) -> bytes:
        return generate_latest(self.registry)

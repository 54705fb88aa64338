"""Server settings, read once from the environment into a frozen dataclass.

Every setting has a default that works on a laptop; ``Settings.from_env()`` reads the variables
named in each field's ``env`` metadata. Invalid values raise ``ValueError`` naming the variable.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, get_type_hints

import msgspec

__all__ = ["WATCH_DELAY_SECONDS", "Settings"]

WATCH_DELAY_SECONDS = range(60, 86_400 + 1)
"""The delays a tournament may set for watching its live entries (SPEC.md 13.18)."""


def _env(name: str) -> dict[str, Any]:
    return {"env": name}


@dataclass(frozen=True, slots=True)
class Settings:
    #: Redis URL; ``None`` starts a private embedded server whose data vanishes when it stops.
    redis_url: str | None = field(default=None, metadata=_env("REDIS_URL"))
    #: ``REDIS_URL`` names a node of a Redis Cluster ("1"): the service uses redis-py's
    #: ``RedisCluster`` (slots discovered from that node) and sharded pub/sub on each master.
    redis_cluster: bool = field(default=False, metadata=_env("REDIS_CLUSTER"))
    #: Prefix of every Redis key and channel (lets several deployments or tests share a server).
    redis_prefix: str = field(default="yz:", metadata=_env("REDIS_PREFIX"))
    #: Global keys (lobby index, deadlines, leases) are spread over this many hash-tag buckets.
    redis_buckets: int = field(default=8, metadata=_env("YAHTZEE_REDIS_BUCKETS"))
    #: Redis connections per process; a call waits for a free one at most the timeout below.
    redis_max_connections: int = field(default=200, metadata=_env("YAHTZEE_REDIS_CONNECTIONS"))
    #: Seconds a Redis call may take before the command fails with ``unavailable`` (retryable).
    redis_timeout_seconds: float = field(default=1.0, metadata=_env("YAHTZEE_REDIS_TIMEOUT"))
    #: Replicas that must confirm a room's transition (``WAIT``) before its command is acked
    #: and its events published; fewer in time: the command fails with ``unavailable`` and its
    #: retry returns the first execution's result once confirmed. Unset: 1 on a Cluster for a
    #: master that has a replica, else 0 (a single Redis: no waiting).
    min_replicas: int | None = field(default=None, metadata=_env("YAHTZEE_MIN_REPLICAS"))
    #: Seconds a transition waits for its replicas (less than ``redis_timeout_seconds``).
    replication_timeout_seconds: float = field(
        default=0.5, metadata=_env("YAHTZEE_REPLICATION_TIMEOUT")
    )
    host: str = field(default="127.0.0.1", metadata=_env("HOST"))
    port: int = field(default=8000, metadata=_env("PORT"))
    #: Seconds a finished room (state, log, seats) is kept for replays before it expires.
    retention_seconds: int = field(default=3600, metadata=_env("YAHTZEE_RETENTION_SECONDS"))
    #: With a game archive: once a finished game is archived, its room stays in Redis only this
    #: long more (for late readers: a replay, the analysis), not the whole retention.
    archived_grace_seconds: int = field(
        default=300, metadata=_env("YAHTZEE_ARCHIVED_GRACE_SECONDS")
    )
    #: Seconds an unfinished room survives without any activity before it expires.
    idle_room_seconds: int = field(default=86400, metadata=_env("YAHTZEE_IDLE_ROOM_SECONDS"))
    #: Largest WebSocket frame accepted from a client, in bytes.
    max_frame_bytes: int = field(default=16384, metadata=_env("YAHTZEE_MAX_FRAME_BYTES"))
    #: Sustained client messages per second per connection (token bucket rate) ...
    rate_per_second: float = field(default=20.0, metadata=_env("YAHTZEE_RATE_PER_SECOND"))
    #: ... and the bucket size (burst).
    rate_burst: int = field(default=60, metadata=_env("YAHTZEE_RATE_BURST"))
    #: Frames queued for one connection before it is considered too slow and closed (4000).
    send_queue_size: int = field(default=512, metadata=_env("YAHTZEE_SEND_QUEUE_SIZE"))
    max_name_length: int = field(default=32, metadata=_env("YAHTZEE_MAX_NAME_LENGTH"))
    #: Cached command results per room for idempotent retries (oldest dropped first).
    idempotency_cache_size: int = field(default=1024, metadata=_env("YAHTZEE_IDEMPOTENCY_CACHE"))
    #: Largest allowed ``turn_seconds`` room option.
    max_turn_seconds: int = field(default=3600, metadata=_env("YAHTZEE_MAX_TURN_SECONDS"))
    #: How often each process looks for expired turn deadlines, in seconds.
    timer_poll_seconds: float = field(default=0.25, metadata=_env("YAHTZEE_TIMER_POLL_SECONDS"))
    #: Interval of the server's WebSocket pings (announced in ``welcome.heartbeat_seconds``); a
    #: client whose Pong does not arrive within as long again is closed with 1011.
    heartbeat_seconds: float = field(default=20.0, metadata=_env("YAHTZEE_HEARTBEAT_SECONDS"))
    #: Lease of a player connection in Redis, renewed by the serving process every third of it.
    #: When a process dies its players are marked disconnected once their leases run out.
    player_lease_seconds: float = field(default=60.0, metadata=_env("YAHTZEE_PLAYER_LEASE_SECONDS"))
    #: Rooms without a turn timer: seconds a disconnected player may block the game before the
    #: server plays their turns for them (and, in the lobby, before a disconnected host who
    #: blocks connected players is removed). 0 = never.
    absent_turn_seconds: float = field(default=60.0, metadata=_env("YAHTZEE_ABSENT_TURN_SECONDS"))
    #: Pause before each move of a computer player, in ms (a room's ``computer_delay_ms``
    #: overrides it), so that people can follow the moves.
    computer_delay_ms: int = field(default=900, metadata=_env("YAHTZEE_COMPUTER_DELAY_MS"))
    #: Strategy tables loaded (or built) in the background at startup: rule set names as
    #: ``yahtzee solve --rules`` takes them, comma-separated; others load the first time a room
    #: needs them; ``none``: no table at startup. Tables live in ``YAHTZEE_SOLVER_CACHE``
    #: (default ~/.cache/yahtzee-service).
    preload_tables: str = field(default="yahtzee", metadata=_env("YAHTZEE_PRELOAD_TABLES"))
    #: On SIGTERM, how long commands in flight may take before sockets are closed anyway.
    shutdown_grace_seconds: float = field(default=5.0, metadata=_env("YAHTZEE_SHUTDOWN_GRACE"))
    #: Seconds a new HTTP connection may take to send its first request's headers.
    handshake_timeout_seconds: float = field(
        default=10.0, metadata=_env("YAHTZEE_HANDSHAKE_SECONDS")
    )
    #: Most long-lived connections (WebSockets and ``GET /lobby`` streams together) one client
    #: address may hold on one process.
    max_connections_per_address: int = field(default=256, metadata=_env("YAHTZEE_MAX_PER_ADDRESS"))
    #: Most ``GET /lobby`` streams open on one process (more: HTTP 429).
    max_lobby_watchers: int = field(default=2000, metadata=_env("YAHTZEE_MAX_LOBBY_WATCHERS"))
    #: A ``GET /lobby`` stream with a player token re-reads the player's turn list at least
    #: this often (seconds); this process's own commits wake it at once (SPEC.md 13.6).
    lobby_turns_seconds: float = field(default=5.0, metadata=_env("YAHTZEE_LOBBY_TURNS_SECONDS"))
    #: Rooms one connection may create per minute (burst 5), and one address (burst 60).
    rooms_per_minute: float = field(default=6.0, metadata=_env("YAHTZEE_ROOMS_PER_MINUTE"))
    rooms_per_minute_per_address: float = field(
        default=30.0, metadata=_env("YAHTZEE_ROOMS_PER_MINUTE_PER_ADDRESS")
    )
    #: Most long-lived connections (WebSockets, lobby streams) per process; never more than
    #: the file-descriptor limit allows (see ``transport.runtime.connection_cap``): beyond it
    #: handshakes are answered 503 and health checks still are.
    max_connections: int = field(default=20_000, metadata=_env("YAHTZEE_MAX_CONNECTIONS"))
    #: Negotiate permessage-deflate ("1"/"0"); off by default: it costs more CPU than it saves
    #: on the protocol's small frames.
    per_message_deflate: bool = field(default=False, metadata=_env("YAHTZEE_DEFLATE"))
    log_level: str = field(default="info", metadata=_env("YAHTZEE_LOG_LEVEL"))
    #: How often the process gives the C heap's free pages back to the system (glibc's
    #: ``malloc_trim``, :mod:`server.ops.memory`), in seconds; 0 = never.
    malloc_trim_seconds: float = field(default=60.0, metadata=_env("YAHTZEE_MALLOC_TRIM_SECONDS"))
    #: The garbage collector (:mod:`server.ops.collector`): Python's automatic collection is
    #: off while serving, and the server runs a full collection once the container objects
    #: made (net of those freed) since the last one reach this fraction of those alive after
    #: it (Python's own rule for its oldest generation).
    gc_growth: float = field(default=0.25, metadata=_env("YAHTZEE_GC_GROWTH"))
    #: Set: Python's automatic collection instead, its young generation collected after this
    #: many container objects (how the server ran before; Python's default is 700).
    gc_young_threshold: int | None = field(
        default=None, metadata=_env("YAHTZEE_GC_YOUNG_THRESHOLD")
    )
    #: Correspondence reminders (protocol 1.4): the URL the webhook POSTs ``your_turn`` and
    #: ``clock_running_out`` to; unset: no reminders are queued.
    webhook_url: str | None = field(default=None, metadata=_env("YAHTZEE_WEBHOOK_URL"))
    #: Key of the body's HMAC-SHA256 (``X-Yahtzee-Signature``); never logged nor shown.
    webhook_secret: str | None = field(
        default=None, repr=False, metadata=_env("YAHTZEE_WEBHOOK_SECRET")
    )
    #: Seconds one delivery attempt may take (connect, send, answer).
    webhook_timeout_seconds: float = field(default=5.0, metadata=_env("YAHTZEE_WEBHOOK_TIMEOUT"))
    #: Pause after a first failed attempt; it doubles after each failure (with jitter) ...
    webhook_backoff_seconds: float = field(default=1.0, metadata=_env("YAHTZEE_WEBHOOK_BACKOFF"))
    #: ... up to this pause; after ``webhook_max_attempts`` attempts the delivery is given up.
    webhook_backoff_cap_seconds: float = field(
        default=600.0, metadata=_env("YAHTZEE_WEBHOOK_BACKOFF_CAP")
    )
    webhook_max_attempts: int = field(default=20, metadata=_env("YAHTZEE_WEBHOOK_MAX_ATTEMPTS"))
    #: How often each process looks for due deliveries, in seconds.
    webhook_poll_seconds: float = field(default=0.5, metadata=_env("YAHTZEE_WEBHOOK_POLL_SECONDS"))
    #: A sandbox for client authors (``yahtzee serve --sandbox``, SPEC.md 13.15): the route
    #: ``POST /sandbox/rooms`` makes rooms with seeded dice, or at a given game position. Never
    #: on a real server: whoever knows a seed knows its dice.
    sandbox: bool = field(default=False, metadata=_env("YAHTZEE_SANDBOX"))
    #: Quick play: after this many seconds in the queue, the seats no person took are filled
    #: with computers (for a player who accepts them).
    quick_play_computers_after_seconds: float = field(
        default=30.0, metadata=_env("YAHTZEE_QUICK_PLAY_COMPUTER_AFTER_SECONDS")
    )
    #: Quick play: how often each process renews its waiting players, delivers their matches
    #: and matches their queues.
    quick_play_poll_seconds: float = field(
        default=0.5, metadata=_env("YAHTZEE_QUICK_PLAY_POLL_SECONDS")
    )
    #: Quick play: a waiting player whose process stopped renewing it leaves after this long.
    quick_play_ttl_seconds: float = field(
        default=15.0, metadata=_env("YAHTZEE_QUICK_PLAY_TTL_SECONDS")
    )
    #: Quick play, benchmarks only: ratings drawn from the player ids (normal, 1500 +- 200)
    #: instead of the real ones, so a load test of fresh guests has ratings to match.
    quick_play_simulated_ratings: bool = field(
        default=False, metadata=_env("YAHTZEE_QUICK_PLAY_SIMULATED_RATINGS")
    )
    #: Who may create tournaments (``POST /tournaments``): ``admin`` (the Bearer
    #: ``YAHTZEE_ADMIN_TOKEN`` only) or ``identities`` (any remembered player, and the admin).
    tournaments_open_to: str = field(default="admin", metadata=_env("YAHTZEE_TOURNAMENTS_OPEN_TO"))
    #: The operator's secret for ``Authorization: Bearer`` on operator routes; unset: no
    #: operator (never logged, compared in constant time).
    admin_token: str | None = field(default=None, repr=False, metadata=_env("YAHTZEE_ADMIN_TOKEN"))
    #: The service creates one public tournament a day (UTC midnight to midnight) by itself.
    daily_tournament: bool = field(default=True, metadata=_env("YAHTZEE_DAILY_TOURNAMENT"))
    #: A new tournament's ``watch_delay_seconds`` when its request does not say (and the daily
    #: one's): unset, nobody watches an entry before the end time (SPEC.md 13.18).
    tournament_watch_delay_seconds: int | None = field(
        default=None, metadata=_env("YAHTZEE_TOURNAMENT_WATCH_DELAY_SECONDS")
    )
    #: How often each process closes tournaments past their end and makes the daily one.
    tournament_poll_seconds: float = field(
        default=5.0, metadata=_env("YAHTZEE_TOURNAMENT_POLL_SECONDS")
    )

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        """Build settings from ``environ`` (default ``os.environ``); ``overrides`` win. The
        variables' text is converted to each field's type by msgspec (lax mode: ``"8000"`` is
        an int, ``"1"``/``"true"`` a bool, ``"null"`` None); an unset or empty variable keeps
        the default; a value of the wrong type raises ``ValueError`` naming the variable."""
        env = os.environ if environ is None else environ
        booleans = {name for name, kind in get_type_hints(cls).items() if kind is bool}
        raw: dict[str, str] = {}
        for f in dataclasses.fields(cls):
            text = env.get(f.metadata["env"])
            if text:
                raw[f.name] = _BOOL_WORDS.get(text.lower(), text) if f.name in booleans else text
        try:
            settings = msgspec.convert(raw, cls, strict=False)
        except msgspec.ValidationError as exc:
            raise ValueError(_explain(exc, raw)) from None
        return dataclasses.replace(settings, **overrides) if overrides else settings

    def __post_init__(self) -> None:
        positive = (
            "max_frame_bytes",
            "rate_per_second",
            "rate_burst",
            "send_queue_size",
            "max_name_length",
            "idempotency_cache_size",
            "retention_seconds",
            "idle_room_seconds",
            "timer_poll_seconds",
            "player_lease_seconds",
            "heartbeat_seconds",
            "redis_buckets",
            "redis_max_connections",
            "redis_timeout_seconds",
            "handshake_timeout_seconds",
            "max_connections_per_address",
            "max_lobby_watchers",
            "lobby_turns_seconds",
            "rooms_per_minute",
            "rooms_per_minute_per_address",
            "webhook_timeout_seconds",
            "webhook_backoff_seconds",
            "webhook_backoff_cap_seconds",
            "webhook_max_attempts",
            "webhook_poll_seconds",
            "gc_growth",
        )
        for name in positive:
            if getattr(self, name) <= 0:
                raise ValueError(f"setting {name} must be positive")
        if self.webhook_url is not None and not self.webhook_secret:
            raise ValueError("YAHTZEE_WEBHOOK_URL needs YAHTZEE_WEBHOOK_SECRET (the signing key)")
        if self.redis_cluster and self.redis_url is None:
            raise ValueError("REDIS_CLUSTER=1 needs REDIS_URL (a node of the cluster)")
        if not 0 <= self.computer_delay_ms <= 10_000:
            raise ValueError("setting computer_delay_ms must be 0..10000")
        if self.malloc_trim_seconds < 0:
            raise ValueError("setting malloc_trim_seconds must not be negative")
        if self.absent_turn_seconds < 0:
            raise ValueError("setting absent_turn_seconds must not be negative")
        if self.tournaments_open_to not in ("admin", "identities"):
            raise ValueError("setting tournaments_open_to must be admin or identities")
        if self.tournament_poll_seconds <= 0:
            raise ValueError("setting tournament_poll_seconds must be positive")
        delay = self.tournament_watch_delay_seconds
        if delay is not None and delay not in WATCH_DELAY_SECONDS:
            raise ValueError("setting tournament_watch_delay_seconds must be 60..86400")
        if self.gc_young_threshold is not None and self.gc_young_threshold <= 0:
            raise ValueError("setting gc_young_threshold must be positive")
        if self.min_replicas is not None and self.min_replicas < 0:
            raise ValueError("setting min_replicas must not be negative")
        if not 0 < self.replication_timeout_seconds < self.redis_timeout_seconds:
            raise ValueError("setting replication_timeout_seconds must be in (0, redis_timeout)")


#: Words for a boolean setting besides msgspec's ``true``/``false``/``1``/``0``.
_BOOL_WORDS = {"yes": "true", "on": "true", "no": "false", "off": "false"}


def _explain(error: msgspec.ValidationError, raw: Mapping[str, str]) -> str:
    """The variable a conversion error is about (msgspec names the field: ``at `$.port```)."""
    message = str(error)
    for f in dataclasses.fields(Settings):
        if message.endswith(f"`$.{f.name}`"):
            name = f.metadata["env"]
            return f"environment variable {name}={raw.get(f.name)!r}: {message.split(' - ')[0]}"
    return message

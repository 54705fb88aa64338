"""The store's interface and the values that cross it (no I/O here): what the service needs
from storage. :mod:`server.storage.redis_store` implements it on Redis (see its docstring for the
layout)."""

from __future__ import annotations

import asyncio
import functools
import inspect
import os
import random
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

import redis.exceptions

__all__ = [
    "TRANSIENT_ERRORS",
    "Committed",
    "Conflict",
    "Duplicate",
    "NotReplicatedError",
    "StorageUnavailableError",
    "Store",
    "StoredRoom",
    "Transition",
    "classify_fault",
    "fault_boundary",
    "is_storage_fault",
    "lease_member",
    "new_version",
    "parse_cached",
    "parse_lease",
]


class NotReplicatedError(redis.exceptions.RedisError):
    """A transition is on its master, but fewer replicas than required confirmed it in time
    (``WAIT``): it could be lost if that master failed now, so it is not acknowledged and its
    events are not published. Retryable: the retry finds the first execution's result in the
    idempotency cache and returns it once a replica confirmed it."""


#: Errors after which a command may simply be retried (``unavailable``): the connection failed
#: or timed out, or a Cluster is failing over (the slot's master is down until its replica is
#: promoted, or the slot is moving).
TRANSIENT_ERRORS: tuple[type[Exception], ...] = (
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
    redis.exceptions.ClusterDownError,
    redis.exceptions.TryAgainError,
    redis.exceptions.SlotNotCoveredError,
    NotReplicatedError,
)


class StorageUnavailableError(redis.exceptions.ConnectionError):
    """The storage failed while a command was under way: a fault of the storage or the network,
    never a bug. The one retryable storage error the rest of the server sees (``unavailable``):
    whether the command took effect is unknown, and a retry of the same command id finds out
    (RELIABILITY.md, "unknown, not undone"). A subclass of redis-py's ``ConnectionError`` so
    that code written against redis-py's errors still treats it as transient."""


#: First words of Redis error replies that mean "not now" rather than "never": a node loading
#: its data, a demoted master, a cluster in failover or resharding, a busy script.
_TRANSIENT_REPLIES = frozenset(
    [
        "LOADING",
        "READONLY",
        "MASTERDOWN",
        "CLUSTERDOWN",
        "TRYAGAIN",
        "NOREPLICAS",
        "BUSY",
        "MOVED",
        "ASK",
    ]
)
#: Where an exception that is not one of redis-py's own comes from when the connection broke
#: under a command: redis-py's connection code and the event loop's transports. redis-py wraps
#: only ``OSError`` and timeouts; a command that takes a connection another task just closed
#: gets uvloop's ``RuntimeError("the handler is closed")`` or ``AttributeError`` on a writer
#: that is gone.
_TRANSPORT_DIRS = tuple(
    str(Path(module.__file__).parent) for module in (redis.exceptions, asyncio) if module.__file__
)


def is_storage_fault(exc: BaseException) -> bool:
    """Whether ``exc``, raised by a storage call, is a fault of the storage or the network (to
    answer ``unavailable``) rather than a bug (``internal_error``)."""
    if isinstance(exc, (*TRANSIENT_ERRORS, OSError, TimeoutError)):
        return True
    if isinstance(exc, redis.exceptions.ClusterError | redis.exceptions.RedisClusterException):
        return True  # "TTL exhausted" (a MOVED/ASK storm), "cannot connect to the cluster"
    if isinstance(exc, redis.exceptions.RedisError) and _raised_in_handshake(exc):
        return True  # an error reply while a connection was being set up: the command not sent
    if isinstance(exc, redis.exceptions.ResponseError):
        return str(exc).split(" ", 1)[0] in _TRANSIENT_REPLIES
    if isinstance(exc, redis.exceptions.InvalidResponse):
        return True  # a reply cut off by a connection that closed under it
    if isinstance(exc, RuntimeError | AttributeError | TypeError):
        return _raised_in_transport(exc)
    return False


#: redis-py's functions that set up a new connection (``HELLO``, ``AUTH``, ``CLIENT SETNAME``).
_HANDSHAKE = frozenset({"on_connect", "on_connect_check_health"})


def _raised_in_handshake(exc: BaseException) -> bool:
    """Whether ``exc`` passed through redis-py's connection set-up: an error reply there (a
    reply of a handshake cut short by a freeze or a restart, say) is the connection's fault,
    never the command's, which was not sent yet."""
    tb = exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_name in _HANDSHAKE and code.co_filename.startswith(_TRANSPORT_DIRS):
            return True
        tb = tb.tb_next
    return False


def _raised_in_transport(exc: BaseException) -> bool:
    """Whether the innermost Python frame of ``exc``'s traceback is redis-py's or asyncio's."""
    tb = exc.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    filename = tb.tb_frame.f_code.co_filename
    return "uvloop" in filename or filename.startswith(_TRANSPORT_DIRS)


def classify_fault(exc: Exception) -> Exception:
    """``exc`` as a store call raises it: a storage fault (:func:`is_storage_fault`) as a
    :class:`StorageUnavailableError`; a retryable error or a bug unchanged. For a store method
    that returns its calls' errors one by one instead of raising (a batch of rooms)."""
    if isinstance(exc, TRANSIENT_ERRORS) or not is_storage_fault(exc):
        return exc  # retryable already (StorageUnavailableError is one of them), or a bug
    classified = StorageUnavailableError(f"{type(exc).__name__}: {exc}")
    classified.__cause__ = exc  # as ``raise ... from exc`` would: the log shows the fault
    return classified


_T = TypeVar("_T")


def _guarded(method: Callable[..., Awaitable[_T]]) -> Callable[..., Awaitable[_T]]:
    @functools.wraps(method)
    async def guarded(*args: Any, **kwargs: Any) -> _T:
        try:
            return await method(*args, **kwargs)
        except Exception as exc:
            classified = classify_fault(exc)
            if classified is exc:
                raise
            raise classified from exc

    return guarded


_C = TypeVar("_C", bound=type)


def fault_boundary(cls: _C) -> _C:
    """Class decorator for a :class:`Store` implementation: every public coroutine method
    raises :class:`StorageUnavailableError` for every storage fault (:func:`is_storage_fault`),
    whatever redis-py, the network or the event loop raised; anything else (a bug) passes
    through unchanged. The one place storage failures are classified."""
    for name, member in list(vars(cls).items()):
        if not name.startswith("_") and inspect.iscoroutinefunction(member):
            setattr(cls, name, _guarded(member))
    return cls


@dataclass(frozen=True, slots=True)
class StoredRoom:
    """A room as stored: its version, the seq of its last event, and the encoded record."""

    version: int
    seq: int
    record: bytes


#: Draws room versions. Not ``secrets``: a version is never shown to anyone, it only has to
#: differ from the room's earlier ones, and a system call a commit was 1 % of the server's CPU.
#: Seeded from the OS, and again in a forked child, so no two processes draw the same sequence.
_versions = random.Random(os.urandom(32))
if hasattr(os, "register_at_fork"):  # POSIX
    os.register_at_fork(after_in_child=lambda: _versions.seed(os.urandom(32)))


def new_version() -> int:
    """A fresh room version: random, never 0 (0 means "no room"). Versions are compared for
    equality only; a counter could be reached again by a master promoted after a failover
    that lost writes, and then match a record a process still caches from before."""
    return _versions.getrandbits(52) + 1


@dataclass(frozen=True, slots=True)
class Transition:
    """One change of a room, applied atomically by :meth:`Store.commit`; the room gets
    ``new_version`` if ``expected_version`` is still its version."""

    expected_version: int
    record: bytes
    ttl_seconds: int
    events: Sequence[bytes] = ()
    publish: bytes = b""
    seats: Mapping[str, str] = field(default_factory=dict)
    cache_field: str = ""
    cache_value: bytes = b""
    cache_size: int = 1024
    new_version: int = field(default_factory=new_version)
    #: the room's deadline changed to ``deadline_ms`` (None: it has none): a store whose
    #: ``commits_deadlines`` is true writes it into the schedule with the commit
    deadline_changed: bool = False
    deadline_ms: int | None = None


@dataclass(frozen=True, slots=True)
class Committed:
    version: int
    first_seq: int
    last_seq: int


@dataclass(frozen=True, slots=True)
class Conflict:
    """The version moved; ``current`` is the room as it is now (None if it does not exist)."""

    current: StoredRoom | None


@dataclass(frozen=True, slots=True)
class Duplicate:
    """The command already ran: the seq after it and its result."""

    seq: int
    result: bytes


def parse_cached(raw: bytes | None) -> Duplicate | None:
    """A ``<seq>|<result>`` results-cache entry."""
    if raw is None:
        return None
    seq, _, value = raw.partition(b"|")
    return Duplicate(int(seq), value)


class Store(Protocol):
    """What the service needs from storage (see the module docstring for the Redis layout)."""

    #: whether :meth:`commit` writes a transition's changed deadline into the schedule
    #: (single Redis: one script); otherwise the caller calls :meth:`set_deadline` after it
    commits_deadlines: bool

    async def load(self, room_id: str) -> StoredRoom | None: ...
    async def commit(self, room_id: str, t: Transition) -> Committed | Conflict | Duplicate: ...
    async def cached_result(self, room_id: str, key: str) -> Duplicate | None: ...
    async def read_events(
        self, room_id: str, after_seq: int, count: int | None = None
    ) -> list[tuple[int, bytes]]: ...
    async def seat_fields(self, room_id: str) -> dict[str, str]: ...
    async def spectator_put(self, room_id: str, conn_id: str, lease_ms: int, now: int) -> int: ...
    async def spectator_drop(self, room_id: str, conn_id: str, now: int) -> int: ...
    async def spectators_renew(
        self, room_id: str, conn_ids: Sequence[str], lease_ms: int, now: int
    ) -> int: ...
    async def spectators_renew_rooms(
        self, renewals: Sequence[tuple[str, Sequence[str]]], lease_ms: int, now: int
    ) -> list[int | Exception]: ...
    async def index_put(self, room_id: str, summary: bytes, expires_ms: int) -> None: ...
    async def index_list(self, now: int, limit: int) -> list[bytes]: ...
    async def set_deadline(self, room_id: str, at_ms: int | None) -> None: ...
    async def due_deadlines(self, now: int, limit: int = 50) -> list[str]: ...
    async def claim_deadline(self, room_id: str, now: int, lease_ms: int = 5000) -> bool: ...
    async def lease_put(self, member: str, room_id: str, expires_ms: int) -> bool: ...
    async def leases_put(self, leases: Sequence[tuple[str, str]], expires_ms: int) -> list[str]: ...
    async def lease_drop(self, member: str, room_id: str) -> None: ...
    async def expired_leases(self, now: int, limit: int = 100) -> list[str]: ...
    async def claim_lease(self, member: str, room_id: str, now: int) -> bool: ...
    async def reserve_create_key(self, key_hash: str, value: bytes) -> bytes | None: ...
    async def publish_kick(self, room_id: str, conn_id: str) -> None: ...


def lease_member(room_id: str, player_id: str, conn_id: str) -> str:
    """The presence entry of one player connection."""
    return f"{room_id}|{player_id}|{conn_id}"


def parse_lease(member: str) -> tuple[str, str, str]:
    """(room, player, connection) of a presence entry."""
    room_id, player_id, conn_id = member.split("|", 2)
    return room_id, player_id, conn_id

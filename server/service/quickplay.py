"""Quick play: queue a remembered player, match players of similar ratings, make their room.

Who matches: every process, for the queues its own connections wait in. A process renews its
waiting tickets and reads their news (one script call per queue, every
``quick_play_poll_seconds``), then reads the queue and makes the groups :func:`plan` proposes;
it also tries at once when one of its connections queues. Two processes may propose the same
group: the claim (one script that takes the whole group out of the queue, or nothing) lets one
of them make it, and the other loses only that call. No lock is needed, and a queue's matching
goes on while any process with a waiting player is alive.

The room is made after the claim: private, ``auto_start`` on, rated when only people sit in
it (casual with computers), the computers first, then each
person seated as by ``join`` but not yet connected (as a rematch does). Each match is stored
for the waiting connection's process (its next poll delivers it) and delivered at once when the
connection is local. Should the room fail (storage down), the group is queued again with its
original waits.

The rating is looked up once, when a player queues (:class:`RatingLookup`; no database
call on any play command, and none while the player waits).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import math
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import msgspec

import protocol.messages as pm
from protocol.errors import ErrorCode
from protocol.types import Rules
from server import game
from server.boundary import translate
from server.domain.matching import Candidate, Group, Policy, plan
from server.domain.timing import now_ms
from server.service.outcomes import Seated, ServiceError
from server.service.rooms import GameService
from server.service.seats import Seats
from server.storage.quickplay import QueueEntry, QuickPlayQueue, queue_name
from server.storage.ratings import RatingsStore

__all__ = [
    "ArchiveRatings",
    "Matched",
    "News",
    "NoRatings",
    "Queued",
    "QuickPlay",
    "RatingLookup",
    "SimulatedRatings",
    "Status",
    "simulated_rating",
]

log = logging.getLogger("yahtzee.quickplay")


class RatingLookup(Protocol):
    """A player's rating for a rule family (``"yahtzee"``, ``"yatzy"``); None: unrated."""

    async def rating_of(self, player_id: str, family: str) -> float | None: ...


class ResultRatings:
    """The players' result ratings (the archive's, :class:`RatingsStore`) as quick play reads
    them: a rating's mean, or None for a player never rated (matched in a wider window)."""

    def __init__(self, ratings: RatingsStore) -> None:
        self.ratings = ratings

    async def rating_of(self, player_id: str, family: str) -> float | None:
        rating = await self.ratings.rating_of(player_id, family)
        return rating.mu if rating.games else None


class NoRatings:
    """Every player unrated (until the ratings are wired in)."""

    async def rating_of(self, player_id: str, family: str) -> float | None:
        return None


class ArchiveRatings:
    """The archive's result ratings once the players part connects them (:meth:`connect`, when
    its database is up), everyone unrated before that and without a database."""

    def __init__(self) -> None:
        self._ratings: ResultRatings | None = None

    def connect(self, ratings: RatingsStore) -> None:
        self._ratings = ResultRatings(ratings)

    async def rating_of(self, player_id: str, family: str) -> float | None:
        if self._ratings is None:
            return None
        return await self._ratings.rating_of(player_id, family)


class SimulatedRatings:
    """Benchmarks and demos only (``YAHTZEE_QUICK_PLAY_SIMULATED_RATINGS=1``): a rating drawn
    from the player id, normal around 1500 with a deviation of 200, so that a load test with
    fresh guests has ratings to match; ``clients/bench/quickplay.py`` computes the same."""

    async def rating_of(self, player_id: str, family: str) -> float | None:
        return simulated_rating(player_id)


def simulated_rating(player_id: str) -> float:
    """The rating :class:`SimulatedRatings` gives ``player_id`` (Box-Muller over its SHA-256)."""
    digest = hashlib.sha256(player_id.encode()).digest()
    u1 = (int.from_bytes(digest[:8], "big") + 1) / 2**64
    u2 = int.from_bytes(digest[8:16], "big") / 2**64
    return round(1500 + 200 * math.sqrt(-2 * math.log(u1)) * math.cos(2 * math.pi * u2), 1)


@dataclass(frozen=True, slots=True)
class Queued:
    """A player just queued: its place, window now, rating and when computers may fill."""

    position: int
    window: int
    rating: float | None
    computers_after_ms: int | None


class Matched(msgspec.Struct, frozen=True, kw_only=True):
    """One player's match: its room and seat (as ``join`` gives them), who else sits there."""

    room: str
    invite: str | None
    player: str
    seat: int
    token: str
    opponents: tuple[str, ...] = ()
    #: (level, name) of each computer that filled a seat
    computers: tuple[tuple[str, str], ...] = ()
    waited_ms: int = 0


@dataclass(frozen=True, slots=True)
class Status:
    """A waiting player's queue now."""

    position: int
    waiting: int
    window: int
    waited_ms: int


News = Matched | Status
_decode_matched = msgspec.json.Decoder(Matched).decode
_encode = msgspec.json.Encoder().encode


@dataclass(slots=True)
class _Waiter:
    conn_id: str
    queue: str
    seats: int
    rules: str
    entry: QueueEntry
    notify: Callable[[News], object]
    status_at_ms: int = 0


@dataclass(frozen=True, slots=True)
class Timing:
    """How long a ticket lives without renewal, and how often a waiter hears of its queue."""

    ttl_ms: int = 15_000
    status_every_ms: int = 5_000


@dataclass(eq=False)
class QuickPlay:
    """The quick-play queues as one process serves them (see the module docstring)."""

    queue: QuickPlayQueue
    service: GameService
    seats: Seats
    ratings: RatingLookup = field(default_factory=NoRatings)
    policy: Policy = field(default_factory=Policy)
    timing: Timing = field(default_factory=Timing)
    #: start loading a strategy table (for the computers of a room)
    prepare: Callable[[game.RuleOptions], object] = lambda options: None
    clock: Callable[[], int] = now_ms
    waiters: dict[str, _Waiter] = field(default_factory=dict)
    _tasks: set[asyncio.Task[None]] = field(default_factory=set)
    #: connections whose cancel is under way: the loop must not queue them again meanwhile
    _cancelling: set[str] = field(default_factory=set)

    # -- a connection's commands ---------------------------------------------------------------

    async def enqueue(self, conn_id: str, identity: str, name: str, *, seats: int, rules: str,
                      computers: bool, notify: Callable[[News], object]) -> Queued:  # fmt: skip
        """Queue the connection's player; ``already_queued`` when it waits already."""
        if conn_id in self.waiters:
            raise ServiceError(ErrorCode.ALREADY_QUEUED, "this connection is queued already")
        rating = await self._rating(identity, rules)
        now = self.clock()
        entry = QueueEntry(
            ticket=secrets.token_hex(8),
            identity=identity,
            name=name,
            rating=rating,
            enqueued_ms=now,
            computers=computers,
        )
        queue = queue_name(rules, seats)
        position = await self.queue.enqueue(queue, entry, now, self.timing.ttl_ms)
        if position is None:
            raise ServiceError(ErrorCode.ALREADY_QUEUED, "this player waits in quick play already")
        self.waiters[conn_id] = _Waiter(conn_id, queue, seats, rules, entry, notify, now)
        self._soon(queue, seats, rules)
        after = self.policy.computers_after_ms if computers else None
        window = round(self.policy.window(_candidate(entry), now))
        return Queued(position, window, rating, after)

    async def _rating(self, identity: str, rules: str) -> float | None:
        """The rating, or None (unrated) when the lookup fails: a missing rating only widens
        the window, it is no reason to refuse a game."""
        try:
            return await self.ratings.rating_of(identity, rules)
        except Exception as exc:  # the ratings' database is down or slow
            log.info("rating lookup failed, queued as unrated: %s", type(exc).__name__)
            return None

    async def cancel(self, conn_id: str) -> None:
        """Take the connection's player out of its queue; ``not_queued`` when it does not wait
        (a match being made keeps the waiter: its match is still delivered)."""
        waiter = self.waiters.get(conn_id)
        if waiter is None:
            raise ServiceError(ErrorCode.NOT_QUEUED, "not waiting in quick play")
        # The waiter stays (a match being made is still delivered), but the loop must not take
        # the ticket this removes for one that expired and queue it again: that ticket would
        # keep the player "queued already" until it expired (found under CPU contention).
        self._cancelling.add(conn_id)
        try:
            if not await self.queue.cancel(waiter.queue, waiter.entry.ticket):
                raise ServiceError(ErrorCode.NOT_QUEUED, "not waiting in quick play")
            self.waiters.pop(conn_id, None)
        finally:
            self._cancelling.discard(conn_id)

    def is_waiting(self, conn_id: str) -> bool:
        """Whether the connection waits in a queue (on this process)."""
        return conn_id in self.waiters

    async def disconnected(self, conn_id: str) -> None:
        """The connection closed (or entered a room): its player leaves the queue (a lost call:
        the ticket expires once nobody renews it)."""
        waiter = self.waiters.pop(conn_id, None)
        if waiter is not None:
            await self.queue.cancel(waiter.queue, waiter.entry.ticket)

    # -- the process's loop --------------------------------------------------------------------

    async def tick(self) -> None:
        """Renew this process's tickets, deliver their news, and match their queues."""
        queues: dict[str, tuple[int, str]] = {}
        for waiter in list(self.waiters.values()):
            queues[waiter.queue] = (waiter.seats, waiter.rules)
        for queue, (seats, rules) in queues.items():
            await self._poll(queue)
            await self.match(queue, seats, rules)

    async def _poll(self, queue: str) -> None:
        local = [w for w in self.waiters.values() if w.queue == queue]
        now = self.clock()
        waiting, news = await self.queue.poll(queue, [w.entry.ticket for w in local], now)
        for waiter, item in zip(local, news, strict=True):
            if item.match is not None:
                self._hand_over(waiter, _decode_matched(item.match))
            elif (
                item.gone
                and self.waiters.get(waiter.conn_id) is waiter
                and waiter.conn_id not in self._cancelling
            ):
                # expired (this process stalled) or its match was lost: queue it again
                await self.queue.enqueue(queue, waiter.entry, now, self.timing.ttl_ms)
            elif item.position is not None and now - waiter.status_at_ms >= self._every:
                waiter.status_at_ms = now
                window = round(self.policy.window(_candidate(waiter.entry), now))
                waited = now - waiter.entry.enqueued_ms
                waiter.notify(Status(item.position, max(waiting, 1), window, waited))

    @property
    def _every(self) -> int:
        return self.timing.status_every_ms

    def _hand_over(self, waiter: _Waiter, matched: Matched) -> None:
        if self.waiters.get(waiter.conn_id) is waiter:
            del self.waiters[waiter.conn_id]
            waiter.notify(matched)

    def _soon(self, queue: str, seats: int, rules: str) -> None:
        """Try to match ``queue`` now, beside the command that queued someone."""
        task = asyncio.get_running_loop().create_task(self._try_match(queue, seats, rules))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _try_match(self, queue: str, seats: int, rules: str) -> None:
        try:
            await self.match(queue, seats, rules)
        except Exception as exc:  # the periodic tick tries again
            log.info("quick play match of %s: %s", queue, exc)

    async def stop(self) -> None:
        """Cancel the match attempts under way (shutdown)."""
        for task in list(self._tasks):
            task.cancel()
        with contextlib.suppress(Exception):
            await asyncio.gather(*self._tasks, return_exceptions=True)

    # -- matching ------------------------------------------------------------------------------

    async def match(self, queue: str, seats: int, rules: str) -> int:
        """Make every group the queue allows now; how many were made."""
        now = self.clock()
        entries = await self.queue.snapshot(queue, now, self.timing.ttl_ms)
        by_ticket = {e.ticket: e for e in entries}
        made = 0
        for group in plan((_candidate(e) for e in entries), seats, now, self.policy):
            members = [by_ticket[m.ticket] for m in group.members]
            if await self.queue.claim(queue, [m.ticket for m in members]):
                await self._make(queue, seats, rules, members, group, now)
                made += 1
        return made

    async def _make(self, queue: str, seats: int, rules: str, members: list[QueueEntry],
                    group: Group, now: int) -> None:  # fmt: skip
        try:
            matches = await self._room(seats, rules, members, group, now)
        except Exception:
            log.warning("quick play room failed; the group is queued again", exc_info=True)
            for entry in members:
                await self.queue.enqueue(queue, entry, self.clock(), self.timing.ttl_ms)
            return
        await self.queue.deliver({t: _encode(m) for t, m in matches.items()})
        local = {w.entry.ticket: w for w in self.waiters.values()}
        for ticket, matched in matches.items():
            waiter = local.get(ticket)
            if waiter is not None:
                self._hand_over(waiter, matched)
                await self.queue.forget(ticket)

    async def _room(self, seats: int, rules: str, members: list[QueueEntry], group: Group,
                    now: int) -> dict[str, Matched]:  # fmt: skip
        """The group's room, each member seated (not yet connected): its match by ticket."""
        options = translate.engine_options(pm.RoomOptions(rules=Rules(rules)))
        if group.computers:
            self.prepare(options)
        room_id, invite = await self.service.create_room(
            options=options,
            seats=seats,
            public=False,
            computers=[(level, None) for level in group.computers],
            auto_start=True,
            # people only: the game moves their result ratings (a computer has no rating)
            rated=not group.computers,
        )
        seated: dict[str, Seated] = {}
        for entry in members:
            out = await self.seats.join(
                room_id, entry.name, invite, join_key=f"qp:{entry.ticket}", present=False,
                identity=entry.identity,
            )  # fmt: skip
            assert isinstance(out.result, Seated)
            seated[entry.ticket] = out.result
        current = await self.service.view(room_id)
        computers = tuple(
            (p.computer, p.name) for p in current.record.game.players if p.computer is not None
        )
        return {
            e.ticket: Matched(
                room=room_id,
                invite=invite,
                player=seated[e.ticket].player,
                seat=seated[e.ticket].seat,
                token=seated[e.ticket].token or "",
                opponents=tuple(o.name for o in members if o.ticket != e.ticket),
                computers=computers,
                waited_ms=max(0, now - e.enqueued_ms),
            )
            for e in members
        }


def _candidate(entry: QueueEntry) -> Candidate:
    return Candidate(entry.ticket, entry.rating, entry.enqueued_ms, entry.computers)

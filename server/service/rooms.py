"""The game service: cached record -> ``game.apply`` -> one store call -> local delivery.

Every change of a room goes one straight way (:meth:`GameService.transact`):

1. take the room's record from this process's cache (load it on a miss);
2. run a pure step on it: the rules engine and the room layer, with dice drawn here and
   nowhere else; a refusal raises a typed error and changes nothing;
3. number the events from the cached seq, encode each once, and commit with ONE store call
   that checks the version, writes, appends the log and publishes the events;
4. on a version conflict the store returns the fresh record in the same reply: the step is
   run again on it (no extra round trip); on success the events go to this process's
   subscribers at once, before the command's ack is sent, and the cache moves on.

Redis stays the source of truth: a stale cache costs one retry, never a wrong write. The turn
deadline and the lobby index are hints outside the room's slot, written only when they change.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable, Sequence
from typing import Any

import redis.exceptions

import protocol.messages as pm
from protocol.errors import ErrorCode
from server import game
from server.boundary import translate, wire
from server.domain import deadlines, record_format, room
from server.domain.dice import Dice
from server.domain.events import Occurred
from server.domain.refusals import RefusalError
from server.domain.timing import now_ms
from server.ops.metrics import Metrics
from server.ops.retry import LRU
from server.service import steps
from server.service.correspondence import Correspondence
from server.service.hints import Hints
from server.service.outcomes import (
    Attempt,
    Cached,
    Change,
    CreatedRoom,
    Deliver,
    EntryCommits,
    GameEndings,
    Outcome,
    ServiceError,
    Step,
    UnavailableError,
    Wake,
    decode_result,
    encode_result,
    room_not_found,
    seat_result,
)
from server.settings import Settings
from server.storage.redis_store import (
    TRANSIENT_ERRORS,
    Committed,
    Conflict,
    Store,
    StoredRoom,
    Transition,
)
from server.strategy import computers

__all__ = ["Change", "Deliver", "GameService", "Outcome", "ServiceError", "UnavailableError"]

log = logging.getLogger("yahtzee.service")

_MAX_ATTEMPTS = 50
_CACHE_ROOMS = 10_000


def _entry_total(record: room.RoomRecord) -> int:
    """The total of a tournament entry's one player (0 before anyone sits)."""
    state = record.game
    if not state.players:
        return 0
    return game.totals(state, state.players[0].player_id).grand


class GameService:
    """Room transitions as compare-and-set commits on a per-process cache of records."""

    def __init__(
        self,
        store: Store,
        settings: Settings,
        metrics: Metrics | None = None,
        deliver: Deliver | None = None,
        clock: Callable[[], int] = now_ms,
        dice: Dice | None = None,
        wake: Wake | None = None,
        endings: GameEndings | None = None,
        entries: EntryCommits | None = None,
        correspondence: Correspondence | None = None,
        recheck: Callable[[str], None] | None = None,
    ) -> None:
        self.store = store
        #: told a room whose commit may have run without its reply (its events then reach
        #: this process's subscribers from the room's log: a commit publishes them only to
        #: other processes)
        self.recheck = recheck
        self.wake = wake
        self.settings = settings
        self.metrics = metrics or Metrics()
        self.deliver = deliver
        self.clock = clock
        self.dice = dice
        self._cache: LRU[str, Cached] = LRU(_CACHE_ROOMS)
        #: told (room id, now) after the commit that finished a room's game (the archive)
        self.endings = endings or GameEndings()
        #: told after each commit of a tournament entry (its leaderboard and watch times)
        self.entries = entries or EntryCommits()
        #: the deadline schedule, the lobby index and the local wake-ups of its commits
        self.hints = Hints(store, settings, wake, correspondence)

    @property
    def index_writes(self) -> int:
        """How many lobby entries this process wrote (a local listing cache compares it)."""
        return self.hints.index_writes

    async def _load_record(self, room_id: str) -> room.RoomRecord | None:
        cached = self._from_store(room_id, await self.store.load(room_id))
        return cached.record if cached is not None else None

    # -- the cache ----------------------------------------------------------------------------

    def _remember(self, room_id: str, cached: Cached) -> Cached:
        if cached.record.game.phase == game.Phase.FINISHED:
            # A finished game's room is seldom read again (a rematch, a late spectator, the
            # archive), and then from Redis: the cache holds the rooms in play only, so a
            # process's memory stays level however many games it has served.
            self._cache.pop(room_id, None)
        else:
            self._cache.put(room_id, cached)
        return cached

    def _from_store(self, room_id: str, stored: StoredRoom | None) -> Cached | None:
        if stored is None:
            self._cache.pop(room_id, None)
            return None
        record = record_format.decode_record(stored.record)
        return self._remember(room_id, Cached(stored.version, stored.seq, record))

    async def view(self, room_id: str) -> Cached:
        """The room as Redis has it now (refreshes the cache); ``room_not_found`` if none."""
        cached = self._from_store(room_id, await self.store.load(room_id))
        if cached is None:
            raise room_not_found(room_id)
        return cached

    def cached(self, room_id: str) -> Cached | None:
        """The record this process saw last (may be behind Redis), without a round trip."""
        return self._cache.get(room_id)

    # -- the one transaction ------------------------------------------------------------------

    async def transact(self, room_id: str, step: Step, cache_key: str = "") -> Outcome:
        """Run ``step`` on the room and commit what it returns; see the module docstring.

        ``step`` returns ``None`` for "nothing to do" and raises to refuse. With ``cache_key``
        the command is idempotent: a retry gets the first execution's seq and result.
        """
        cached = self._cache.get(room_id)
        verified = cached is None  # a record just read from Redis needs no second look
        if cached is None:
            cached = await self.view(room_id)
        for _ in range(_MAX_ATTEMPTS):
            try:
                change = step(cached)
            except (game.GameError, RefusalError):
                # A refusal must not rest on a stale cache: look again once.
                if not verified:
                    verified, stale = True, cached
                    cached = await self.view(room_id)
                    if cached.version != stale.version:
                        continue
                if cache_key:  # a retry of a command that already ran is no error
                    done = await self.store.cached_result(room_id, cache_key)
                    if done is not None:
                        return Outcome(done.seq, decode_result(done.result), cached=True)
                raise
            if change is None:  # "nothing to do" must not rest on a stale cache either
                if not verified:
                    verified, stale = True, cached
                    cached = await self.view(room_id)
                    if cached.version != stale.version:
                        continue
                return Outcome(cached.seq, record=cached.record)
            outcome, fresh = await self._commit(room_id, cached, change, cache_key)
            if outcome is not None:
                return outcome
            if fresh is None:
                raise room_not_found(room_id)
            cached, verified = fresh, True
            self.metrics.cas_conflicts.inc()
        raise ServiceError(ErrorCode.CONFLICT, "the room is too busy, try again")

    async def _commit(
        self, room_id: str, cached: Cached, change: Change, cache_key: str
    ) -> Attempt:
        now = self.clock()
        grace = self.settings.absent_turn_seconds
        record = change.record
        # The events read the room's dice, seeds and game only, none of the fields set below.
        events = translate.wire_events(
            room_id,
            change.events,
            record,
            cached.seq + 1,
            deadline_ms=record.deadline_ms,
            now=deadlines.turn_began_at(record, now),
        )
        changed = [e.seq for e in events if not isinstance(e, pm.Spectators)]
        record = record.replace(  # one copy of the record a commit
            absent_ms=deadlines.absent_at(record, grace),
            computer_ms=deadlines.computer_at(record, now),
            # spectator counts do not make a client's expect_seq stale (SPEC.md 10.8)
            game_seq=changed[-1] if changed else record.game_seq,
        )
        encoded = wire.encode_events(events)
        finished = record.game.phase == game.Phase.FINISHED
        ttl = deadlines.room_ttl(
            record, self.settings.idle_room_seconds, self.settings.retention_seconds, now
        )
        wake = deadlines.wake_at(record)
        transition = Transition(
            expected_version=cached.version,
            record=record_format.encode_record(record),
            ttl_seconds=ttl,
            events=[e.msgpack for e in encoded],
            publish=wire.encode_batch(encoded) if encoded else b"",
            seats=change.seats,
            cache_field=cache_key,
            cache_value=encode_result(change.result) if cache_key else b"",
            cache_size=self.settings.idempotency_cache_size,
            deadline_changed=wake != deadlines.wake_at(cached.record),
            deadline_ms=wake,
        )
        try:
            reply = await self.store.commit(room_id, transition)
        except TRANSIENT_ERRORS as exc:
            # it may have run all the same (unknown, not undone): its hints are set again
            self.hints.repair_soon(room_id, self._load_record)
            if self.recheck is not None:
                self.recheck(room_id)
            raise UnavailableError(str(exc)) from exc
        if isinstance(reply, Conflict):
            return Attempt(None, self._from_store(room_id, reply.current))
        if not isinstance(reply, Committed):  # this command ran before (another connection)
            self.hints.repair_soon(room_id, self._load_record)  # its first try may have timed out
            return Attempt(Outcome(reply.seq, decode_result(reply.result), cached=True), None)
        self._remember(room_id, Cached(reply.version, reply.last_seq, record))
        if encoded and self.deliver is not None:
            self.deliver(room_id, encoded)
        await self.hints.update(
            room_id, cached.record, record, events, ttl, now, created=cached.version == 0
        )
        if record.meta.tournament:  # (no coroutine for the other rooms' commits)
            await self._tell_entry(room_id, record, reply.last_seq)
        just_finished = finished and cached.record.game.phase != game.Phase.FINISHED
        if just_finished:
            try:
                await self.endings.finished(room_id, now)
            except redis.exceptions.RedisError as exc:
                log.warning("room %s: not marked for the archive: %s", room_id, exc)
        return Attempt(Outcome(reply.last_seq, change.result, record=record), None)

    async def _tell_entry(self, room_id: str, record: room.RoomRecord, last_seq: int) -> None:
        tournament = record.meta.tournament
        try:  # the clock after the commit: an event is never dated before it was written
            await self.entries.committed(
                tournament, room_id, _entry_total(record), last_seq, self.clock()
            )
        except redis.exceptions.RedisError as exc:  # the close recomputes every total
            log.warning("tournament %s: entry %s not recorded: %s", tournament, room_id, exc)

    def apply(
        self, room_id: str, record: room.RoomRecord, commands: Sequence[game.Command]
    ) -> tuple[room.RoomRecord, list[Occurred]]:
        """Apply engine commands (dice drawn here): :func:`steps.apply_commands`."""
        return steps.apply_commands(record, commands, self.dice, self.clock())

    # -- rooms --------------------------------------------------------------------------------

    async def create_room(
        self,
        *,
        options: game.RuleOptions,
        seats: int,
        public: bool = True,
        turn_seconds: int = 0,
        room_id: str | None = None,
        invite: str | None = None,
        hints: bool = True,
        computer_delay_ms: int | None = None,
        computers: Sequence[tuple[str, str | None]] = (),
        auto_start: bool = False,
        correspondence_seconds: int | None = None,
        dice_seed: str | None = None,
        rated: bool = False,
        tournament: tuple[str, str, int] | None = None,
    ) -> CreatedRoom:
        """Create a room; returns its id and its invite code (private rooms only). ``room_id``
        and ``invite`` are given when a reserved ``create_key`` names them already; ``dice_seed``
        only by the sandbox (:mod:`server.service.sandbox`): every other room's is random.
        ``correspondence_seconds``: a correspondence room with this clock per move (the
        protocol bounds it); not together with a ``turn_seconds`` timer. ``tournament`` (id,
        seed hex, end time in Unix ms) makes the room an entry of that tournament: duplicate
        dice from its seed, no play after its end."""
        if rated and computers:
            raise steps.no_computers()
        record, invite = steps.new_room_record(
            self.settings,
            self.clock(),
            options=options,
            seats=seats,
            public=public,
            turn_seconds=turn_seconds,
            invite=invite,
            hints=hints,
            computer_delay_ms=computer_delay_ms,
            auto_start=auto_start,
            correspondence_seconds=correspondence_seconds,
            dice_seed=dice_seed,
            rated=rated,
            tournament=tournament,
        )
        empty = Cached(0, 0, record)
        for _ in range(10):
            candidate = room_id or steps.new_room_id()
            change = Change(record)
            for level, name in computers:
                change = self.seat_computer(candidate, change.record, level, name, change)
            outcome, existing = await self._commit(candidate, empty, change, "")
            if outcome is not None:
                return CreatedRoom(candidate, invite)
            if room_id is not None and existing is not None:
                return CreatedRoom(room_id, invite)  # made by an earlier try with this create_key
        raise ServiceError(ErrorCode.CONFLICT, "could not allocate a room id")  # pragma: no cover

    def seat_computer(
        self,
        room_id: str,
        record: room.RoomRecord,
        level: str,
        name: str | None,
        so_far: Change | None = None,
    ) -> Change:
        """The change that seats a computer player of ``level`` (its events after those of
        ``so_far``); the result names its player id and seat."""
        if record.meta.rated:
            raise steps.no_computers()
        player = "c" + secrets.token_hex(6)
        name = computers.pick_name(record.game, name)
        record, events = self.apply(room_id, record, [game.Join(player, name, computer=level)])
        record = record.replace(connected={**record.connected, player: True})
        earlier = so_far.events if so_far is not None else []
        return Change(record, earlier + events, seat_result(record.game, player))

    async def if_exists(self, running: Any) -> Outcome | None:
        """Await a transaction whose room may have expired meanwhile (then: ``None``)."""
        try:
            outcome: Outcome = await running
        except ServiceError as exc:
            if exc.code != "room_not_found":
                raise
            return None
        return outcome

    # -- play ---------------------------------------------------------------------------------

    async def play(
        self,
        room_id: str,
        player_id: str,
        command: translate.PlayCommand,
        *,
        conn_id: str | None = None,
        cache_key: str = "",
    ) -> Outcome:
        """Apply a player's play command. Refused with ``not_in_room`` once another connection
        holds the seat, and with ``stale_state`` unless the room is at ``expect_seq``: both are
        checked on the very record the commit compares against, so nothing slips in between."""
        engine_command = translate.engine_command(command, player_id)
        expect_seq = command.expect_seq

        def step(cached: Cached) -> Change:
            room.require_owner(cached.record, player_id, conn_id)
            room.require_open(cached.record, self.clock())
            if expect_seq is not None and not room.expecting(cached.record, cached.seq, expect_seq):
                raise ServiceError(
                    "stale_state",
                    f"the room is at seq {cached.seq}, not {expect_seq}: read it again",
                )
            record, events = self.apply(room_id, cached.record, [engine_command])
            return Change(record, events)

        return await self.transact(room_id, step, cache_key)

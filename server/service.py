"""The game service: load -> ``server.game.apply`` -> compare-and-set save -> publish.

Side effects happen in one straight line per command: load the room record from Redis, check the
idempotency cache, run the pure engine (dice drawn here, with ``secrets``), and commit the new
record and the events with one atomic Lua script (:meth:`server.store.RoomStore.commit`). When
another writer moved the room first the commit is refused and the whole step is retried on the
fresh state, so two processes racing on one room can never both apply. After a commit the turn
deadline and the room index (process-wide keys, outside the room's hash tag) are brought in line
with the record; the deadline entry is only a hint, the record holds the truth.

The room record (JSON in Redis)::

    {"game": <server.game.to_dict>, "room": {public, invite_hash, turn_seconds, name, created_ms},
     "connected": {player_id: bool}, "spectators": int, "deadline_ms": int | null}

Log entries are dicts: the engine's ``event_to_dict`` (``rolled`` gains ``preview`` and
``bonus``), plus the service's own ``player_disconnected``, ``player_reconnected`` and
``spectators`` events. :mod:`server.translate` turns them into wire messages.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from server import game, translate
from server.feed import Feed
from server.metrics import Metrics
from server.settings import Settings
from server.store import Committed, LoadedRoom, RoomStore, now_ms

__all__ = ["GameService", "Outcome", "ServiceError", "hash_secret"]

log = logging.getLogger("yahtzee.service")

Record = dict[str, Any]
LogEvent = dict[str, Any]
Build = Callable[[game.GameState], Sequence[game.Command]]

_MAX_ATTEMPTS = 200
_TURN_PHASES = (game.Phase.AWAITING_ROLL, game.Phase.ROLLED)


class ServiceError(Exception):
    """A refusal that is not a game rule (unknown room, bad token, ...), with a stable code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def hash_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def draw_faces(count: int) -> tuple[int, ...]:
    """``count`` fair dice from the OS's cryptographically secure source."""
    return tuple(secrets.randbelow(6) + 1 for _ in range(count))


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a successful command produced: the room's seq afterwards and the ack payload."""

    seq: int
    result: dict[str, Any] = field(default_factory=dict)
    cached: bool = False


@dataclass
class _Step:
    record: Record
    events: list[LogEvent]
    result: dict[str, Any]
    seats: dict[str, str] = field(default_factory=dict)


class GameService:
    def __init__(
        self,
        store: RoomStore,
        settings: Settings,
        metrics: Metrics | None = None,
        feed: Feed | None = None,
    ) -> None:
        self.store = store
        self.settings = settings
        self.metrics = metrics or Metrics()
        self.feed = feed

    # -- the one transaction loop ------------------------------------------------------------

    async def _transact(
        self,
        room_id: str,
        step: Callable[[LoadedRoom], _Step | None],
        cache_field: str | None = None,
    ) -> Outcome:
        """Run ``step`` on the current room and commit it; retry on conflict.

        ``step`` returns ``None`` for "nothing to do" and raises ``GameError`` / ``ServiceError``
        to refuse. A ``cache_field`` already in the results cache is answered from there.
        """
        for attempt in range(_MAX_ATTEMPTS):
            loaded = await self.store.load(room_id)
            if loaded is None:
                raise ServiceError("room_not_found", f"no room {room_id!r}")
            if cache_field is not None:
                cached = await self.store.cached_result(room_id, cache_field)
                if cached is not None:
                    seq, value = cached  # the first execution's seq and result
                    return Outcome(seq, json.loads(value), cached=True)
            result = step(loaded)
            if result is None:
                return Outcome(loaded.seq)
            committed = await self._commit(room_id, loaded, result, cache_field)
            if committed is not None:
                return Outcome(committed.last_seq, result.result)
            self.metrics.cas_conflicts.inc()
            if attempt > 3:
                await asyncio.sleep(secrets.randbelow(5) / 1000)  # back off under contention
        raise ServiceError("conflict", "the room is too busy, try again")

    async def _commit(
        self, room_id: str, loaded: LoadedRoom | None, step: _Step, cache_field: str | None
    ) -> Committed | None:
        record = step.record
        phase = record["game"]["phase"]
        finished = phase == game.Phase.FINISHED
        ttl = self.settings.retention_seconds if finished else self.settings.idle_room_seconds
        out = await self.store.commit(
            room_id,
            loaded.version if loaded is not None else 0,
            record,
            step.events,
            ttl_seconds=ttl,
            seats=step.seats,
            cache_field=cache_field,
            cache_value=json.dumps(step.result),
            cache_size=self.settings.idempotency_cache_size,
        )
        if not isinstance(out, Committed):
            return None
        old_deadline = loaded.record.get("deadline_ms") if loaded is not None else None
        if record.get("deadline_ms") != old_deadline:
            await self.store.set_deadline(room_id, record.get("deadline_ms"))
        await self.store.index_put(room_id, self.summary(room_id, record), now_ms() + ttl * 1000)
        if self.feed is not None and step.events:
            self.feed.wake(room_id)
        return out

    # -- rooms -------------------------------------------------------------------------------

    async def create_room(
        self,
        *,
        options: game.RuleOptions,
        seats: int,
        public: bool = True,
        turn_seconds: int = 0,
        name: str = "",
    ) -> tuple[str, str | None]:
        """Create a room; returns its id and its invite code (private rooms only)."""
        if not 0 <= turn_seconds <= self.settings.max_turn_seconds:
            raise ServiceError(
                "unsupported", f"turn_seconds must be 0..{self.settings.max_turn_seconds} here"
            )
        if len(name) > self.settings.max_name_length * 2:
            raise ServiceError("invalid_name", "room name too long")
        state = game.new_game(options, seats)  # raises GameError on bad seats/options
        invite = None if public else secrets.token_urlsafe(12)
        record: Record = {
            "game": game.to_dict(state),
            "room": {
                "public": public,
                "invite_hash": hash_secret(invite) if invite else None,
                "turn_seconds": turn_seconds,
                "name": name,
                "created_ms": now_ms(),
            },
            "connected": {},
            "spectators": 0,
            "deadline_ms": None,
        }
        for _ in range(10):
            room_id = secrets.token_urlsafe(6).replace("-", "x").replace("_", "y")
            if await self._commit(room_id, None, _Step(record, [], {}), None) is not None:
                return room_id, invite
        raise ServiceError("conflict", "could not allocate a room id")  # pragma: no cover

    async def load(self, room_id: str) -> LoadedRoom:
        loaded = await self.store.load(room_id)
        if loaded is None:
            raise ServiceError("room_not_found", f"no room {room_id!r}")
        return loaded

    def check_invite(self, loaded: LoadedRoom, invite: str | None) -> None:
        """Private rooms need their invite code (to join or to watch)."""
        room = loaded.record["room"]
        if room["public"]:
            return
        if not invite or hash_secret(invite) != room["invite_hash"]:
            raise ServiceError("invite_required", "this room is private: a valid invite is needed")

    async def join(
        self, room_id: str, name: str, invite: str | None, cache_field: str | None = None
    ) -> Outcome:
        """Take a seat. The result holds ``player`` and the seat ``token`` (never stored)."""
        if len(name) > self.settings.max_name_length:
            raise ServiceError("invalid_name", "name too long")
        token = secrets.token_urlsafe(32)
        player_id = "p" + secrets.token_hex(6)

        def step(loaded: LoadedRoom) -> _Step:
            self.check_invite(loaded, invite)
            state = game.from_dict(loaded.record["game"])
            state, joined = game.apply(state, game.Join(player_id, name))
            events = self._log(joined, state)
            record = self._next_record(loaded.record, state, events)
            record["connected"] = {**record["connected"], player_id: True}
            token_hash = hash_secret(token)
            seats = {
                f"t:{token_hash}": player_id,
                f"p:{player_id}": json.dumps({"name": name, "token_hash": token_hash}),
            }
            seat = state.seat_of(player_id)
            return _Step(record, events, {"player": player_id, "seat": seat}, seats)

        outcome = await self._transact(room_id, step, cache_field)
        if outcome.cached:
            return outcome  # the token of a retried join is not stored anywhere: not resent
        return Outcome(outcome.seq, {**outcome.result, "token": token})

    async def authenticate(self, room_id: str, token: str) -> str:
        """The player id holding ``token`` in ``room_id``."""
        player = await self.store.seat_field(room_id, f"t:{hash_secret(token)}")
        if player is None:
            raise ServiceError("bad_token", "no seat with this token in this room")
        return player

    async def act(
        self, room_id: str, player_id: str, build: Build, cache_field: str | None = None
    ) -> Outcome:
        """Apply the commands ``build(state)`` returns, for a seated player."""

        def step(loaded: LoadedRoom) -> _Step:
            state = game.from_dict(loaded.record["game"])
            events: list[LogEvent] = []
            for command in build(state):
                state, new = game.apply(state, command)
                events += self._log(new, state)
                state = self._finish_roll_off(state, events)
            record = self._next_record(loaded.record, state, events)
            return _Step(record, events, {})

        return await self._transact(room_id, step, cache_field)

    def _finish_roll_off(self, state: game.GameState, events: list[LogEvent]) -> game.GameState:
        while state.phase == game.Phase.ROLL_OFF:
            faces = {player: draw_faces(5) for player in state.contenders}
            state, new = game.apply(state, game.RollOff(faces))
            events += self._log(new, state)
        return state

    async def set_presence(self, room_id: str, player_id: str, connected: bool) -> None:
        """Record that a player's last connection dropped, or that they are back."""

        def step(loaded: LoadedRoom) -> _Step | None:
            flags = loaded.record.get("connected", {})
            if flags.get(player_id, False) == connected:
                return None
            record = {**loaded.record, "connected": {**flags, player_id: connected}}
            kind = "player_reconnected" if connected else "player_disconnected"
            return _Step(record, [{"type": kind, "player": player_id}], {})

        try:
            await self._transact(room_id, step)
        except ServiceError as exc:
            if exc.code != "room_not_found":
                raise

    async def set_spectators(self, room_id: str, count: int) -> None:
        def step(loaded: LoadedRoom) -> _Step | None:
            if loaded.record.get("spectators", 0) == count:
                return None
            record = {**loaded.record, "spectators": count}
            return _Step(record, [{"type": "spectators", "count": count}], {})

        try:
            await self._transact(room_id, step)
        except ServiceError as exc:
            if exc.code != "room_not_found":
                raise

    # -- turn timer --------------------------------------------------------------------------

    async def fire_timer(self, room_id: str) -> bool:
        """Play the turn whose deadline passed (roll if needed, then the best box, automatic).

        Returns whether this call played it. The compare-and-set makes it exactly-once even
        when several processes try at the same moment.
        """
        fired = False

        def step(loaded: LoadedRoom) -> _Step | None:
            nonlocal fired
            fired = False
            deadline = loaded.record.get("deadline_ms")
            if deadline is None or deadline > now_ms():
                return None
            state = game.from_dict(loaded.record["game"])
            player = game.current_player(state)
            if player is None:
                return None
            events: list[LogEvent] = []
            if state.phase == game.Phase.AWAITING_ROLL:
                faces = draw_faces(len(game.dice_to_roll(state)))
                state, new = game.apply(state, game.Roll(player, faces))
                events += self._log(new, state)
            box = game.best_auto_score(state)
            state, new = game.apply(state, game.Score(player, box, automatic=True))
            events += self._log(new, state)
            fired = True
            return _Step(self._next_record(loaded.record, state, events), events, {})

        try:
            await self._transact(room_id, step)
        except ServiceError as exc:
            if exc.code != "room_not_found":
                raise
            await self.store.set_deadline(room_id, None)
            return False
        if not fired:  # not due (yet): put the hint back in line with the record
            loaded = await self.store.load(room_id)
            deadline = loaded.record.get("deadline_ms") if loaded is not None else None
            await self.store.set_deadline(room_id, deadline)
        else:
            self.metrics.timer_fired.inc()
        return fired

    async def fire_due_timers(self) -> int:
        """One sweep: claim and fire every due deadline. Returns how many this process played."""
        now = now_ms()
        played = 0
        for room_id in await self.store.due_deadlines(now):
            if await self.store.claim_deadline(room_id, now) and await self.fire_timer(room_id):
                played += 1
        return played

    # -- records -----------------------------------------------------------------------------

    def _next_record(
        self, record: Record, state: game.GameState, events: Sequence[LogEvent]
    ) -> Record:
        new = {**record, "game": game.to_dict(state)}
        turn_seconds = record["room"]["turn_seconds"]
        if state.phase not in _TURN_PHASES or not turn_seconds:
            new["deadline_ms"] = None
        elif any(e["type"] in ("turn_changed", "game_started") for e in events):
            new["deadline_ms"] = now_ms() + turn_seconds * 1000
        for event in events:
            if event["type"] == "turn_changed":
                event["deadline_ms"] = new["deadline_ms"]
        return new

    def _log(self, events: Sequence[game.Event], state: game.GameState) -> list[LogEvent]:
        out: list[LogEvent] = []
        for event in events:
            out += translate.log_entries(event, state)
        return out

    def summary(self, room_id: str, record: Record) -> dict[str, Any]:
        """The room as listed by ``GET /rooms`` (a ``RoomSummary`` dict)."""
        return translate.summary(room_id, record)

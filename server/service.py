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
     "connected": {player_id: bool}, "spectators": int, "deadline_ms": int | null,
     "owners": {player_id: connection id holding the seat},
     "away_ms": {player_id: when their last connection dropped},
     "absent_ms": int | null, "join_keys": {sha256(join_key): player_id}}

``deadline_ms`` is the turn timer; ``absent_ms`` is when the server acts for an absent player (the
player on turn, or a host blocking the lobby) in rooms without a turn timer. Both feed the
process-wide ``deadlines`` index; :meth:`GameService.fire_timer` handles either.

Seats: ``t:<sha256(token)>`` -> player id, ``p:<player id>`` -> JSON {name, token_hash}. The
``p:`` entry is authoritative: a token is valid only while it is that seat's ``token_hash``, so
leaving (``token_hash`` null, ``left`` true) or a re-issued token revokes the old one at once.

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

__all__ = ["GameService", "Outcome", "SeatTakenError", "ServiceError", "hash_secret"]

log = logging.getLogger("yahtzee.service")

Record = dict[str, Any]
LogEvent = dict[str, Any]
Build = Callable[[game.GameState], Sequence[game.Command]]

_MAX_ATTEMPTS = 200
_TURN_PHASES = (game.Phase.AWAITING_ROLL, game.Phase.ROLLED)


def _wake_at(record: Record) -> int | None:
    """The next deadline of a room record: its turn timer or its absent-player time."""
    times = [t for t in (record.get("deadline_ms"), record.get("absent_ms")) if t is not None]
    return min(times) if times else None


class ServiceError(Exception):
    """A refusal that is not a game rule (unknown room, bad token, ...), with a stable code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class SeatTakenError(ServiceError):
    """The seat is now held by another connection (a later ``rejoin``)."""

    def __init__(self) -> None:
        super().__init__("not_in_room", "this seat was taken back by another connection")


def _room_not_found(room_id: str) -> ServiceError:
    return ServiceError("room_not_found", f"no room {room_id!r}")


def _without(mapping: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in mapping.items() if k != key}


def hash_secret(secret: str) -> str:
    """The sha256 hex digest under which seat tokens, invites and join keys are stored."""
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
    """Room commands as compare-and-set transitions of the room record; see the module
    docstring for the record and the order of side effects."""

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
            if cache_field is None:
                loaded, cached = await self.store.load(room_id), None
            else:
                loaded, cached = await self.store.load_with_result(room_id, cache_field)
            if loaded is None:
                raise _room_not_found(room_id)
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

    async def _transact_if_exists(
        self, room_id: str, step: Callable[[LoadedRoom], _Step | None]
    ) -> Outcome | None:
        """:meth:`_transact` for bookkeeping that has nothing to do once the room expired."""
        try:
            return await self._transact(room_id, step)
        except ServiceError as exc:
            if exc.code != "room_not_found":
                raise
            return None

    async def _commit(
        self, room_id: str, loaded: LoadedRoom | None, step: _Step, cache_field: str | None
    ) -> Committed | None:
        record = {**step.record, "absent_ms": self._absent_at(step.record)}
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
        wake_at = _wake_at(record)
        if wake_at != (_wake_at(loaded.record) if loaded is not None else None):
            await self.store.set_deadline(room_id, wake_at)
        await self.store.index_put(
            room_id, translate.summary(room_id, record), now_ms() + ttl * 1000
        )
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
        """The room, or :class:`ServiceError` ``room_not_found``."""
        loaded = await self.store.load(room_id)
        if loaded is None:
            raise _room_not_found(room_id)
        return loaded

    def check_invite(self, loaded: LoadedRoom, invite: str | None) -> None:
        """Private rooms need their invite code (to join or to watch)."""
        room = loaded.record["room"]
        if room["public"]:
            return
        if not invite or hash_secret(invite) != room["invite_hash"]:
            raise ServiceError("invite_required", "this room is private: a valid invite is needed")

    async def join(
        self,
        room_id: str,
        name: str,
        invite: str | None,
        cache_field: str | None = None,
        *,
        conn_id: str | None = None,
        join_key: str | None = None,
    ) -> Outcome:
        """Take a seat. The result holds ``player``, ``seat``, the seat ``token`` (never stored)
        and ``previous`` (the connection that held the seat, for a repeated ``join_key``)."""
        if len(name) > self.settings.max_name_length:
            raise ServiceError("invalid_name", "name too long")
        token = secrets.token_urlsafe(32)
        token_hash = hash_secret(token)
        player_id = "p" + secrets.token_hex(6)
        key_hash = hash_secret(join_key) if join_key else None
        fields = await self.store.seat_fields(room_id) if key_hash else {}

        def step(loaded: LoadedRoom) -> _Step:
            self.check_invite(loaded, invite)
            state = game.from_dict(loaded.record["game"])
            known = loaded.record.get("join_keys", {}).get(key_hash) if key_hash else None
            record_p = state.player(known) if known else None
            if known is not None and record_p is not None and not record_p.forfeited:
                return self._reissue(loaded, state, known, token_hash, fields, conn_id)
            state, joined = game.apply(state, game.Join(player_id, name))
            events = self._log(joined, state)
            record = self._next_record(loaded.record, state, events)
            record["connected"] = {**record["connected"], player_id: True}
            if conn_id is not None:
                record["owners"] = {**record.get("owners", {}), player_id: conn_id}
            if key_hash is not None:
                record["join_keys"] = {**record.get("join_keys", {}), key_hash: player_id}
            meta = {"name": name, "token_hash": token_hash}
            seats = {f"t:{token_hash}": player_id, f"p:{player_id}": json.dumps(meta)}
            seat = state.seat_of(player_id)
            return _Step(record, events, {"player": player_id, "seat": seat}, seats)

        outcome = await self._transact(room_id, step, cache_field)
        if outcome.cached:
            return outcome  # the token of a retried join is not stored anywhere: not resent
        return Outcome(outcome.seq, {**outcome.result, "token": token})

    def _reissue(
        self,
        loaded: LoadedRoom,
        state: game.GameState,
        player: str,
        token_hash: str,
        fields: dict[str, str],
        conn_id: str | None,
    ) -> _Step:
        """A repeated ``join`` with the same ``join_key``: the same seat, a new token."""
        meta = json.loads(fields.get(f"p:{player}", "{}"))
        seats = {f"t:{token_hash}": player}
        old_hash = meta.get("token_hash")
        if old_hash and old_hash != token_hash:
            seats[f"t:{old_hash}"] = ""  # revoked (also by the p: entry below)
        seats[f"p:{player}"] = json.dumps({**meta, "token_hash": token_hash})
        record, events, previous = self._claimed(loaded.record, player, conn_id)
        result = {"player": player, "seat": state.seat_of(player), "previous": previous}
        return _Step(record, events, result, seats)

    def _claimed(
        self, record: Record, player: str, conn_id: str | None
    ) -> tuple[Record, list[LogEvent], str | None]:
        """``record`` with ``player`` connected through ``conn_id``; the events; the old owner."""
        owners = record.get("owners", {})
        previous = owners.get(player)
        was_connected = record.get("connected", {}).get(player, False)
        new = {
            **record,
            "connected": {**record.get("connected", {}), player: True},
            "away_ms": _without(record.get("away_ms", {}), player),
        }
        if conn_id is not None:
            new["owners"] = {**owners, player: conn_id}
        events = [] if was_connected else [{"type": "player_reconnected", "player": player}]
        return new, events, previous if previous != conn_id else None

    async def authenticate(self, room_id: str, token: str) -> str:
        """The player id holding ``token`` in ``room_id``."""
        token_hash = hash_secret(token)
        player = await self.store.seat_field(room_id, f"t:{token_hash}")
        if player is not None:
            meta = await self.store.seat_field(room_id, f"p:{player}")
            if meta is not None and json.loads(meta).get("token_hash") == token_hash:
                return player
        raise ServiceError("bad_token", "no seat with this token in this room")

    async def act(
        self,
        room_id: str,
        player_id: str,
        build: Build,
        cache_field: str | None = None,
        conn_id: str | None = None,
        expect_seq: int | None = None,
    ) -> Outcome:
        """Apply the commands ``build(state)`` returns, for a seated player.

        With ``conn_id``, refused (:class:`SeatTakenError`) once another connection holds the
        seat: checked inside the compare-and-set, so two connections never act for one seat.
        With ``expect_seq``, refused (``stale_state``) unless the room's seq is exactly that,
        checked on the very state the commit compares against, so no event slips in between.
        """

        def step(loaded: LoadedRoom) -> _Step:
            self._check_owner(loaded.record, player_id, conn_id)
            if expect_seq is not None and loaded.seq != expect_seq:
                raise ServiceError(
                    "stale_state",
                    f"the room is at seq {loaded.seq}, not {expect_seq}: read it again",
                )
            state = game.from_dict(loaded.record["game"])
            events: list[LogEvent] = []
            for command in build(state):
                state, new = game.apply(state, command)
                events += self._log(new, state)
                state = self._finish_roll_off(state, events)
            record = self._next_record(loaded.record, state, events)
            return _Step(record, events, {})

        return await self._transact(room_id, step, cache_field)

    @staticmethod
    def _check_owner(record: Record, player: str, conn_id: str | None) -> None:
        if conn_id is None:
            return
        owner = record.get("owners", {}).get(player)
        if owner is not None and owner != conn_id:
            raise SeatTakenError()

    async def leave(
        self, room_id: str, player_id: str, conn_id: str | None, cache_field: str | None = None
    ) -> Outcome:
        """Give the seat up for good (forfeit during a game) and revoke its token."""
        fields = await self.store.seat_fields(room_id)

        def step(loaded: LoadedRoom) -> _Step:
            self._check_owner(loaded.record, player_id, conn_id)
            state = game.from_dict(loaded.record["game"])
            events: list[LogEvent] = []
            if state.phase != game.Phase.FINISHED:  # after game over there is nothing to forfeit
                state, new = game.apply(state, game.Leave(player_id))
                events = self._log(new, state)
                state = self._finish_roll_off(state, events)
            record = self._forget(self._next_record(loaded.record, state, events), player_id)
            return _Step(record, events, {}, self._revoke(fields, player_id))

        return await self._transact(room_id, step, cache_field)

    @staticmethod
    def _forget(record: Record, player: str) -> Record:
        """``record`` without the connection bookkeeping of a player who is gone for good."""
        return {
            **record,
            "owners": _without(record.get("owners", {}), player),
            "away_ms": _without(record.get("away_ms", {}), player),
            "join_keys": {k: v for k, v in record.get("join_keys", {}).items() if v != player},
        }

    @staticmethod
    def _revoke(fields: dict[str, str], player: str) -> dict[str, str]:
        """Seat-field changes that make ``player``'s token invalid."""
        meta = json.loads(fields.get(f"p:{player}", "{}"))
        changes = {f"p:{player}": json.dumps({**meta, "token_hash": None, "left": True})}
        if meta.get("token_hash"):
            changes[f"t:{meta['token_hash']}"] = ""
        return changes

    def _finish_roll_off(self, state: game.GameState, events: list[LogEvent]) -> game.GameState:
        while state.phase == game.Phase.ROLL_OFF:
            faces = {player: draw_faces(5) for player in state.contenders}
            state, new = game.apply(state, game.RollOff(faces))
            events += self._log(new, state)
        return state

    async def claim_seat(
        self, room_id: str, player_id: str, conn_id: str, *, reclaim: bool = False
    ) -> str | None:
        """Connection ``conn_id`` now holds the seat (``player_reconnected`` if it was marked
        disconnected). Returns the connection that held it before, to be closed. With
        ``reclaim`` (a renewed lease that had been swept) nothing is taken from a newer owner.
        """
        previous: str | None = None

        def step(loaded: LoadedRoom) -> _Step | None:
            nonlocal previous
            record = loaded.record
            owner = record.get("owners", {}).get(player_id)
            connected = record.get("connected", {}).get(player_id, False)
            if owner == conn_id and connected:
                return None
            if reclaim and owner not in (None, conn_id):
                return None
            state = game.from_dict(record["game"])
            player = state.player(player_id)
            if player is None or player.forfeited:
                return None
            new, events, previous = self._claimed(record, player_id, conn_id)
            return _Step(new, events, {})

        await self._transact_if_exists(room_id, step)
        return previous

    async def release_seat(self, room_id: str, player_id: str, conn_id: str | None) -> None:
        """The connection ``conn_id`` of a player is gone: ``player_disconnected``, unless
        another connection holds the seat by now (or the player is already marked away)."""

        def step(loaded: LoadedRoom) -> _Step | None:
            record = loaded.record
            owner = record.get("owners", {}).get(player_id)
            if conn_id is not None and owner not in (None, conn_id):
                return None
            if not record.get("connected", {}).get(player_id, False):
                return None
            new = {
                **record,
                "connected": {**record.get("connected", {}), player_id: False},
                "away_ms": {**record.get("away_ms", {}), player_id: now_ms()},
            }
            return _Step(new, [{"type": "player_disconnected", "player": player_id}], {})

        await self._transact_if_exists(room_id, step)

    async def sweep_player_leases(self) -> int:
        """Mark the players of expired leases (a dead process's) disconnected; each lease is
        claimed by exactly one sweeper. Returns how many this call claimed."""
        now = now_ms()
        claimed = 0
        for member, room_id, player_id, conn_id in await self.store.expired_player_leases(now):
            if await self.store.claim_player_lease(member, now):
                claimed += 1
                await self.release_seat(room_id, player_id, conn_id)
        return claimed

    async def set_spectators(self, room_id: str, count: int) -> None:
        def step(loaded: LoadedRoom) -> _Step | None:
            if loaded.record.get("spectators", 0) == count:
                return None
            record = {**loaded.record, "spectators": count}
            return _Step(record, [{"type": "spectators", "count": count}], {})

        await self._transact_if_exists(room_id, step)

    # -- turn timer --------------------------------------------------------------------------

    async def fire_timer(self, room_id: str) -> bool:
        """Act on a due deadline: play the turn (roll if needed, then the best box, automatic)
        when the turn timer ran out or the player on turn is absent; remove a host who is
        absent and blocks the lobby.

        Returns whether this call acted. The compare-and-set makes it exactly-once even when
        several processes try at the same moment.
        """
        fired = False
        wake_at: int | None = None
        fields = await self.store.seat_fields(room_id)

        def step(loaded: LoadedRoom) -> _Step | None:
            nonlocal fired, wake_at
            fired = False
            now = now_ms()
            record = loaded.record
            wake_at = _wake_at(record)
            deadline = record.get("deadline_ms")
            absent = record.get("absent_ms")
            turn_due = deadline is not None and deadline <= now
            absent_due = absent is not None and absent <= now
            if not (turn_due or absent_due):
                return None
            state = game.from_dict(record["game"])
            events: list[LogEvent] = []
            if state.phase == game.Phase.LOBBY:
                host = state.host
                if not absent_due or host is None:
                    return None
                state, new = game.apply(state, game.Leave(host))
                events += self._log(new, state)
                new_record = self._forget(self._next_record(record, state, events), host)
                fired = True
                return _Step(new_record, events, {}, self._revoke(fields, host))
            player = game.current_player(state)
            if player is None:
                return None
            if state.phase == game.Phase.AWAITING_ROLL:
                faces = draw_faces(len(game.dice_to_roll(state)))
                state, new = game.apply(state, game.Roll(player, faces))
                events += self._log(new, state)
            box = game.best_auto_score(state)
            state, new = game.apply(state, game.Score(player, box, automatic=True))
            events += self._log(new, state)
            fired = True
            return _Step(self._next_record(record, state, events), events, {})

        if await self._transact_if_exists(room_id, step) is None:
            await self.store.set_deadline(room_id, None)  # the room expired
            return False
        if fired:
            self.metrics.timer_fired.inc()
        else:  # not due (yet): put the hint back in line with the record step saw last
            await self.store.set_deadline(room_id, wake_at)
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
                event["server_time_ms"] = now_ms()
        return new

    def _absent_at(self, record: Record) -> int | None:
        """When the server acts for an absent player in ``record`` (None: nobody blocks)."""
        grace = self.settings.absent_turn_seconds
        away: dict[str, int] = record.get("away_ms", {})
        if grace <= 0 or not away:
            return None
        state = game.from_dict(record["game"])
        blocker: str | None = None
        if state.phase in _TURN_PHASES and not record["room"]["turn_seconds"]:
            blocker = game.current_player(state)
        elif state.phase == game.Phase.LOBBY:
            connected = record.get("connected", {})
            others = [p for p in state.players if p.player_id != state.host]
            if any(connected.get(p.player_id, False) for p in others):
                blocker = state.host
        if blocker is None or blocker not in away:
            return None
        return int(away[blocker] + grace * 1000)

    def _log(self, events: Sequence[game.Event], state: game.GameState) -> list[LogEvent]:
        out: list[LogEvent] = []
        for event in events:
            out += translate.log_entries(event, state)
        return out

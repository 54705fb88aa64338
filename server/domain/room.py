"""The room record and its rules, as pure functions (no I/O, no clock: ``now`` is an argument).

A room is the game state plus what the service knows about people and time:

- ``meta``: fixed at creation (public or private, the invite's hash, the turn timer, the
  secret dice seed);
- ``connected`` / ``owners`` / ``away_ms``: which players are connected, through which
  connection (a seat is held by exactly one connection), and since when an absent one is away;
- ``deadline_ms`` (the turn timer) and ``absent_ms`` (when the server plays for an absent player
  or removes an absent host who blocks the lobby): the room's next wake-up is the earlier one
  (:mod:`server.domain.deadlines` computes them);
- ``join_keys``: hashes of the clients' ``join_key`` -> player, so a retried join finds its seat;
- ``seeds`` and ``draws``: the players' dice seeds and how many dice draws were made (the
  provably fair dice of ``protocol.fairdice``);
- ``spectators``: the spectator count last announced;
- ``game_seq``: the seq of the room's last event that is not a spectator count (``None`` in a
  record stored before it was kept): ``expect_seq`` is checked against it (SPEC.md 10.8);
- ``computer_ms``: when the computer player on turn makes its next move (``None`` when a
  person is on turn); computers move through the same deadline machinery as the turn timer;
- ``rematch``: the rematch room offered after the game (its id, its invite code for a private
  one, and the secret from which each old player's seat there is keyed), once one was offered.

Every function returns a new record; a record is never changed in place. Room-level events
(a player connected again, went away, the spectator count changed) are returned as values for
:mod:`server.boundary.translate` to put on the wire.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from protocol.errors import ErrorCode
from server import game
from server.domain.refusals import RefusalError
from server.game.copying import copyable, replaced

__all__ = [
    "RECORD_FORMAT",
    "TURN_PHASES",
    "PlayerAway",
    "PlayerBack",
    "Rematch",
    "RematchOffer",
    "RoomError",
    "RoomEvent",
    "RoomMeta",
    "RoomRecord",
    "SeatTakenError",
    "SpectatorCount",
    "TournamentClosedError",
    "after_game",
    "away_deadline",
    "claim",
    "forget",
    "hash_secret",
    "invite_matches",
    "new_record",
    "release",
    "require_open",
    "require_owner",
]

RECORD_FORMAT = 2
"""Version of the stored record layout."""

TURN_PHASES = (game.Phase.AWAITING_ROLL, game.Phase.ROLLED)


def hash_secret(secret: str) -> str:
    """The sha256 hex digest under which seat tokens, invites and join keys are stored."""
    return hashlib.sha256(secret.encode()).hexdigest()


class RoomError(RefusalError):
    """Base of the room layer's refusals."""


class SeatTakenError(RoomError):
    """The seat is now held by another connection (a later ``rejoin`` took it over)."""

    def __init__(self) -> None:
        super().__init__(ErrorCode.NOT_IN_ROOM, "this seat was taken back by another connection")


# -- room events (not rules events: who is connected, how many watch) ---------------------------


@dataclass(frozen=True, slots=True)
class PlayerBack:
    """A player who was marked disconnected holds their seat again."""

    player: str


@dataclass(frozen=True, slots=True)
class PlayerAway:
    """A player's connection is gone; the seat is kept. ``deadline_ms``: from when the server
    plays their turns (:func:`away_deadline`)."""

    player: str
    deadline_ms: int | None = None


@dataclass(frozen=True, slots=True)
class SpectatorCount:
    """The number of spectators changed."""

    count: int


@dataclass(frozen=True, slots=True)
class RematchOffer:
    """``player`` offered a rematch of the finished game in room ``room`` (``invite``: its
    code, for a private room)."""

    player: str
    room: str
    invite: str | None


@dataclass(frozen=True, slots=True)
class RatingLine:
    """What an archived game did to one person's ratings (the ``ratings`` event's entry)."""

    player: str
    identity: str
    before: int
    after: int
    provisional: bool
    accuracy: float | None = None
    luck: float | None = None
    decision_rating: int | None = None


@dataclass(frozen=True, slots=True)
class RatingsAnnounced:
    """The ratings a rated game moved, told to the room once its archive row is committed."""

    family: str
    lines: tuple[RatingLine, ...]


RoomEvent = PlayerBack | PlayerAway | SpectatorCount | RematchOffer | RatingsAnnounced


# -- the record ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RoomMeta:
    """What is fixed when the room is created."""

    public: bool
    invite_hash: str | None
    turn_seconds: int
    created_ms: int
    dice_seed: str
    """The secret server seed (hex); revealed in ``game_over``, never before."""
    name: str = ""
    hints: bool = True
    """Players and spectators may ask the advisor (``hint``)."""
    computer_delay_ms: int = 0
    """Pause before each move of a computer player."""
    auto_start: bool = False
    """The game starts by itself when the last seat is taken."""
    correspondence: bool = False
    """A correspondence room (protocol 1.4): ``turn_seconds`` is its long clock (hours to
    days); the room lives as long as its game runs, and nobody is treated as absent."""
    rated: bool = False
    """A rated room: every person has an identity, no computer sits, the result moves ratings."""
    tournament: str = ""
    """The tournament this room is an entry of ("": none). An entry's dice are the duplicate
    dice of :mod:`protocol.duplicate` (``dice_seed`` is the tournament's seed, so it is never
    revealed by the room), and nobody plays for its absent player."""
    closes_ms: int | None = None
    """When play stops in this room (a tournament's end time); ``None``: never."""


@dataclass(frozen=True, slots=True)
class Rematch:
    """The rematch offered after a room's game: the new room, its invite code (private rooms
    only) and ``key``, a secret that keys each old player's seat there (never on the wire)."""

    room: str
    invite: str | None
    key: str


# not slots: a commit copies it a few times, and copyable() copies the instance dict (4 x faster)
@copyable
@dataclass(frozen=True)
class RoomRecord:
    """One room: the game and the service's bookkeeping (see the module docstring)."""

    game: game.GameState
    meta: RoomMeta
    connected: Mapping[str, bool] = field(default_factory=dict)
    owners: Mapping[str, str] = field(default_factory=dict)
    away_ms: Mapping[str, int] = field(default_factory=dict)
    join_keys: Mapping[str, str] = field(default_factory=dict)
    seeds: Mapping[str, str] = field(default_factory=dict)
    spectators: int = 0
    deadline_ms: int | None = None
    absent_ms: int | None = None
    draws: int = 0
    computer_ms: int | None = None
    game_seq: int | None = None
    rematch: Rematch | None = None
    ratings_told: bool = False
    """The ``ratings`` event of this room's rated game is in its log (it is told once)."""

    def replace(self, **changes: Any) -> RoomRecord:
        """A copy with ``changes`` (field names checked, as :func:`dataclasses.replace`)."""
        return replaced(self, **changes)


def new_record(
    state: game.GameState,
    *,
    public: bool,
    invite_hash: str | None,
    turn_seconds: int,
    now: int,
    dice_seed: str,
    name: str = "",
    hints: bool = True,
    computer_delay_ms: int = 0,
    auto_start: bool = False,
    correspondence: bool = False,
    rated: bool = False,
    tournament: str = "",
    closes_ms: int | None = None,
) -> RoomRecord:
    """A fresh room around a new game."""
    meta = RoomMeta(
        public,
        invite_hash,
        turn_seconds,
        now,
        dice_seed,
        name,
        hints,
        computer_delay_ms,
        auto_start,
        correspondence,
        rated,
        tournament,
        closes_ms,
    )
    return RoomRecord(game=state, meta=meta)


class TournamentClosedError(RoomError):
    """A play command in a tournament entry after the tournament's end time."""

    def __init__(self) -> None:
        super().__init__(ErrorCode.TOURNAMENT_CLOSED, "the tournament is over: no more play")


def require_open(record: RoomRecord, now: int) -> None:
    """Raise :class:`TournamentClosedError` once the room's ``closes_ms`` has passed."""
    if record.meta.closes_ms is not None and now >= record.meta.closes_ms:
        raise TournamentClosedError()


def expecting(record: RoomRecord, seq: int, expect_seq: int) -> bool:
    """Whether a command whose client last saw ``expect_seq`` acts on the room's current state
    (at ``seq``): no event but spectator counts came after it (SPEC.md 10.8)."""
    since = record.game_seq if record.game_seq is not None else seq
    return since <= expect_seq <= seq


# -- rules of the record --------------------------------------------------------------------------


def _without(mapping: Mapping[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in mapping.items() if k != key}


def invite_matches(record: RoomRecord, invite: str | None) -> bool:
    """Public rooms admit everyone; private ones need their invite code."""
    if record.meta.public:
        return True
    return bool(invite) and hash_secret(invite or "") == record.meta.invite_hash


def require_owner(record: RoomRecord, player: str, conn_id: str | None) -> None:
    """Raise :class:`SeatTakenError` when another connection holds ``player``'s seat."""
    if conn_id is None:
        return
    owner = record.owners.get(player)
    if owner is not None and owner != conn_id:
        raise SeatTakenError()


def claim(
    record: RoomRecord, player: str, conn_id: str | None
) -> tuple[RoomRecord, list[RoomEvent], str | None]:
    """``player`` connected through ``conn_id``: the new record, its events, and the connection
    that held the seat before (to be closed), if another one did."""
    previous = record.owners.get(player)
    was_connected = record.connected.get(player, False)
    owners = dict(record.owners)
    if conn_id is not None:
        owners[player] = conn_id
    new = record.replace(
        connected={**record.connected, player: True},
        away_ms=_without(record.away_ms, player),
        owners=owners,
    )
    events: list[RoomEvent] = [] if was_connected else [PlayerBack(player)]
    return new, events, previous if previous != conn_id else None


def release(
    record: RoomRecord, player: str, conn_id: str | None, now: int, grace_seconds: float = 0.0
) -> tuple[RoomRecord, list[RoomEvent]] | None:
    """The connection ``conn_id`` of ``player`` is gone. ``None`` when nothing changes: another
    connection holds the seat by now, or the player is already marked away. ``grace_seconds``:
    the absent-player grace, for the event's deadline."""
    owner = record.owners.get(player)
    if conn_id is not None and owner not in (None, conn_id):
        return None
    if not record.connected.get(player, False):
        return None
    new = record.replace(
        connected={**record.connected, player: False},
        away_ms={**record.away_ms, player: now},
    )
    return new, [PlayerAway(player, away_deadline(new, player, grace_seconds))]


def forget(record: RoomRecord, player: str) -> RoomRecord:
    """The record without the connection bookkeeping of a player who is gone for good."""
    return record.replace(
        owners=_without(record.owners, player),
        away_ms=_without(record.away_ms, player),
        join_keys={k: v for k, v in record.join_keys.items() if v != player},
    )


def after_game(
    record: RoomRecord, state: game.GameState, turn_began: bool, now: int, draws: int | None = None
) -> RoomRecord:
    """The record holding ``state`` (and ``draws`` dice drawn, when given); the turn timer
    restarts when a turn began."""
    turn_seconds = record.meta.turn_seconds
    deadline = record.deadline_ms
    if state.phase not in TURN_PHASES or not turn_seconds:
        deadline = None
    elif turn_began:
        deadline = now + turn_seconds * 1000
    if draws is None:
        return record.replace(game=state, deadline_ms=deadline)
    return record.replace(game=state, deadline_ms=deadline, draws=draws)


def away_deadline(record: RoomRecord, player: str, grace_seconds: float) -> int | None:
    """From when the server plays the turns of ``player``, who is away (``None``: not away, the
    grace is off, a turn timer plays for everyone alike, or the game is over)."""
    since = record.away_ms.get(player)
    if since is None or grace_seconds <= 0 or record.meta.turn_seconds:
        return None
    if record.meta.tournament:
        return None
    if record.game.phase == game.Phase.FINISHED:
        return None
    return int(since + grace_seconds * 1000)

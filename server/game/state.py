"""The immutable game state and read-only queries on it."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from .copying import copyable
from .errors import InvalidCommandError, NotAPlayerError
from .events import Standing
from .options import RuleOptions
from .scorecard import Scorecard, Totals
from .scoring import DICE_COUNT

__all__ = [
    "DICE_COUNT",
    "MAX_ROLLS",
    "MAX_SEATS",
    "GameState",
    "Phase",
    "PlayerState",
    "current_player",
    "new_game",
    "rolls_left",
    "scorecard",
    "standings",
    "totals",
]

MAX_SEATS = 8
MAX_ROLLS = 3


class Phase(StrEnum):
    """Where the game is. See :data:`server.game.transitions.TRANSITIONS`."""

    LOBBY = "lobby"
    ROLL_OFF = "roll_off"
    AWAITING_ROLL = "awaiting_roll"
    ROLLED = "rolled"
    FINISHED = "finished"


@copyable
@dataclass(frozen=True)
class PlayerState:
    """One seat: the caller's opaque ``player_id``, the display name, the card, whether the
    player left during the game (``forfeited``: their remaining turns are skipped), and
    ``computer``: ``None`` for a person, else the label of a computer seat (its level; the
    rules only ask whether it is set: a computer is never the host)."""

    player_id: str
    name: str
    card: Scorecard
    forfeited: bool = False
    computer: str | None = None


@copyable
@dataclass(frozen=True)
class GameState:
    """The whole state of one room. Never mutated: :func:`server.game.apply` returns a new one.

    - ``players``: seats in join order (seat = index); in the lobby they compact on leave.
    - ``order``: play order of player ids (every seat, first player first), set at start.
    - ``turn``: index into ``order`` of the player on turn (phases awaiting_roll and rolled).
    - ``dice``: the five faces after a roll of this turn, ``()`` before the first roll.
    - ``held``: indexes 0..4 of the held dice; ``rolls_used``: 0..3 rolls made this turn.
    - ``contenders`` / ``roll_off_round``: the roll-off still to be rolled (phase roll_off).
    """

    options: RuleOptions
    max_seats: int
    phase: Phase = Phase.LOBBY
    players: tuple[PlayerState, ...] = ()
    order: tuple[str, ...] = ()
    turn: int = 0
    dice: tuple[int, ...] = ()
    held: frozenset[int] = field(default_factory=frozenset)
    rolls_used: int = 0
    contenders: tuple[str, ...] = ()
    roll_off_round: int = 0

    def seat_of(self, player: str) -> int | None:
        """The seat of ``player``, or ``None`` if they have no seat."""
        for seat, p in enumerate(self.players):
            if p.player_id == player:
                return seat
        return None

    def player(self, player: str) -> PlayerState | None:
        """The seat record of ``player``, or ``None``."""
        seat = self.seat_of(player)
        return None if seat is None else self.players[seat]

    @property
    def host(self) -> str | None:
        """The host: the first person's seat that has not forfeited (``None`` when there is
        none: an empty room, or only computers)."""
        for p in self.players:
            if not p.forfeited and p.computer is None:
                return p.player_id
        return None


def new_game(options: RuleOptions, max_seats: int) -> GameState:
    """A new room in the lobby with ``max_seats`` seats (1..8) and the given options."""
    if not isinstance(options, RuleOptions):
        raise InvalidCommandError("options must be a RuleOptions")
    if type(max_seats) is not int or not 1 <= max_seats <= MAX_SEATS:
        raise InvalidCommandError(f"max_seats must be 1..{MAX_SEATS}, not {max_seats!r}")
    return GameState(options=options, max_seats=max_seats)


def current_player(state: GameState) -> str | None:
    """The player on turn, or ``None`` outside phases awaiting_roll and rolled."""
    if state.phase in (Phase.AWAITING_ROLL, Phase.ROLLED):
        return state.order[state.turn]
    return None


def rolls_left(state: GameState) -> int:
    """Rolls left in the current turn (3, 2, 1, 0); 0 when no turn is in progress."""
    if state.phase in (Phase.AWAITING_ROLL, Phase.ROLLED):
        return MAX_ROLLS - state.rolls_used
    return 0


def scorecard(state: GameState, player: str) -> Scorecard:
    """The score card of ``player`` (also after they forfeited); ``NotAPlayerError`` if unseated."""
    record = state.player(player)
    if record is None:
        raise NotAPlayerError(f"{player!r} has no seat")
    return record.card


def totals(state: GameState, player: str) -> Totals:
    """The totals of ``player``'s card."""
    return scorecard(state, player).totals()


def standings(state: GameState) -> tuple[Standing, ...]:
    """The ranking: players still in the game by grand total, then forfeited players by total.

    Equal totals (within the same group) share a place; places skip accordingly (1, 1, 3).
    Ties keep seat order.
    """
    rows = sorted(
        ((p.forfeited, -p.card.totals().grand, seat, p) for seat, p in enumerate(state.players)),
        key=lambda row: row[:3],
    )
    result: list[Standing] = []
    for index, (forfeited, minus_total, _, p) in enumerate(rows):
        place = index + 1
        if result and (result[-1].forfeited, -result[-1].total) == (forfeited, minus_total):
            place = result[-1].place
        result.append(Standing(p.player_id, -minus_total, place, forfeited))
    return tuple(result)

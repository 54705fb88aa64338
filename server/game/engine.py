"""The rules engine: ``apply(state, command) -> (new_state, events)``.

Theory of operation
-------------------
A room is a :class:`~server.game.state.GameState`, an immutable value. The only way to change
it is :func:`apply`, which either returns a *new* state plus the events that describe the change,
or raises a :class:`~server.game.errors.GameError` with a stable code. Because every guard runs
before any new state is built, and states are frozen, a refused command leaves nothing behind:
the caller still holds the unchanged old state. The engine does no I/O and draws no random
numbers: the service draws dice faces (and the random first player) and passes them in the
commands, so every game can be replayed from its command log.

Phases (:class:`~server.game.state.Phase`)::

    lobby --start--> roll_off --roll_off (one winner)--> awaiting_roll
    lobby --start (seat_order / random / solo)--------> awaiting_roll
    awaiting_roll --roll--> rolled --roll/hold/release--> rolled
    rolled --score--> awaiting_roll (next player) | finished (every card full / everyone left)
    rolled --take_bonus (bonus_turn)--> awaiting_roll (next player still playing with an open box)

Which command is possible in which phase, and where it may lead, is the data table
:data:`~server.game.transitions.TRANSITIONS`; :func:`apply` checks the table first and checks
the resulting phase against it afterwards. Guards always run in the same order: phase (the
table), player (seat, host, turn), rolls (``must_roll_first``, ``no_rolls_left``, the dice),
box (``unknown_box``, ``category_taken``, ``box_not_allowed``; ``take_bonus`` has only the last).

Turns follow ``state.order`` (every seat, first player first). A player who leaves during the
game forfeits: their card stays, their turns are skipped, and the game ends when no player is
left who is still playing and has an open box.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Mapping

from .boxes import Box, boxes_for
from .commands import (
    COMMAND_TYPES,
    Command,
    Hold,
    Join,
    Leave,
    Release,
    Roll,
    RollOff,
    Score,
    Start,
    TakeBonus,
)
from .copying import replaced
from .errors import (
    AlreadyJoinedError,
    BoxNotAllowedError,
    CategoryTakenError,
    InvalidCommandError,
    InvalidDiceError,
    InvalidNameError,
    NameTakenError,
    NotHostError,
    RoomFullError,
    UnknownBoxError,
)
from .events import (
    BonusTaken,
    Event,
    GameOver,
    GameStarted,
    HoldChanged,
    HostChanged,
    PlayerJoined,
    PlayerLeft,
    Rolled,
    RollOffEntry,
    RollOffRolled,
    RollOffStarted,
    Scored,
    TurnChanged,
)
from .guards import check_table, plan_roll, require_member, require_rolls_left, require_turn
from .guards import to_die_indexes as _to_die_indexes
from .options import FirstPlayer
from .preview import bonus_take_allowed, box_previews, joker_in_force, yahtzee_bonus_due
from .scorecard import Scorecard
from .scoring import DICE_COUNT, YAHTZEE_BONUS
from .state import MAX_ROLLS, GameState, Phase, PlayerState, standings
from .transitions import TRANSITIONS, Allowed, Guard

__all__ = ["MAX_NAME_LENGTH", "apply", "dice_to_roll"]

MAX_NAME_LENGTH = 32
MAX_PLAYER_ID_LENGTH = 128

_Result = tuple[GameState, list[Event]]


def apply(state: GameState, command: Command) -> tuple[GameState, tuple[Event, ...]]:
    """Apply ``command`` to ``state``: the new state and the events, or a ``GameError``.

    ``state`` is never changed; on error no new state exists.
    """
    if not isinstance(command, COMMAND_TYPES):
        raise InvalidCommandError(f"unknown command {type(command).__name__}")
    check_table(state, command.kind, Guard.PHASE)
    new_state, events = _dispatch(state, command)
    cell = TRANSITIONS[state.phase][command.kind]
    if not isinstance(cell, Allowed) or new_state.phase not in cell.next_phases:
        raise AssertionError(  # pragma: no cover - a bug in the engine, not a refusal
            f"{command.kind} led from {state.phase} to {new_state.phase}, against the table"
        )
    return new_state, tuple(events)


def _dispatch(state: GameState, command: Command) -> _Result:
    if isinstance(command, Join):
        return _join(state, command)
    if isinstance(command, Leave):
        return _leave(state, command)
    if isinstance(command, Start):
        return _start(state, command)
    if isinstance(command, RollOff):
        return _roll_off(state, command)
    if isinstance(command, Roll):
        return _roll(state, command)
    if isinstance(command, Hold | Release):
        return _hold_or_release(state, command)
    if isinstance(command, TakeBonus):
        return _take_bonus(state, command)
    return _score(state, command)


def dice_to_roll(state: GameState, keep: Iterable[int] | None = None) -> tuple[int, ...]:
    """The die indexes a :class:`Roll` with this ``keep`` would roll now (all five on roll 1).

    The service calls it to know how many faces to draw. Raises what the Roll would raise,
    except the player check (it concerns whoever is on turn).
    """
    check_table(state, Roll.kind, Guard.PHASE)
    check_table(state, Roll.kind, Guard.ROLLS)
    require_rolls_left(state)
    return plan_roll(state, keep)[0]


# -- lobby ---------------------------------------------------------------------------------------


def _check_player_id(player: object) -> str:
    if not isinstance(player, str) or not player or len(player) > MAX_PLAYER_ID_LENGTH:
        raise InvalidCommandError(
            f"a player id is a non-empty string of at most {MAX_PLAYER_ID_LENGTH} characters"
        )
    return player


def _check_name(state: GameState, name: object) -> str:
    if not isinstance(name, str):
        raise InvalidNameError()
    clean = name.strip()
    if not 1 <= len(clean) <= MAX_NAME_LENGTH or any(
        unicodedata.category(ch).startswith("C") for ch in clean
    ):
        raise InvalidNameError(
            f"a name is 1 to {MAX_NAME_LENGTH} printable characters, not {name!r}"
        )
    if any(p.name.casefold() == clean.casefold() for p in state.players if not p.forfeited):
        raise NameTakenError(f"the name {clean!r} is taken")
    return clean


def _join(state: GameState, command: Join) -> _Result:
    player = _check_player_id(command.player)
    if state.seat_of(player) is not None:
        raise AlreadyJoinedError(f"{player!r} already has seat {state.seat_of(player)}")
    if len(state.players) >= state.max_seats:
        raise RoomFullError(f"all {state.max_seats} seats are taken")
    name = _check_name(state, command.name)
    seat = len(state.players)
    computer = command.computer
    if computer is not None and (not isinstance(computer, str) or not computer):
        raise InvalidCommandError(
            f"a computer seat's label is a non-empty string, not {computer!r}"
        )
    record = PlayerState(player, name, Scorecard.empty(state.options.rules), computer=computer)
    new_state = replaced(state, players=(*state.players, record))
    events: list[Event] = [PlayerJoined(player, name, seat, computer)]
    return new_state, events + _host_change(state, new_state)


def _host_change(old: GameState, new: GameState) -> list[Event]:
    if new.host is not None and new.host != old.host:
        return [HostChanged(new.host)]
    return []


def _leave(state: GameState, command: Leave) -> _Result:
    record = require_member(state, command.player)
    seat = state.players.index(record)
    if state.phase is Phase.LOBBY:
        new_state = replaced(state, players=state.players[:seat] + state.players[seat + 1 :])
        events: list[Event] = [PlayerLeft(record.player_id, seat, False)]
        return new_state, events + _host_change(state, new_state)

    gone = replaced(record, forfeited=True)
    new_state = _with_seat(state, seat, gone)
    events = [PlayerLeft(record.player_id, seat, True), *_host_change(state, new_state)]
    if state.phase is Phase.ROLL_OFF:
        contenders = tuple(c for c in state.contenders if c != record.player_id)
        if len(contenders) == 1:
            return _begin_play(new_state, contenders[0], FirstPlayer.ROLL_OFF, events)
        return replaced(new_state, contenders=contenders), events
    if state.order[state.turn] == record.player_id:
        return _advance_turn(new_state, events)
    return new_state, events


def _start(state: GameState, command: Start) -> _Result:
    require_member(state, command.player)
    if state.host != command.player:
        raise NotHostError(f"only the host {state.host!r} may start the game")
    if type(command.random_choice) is not int:
        raise InvalidCommandError("random_choice must be an integer")
    seats = tuple(p.player_id for p in state.players)
    mode = state.options.first_player
    if mode is FirstPlayer.ROLL_OFF and len(seats) > 1:
        new_state = replaced(state, phase=Phase.ROLL_OFF, contenders=seats, roll_off_round=1)
        return new_state, [RollOffStarted(seats)]
    if len(seats) == 1:
        # Nothing to decide with one player: play starts at once, reported as seat order.
        mode = FirstPlayer.SEAT_ORDER
    first = seats[command.random_choice % len(seats)] if mode is FirstPlayer.RANDOM else seats[0]
    return _begin_play(state, first, mode, [])


# -- roll-off ------------------------------------------------------------------------------------


def _roll_off(state: GameState, command: RollOff) -> _Result:
    faces = command.faces
    if not isinstance(faces, Mapping) or set(faces) != set(state.contenders):
        raise InvalidDiceError(
            f"the roll-off needs exactly one roll for each of {list(state.contenders)!r}"
        )
    rolls = tuple(
        RollOffEntry(p, dice, sum(dice))
        for p in state.contenders
        for dice in (_check_faces(faces[p], DICE_COUNT),)
    )
    best = max(entry.total for entry in rolls)
    tied = tuple(entry.player for entry in rolls if entry.total == best)
    events: list[Event] = [RollOffRolled(state.roll_off_round, rolls, tied)]
    if len(tied) == 1:
        return _begin_play(state, tied[0], FirstPlayer.ROLL_OFF, events)
    return replaced(state, contenders=tied, roll_off_round=state.roll_off_round + 1), events


def _begin_play(state: GameState, first: str, mode: FirstPlayer, events: list[Event]) -> _Result:
    seats = tuple(p.player_id for p in state.players)
    start = seats.index(first)
    order = seats[start:] + seats[:start]
    new_state = replaced(
        state, phase=Phase.AWAITING_ROLL, order=order, turn=0, contenders=(), roll_off_round=0
    )
    return new_state, [*events, GameStarted(order, mode), TurnChanged(first, 1)]


# -- a turn --------------------------------------------------------------------------------------


def _check_faces(faces: object, count: int) -> tuple[int, ...]:
    if isinstance(faces, str | bytes) or not isinstance(faces, Iterable):
        raise InvalidDiceError(f"faces must be a sequence of integers, not {faces!r}")
    values = tuple(faces)
    if len(values) != count or any(type(f) is not int or not 1 <= f <= 6 for f in values):
        raise InvalidDiceError(f"expected {count} faces 1..6, not {values!r}")
    return values


def _roll(state: GameState, command: Roll) -> _Result:
    require_turn(state, command.player)
    check_table(state, command.kind, Guard.ROLLS)
    require_rolls_left(state)
    indexes, held = plan_roll(state, command.keep)
    faces = _check_faces(command.faces, len(indexes))
    dice = list(state.dice) if state.dice else [0] * DICE_COUNT
    for index, face in zip(indexes, faces, strict=True):
        dice[index] = face
    rolls_used = state.rolls_used + 1
    new_state = replaced(
        state, phase=Phase.ROLLED, dice=tuple(dice), held=held, rolls_used=rolls_used
    )
    event = Rolled(
        command.player, tuple(dice), rolls_used, MAX_ROLLS - rolls_used, tuple(sorted(held))
    )
    return new_state, [event]


def _hold_or_release(state: GameState, command: Hold | Release) -> _Result:
    require_turn(state, command.player)
    check_table(state, command.kind, Guard.ROLLS)
    require_rolls_left(state)
    indexes = _to_die_indexes(command.dice)
    if not indexes:
        raise InvalidDiceError("name at least one die index 0..4")
    held = state.held | indexes if isinstance(command, Hold) else state.held - indexes
    new_state = replaced(state, held=held)
    return new_state, [HoldChanged(command.player, tuple(sorted(held)))]


def _score(state: GameState, command: Score) -> _Result:
    record = require_turn(state, command.player)
    check_table(state, command.kind, Guard.ROLLS)
    box = _check_box(state, command.box)
    card = record.card
    if not card.is_open(box):
        raise CategoryTakenError(f"{box.value} is already filled with {card.get(box)}")
    options = state.options
    previews = box_previews(options, card, state.dice)
    ruling = next(p for p in previews if p.box is box)
    if not ruling.allowed:
        allowed = [p.box.value for p in previews if p.allowed]
        raise BoxNotAllowedError(f"the rules allow only {', '.join(allowed)} now")
    bonus = yahtzee_bonus_due(options, card, state.dice)
    new_card = card.with_score(box, ruling.points, bonus)
    before, after = card.totals(), new_card.totals()
    seat = state.players.index(record)
    updated = replaced(record, card=new_card)
    new_state = _with_seat(state, seat, updated)
    event = Scored(
        player=record.player_id,
        box=box,
        points=ruling.points,
        upper_bonus=after.upper_bonus - before.upper_bonus,
        yahtzee_bonus=YAHTZEE_BONUS if bonus else 0,
        joker=joker_in_force(options, card, state.dice),
        automatic=bool(command.automatic),
        total=after.grand,
    )
    return _advance_turn(new_state, [event])


def _take_bonus(state: GameState, command: TakeBonus) -> _Result:
    record = require_turn(state, command.player)
    check_table(state, command.kind, Guard.ROLLS)
    card = record.card
    if not bonus_take_allowed(state.options, card, state.dice):
        raise BoxNotAllowedError(
            "taking the bonus without a box needs the bonus_turn option and an extra Yahtzee "
            "with 50 in the YAHTZEE box"
        )
    new_card = Scorecard(card.rules, card.scores, card.yahtzee_bonuses + 1)
    seat = state.players.index(record)
    updated = replaced(record, card=new_card)
    new_state = _with_seat(state, seat, updated)
    event = BonusTaken(
        player=record.player_id,
        yahtzee_bonus=YAHTZEE_BONUS,
        automatic=bool(command.automatic),
        total=new_card.totals().grand,
    )
    return _advance_turn(new_state, [event])


def _with_seat(state: GameState, seat: int, player: PlayerState) -> GameState:
    """``state`` with seat ``seat`` now ``player``."""
    return replaced(state, players=(*state.players[:seat], player, *state.players[seat + 1 :]))


def _check_box(state: GameState, box: str) -> Box:
    try:
        value = Box(box)
    except ValueError:
        raise UnknownBoxError(f"there is no box {box!r}") from None
    if value not in boxes_for(state.options.rules):
        raise UnknownBoxError(f"{value.value} is not a box of {state.options.rules.value}")
    return value


def _advance_turn(state: GameState, events: list[Event]) -> _Result:
    """Pass the turn to the next player still playing with an open box, or end the game."""
    count = len(state.order)
    for step in range(1, count + 1):
        index = (state.turn + step) % count
        record = state.player(state.order[index])
        if record is not None and not record.forfeited and not record.card.is_complete:
            new_state = replaced(
                state,
                phase=Phase.AWAITING_ROLL,
                turn=index,
                dice=(),
                held=frozenset(),
                rolls_used=0,
            )
            round_number = record.card.filled_count + 1
            return new_state, [*events, TurnChanged(record.player_id, round_number)]
    finished = replaced(state, phase=Phase.FINISHED, dice=(), held=frozenset(), rolls_used=0)
    return finished, [*events, GameOver(standings(finished))]

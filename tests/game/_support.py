"""Helpers shared by the rules-engine tests: scripted turns and a random-play driver."""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Protocol, TypeVar

from server.game import (
    Box,
    Command,
    Event,
    FirstPlayer,
    GameError,
    GameState,
    Hold,
    Join,
    JokerMode,
    Leave,
    Phase,
    Release,
    Roll,
    RollOff,
    RuleOptions,
    RuleSet,
    Score,
    Start,
    TakeBonus,
    Toggle,
    apply,
    best_auto_score,
    bonus_turn_available,
    current_player,
    dice_to_roll,
    new_game,
    preview,
    rolls_left,
    to_dict,
)

T = TypeVar("T")


def play(state: GameState, *commands: Command) -> tuple[GameState, tuple[Event, ...]]:
    """Apply ``commands`` in order; return the last state and all events."""
    events: list[Event] = []
    for command in commands:
        state, new_events = apply(state, command)
        events.extend(new_events)
    return state, tuple(events)


def seated(players: Sequence[str], options: RuleOptions | None = None, seats: int = 0) -> GameState:
    """A lobby with ``players`` seated (names are the ids capitalised)."""
    state = new_game(options or RuleOptions(), seats or max(len(players), 1))
    state, _ = play(state, *(Join(p, p.capitalize()) for p in players))
    return state


def started(players: Sequence[str], options: RuleOptions | None = None) -> GameState:
    """A game started in seat order (``first_player`` forced to seat_order)."""
    base = options or RuleOptions()
    opts = replace(base, first_player=FirstPlayer.SEAT_ORDER)
    state, _ = play(seated(players, opts), Start(players[0]))
    return state


def turn(
    state: GameState,
    player: str,
    box: Box,
    first: Sequence[int],
    *rerolls: tuple[Iterable[int], Sequence[int]],
) -> tuple[GameState, tuple[Event, ...]]:
    """One whole turn: roll ``first``, then each ``(keep, faces)`` re-roll, then score ``box``."""
    commands: list[Command] = [Roll(player, tuple(first))]
    commands += [Roll(player, tuple(faces), keep=frozenset(keep)) for keep, faces in rerolls]
    commands.append(Score(player, box))
    return play(state, *commands)


def run_script(
    state: GameState, script: Iterable[tuple[str, Box, Sequence[int]]]
) -> tuple[GameState, tuple[Event, ...]]:
    """Play one-roll turns ``(player, box, faces)`` in order."""
    events: list[Event] = []
    for player, box, faces in script:
        state, new_events = turn(state, player, box, faces)
        events.extend(new_events)
    return state, tuple(events)


# -- random play -------------------------------------------------------------------------------


class Chooser(Protocol):
    """A source of choices: ``random.Random`` or a hypothesis ``data`` adapter."""

    def integer(self, low: int, high: int) -> int:
        """An integer in ``low..high`` inclusive."""
        ...


@dataclass
class RandomChooser:
    """Choices from a seeded ``random.Random`` (cheap enough for whole games)."""

    rng: random.Random

    def integer(self, low: int, high: int) -> int:
        return self.rng.randint(low, high)


def pick(chooser: Chooser, items: Sequence[T]) -> T:
    """One of ``items``."""
    return items[chooser.integer(0, len(items) - 1)]


def chance(chooser: Chooser, percent: int) -> bool:
    """True with probability ``percent`` / 100."""
    return chooser.integer(0, 99) < percent


def subset(chooser: Chooser, items: Sequence[int]) -> frozenset[int]:
    """A random subset of ``items``."""
    return frozenset(i for i in items if chance(chooser, 50))


def faces(chooser: Chooser, count: int) -> tuple[int, ...]:
    """``count`` faces; one time in five all equal (to reach Yahtzees and Jokers often)."""
    if chance(chooser, 20):
        return (chooser.integer(1, 6),) * count
    return tuple(chooser.integer(1, 6) for _ in range(count))


PLAYER_POOL = ("p0", "p1", "p2", "p3", "p4", "p5", "p6", "p7")


def active_players(state: GameState) -> list[str]:
    """Seated players who have not forfeited."""
    return [p.player_id for p in state.players if not p.forfeited]


def legal_command(state: GameState, chooser: Chooser, leave_per_mille: int = 0) -> Command:
    """A command that ``apply`` accepts in ``state`` (which must not be finished).

    A player leaves with probability ``leave_per_mille`` / 1000; half of the scores take the
    best box (so Yahtzees land in YAHTZEE and extra Yahtzees follow).
    """
    phase = state.phase
    if phase is Phase.LOBBY:
        free = [p for p in PLAYER_POOL if state.seat_of(p) is None]
        if not state.players or (len(state.players) < state.max_seats and chance(chooser, 60)):
            return Join(free[0], f"Player {free[0]}")
        host = state.host
        assert host is not None
        return Start(host, chooser.integer(0, 99))
    if active_players(state) and chooser.integer(0, 999) < leave_per_mille:
        return Leave(pick(chooser, active_players(state)))
    if phase is Phase.ROLL_OFF:
        return RollOff({c: faces(chooser, 5) for c in state.contenders})
    player = current_player(state)
    assert player is not None
    if phase is Phase.AWAITING_ROLL:
        return Roll(player, faces(chooser, 5))
    action = chooser.integer(0, 9)
    if rolls_left(state) and action < 5:
        keep: frozenset[int] | None = None if chance(chooser, 30) else subset(chooser, range(5))
        try:
            count = len(dice_to_roll(state, keep))
        except GameError:
            keep = frozenset()
            count = 5
        return Roll(player, faces(chooser, count), keep=keep)
    if rolls_left(state) and action < 7:
        dice = subset(chooser, range(5)) or frozenset({chooser.integer(0, 4)})
        return Hold(player, dice) if chance(chooser, 60) else Release(player, dice)
    if bonus_turn_available(state) and chance(chooser, 50):
        return TakeBonus(player)
    if chance(chooser, 50):
        return Score(player, best_auto_score(state))
    allowed = [p.box for p in preview(state) if p.allowed]
    return Score(player, pick(chooser, allowed))


ALL_BOXES = tuple(Box)


def arbitrary_command(state: GameState, chooser: Chooser) -> Command:
    """Any command, most of them illegal in ``state``."""
    players = [*(p.player_id for p in state.players), "stranger", ""]
    player: str = pick(chooser, players)
    kind = chooser.integer(0, 7)
    dice = frozenset(chooser.integer(-1, 5) for _ in range(chooser.integer(0, 3)))
    if kind == 0:
        return Join(pick(chooser, [*PLAYER_POOL, player]), pick(chooser, ["Ann", "", " x ", "p0"]))
    if kind == 1:
        return Leave(player if chance(chooser, 10) else "stranger")
    if kind == 2:
        return Start(player, chooser.integer(0, 9))
    if kind == 3:
        names = [p.player_id for p in state.players][: chooser.integer(0, len(state.players))]
        return RollOff({n: tuple(chooser.integer(0, 7) for _ in range(5)) for n in names})
    if kind == 4:
        count = chooser.integer(0, 6)
        keep = None if chance(chooser, 50) else dice
        return Roll(player, tuple(chooser.integer(0, 7) for _ in range(count)), keep=keep)
    if kind == 5:
        return Hold(player, dice)
    if kind == 6:
        return Release(player, dice)
    if chance(chooser, 10):
        return TakeBonus(player)
    return Score(player, pick(chooser, ALL_BOXES))


OPTION_CHOICES = tuple(
    RuleOptions(rules, extra, joker, first, upper_first, bonus_turn)
    for rules in RuleSet
    for extra in Toggle
    for joker in JokerMode
    for first in FirstPlayer
    for upper_first in Toggle
    for bonus_turn in Toggle
)


def random_game(
    chooser: Chooser,
    *,
    options: RuleOptions | None = None,
    max_seats: int | None = None,
    leave_per_mille: int = 0,
    noise_percent: int = 0,
    max_commands: int = 20_000,
) -> Iterator[tuple[GameState, Command, GameState | GameError, tuple[Event, ...]]]:
    """Play one random game to its end, yielding ``(before, command, after or error, events)``.

    ``noise_percent`` of the commands are arbitrary (mostly illegal) ones; a refused command is
    checked to leave the state exactly as it was.
    """
    state = new_game(options or pick(chooser, OPTION_CHOICES), max_seats or chooser.integer(1, 4))
    for _ in range(max_commands):
        if state.phase is Phase.FINISHED:
            return
        if chance(chooser, noise_percent):
            command = arbitrary_command(state, chooser)
        else:
            command = legal_command(state, chooser, leave_per_mille)
        snapshot = to_dict(state)
        try:
            new_state, events = apply(state, command)
        except GameError as error:
            assert to_dict(state) == snapshot, "a refused command changed the state"
            yield state, command, error, ()
            continue
        yield state, command, new_state, events
        state = new_state
    raise AssertionError("the random game did not end")  # pragma: no cover

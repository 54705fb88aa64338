"""Play whole solitaire games with a computer player through the real engine.

Every roll, hold and score is a command to :func:`server.game.apply`; the dice come from the
``random.Random`` the caller passes (seeded, so runs repeat). Games advance in lockstep so each
turn's plans are evaluated in one batch for all games.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from server.game import (
    Command,
    Event,
    GameState,
    Join,
    Phase,
    PlayerState,
    Roll,
    Scorecard,
    Start,
    apply,
    current_player,
    dice_to_roll,
    new_game,
    rolls_left,
    scorecard,
    totals,
)

from .players import ComputerPlayer, choose, decide
from .policy import Reroll, TurnPlan, plan_turns, to_command

__all__ = ["Summary", "play_games", "play_room", "summarise"]

PLAYER = "cpu"
BATCH = 1024


@dataclass(frozen=True)
class Summary:
    """Mean, standard deviation and the 95 % confidence interval of the mean."""

    games: int
    mean: float
    standard_deviation: float

    @property
    def half_width(self) -> float:
        """Half the 95 % confidence interval of the mean (normal approximation)."""
        return self.half_width_at(1.96)

    def half_width_at(self, z: float) -> float:
        """Half the confidence interval of the mean for the normal quantile ``z``."""
        return z * self.standard_deviation / math.sqrt(self.games)

    def contains(self, value: float, z: float = 1.96) -> bool:
        """Whether ``value`` is inside the confidence interval (95 % by default)."""
        return abs(value - self.mean) <= self.half_width_at(z)


def summarise(scores: Sequence[int]) -> Summary:
    """The :class:`Summary` of ``scores`` (at least two)."""
    count = len(scores)
    mean = sum(scores) / count
    variance = sum((s - mean) ** 2 for s in scores) / (count - 1)
    return Summary(count, mean, math.sqrt(variance))


def _new_state(player: ComputerPlayer, start: Scorecard | None) -> GameState:
    state = new_game(player.table.rules.options(), 1)
    state, _ = apply(state, Join(PLAYER, "Computer"))
    state, _ = apply(state, Start(PLAYER))
    if start is not None:  # a game already under way: the card as given
        seat = state.players[0]
        state = replace(state, players=(PlayerState(seat.player_id, seat.name, start),))
    return state


def _draw(rng: random.Random, count: int) -> tuple[int, ...]:
    return tuple(rng.randint(1, 6) for _ in range(count))


def _play_turn(
    player: ComputerPlayer, state: GameState, plan: TurnPlan, rng: random.Random
) -> GameState:
    state, _ = apply(state, Roll(PLAYER, _draw(rng, 5)))
    while True:
        card = scorecard(state, PLAYER)
        action = choose(player, card, state.dice, rolls_left(state), rng.random(), plan)
        if isinstance(action, Reroll):
            count = len(dice_to_roll(state, action.hold))
            state, _ = apply(state, to_command(action, PLAYER, _draw(rng, count)))
            continue
        state, _ = apply(state, to_command(action, PLAYER))
        return state


def play_games(
    player: ComputerPlayer,
    games: int,
    rng: random.Random,
    *,
    start: Scorecard | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[int]:
    """Final grand totals of ``games`` solitaire games (from ``start`` if given)."""
    scores: list[int] = []
    for first in range(0, games, BATCH):
        states = [_new_state(player, start) for _ in range(min(BATCH, games - first))]
        while True:
            live = [i for i, s in enumerate(states) if s.phase is not Phase.FINISHED]
            if not live:
                break
            plans = plan_turns(player.table, [scorecard(states[i], PLAYER) for i in live])
            for i, plan in zip(live, plans, strict=True):
                states[i] = _play_turn(player, states[i], plan, rng)
        scores.extend(totals(s, PLAYER).grand for s in states)
        if progress is not None:
            progress(len(scores), games)
    return scores


def play_room(
    players: Sequence[ComputerPlayer], rng: random.Random, *, start_random: int = 0
) -> list[Event]:
    """One game of several computer players in one room through the engine: every event.

    The first player's table decides the rule set; ``start_random`` is the Start command's
    ``random_choice``.
    """
    options = players[0].table.rules.options()
    state = new_game(options, len(players))
    events: list[Event] = []
    ids = [f"cpu{i}" for i in range(len(players))]

    def run(command: Command) -> None:
        nonlocal state
        state, new = apply(state, command)
        events.extend(new)

    for seat, player_id in enumerate(ids):
        run(Join(player_id, f"Computer {seat + 1}"))
    run(Start(ids[0], start_random))
    by_id = dict(zip(ids, players, strict=True))
    while state.phase is not Phase.FINISHED:
        on_turn = current_player(state)
        assert on_turn is not None
        action = decide(by_id[on_turn], state, rng.random())
        if isinstance(action, Reroll):
            count = len(dice_to_roll(state, action.hold if state.rolls_used else None))
            run(to_command(action, on_turn, _draw(rng, count)))
        else:
            run(to_command(action, on_turn))
    return events

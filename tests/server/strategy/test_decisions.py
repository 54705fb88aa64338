"""A computer's decision made once for the steps that carry it out (server/strategy/computers.py
``Decisions``): release, hold and roll follow one decision, and the moves are the same."""

from __future__ import annotations

import random
from collections.abc import Callable
from functools import partial
from pathlib import Path

import pytest

from server import game
from server.solver import ComputerPlayer, Level, Table, computer_player
from server.strategy import computers
from tests.game._support import started

Mover = Callable[[game.GameState], game.Command]


def play(mover: Mover, seed: int, steps: int = 400) -> list[game.Command]:
    """One player's game of ``steps`` commands at most, made by ``mover``, dice from ``seed``."""
    rng = random.Random(seed)
    state = started(["cpu"])
    made: list[game.Command] = []
    while state.phase is not game.Phase.FINISHED and len(made) < steps:
        command = mover(state)
        made.append(command)
        if isinstance(command, game.Roll):
            rolled = game.dice_to_roll(state, command.keep)
            faces = tuple(rng.randint(1, 6) for _ in rolled)
            command = game.Roll(command.player, faces, command.keep)
        state, _ = game.apply(state, command)
    return made


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[game.GameState]:
    """The states ``computers.decide_move`` was asked to decide, in order."""
    asked: list[game.GameState] = []
    decide = computers.decide_move

    def counting(
        computer: ComputerPlayer, state: game.GameState, player: str, seed: str
    ) -> computers.Action:
        asked.append(state)
        return decide(computer, state, player, seed)

    monkeypatch.setattr(computers, "decide_move", counting)
    return asked


@pytest.mark.parametrize("level", [Level.HARD, Level.OPTIMAL])
def test_the_steps_of_a_reroll_follow_one_decision_with_the_same_moves(
    official_table: Table, counted: list[game.GameState], level: Level
) -> None:
    brain = computer_player(level, official_table)
    for seed in range(3):
        room_seed = f"s{seed}"
        plain = play(
            partial(computers.next_move, brain, player="cpu", seed=room_seed, show_holds=True), seed
        )
        decided_plainly = len(counted)
        counted.clear()
        decisions = computers.Decisions()
        remembered = play(
            partial(
                decisions.next_move, "room", brain, player="cpu", seed=room_seed, show_holds=True
            ),
            seed,
        )
        assert remembered == plain
        kinds = {type(c) for c in plain}
        assert game.Hold in kinds  # the game had re-rolls that held dice first
        # one decision a point: each roll the computer looks at (phase rolled, rolls used)
        points = {(s.rolls_used, s.dice, s.players[0].card.scores) for s in counted}
        assert len(counted) == len(points) < decided_plainly
        assert not decisions.pending("room")  # the game is over: nothing is carried out
        counted.clear()


def test_a_decision_at_another_point_is_made_again(official_table: Table) -> None:
    brain = computer_player(Level.OPTIMAL, official_table)
    decisions = computers.Decisions()
    state, _ = game.apply(started(["cpu"]), game.Roll("cpu", (6, 6, 6, 1, 2)))
    first = decisions.next_move("room", brain, state, "cpu", "seed", True)
    assert first == game.Hold("cpu", frozenset({0, 1, 2}))
    assert decisions.pending("room")
    # the same room at another point (the hold lost, the dice rolled otherwise): decided anew
    other, _ = game.apply(started(["cpu"]), game.Roll("cpu", (1, 1, 1, 1, 5)))
    assert decisions.next_move("room", brain, other, "cpu", "seed", True) == game.Hold(
        "cpu", frozenset({0, 1, 2, 3})
    )


def test_at_most_the_given_number_of_rooms_are_remembered(official_table: Table) -> None:
    brain = computer_player(Level.OPTIMAL, official_table)
    decisions = computers.Decisions(most=2)
    state, _ = game.apply(started(["cpu"]), game.Roll("cpu", (6, 6, 6, 1, 2)))
    for room in ("a", "b", "c"):
        decisions.next_move(room, brain, state, "cpu", "seed", True)
    assert [decisions.pending(r) for r in ("a", "b", "c")] == [False, True, True]


async def test_the_advisor_knows_a_rooms_players_by_its_options(
    solver_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    advisor = computers.Advisor(cache_dir=solver_cache)
    assert await advisor.ready(game.RuleOptions(), within=60) is not None
    monkeypatch.setattr(computers, "MOST_OPTIONS", 2)
    rooms = [game.RuleOptions() for _ in range(5)]  # equal, each room's own object
    hard = [advisor.player(options, "hard") for options in rooms]
    assert all(p is hard[0] for p in hard)
    assert hard[0] is not None
    assert hard[0].level is Level.HARD
    assert hard[0].mistake_rate > 0
    assert advisor.player(rooms[0], "hard") is hard[0]  # remembered again after the clear
    optimal = advisor.player(rooms[0], "optimal")
    assert optimal is not None
    assert optimal.level is Level.OPTIMAL
    assert optimal.table is hard[0].table

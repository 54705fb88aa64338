"""The optimal player's game on duplicate dice: well defined (the same game twice), played on
the dice function (every roll asks it for (turn, throw, slots)), and a full card."""

from __future__ import annotations

import functools

from protocol.duplicate import duplicate_roll
from server.game import Phase, totals
from server.solver import Table, computer_player
from server.solver.duplicate import PLAYER, play_on_dice, total_on_dice


def test_the_optimal_game_on_a_tournaments_dice_is_one_game(official_table: Table) -> None:
    player = computer_player("optimal", official_table)
    asked: list[tuple[int, int, tuple[int, ...]]] = []
    seed = bytes(range(32))

    def dice(turn: int, throw: int, slots: tuple[int, ...]) -> tuple[int, ...]:
        asked.append((turn, throw, tuple(slots)))
        return duplicate_roll(seed, turn, throw, slots)

    state = play_on_dice(player, dice)
    assert state.phase is Phase.FINISHED
    assert {turn for turn, _, _ in asked} == set(range(1, 14))
    assert all(throw == 1 and slots == (0, 1, 2, 3, 4) for _, throw, slots in asked if throw == 1)
    assert all(1 <= throw <= 3 for _, throw, _ in asked)
    again = total_on_dice(player, functools.partial(duplicate_roll, seed))
    assert again == totals(state, PLAYER).grand
    other = total_on_dice(player, functools.partial(duplicate_roll, bytes(32)))
    assert other > 0
    assert again > 0

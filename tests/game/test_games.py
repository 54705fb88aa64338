"""Whole games: scripted ones checked against totals computed by hand, and random ones."""

from __future__ import annotations

import random
from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from server.game import (
    Box,
    Event,
    GameError,
    GameOver,
    GameState,
    Hold,
    Phase,
    Roll,
    RuleOptions,
    RuleSet,
    Score,
    Scored,
    Standing,
    Toggle,
    TurnChanged,
    boxes_for,
    standings,
    totals,
)

from ._support import RandomChooser, play, random_game, run_script, started, turn

B = Box


def _scored(events: Sequence[Event], player: str) -> list[Scored]:
    return [e for e in events if isinstance(e, Scored) and e.player == player]


def test_solo_game_by_hand() -> None:
    state = started(["solo"])
    p = "solo"
    events: list[Event] = []

    def add(result: tuple[GameState, Sequence[Event]]) -> GameState:
        events.extend(result[1])
        return result[0]

    state = add(turn(state, p, B.THREES, (3, 3, 3, 3, 3)))  # 1: threes 15 (YAHTZEE still open)
    state = add(turn(state, p, B.YAHTZEE, (2, 3, 4, 6, 6)))  # 2: scratch YAHTZEE: 0
    state = add(turn(state, p, B.FOURS, (4, 4, 4, 4, 4)))  # 3: Joker, no bonus: fours 20
    state = add(turn(state, p, B.FULL_HOUSE, (4, 4, 4, 4, 4)))  # 4: Joker full house 25
    state = add(turn(state, p, B.TWOS, (1, 1, 2, 2, 2)))  # 5: twos 6
    state = add(turn(state, p, B.ACES, (1, 1, 1, 3, 5)))  # 6: aces 3
    state = add(turn(state, p, B.FIVES, (5, 5, 5, 6, 6)))  # 7: fives 15
    state = add(turn(state, p, B.SIXES, (6, 6, 6, 6, 2)))  # 8: sixes 24, upper 83: bonus 35
    state = add(turn(state, p, B.SMALL_STRAIGHT, (1, 2, 3, 4, 4)))  # 9: 30
    # 10: 2,3,4,1,1 keep the first three, roll 5,6 -> 2,3,4,5,6: large straight 40
    state = add(turn(state, p, B.LARGE_STRAIGHT, (2, 3, 4, 1, 1), ({0, 1, 2}, (5, 6))))
    state = add(turn(state, p, B.THREE_OF_A_KIND, (6, 6, 6, 5, 5)))  # 11: 28
    # 12: 3,3,1,2,6, hold dice 0 and 1, roll three: 3,3,6 -> 3,3,3,3,6: 4 of a kind 18
    state = add(
        play(
            state,
            Roll(p, (3, 3, 1, 2, 6)),
            Hold(p, frozenset({0, 1})),
            Roll(p, (3, 3, 6)),
            Score(p, B.FOUR_OF_A_KIND),
        )
    )
    state = add(turn(state, p, B.CHANCE, (1, 2, 2, 5, 6)))  # 13: chance 16
    # upper  = 15 + 20 + 6 + 3 + 15 + 24 = 83 -> bonus 35
    # lower  = 0 (yahtzee) + 25 + 30 + 40 + 28 + 18 + 16 = 157
    # grand  = 83 + 35 + 157 = 275, no bonus checks (YAHTZEE box holds 0)
    assert totals(state, p) == (83, 35, 157, 0, 275)
    scored = _scored(events, p)
    assert [e.points for e in scored] == [15, 0, 20, 25, 6, 3, 15, 24, 30, 40, 28, 18, 16]
    assert [e.joker for e in scored] == [False, False, True, True] + [False] * 9
    assert [e.upper_bonus for e in scored].index(35) == 7
    assert all(e.yahtzee_bonus == 0 for e in scored)
    assert state.phase is Phase.FINISHED
    assert events[-1] == GameOver((Standing(p, 275, 1, False),))


# Four players in seat order a, b, c, d; one line per round: (a, b, c, d).
FOUR_PLAYER_SCRIPT: list[list[tuple[Box, tuple[int, ...]]]] = [
    # a: upper hunter      b: Yahtzee + Jokers            c: lower first            d: tie with c
    [
        (B.ACES, (1, 1, 1, 2, 3)),
        (B.YAHTZEE, (2, 2, 2, 2, 2)),
        (B.LARGE_STRAIGHT, (1, 2, 3, 4, 5)),
        (B.ACES, (1, 1, 1, 5, 6)),
    ],
    [
        (B.TWOS, (2, 2, 2, 2, 5)),
        (B.FIVES, (5, 5, 5, 5, 5)),
        (B.SMALL_STRAIGHT, (1, 2, 3, 4, 5)),
        (B.TWOS, (2, 2, 2, 4, 6)),
    ],
    [
        (B.THREES, (3, 3, 3, 1, 2)),
        (B.LARGE_STRAIGHT, (5, 5, 5, 5, 5)),
        (B.FOUR_OF_A_KIND, (6, 6, 6, 6, 5)),
        (B.THREES, (3, 3, 3, 1, 2)),
    ],
    [
        (B.FOURS, (4, 4, 4, 4, 1)),
        (B.ACES, (1, 1, 2, 2, 3)),
        (B.THREE_OF_A_KIND, (6, 6, 6, 5, 4)),
        (B.FOURS, (4, 4, 4, 1, 2)),
    ],
    [
        (B.FIVES, (5, 5, 5, 2, 2)),
        (B.TWOS, (2, 2, 3, 3, 6)),
        (B.CHANCE, (6, 6, 5, 5, 4)),
        (B.FIVES, (5, 5, 5, 1, 2)),
    ],
    [
        (B.SIXES, (6, 6, 6, 1, 1)),
        (B.THREES, (3, 3, 1, 4, 6)),
        (B.ACES, (1, 1, 2, 3, 4)),
        (B.SIXES, (6, 6, 6, 1, 2)),
    ],
    [
        (B.THREE_OF_A_KIND, (3, 3, 3, 4, 4)),
        (B.FOURS, (4, 1, 2, 3, 6)),
        (B.TWOS, (2, 2, 1, 1, 3)),
        (B.THREE_OF_A_KIND, (5, 5, 5, 2, 2)),
    ],
    [
        (B.FOUR_OF_A_KIND, (2, 2, 2, 2, 6)),
        (B.SIXES, (6, 6, 1, 2, 3)),
        (B.THREES, (3, 3, 3, 3, 1)),
        (B.FOUR_OF_A_KIND, (4, 4, 4, 4, 2)),
    ],
    [
        (B.FULL_HOUSE, (3, 3, 5, 5, 5)),
        (B.THREE_OF_A_KIND, (1, 1, 1, 2, 3)),
        (B.FOURS, (4, 4, 4, 1, 1)),
        (B.FULL_HOUSE, (2, 2, 3, 3, 3)),
    ],
    [
        (B.SMALL_STRAIGHT, (1, 2, 3, 4, 6)),
        (B.FOUR_OF_A_KIND, (1, 2, 3, 5, 6)),
        (B.FIVES, (5, 5, 1, 1, 2)),
        (B.SMALL_STRAIGHT, (3, 4, 5, 6, 1)),
    ],
    [
        (B.LARGE_STRAIGHT, (2, 3, 4, 5, 6)),
        (B.FULL_HOUSE, (2, 2, 2, 3, 3)),
        (B.SIXES, (6, 6, 6, 1, 2)),
        (B.CHANCE, (6, 5, 4, 3, 2)),
    ],
    [
        (B.YAHTZEE, (4, 4, 4, 4, 4)),
        (B.SMALL_STRAIGHT, (3, 4, 5, 6, 6)),
        (B.FULL_HOUSE, (1, 2, 3, 4, 6)),
        (B.LARGE_STRAIGHT, (1, 1, 2, 2, 3)),
    ],
    [
        (B.CHANCE, (6, 5, 4, 1, 1)),
        (B.CHANCE, (6, 6, 5, 5, 4)),
        (B.YAHTZEE, (1, 1, 2, 2, 3)),
        (B.YAHTZEE, (1, 1, 3, 3, 6)),
    ],
]


def test_four_player_game_by_hand() -> None:
    state = started(["a", "b", "c", "d"])
    script = [
        (player, box, faces)
        for line in FOUR_PLAYER_SCRIPT
        for player, (box, faces) in zip("abcd", line, strict=True)
    ]
    # Round 1 of b goes through three rolls instead: 2,2,3,5,6 -> keep 0,1, roll 2,4,2 ->
    # 2,2,2,5,2 -> keep 0,1,2,4, roll 2 -> 2,2,2,2,2.
    state, first = run_script(state, script[:1])
    events = list(first)
    state, more = turn(
        state,
        "b",
        B.YAHTZEE,
        (2, 2, 3, 5, 6),
        ({0, 1}, (2, 4, 2)),
        ({0, 1, 2, 4}, (2,)),
    )
    events += more
    state, more = run_script(state, script[2:])
    events += more

    # a: upper 3 + 8 + 9 + 16 + 15 + 18 = 69 -> bonus 35
    #    lower 17 + 14 + 25 + 30 + 40 + 50 + 17 = 193; grand 69 + 35 + 193 = 297
    assert totals(state, "a") == (69, 35, 193, 0, 297)
    # b: YAHTZEE 50; 5-5-5-5-5 twice: forced into Fives (25), then Large Straight at full
    #    value (40), +100 each time.
    #    upper 2 + 4 + 6 + 4 + 25 + 12 = 53 -> no bonus
    #    lower 50 + 40 + 8 + 0 + 25 + 30 + 26 = 179; bonus checks 200
    #    grand 53 + 179 + 200 = 432
    assert totals(state, "b") == (53, 0, 179, 200, 432)
    # c: upper 2 + 4 + 12 + 12 + 10 + 18 = 58 -> no bonus
    #    lower 40 + 30 + 29 + 27 + 26 + 0 + 0 = 152; grand 58 + 152 = 210
    assert totals(state, "c") == (58, 0, 152, 0, 210)
    # d: upper 3 + 6 + 9 + 12 + 15 + 18 = 63 -> bonus 35 (inclusive)
    #    lower 19 + 18 + 25 + 30 + 20 + 0 + 0 = 112; grand 63 + 35 + 112 = 210
    assert totals(state, "d") == (63, 35, 112, 0, 210)

    b_scored = _scored(events, "b")
    assert [(e.box, e.points, e.yahtzee_bonus, e.joker) for e in b_scored[:3]] == [
        (B.YAHTZEE, 50, 0, False),
        (B.FIVES, 25, 100, True),
        (B.LARGE_STRAIGHT, 40, 100, True),
    ]
    d_bonus = [e.upper_bonus for e in _scored(events, "d")]
    assert d_bonus == [0] * 5 + [35] + [0] * 7  # earned by the sixes, round 6
    turns = [e for e in events if isinstance(e, TurnChanged)]
    assert [(t.player, t.round) for t in turns[:5]] == [
        ("b", 1),
        ("c", 1),
        ("d", 1),
        ("a", 2),
        ("b", 2),
    ]
    # c and d tie at 210 and share third place
    assert events[-1] == GameOver(
        (
            Standing("b", 432, 1, False),
            Standing("a", 297, 2, False),
            Standing("c", 210, 3, False),
            Standing("d", 210, 3, False),
        )
    )
    assert isinstance(events[-1], GameOver)
    assert standings(state) == events[-1].results


def _solo(options: RuleOptions, script: Sequence[tuple[Box, Sequence[int]]]) -> GameState:
    state, _ = run_script(started(["p"], options), [("p", box, dice) for box, dice in script])
    assert state.phase is Phase.FINISHED
    return state


UPPER_FIVES = [
    (B.ACES, (1,) * 5),
    (B.TWOS, (2,) * 5),
    (B.THREES, (3,) * 5),
    (B.FOURS, (4,) * 5),
    (B.FIVES, (5,) * 5),
    (B.SIXES, (6,) * 5),
]


def test_maximum_375_without_extra_yahtzees() -> None:
    # upper 5+10+15+20+25+30 = 105 + 35; 3K 30, 4K 30, FH 25, SS 30, LS 40, Y 50, C 30 = 235
    script = [
        *UPPER_FIVES,
        (B.THREE_OF_A_KIND, (6,) * 5),
        (B.FOUR_OF_A_KIND, (6,) * 5),
        (B.FULL_HOUSE, (6, 6, 6, 5, 5)),
        (B.SMALL_STRAIGHT, (1, 2, 3, 4, 5)),
        (B.LARGE_STRAIGHT, (2, 3, 4, 5, 6)),
        (B.YAHTZEE, (6,) * 5),
        (B.CHANCE, (6,) * 5),
    ]
    off = _solo(RuleOptions(extra_yahtzees=Toggle.OFF), script)
    assert totals(off, "p") == (105, 35, 235, 0, 375)
    # with extra Yahtzees on, the same card without bonus checks needs YAHTZEE filled last
    # (6-6-6-6-6 in Chance after a 50 in YAHTZEE would pay +100: 475)
    on = _solo(RuleOptions(), [*script[:-2], script[-1], script[-2]])
    assert totals(on, "p") == (105, 35, 235, 0, 375)


def test_maximum_1575_with_twelve_bonus_checks() -> None:
    # YAHTZEE 50 first; then 12 extra Yahtzees: the forced Joker puts each upper face in its
    # own box, then 6-6-6-6-6 goes to the lower boxes at full value once Sixes is filled.
    # 50 + 105 + 35 + (30 + 30 + 25 + 30 + 40 + 30) + 12 * 100 = 1575
    script = [
        (B.YAHTZEE, (6,) * 5),
        *UPPER_FIVES,
        (B.THREE_OF_A_KIND, (6,) * 5),
        (B.FOUR_OF_A_KIND, (6,) * 5),
        (B.FULL_HOUSE, (6,) * 5),
        (B.SMALL_STRAIGHT, (6,) * 5),
        (B.LARGE_STRAIGHT, (6,) * 5),
        (B.CHANCE, (6,) * 5),
    ]
    state = _solo(RuleOptions(), script)
    assert totals(state, "p") == (105, 35, 235, 1200, 1575)


def test_maximum_374_in_yatzy() -> None:
    # upper 105 + 50; pair 12, two pairs 22, 3K 18, 4K 24, SS 15, LS 20, FH 28, C 30, Y 50 = 219
    script = [
        (B.ONES, (1,) * 5),
        *UPPER_FIVES[1:],
        (B.ONE_PAIR, (6, 6, 6, 6, 6)),
        (B.TWO_PAIRS, (6, 6, 5, 5, 4)),
        (B.THREE_OF_A_KIND, (6,) * 5),
        (B.FOUR_OF_A_KIND, (6,) * 5),
        (B.SMALL_STRAIGHT, (1, 2, 3, 4, 5)),
        (B.LARGE_STRAIGHT, (2, 3, 4, 5, 6)),
        (B.FULL_HOUSE, (6, 6, 6, 5, 5)),
        (B.CHANCE, (6,) * 5),
        (B.YATZY, (6,) * 5),
    ]
    state = _solo(RuleOptions(rules=RuleSet.YATZY), script)
    assert totals(state, "p") == (105, 50, 219, 0, 374)


@settings(max_examples=60, derandomize=True, database=None, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), leave_per_mille=st.sampled_from([0, 0, 3, 20]))
def test_random_games_keep_the_books(seed: int, leave_per_mille: int) -> None:
    """Random whole games (with forfeits and illegal commands mixed in) end with every box of
    every remaining player filled exactly once, totals equal the scored events, and refused
    commands change nothing."""
    chooser = RandomChooser(random.Random(seed))
    filled: dict[str, list[Box]] = {}
    event_total: dict[str, int] = {}
    rolls_this_turn = 0
    final: GameState | None = None
    for _before, command, after, events in random_game(
        chooser, leave_per_mille=leave_per_mille, noise_percent=15
    ):
        if isinstance(after, GameError):
            continue  # random_game checks that ``before`` is unchanged
        for event in events:
            if isinstance(event, Scored):
                filled.setdefault(event.player, []).append(event.box)
                event_total[event.player] = event_total.get(event.player, 0) + (
                    event.points + event.upper_bonus + event.yahtzee_bonus
                )
                assert event.total == event_total[event.player]
                rolls_this_turn = 0
            if isinstance(event, TurnChanged):
                rolls_this_turn = 0
        if isinstance(command, Roll):
            rolls_this_turn += 1
            assert rolls_this_turn <= 3
        final = after
    assert final is not None
    assert final.phase is Phase.FINISHED
    boxes = boxes_for(final.options.rules)
    for record in final.players:
        written = filled.get(record.player_id, [])
        assert len(written) == len(set(written))
        assert record.card.filled_count == len(written)
        if not record.forfeited:
            assert sorted(written) == sorted(boxes)
        parts = record.card.totals()
        assert parts.grand == event_total.get(record.player_id, 0)
        assert parts.grand == parts.upper + parts.upper_bonus + parts.lower + parts.yahtzee_bonus

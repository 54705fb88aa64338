"""The engine command by command: lobby, start, roll-off, rolls, holds, scoring, leaving, errors."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from server.game import (
    ERROR_CODES,
    TRANSITIONS,
    Allowed,
    Box,
    Command,
    FirstPlayer,
    GameError,
    GameOver,
    GameStarted,
    GameState,
    Guard,
    Hold,
    HoldChanged,
    HostChanged,
    Join,
    JokerMode,
    Leave,
    Phase,
    PlayerJoined,
    PlayerLeft,
    Refused,
    Release,
    Roll,
    Rolled,
    RollOff,
    RollOffEntry,
    RollOffRolled,
    RollOffStarted,
    RuleOptions,
    RuleSet,
    Score,
    Scored,
    Standing,
    Start,
    TakeBonus,
    Toggle,
    TurnChanged,
    apply,
    current_player,
    dice_to_roll,
    from_dict,
    new_game,
    rolls_left,
    scorecard,
    to_dict,
    transition_table_markdown,
)
from server.game.errors import ERROR_CLASSES, InvalidCommandError, WrongPhaseError
from server.game.transitions import COMMAND_KINDS, GUARD_ORDER

from ._support import play, run_script, seated, started, turn

SEAT_ORDER = RuleOptions(first_player=FirstPlayer.SEAT_ORDER)


def refuse(state: GameState, command: object, code: str) -> GameError:
    """Assert ``command`` is refused with ``code`` and ``state`` is untouched."""
    before = to_dict(state)
    with pytest.raises(GameError) as info:
        apply(state, command)  # type: ignore[arg-type]
    assert info.value.code == code, info.value
    assert isinstance(info.value, ERROR_CLASSES[code])
    assert to_dict(state) == before
    return info.value


# -- lobby ---------------------------------------------------------------------------------------


def test_join_assigns_seats_and_first_joiner_is_host() -> None:
    state = new_game(RuleOptions(), 3)
    state, events = play(state, Join("a", "  Ada "), Join("b", "Bo"))
    assert events == (PlayerJoined("a", "Ada", 0), HostChanged("a"), PlayerJoined("b", "Bo", 1))
    assert [p.player_id for p in state.players] == ["a", "b"]
    assert state.host == "a"
    assert state.phase is Phase.LOBBY


def test_computer_seats_are_never_the_host() -> None:
    state = new_game(RuleOptions(), 4)
    state, events = play(state, Join("c1", "Robo", computer="hard"))
    assert events == (PlayerJoined("c1", "Robo", 0, "hard"),)
    assert state.host is None  # only a computer: nobody can start
    refuse(state, Start("c1"), "not_host")
    state, events = play(state, Join("a", "Ada"), Join("c2", "Zed", computer="easy"))
    assert events == (
        PlayerJoined("a", "Ada", 1),
        HostChanged("a"),
        PlayerJoined("c2", "Zed", 2, "easy"),
    )
    assert state.host == "a"
    assert [p.computer for p in state.players] == ["hard", None, "easy"]
    assert from_dict(to_dict(state)) == state
    assert "computer" not in to_dict(state)["players"][1]  # a person's seat keeps its form
    state, events = apply(state, Leave("a"))
    assert state.host is None
    assert HostChanged not in {type(e) for e in events}
    refuse(state, Join("c3", "X", computer=""), "invalid_command")


def test_lobby_leave_compacts_seats_and_passes_host() -> None:
    state = seated(["a", "b", "c"])
    state, events = apply(state, Leave("a"))
    assert events == (PlayerLeft("a", 0, False), HostChanged("b"))
    assert [p.player_id for p in state.players] == ["b", "c"]
    state, events = apply(state, Leave("c"))
    assert events == (PlayerLeft("c", 1, False),)
    state, events = apply(state, Leave("b"))
    assert events == (PlayerLeft("b", 0, False),)
    assert state.players == ()
    assert state.host is None
    # the room is open again
    state, _ = apply(state, Join("c", "Cy"))
    assert state.host == "c"


@pytest.mark.parametrize("name", ["", "   ", "x" * 33, "bad\nname", "nul\x00"])
def test_invalid_names(name: str) -> None:
    refuse(new_game(RuleOptions(), 2), Join("a", name), "invalid_name")


def test_names_are_unique_case_insensitively() -> None:
    refuse(seated(["ada"], seats=2), Join("b", "ADA"), "name_taken")


@pytest.mark.parametrize("seats", [0, 9, -1])
def test_new_game_checks_seat_count(seats: int) -> None:
    with pytest.raises(InvalidCommandError):
        new_game(RuleOptions(), seats)


def test_rule_options_accept_strings_and_reject_unknown_values() -> None:
    options = RuleOptions(rules="yatzy", joker="free")  # type: ignore[arg-type]
    assert options.rules is RuleSet.YATZY
    assert options.joker is JokerMode.FREE
    assert RuleOptions() == RuleOptions("yahtzee", "on", "forced", "roll_off")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="maybe"):
        RuleOptions(extra_yahtzees="maybe")  # type: ignore[arg-type]


# -- start ---------------------------------------------------------------------------------------


def test_start_in_seat_order() -> None:
    state, events = apply(seated(["a", "b", "c"], SEAT_ORDER), Start("a"))
    assert events == (
        GameStarted(("a", "b", "c"), FirstPlayer.SEAT_ORDER),
        TurnChanged("a", 1),
    )
    assert state.phase is Phase.AWAITING_ROLL
    assert current_player(state) == "a"
    assert rolls_left(state) == 3


@pytest.mark.parametrize(("choice", "order"), [(0, "abc"), (1, "bca"), (5, "cab"), (-1, "cab")])
def test_start_random_rotates_seats(choice: int, order: str) -> None:
    options = RuleOptions(first_player=FirstPlayer.RANDOM)
    state, events = apply(seated(["a", "b", "c"], options), Start("a", random_choice=choice))
    assert events[0] == GameStarted(tuple(order), FirstPlayer.RANDOM)
    assert state.order == tuple(order)
    assert current_player(state) == order[0]


def test_solo_roll_off_starts_directly() -> None:
    # Issue 14 item 11: one player, nothing to roll off; reported as seat order.
    state, events = apply(seated(["a"]), Start("a"))
    assert events == (GameStarted(("a",), FirstPlayer.SEAT_ORDER), TurnChanged("a", 1))
    assert state.phase is Phase.AWAITING_ROLL


def test_roll_off_ties_roll_again_among_the_tied() -> None:
    state, events = apply(seated(["a", "b", "c", "d"]), Start("a"))
    assert events == (RollOffStarted(("a", "b", "c", "d")),)
    assert state.phase is Phase.ROLL_OFF
    # round 1: b and c tie on 20, a and d are out
    state, events = apply(
        state,
        RollOff(
            {
                "a": (1, 1, 1, 1, 1),
                "b": (6, 6, 6, 1, 1),
                "c": (4, 4, 4, 4, 4),
                "d": (2, 3, 4, 5, 5),
            }
        ),
    )
    assert events == (
        RollOffRolled(
            1,
            (
                RollOffEntry("a", (1, 1, 1, 1, 1), 5),
                RollOffEntry("b", (6, 6, 6, 1, 1), 20),
                RollOffEntry("c", (4, 4, 4, 4, 4), 20),
                RollOffEntry("d", (2, 3, 4, 5, 5), 19),
            ),
            ("b", "c"),
        ),
    )
    assert state.phase is Phase.ROLL_OFF
    assert state.contenders == ("b", "c")
    # only the tied roll again; a roll for an eliminated player is refused
    refuse(state, RollOff({"a": (6,) * 5, "b": (1,) * 5, "c": (1,) * 5}), "invalid_dice")
    refuse(state, RollOff({"b": (1,) * 5}), "invalid_dice")
    refuse(state, RollOff({"b": (1,) * 5, "c": (1,) * 4}), "invalid_dice")
    refuse(state, RollOff({"b": (1,) * 5, "c": (7, 1, 1, 1, 1)}), "invalid_dice")
    state, events = apply(state, RollOff({"b": (1, 2, 3, 4, 5), "c": (6, 6, 6, 6, 1)}))
    assert events[0] == RollOffRolled(
        2, (RollOffEntry("b", (1, 2, 3, 4, 5), 15), RollOffEntry("c", (6, 6, 6, 6, 1), 25)), ("c",)
    )
    # winner c starts, then seat order round the table: c, d, a, b
    assert events[1:] == (
        GameStarted(("c", "d", "a", "b"), FirstPlayer.ROLL_OFF),
        TurnChanged("c", 1),
    )
    assert state.phase is Phase.AWAITING_ROLL
    assert current_player(state) == "c"


# -- rolling and holding -------------------------------------------------------------------------


def test_three_rolls_with_keep_and_holds() -> None:
    state = started(["a"])
    assert dice_to_roll(state) == (0, 1, 2, 3, 4)
    state, events = apply(state, Roll("a", (2, 2, 5, 6, 2)))
    assert events == (Rolled("a", (2, 2, 5, 6, 2), 1, 2, ()),)
    assert state.phase is Phase.ROLLED
    assert rolls_left(state) == 2
    state, events = apply(state, Hold("a", frozenset({0, 1, 4, 3})))
    assert events == (HoldChanged("a", (0, 1, 3, 4)),)
    state, events = apply(state, Release("a", frozenset({3})))
    assert events == (HoldChanged("a", (0, 1, 4)),)
    assert dice_to_roll(state) == (2, 3)
    assert dice_to_roll(state, keep=frozenset({2})) == (0, 1, 3, 4)
    state, events = apply(state, Roll("a", (2, 3)))
    assert events == (Rolled("a", (2, 2, 2, 3, 2), 2, 1, (0, 1, 4)),)
    # keep replaces the held set before the third roll
    state, events = apply(state, Roll("a", (2,), keep=frozenset({0, 1, 2, 4})))
    assert events == (Rolled("a", (2, 2, 2, 2, 2), 3, 0, (0, 1, 2, 4)),)
    refuse(state, Roll("a", (1,)), "no_rolls_left")
    refuse(state, Hold("a", frozenset({3})), "no_rolls_left")
    refuse(state, Release("a", frozenset({0})), "no_rolls_left")
    with pytest.raises(GameError, match="no rolls"):
        dice_to_roll(state)
    state, events = apply(state, Score("a", Box.YAHTZEE))
    assert events[0] == Scored("a", Box.YAHTZEE, 50, 0, 0, False, False, 50)
    assert events[1] == TurnChanged("a", 2)
    assert state.dice == ()
    assert state.held == frozenset()
    assert rolls_left(state) == 3


def test_roll_argument_errors() -> None:
    state = started(["a"])
    refuse(state, Roll("a", (1, 2, 3, 4)), "invalid_dice")
    refuse(state, Roll("a", (1, 2, 3, 4, 7)), "invalid_dice")
    refuse(state, Roll("a", (1, 2, 3, 4, True)), "invalid_dice")
    refuse(state, Roll("a", (1, 2, 3, 4, 5), keep=frozenset({0})), "invalid_dice")
    state, _ = apply(state, Roll("a", (1, 2, 3, 4, 5), keep=frozenset()))
    refuse(state, Roll("a", (1, 2, 3, 4, 5), keep=frozenset({5})), "invalid_dice")
    refuse(state, Roll("a", (1, 2, 3), keep=frozenset({0, 1, 2})), "invalid_dice")
    refuse(state, Roll("a", (), keep=frozenset(range(5))), "nothing_to_roll")
    refuse(state, Hold("a", frozenset()), "invalid_dice")
    refuse(state, Hold("a", frozenset({-1})), "invalid_dice")
    refuse(state, Release("a", "01"), "invalid_dice")  # type: ignore[arg-type]
    state, _ = apply(state, Hold("a", frozenset(range(5))))
    refuse(state, Roll("a", ()), "nothing_to_roll")
    with pytest.raises(GameError, match="held"):
        dice_to_roll(state)
    # a list keep from a JSON decoder is fine
    state, events = apply(state, Roll("a", (6,), keep=[0, 1, 2, 3]))  # type: ignore[arg-type]
    assert events == (Rolled("a", (1, 2, 3, 4, 6), 2, 1, (0, 1, 2, 3)),)


def test_only_the_player_on_turn_may_act() -> None:
    state = started(["a", "b"])
    refuse(state, Roll("b", (1, 2, 3, 4, 5)), "not_your_turn")
    refuse(state, Roll("z", (1, 2, 3, 4, 5)), "not_a_player")
    # the turn guard runs before the rolls guard
    refuse(state, Score("b", Box.CHANCE), "not_your_turn")
    refuse(state, Score("a", Box.CHANCE), "must_roll_first")
    refuse(state, Hold("a", frozenset({1})), "must_roll_first")


# -- scoring -------------------------------------------------------------------------------------


def test_score_box_guards_in_order() -> None:
    state = started(["a", "b"])
    state, _ = turn(state, "a", Box.CHANCE, (1, 2, 3, 4, 6))
    state, _ = turn(state, "b", Box.CHANCE, (1, 2, 3, 4, 6))
    state, _ = apply(state, Roll("a", (6, 6, 6, 6, 6)))
    refuse(state, Score("a", Box.ONE_PAIR), "unknown_box")
    refuse(state, Score("a", "no_such_box"), "unknown_box")  # type: ignore[arg-type]
    refuse(state, Score("a", Box.CHANCE), "category_taken")
    state, events = apply(state, Score("a", "sixes"))  # type: ignore[arg-type]
    assert events[0] == Scored("a", Box.SIXES, 30, 0, 0, False, False, 46)


def test_forced_joker_sequence_with_bonus() -> None:
    """YAHTZEE 50, then 4-4-4-4-4 twice: Fours is the only box, then the lower boxes."""
    state = started(["a"])
    state, events = turn(state, "a", Box.YAHTZEE, (4, 4, 4, 4, 4))
    assert events[1] == Scored("a", Box.YAHTZEE, 50, 0, 0, False, False, 50)
    state, _ = apply(state, Roll("a", (4, 4, 4, 4, 4)))
    refuse(state, Score("a", Box.FULL_HOUSE), "box_not_allowed")
    refuse(state, Score("a", Box.ACES), "box_not_allowed")
    state, events = apply(state, Score("a", Box.FOURS))
    # 50 + 20 + bonus 100 = 170
    assert events[0] == Scored("a", Box.FOURS, 20, 0, 100, True, False, 170)
    state, _ = apply(state, Roll("a", (4, 4, 4, 4, 4)))
    refuse(state, Score("a", Box.ACES), "box_not_allowed")
    state, events = apply(state, Score("a", Box.LARGE_STRAIGHT, automatic=True))
    # 170 + 40 + 100 = 310
    assert events[0] == Scored("a", Box.LARGE_STRAIGHT, 40, 0, 100, True, True, 310)
    assert scorecard(state, "a").yahtzee_bonuses == 2


def test_bonus_is_paid_when_the_forced_joker_forces_a_zero() -> None:
    """RULES.md 4: +100 wherever the dice are scored, also a Joker zero in an upper box."""
    state = started(["a"])
    script = [
        ("a", Box.YAHTZEE, (4, 4, 4, 4, 4)),
        ("a", Box.FOURS, (4, 4, 1, 2, 3)),
        ("a", Box.THREE_OF_A_KIND, (1, 2, 3, 4, 6)),
        ("a", Box.FOUR_OF_A_KIND, (1, 2, 3, 4, 6)),
        ("a", Box.FULL_HOUSE, (1, 2, 3, 4, 6)),
        ("a", Box.SMALL_STRAIGHT, (1, 2, 3, 4, 6)),
        ("a", Box.LARGE_STRAIGHT, (1, 2, 3, 4, 6)),
        ("a", Box.CHANCE, (1, 2, 3, 4, 6)),
    ]
    state, _ = run_script(state, script)
    before = scorecard(state, "a").totals().grand  # 50 + 8 + chance 16
    state, _ = apply(state, Roll("a", (4, 4, 4, 4, 4)))
    state, events = apply(state, Score("a", Box.SIXES))
    assert events[0] == Scored("a", Box.SIXES, 0, 0, 100, True, False, before + 100)
    assert scorecard(state, "a").get(Box.SIXES) == 0
    assert scorecard(state, "a").yahtzee_bonuses == 1


def test_scored_reports_the_upper_bonus_once() -> None:
    state = started(["a"])
    # 15 + 20 + 25 = 60, then sixes 6 -> 66: the bonus is earned by the sixes score
    script = [
        ("a", Box.THREES, (3, 3, 3, 3, 3)),
        ("a", Box.FOURS, (4, 4, 4, 4, 4)),
        ("a", Box.FIVES, (5, 5, 5, 5, 5)),
        ("a", Box.SIXES, (6, 1, 2, 3, 4)),
        ("a", Box.TWOS, (2, 1, 1, 1, 1)),
    ]
    state, events = run_script(state, script)
    scored = [e for e in events if isinstance(e, Scored)]
    assert [e.upper_bonus for e in scored] == [0, 0, 0, 35, 0]
    assert scored[3].total == 15 + 20 + 25 + 6 + 35
    assert scored[4].total == 15 + 20 + 25 + 6 + 35 + 2


# -- leaving during a game -----------------------------------------------------------------------


def test_leave_on_turn_passes_the_turn_and_skips_later_turns() -> None:
    state = started(["a", "b", "c"])
    state, _ = apply(state, Roll("a", (1, 1, 1, 1, 2)))
    state, events = apply(state, Leave("a"))
    assert events == (PlayerLeft("a", 0, True), HostChanged("b"), TurnChanged("b", 1))
    assert state.phase is Phase.AWAITING_ROLL
    assert state.dice == ()
    refuse(state, Leave("a"), "not_a_player")
    refuse(state, Roll("a", (1, 1, 1, 1, 1)), "not_a_player")
    state, _ = turn(state, "b", Box.CHANCE, (1, 2, 3, 4, 6))
    state, events = turn(state, "c", Box.CHANCE, (1, 2, 3, 4, 6))
    assert events[-1] == TurnChanged("b", 2)  # a is skipped
    # c leaves while it is not their turn: b keeps the turn
    state, events = apply(state, Leave("c"))
    assert events == (PlayerLeft("c", 2, True),)
    assert current_player(state) == "b"
    assert scorecard(state, "a").filled_count == 0


def test_everyone_leaving_ends_the_game_with_forfeits_ranked_last() -> None:
    state = started(["a", "b"])
    state, _ = turn(state, "a", Box.CHANCE, (6, 6, 6, 6, 5))  # a: 29
    state, _ = turn(state, "b", Box.CHANCE, (1, 1, 1, 2, 2))  # b: 7
    state, events = apply(state, Leave("a"))
    assert current_player(state) == "b"
    state, events = apply(state, Leave("b"))
    assert state.phase is Phase.FINISHED
    assert events[-1] == GameOver((Standing("a", 29, 1, True), Standing("b", 7, 2, True)))
    refuse(state, Leave("b"), "game_over")


def test_forfeited_player_ranks_after_every_player_still_in() -> None:
    state = started(["a", "b"])
    state, _ = turn(state, "a", Box.CHANCE, (6, 6, 6, 6, 6))  # a: 30 ... then leaves
    state, _ = apply(state, Leave("a"))
    for box in [Box.ACES, Box.TWOS, Box.THREES, Box.FOURS, Box.FIVES, Box.SIXES]:
        state, _ = turn(state, "b", box, (1, 2, 2, 3, 3))
    for box in [
        Box.THREE_OF_A_KIND,
        Box.FOUR_OF_A_KIND,
        Box.FULL_HOUSE,
        Box.SMALL_STRAIGHT,
        Box.LARGE_STRAIGHT,
        Box.YAHTZEE,
    ]:
        state, _ = turn(state, "b", box, (1, 1, 2, 4, 6))
    state, events = turn(state, "b", Box.CHANCE, (1, 1, 1, 1, 2))
    # b: aces 1 + twos 4 + threes 6 = 11, lower all 0, chance 6 -> 17 < 30, still first
    assert events[-1] == GameOver((Standing("b", 17, 1, False), Standing("a", 30, 2, True)))


def test_leave_during_roll_off() -> None:
    state, _ = apply(seated(["a", "b", "c"]), Start("a"))
    state, events = apply(state, Leave("b"))
    assert events == (PlayerLeft("b", 1, True),)
    assert state.contenders == ("a", "c")
    state, events = apply(state, Leave("a"))
    # c is the only contender left: c starts; order keeps every seat, a and b are skipped
    assert events == (
        PlayerLeft("a", 0, True),
        HostChanged("c"),
        GameStarted(("c", "a", "b"), FirstPlayer.ROLL_OFF),
        TurnChanged("c", 1),
    )
    state, events = turn(state, "c", Box.CHANCE, (1, 1, 1, 1, 1))
    assert events[-1] == TurnChanged("c", 2)


# -- every error code, and the transition table ----------------------------------------------------


def _lobby() -> GameState:
    return seated(["a", "b"], SEAT_ORDER, seats=3)


def _playing() -> GameState:
    state, _ = apply(_lobby(), Start("a"))
    return state


def _rolled() -> GameState:
    state, _ = apply(_playing(), Roll("a", (6, 6, 6, 6, 6)))
    return state


def _roll_off() -> GameState:
    state, _ = apply(seated(["a", "b"]), Start("a"))
    return state


def _finished() -> GameState:
    state = started(["a"])
    for box in state.players[0].card.boxes:
        state, _ = turn(state, "a", box, (1, 2, 3, 4, 6))
    assert state.phase is Phase.FINISHED
    return state


def _joker() -> GameState:
    state, _ = turn(started(["a"]), "a", Box.YAHTZEE, (3, 3, 3, 3, 3))
    state, _ = apply(state, Roll("a", (5, 5, 5, 5, 5)))
    return state


def _no_rolls_left() -> GameState:
    state, _ = play(_rolled(), Roll("a", (1,) * 5, keep=frozenset()), Roll("a", (1,) * 5))
    return state


ERROR_SCENARIOS: list[tuple[str, Callable[[], GameState], object]] = [
    ("invalid_command", _lobby, Join("", "Eve")),
    ("invalid_command", _lobby, "not a command"),
    ("invalid_command", _lobby, Start("a", random_choice="3")),  # type: ignore[arg-type]
    ("invalid_name", _lobby, Join("e", "\t")),
    ("name_taken", _lobby, Join("e", "a")),
    ("invalid_dice", _playing, Roll("a", (1, 2, 3))),
    ("unknown_box", _rolled, Score("a", Box.YATZY)),
    ("wrong_phase", _roll_off, Roll("a", (1, 2, 3, 4, 5))),
    ("wrong_phase", _playing, RollOff({"a": (1,) * 5, "b": (2,) * 5})),
    ("game_not_started", _lobby, Roll("a", (1, 2, 3, 4, 5))),
    ("game_not_started", _lobby, RollOff({})),
    ("game_already_started", _playing, Join("e", "Eve")),
    ("game_already_started", _roll_off, Start("a")),
    ("game_over", _finished, Roll("a", (1, 2, 3, 4, 5))),
    ("room_full", lambda: seated(["a", "b"]), Join("e", "Eve")),
    ("already_joined", _lobby, Join("a", "Other")),
    ("not_a_player", _lobby, Leave("e")),
    ("not_a_player", _lobby, Start("e")),
    ("not_host", _lobby, Start("b")),
    ("not_your_turn", _playing, Roll("b", (1, 2, 3, 4, 5))),
    ("must_roll_first", _playing, Score("a", Box.CHANCE)),
    ("no_rolls_left", _no_rolls_left, Roll("a", (1,), keep=frozenset(range(4)))),
    ("nothing_to_roll", _rolled, Roll("a", (), keep=frozenset(range(5)))),
    ("category_taken", _joker, Score("a", Box.YAHTZEE)),
    ("box_not_allowed", _joker, Score("a", Box.CHANCE)),
]


@pytest.mark.parametrize(
    ("code", "make_state", "command"),
    ERROR_SCENARIOS,
    ids=[f"{code}-{i}" for i, (code, _, _) in enumerate(ERROR_SCENARIOS)],
)
def test_error_codes(code: str, make_state: Callable[[], GameState], command: object) -> None:
    error = refuse(make_state(), command, code)
    assert error.message
    assert error.code in ERROR_CODES
    assert repr(error).startswith(type(error).__name__)


def test_every_error_code_is_exercised() -> None:
    assert {code for code, _, _ in ERROR_SCENARIOS} == set(ERROR_CODES)


def test_phase_errors_share_a_base_class() -> None:
    for code in ("game_not_started", "game_already_started", "game_over", "wrong_phase"):
        assert issubclass(ERROR_CLASSES[code], WrongPhaseError)


PHASE_STATES: dict[Phase, Callable[[], GameState]] = {
    Phase.LOBBY: _lobby,
    Phase.ROLL_OFF: _roll_off,
    Phase.AWAITING_ROLL: _playing,
    Phase.ROLLED: _rolled,
    Phase.FINISHED: _finished,
}


def _typical(state: GameState, kind: str) -> Command:
    """A command of ``kind`` from the right player, legal except for the phase."""
    player = current_player(state) or state.host or "a"
    commands: dict[str, Command] = {
        "join": Join("e", "Eve"),
        "leave": Leave(player),
        "start": Start(player),
        "roll_off": RollOff({c: (1, 2, 3, 4, 6 - i) for i, c in enumerate(state.contenders)}),
        "roll": Roll(player, (1, 2, 3, 4, 5)),
        "hold": Hold(player, frozenset({0})),
        "release": Release(player, frozenset({0})),
        "score": Score(player, Box.SIXES),
        "take_bonus": TakeBonus(player),
    }
    return commands[kind]


def _bonus_rolled() -> GameState:
    """Phase rolled with an extra Yahtzee whose +100 may be taken without a box."""
    state = started(["a", "b"], RuleOptions(bonus_turn=Toggle.ON))
    state, _ = turn(state, "a", Box.YAHTZEE, (2, 2, 2, 2, 2))
    state, _ = turn(state, "b", Box.CHANCE, (1, 2, 3, 4, 6))
    state, _ = apply(state, Roll("a", (6, 6, 6, 6, 6)))
    return state


@pytest.mark.parametrize("phase", list(Phase))
@pytest.mark.parametrize("kind", COMMAND_KINDS)
def test_transition_table_matches_the_engine(phase: Phase, kind: str) -> None:
    state = PHASE_STATES[phase]()
    if kind == "take_bonus" and phase is Phase.ROLLED:
        state = _bonus_rolled()
    assert state.phase is phase
    cell = TRANSITIONS[phase][kind]
    command = _typical(state, kind)
    if isinstance(cell, Refused):
        refuse(state, command, cell.code)
    else:
        new_state, _ = apply(state, command)
        assert new_state.phase in cell.next_phases


def test_transition_table_is_complete_and_printable() -> None:
    assert set(TRANSITIONS) == set(Phase)
    for row in TRANSITIONS.values():
        assert tuple(row) == COMMAND_KINDS
        for cell in row.values():
            assert isinstance(cell, Allowed | Refused)
            if isinstance(cell, Refused):
                assert cell.code in ERROR_CODES
                assert cell.guard in GUARD_ORDER
    text = transition_table_markdown()
    assert text.count("\n") == 2 + len(Phase)
    assert "| rolled |" in text
    assert "must_roll_first` (rolls guard)" in text
    assert GUARD_ORDER == (Guard.PHASE, Guard.PLAYER, Guard.ROLLS, Guard.BOX)

"""The one protocol <-> game translation: every engine code has a protocol code, events and
commands map both ways."""

from __future__ import annotations

import msgspec
import pytest

import protocol.messages as pm
from protocol.codec import decode_server, encode_msgpack
from protocol.errors import ERROR_CODES, ErrorCode
from protocol.types import Box
from server import game
from server.boundary import translate, views
from server.domain import room
from server.domain.events import Occurred, occurred
from server.domain.refusals import RefusalError
from server.service.outcomes import ServiceError, UnavailableError


@pytest.mark.parametrize("code", sorted(game.ERROR_CODES))
def test_every_engine_error_code_has_a_protocol_code(code: str) -> None:
    assert translate.error_code(code) in ERROR_CODES


def test_room_layer_codes_are_protocol_codes() -> None:
    assert translate.error_code(room.SeatTakenError().code) == "not_in_room"
    assert translate.error_code(ServiceError("unavailable", "x").code) == "unavailable"


def test_an_unknown_code_is_a_bug_not_a_silent_internal_error() -> None:
    with pytest.raises(KeyError):
        translate.error_code("no_such_code")


def test_play_commands_become_engine_commands_without_dice() -> None:
    roll = translate.engine_command(pm.Roll(id="1", keep=(0, 2)), "p")
    assert roll == game.Roll("p", (), frozenset({0, 2}))
    score = translate.engine_command(pm.Score(id="2", box=Box.FOURS), "p")
    assert score == game.Score("p", game.Box.FOURS)
    assert translate.engine_command(pm.Hold(id="3", dice=(1,)), "p") == game.Hold(
        "p", frozenset({1})
    )
    assert translate.engine_command(pm.Start(id="4"), "p") == game.Start("p")


def test_a_game_s_events_are_valid_wire_events_in_order() -> None:
    state = game.new_game(game.RuleOptions(first_player="seat_order"), 1)
    happened: list[Occurred] = []
    for command in (game.Join("p", "Ann"), game.Start("p"), game.Roll("p", (6, 6, 6, 6, 6))):
        state, events = game.apply(state, command)
        happened += occurred(events, state)
    numbered = translate.wire_events("r", happened, None, 1, deadline_ms=99, now=7)
    assert [e.seq for e in numbered] == list(range(1, len(happened) + 1))
    kinds = [pm.message_type(e) for e in numbered]
    assert kinds == ["player_joined", "host_changed", "game_started", "turn_changed", "rolled"]
    turn = numbered[3]
    assert isinstance(turn, pm.TurnChanged)
    assert (turn.deadline_ms, turn.server_time_ms) == (99, 7)
    rolled = numbered[4]
    assert isinstance(rolled, pm.Rolled)
    assert rolled.preview
    assert rolled.joker is False
    for event in numbered:  # what goes into the log decodes as the same message
        assert decode_server(encode_msgpack(event), "msgpack") == event


def test_room_events_become_wire_events() -> None:
    state = game.new_game(game.RuleOptions(), 2)
    happened = occurred(
        [
            room.PlayerAway("p", 1234),
            room.PlayerBack("p"),
            room.SpectatorCount(4),
            room.RematchOffer("p", "r2", None),
        ],
        state,
    )
    events = translate.wire_events("r", happened, None, 5)
    assert [msgspec.structs.asdict(e) for e in events] == [
        {"room": "r", "seq": 5, "player": "p", "away_deadline_ms": 1234},
        {"room": "r", "seq": 6, "player": "p"},
        {"room": "r", "seq": 7, "count": 4},
        {"room": "r", "seq": 8, "player": "p", "rematch_room": "r2", "invite_code": None},
    ]


def test_a_snapshot_shows_the_away_deadline_the_rematch_and_the_room_settings() -> None:
    state = game.new_game(game.RuleOptions(), 2)
    state, _ = game.apply(state, game.Join("p", "Pat"))
    record = room.new_record(
        state,
        public=True,
        invite_hash=None,
        turn_seconds=0,
        now=0,
        dice_seed="ab" * 32,
        computer_delay_ms=300,
        auto_start=True,
    )
    released = room.release(record.replace(connected={"p": True}), "p", None, 1_000, 60)
    assert released is not None
    record = released[0].replace(rematch=room.Rematch("r2", None, "k"))
    shown = views.room_state("r", record, grace_seconds=60)
    assert (shown.auto_start, shown.computer_delay_ms, shown.rematch_room) == (True, 300, "r2")
    assert shown.players[0].away_deadline_ms == 61_000
    assert views.room_state("r", record).players[0].away_deadline_ms is None  # grace off


def _played(commands: list[game.Command], options: game.RuleOptions) -> tuple[
    list[game.Event], list[pm.Event]
]:  # fmt: skip
    state = game.new_game(options, 2)
    engine: list[game.Event] = []
    happened: list[Occurred] = []
    for command in commands:
        state, events = game.apply(state, command)
        engine += events
        happened += occurred(events, state)
    return engine, translate.wire_events("r", happened, None, 1, deadline_ms=None, now=0)


def test_an_extra_yahtzee_taken_as_a_bonus_has_a_wire_form_and_comes_back() -> None:
    options = game.RuleOptions(first_player="seat_order", bonus_turn="on")
    yahtzee = [game.Roll("p", (5, 5, 5, 5, 5)), game.Score("p", game.Box.YAHTZEE)]
    other = [game.Roll("q", (1, 2, 3, 4, 6)), game.Score("q", game.Box.CHANCE)]
    commands: list[game.Command] = [
        game.Join("p", "Ann"),
        game.Join("q", "Bot", computer="hard"),
        game.Start("p"),
        *yahtzee,
        *other,
        game.Roll("p", (5, 5, 5, 5, 5)),
        game.TakeBonus("p"),
    ]
    engine, wire = _played(commands, options)
    joined = [e for e in wire if isinstance(e, pm.PlayerJoined)]
    assert [j.computer for j in joined] == [None, "hard"]
    taken = [e for e in wire if isinstance(e, pm.BonusTaken)]
    assert len(taken) == 1
    assert (taken[0].player, taken[0].yahtzee_bonus, taken[0].total) == ("p", 100, 150)
    back = views.engine_events(wire)
    wanted = (game.PlayerJoined, game.TurnChanged, game.Rolled, game.Scored, game.BonusTaken)
    assert back == [e for e in engine if isinstance(e, wanted)]


def test_running_bonus_totals_become_per_event_amounts() -> None:
    options = game.RuleOptions(first_player="seat_order")
    turns: list[game.Command] = [game.Join("p", "Ann"), game.Start("p")]
    for box in (game.Box.YAHTZEE, game.Box.FIVES, game.Box.CHANCE):
        turns += [game.Roll("p", (5, 5, 5, 5, 5)), game.Score("p", box)]
    engine, wire = _played(turns, options)
    scored_wire = [e.yahtzee_bonus for e in wire if isinstance(e, pm.Scored)]
    assert scored_wire == [0, 100, 200]  # the wire carries the player's running bonus
    back = [e for e in views.engine_events(wire) if isinstance(e, game.Scored)]
    assert [e.yahtzee_bonus for e in back] == [0, 100, 100]
    assert back == [
        game.Scored(e.player, e.box, e.points, 0, e.yahtzee_bonus, e.joker, e.automatic, e.total)
        for e in engine
        if isinstance(e, game.Scored)
    ]


def test_one_refusal_tree_with_protocol_codes() -> None:
    for refusal in (room.SeatTakenError(), ServiceError("conflict", "x"), UnavailableError("x")):
        assert isinstance(refusal, RefusalError)
        assert isinstance(refusal.code, ErrorCode)
    assert UnavailableError("x").code is ErrorCode.UNAVAILABLE
    with pytest.raises(ValueError, match="no_such_code"):
        ServiceError("no_such_code", "a typo in a code fails where it is raised")

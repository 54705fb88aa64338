"""The room model: built from a snapshot, folded forward by events, deduplicated by seq."""

from __future__ import annotations

import pytest

from clients.model import RoomModel, SeqGapError
from protocol import (
    Box,
    FirstPlayer,
    GameOver,
    GameStarted,
    Held,
    HostChanged,
    Phase,
    PlayerDisconnected,
    PlayerJoined,
    PlayerLeft,
    PlayerReconnected,
    PreviewEntry,
    RatingChange,
    RatingsChanged,
    Rolled,
    RoomOptions,
    RoomState,
    RoomStatus,
    Rules,
    Scored,
    Snapshot,
    Spectators,
    Standing,
    TurnChanged,
)

ROOM = "r1"


def lobby_snapshot(seq: int = 0) -> Snapshot:
    state = RoomState(
        id=ROOM,
        status=RoomStatus.LOBBY,
        public=True,
        max_seats=2,
        turn_seconds=0,
        options=RoomOptions(),
        host=None,
        players=(),
        phase=Phase.LOBBY,
        order=(),
        current_player=None,
        round=0,
        dice=(),
        held=(),
        roll_number=0,
        rolls_left=0,
        preview=(),
        turn_deadline_ms=None,
        spectators=0,
    )
    return Snapshot(room=ROOM, seq=seq, state=state)


def started(model: RoomModel) -> None:
    events = [
        PlayerJoined(room=ROOM, seq=1, player="pa", name="Ann", seat=0),
        HostChanged(room=ROOM, seq=2, player="pa"),
        PlayerJoined(room=ROOM, seq=3, player="pb", name="<b>Bob</b>", seat=1),
        GameStarted(room=ROOM, seq=4, order=("pb", "pa"), first_player=FirstPlayer.SEAT_ORDER),
        TurnChanged(room=ROOM, seq=5, player="pb", round=1, deadline_ms=None),
    ]
    for event in events:
        assert model.apply(event)


def test_joins_and_start_fill_the_table() -> None:
    model = RoomModel.from_snapshot(lobby_snapshot())
    started(model)
    assert [p.name for p in model.players] == ["Ann", "<b>Bob</b>"]
    assert model.host == "pa"
    assert model.status is RoomStatus.PLAYING
    assert model.phase is Phase.AWAITING_ROLL
    assert model.current_player == "pb"
    assert model.rolls_left == 3
    assert model.order == ["pb", "pa"]
    assert model.seq == 5
    assert list(model.players[0].scorecard) == list(model.boxes)
    assert model.players[0].open_boxes == list(model.boxes)


def test_a_turn_rolls_holds_and_scores() -> None:
    model = RoomModel.from_snapshot(lobby_snapshot())
    started(model)
    preview = (PreviewEntry(box=Box.FIVES, allowed=True, points=15),)
    model.apply(
        Rolled(
            room=ROOM,
            seq=6,
            player="pb",
            dice=(5, 5, 5, 1, 2),
            roll_number=1,
            rolls_left=2,
            held=(),
            preview=preview,
            yahtzee_bonus_pending=False,
        )
    )
    assert model.phase is Phase.ROLLED
    assert model.dice == [5, 5, 5, 1, 2]
    assert model.preview_for("fives") == preview[0]
    assert model.preview_for(Box.ACES) is None
    model.apply(Held(room=ROOM, seq=7, player="pb", held=(0, 1, 2)))
    assert model.held == [0, 1, 2]
    model.apply(
        Scored(
            room=ROOM,
            seq=8,
            player="pb",
            box=Box.FIVES,
            points=15,
            upper_bonus=0,
            yahtzee_bonus=0,
            joker=False,
            automatic=False,
            total=15,
        )
    )
    bob = model.player("pb")
    assert bob is not None
    assert bob.scorecard[Box.FIVES] == 15
    assert (bob.upper, bob.lower, bob.grand) == (15, 0, 15)
    # The dice stay on the table until the next turn begins, but the turn is over.
    assert model.dice == [5, 5, 5, 1, 2]
    assert model.turn_over
    model.apply(TurnChanged(room=ROOM, seq=9, player="pa", round=1, deadline_ms=None))
    assert model.dice == []
    assert model.preview == []
    assert not model.turn_over
    model.apply(
        Scored(
            room=ROOM,
            seq=10,
            player="pa",
            box=Box.CHANCE,
            points=20,
            upper_bonus=0,
            yahtzee_bonus=0,
            joker=False,
            automatic=True,
            total=20,
        )
    )
    ann = model.player("pa")
    assert ann is not None
    assert (ann.upper, ann.lower, ann.grand) == (0, 20, 20)


def test_presence_spectators_and_game_over() -> None:
    model = RoomModel.from_snapshot(lobby_snapshot())
    started(model)
    model.apply(PlayerDisconnected(room=ROOM, seq=6, player="pa"))
    assert model.player("pa") is not None
    assert not model.player("pa").connected  # type: ignore[union-attr]
    model.apply(PlayerReconnected(room=ROOM, seq=7, player="pa"))
    assert model.player("pa").connected  # type: ignore[union-attr]
    model.apply(Spectators(room=ROOM, seq=8, count=3))
    assert model.spectators == 3
    model.apply(PlayerLeft(room=ROOM, seq=9, player="pa", seat=0, forfeited=True))
    assert model.player("pa").forfeited  # type: ignore[union-attr]
    results = (
        Standing(player="pb", name="Bob", total=10, place=1, forfeited=False),
        Standing(player="pa", name="Ann", total=0, place=2, forfeited=True),
    )
    model.apply(GameOver(room=ROOM, seq=10, results=results))
    assert model.status is RoomStatus.FINISHED
    assert model.phase is Phase.FINISHED
    assert model.current_player is None
    assert model.round == 13
    assert model.results == list(results)
    line = RatingChange(player="pb", identity="uB", before=1500, after=1658, provisional=True)
    model.apply(RatingsChanged(room=ROOM, seq=11, family=Rules.YAHTZEE, players=(line,)))
    assert model.ratings == [line]  # v1.4: after game over, once the game is archived


def test_leaving_the_lobby_frees_the_seat_and_moves_the_others_down() -> None:
    model = RoomModel.from_snapshot(lobby_snapshot())
    model.apply(PlayerJoined(room=ROOM, seq=1, player="pa", name="Ann", seat=0))
    model.apply(PlayerJoined(room=ROOM, seq=2, player="pb", name="Bob", seat=1))
    model.apply(PlayerLeft(room=ROOM, seq=3, player="pa", seat=0, forfeited=False))
    assert [(p.player, p.seat) for p in model.players] == [("pb", 0)]
    assert model.name_of("pa") == "pa"


def test_duplicates_are_ignored_and_gaps_raise() -> None:
    model = RoomModel.from_snapshot(lobby_snapshot(seq=4))
    assert not model.apply(Spectators(room=ROOM, seq=4, count=9))
    assert model.spectators == 0
    with pytest.raises(SeqGapError) as info:
        model.apply(Spectators(room=ROOM, seq=6, count=9))
    assert (info.value.expected, info.value.got) == (5, 6)
    assert model.seq == 4
    assert model.apply(Spectators(room=ROOM, seq=5, count=1))
    assert model.spectators == 1

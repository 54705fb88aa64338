"""The pure room layer: the record's rules as functions of ``now``, no Redis."""

from __future__ import annotations

import dataclasses

import pytest

from server import game
from server.domain import deadlines, record_format, room, roomlist


def lobby(*players: str, turn_seconds: int = 0, public: bool = True) -> room.RoomRecord:
    state = game.new_game(game.RuleOptions(first_player="seat_order"), 4)
    for p in players:
        state, _ = game.apply(state, game.Join(p, p.upper()))
    invite_hash = None if public else room.hash_secret("secret")
    record = room.new_record(state, public=public, invite_hash=invite_hash,
                             turn_seconds=turn_seconds, now=1_000, dice_seed="ab" * 32)  # fmt: skip
    for p in players:
        record, _, _ = room.claim(record, p, f"c-{p}")
    return record


def started(record: room.RoomRecord, now: int) -> room.RoomRecord:
    state, _ = game.apply(record.game, game.Start(record.game.players[0].player_id))
    return room.after_game(record, state, True, now)


def test_record_round_trips_through_its_stored_form() -> None:
    record = started(lobby("a", "b", turn_seconds=30), now=5_000)
    record = record.replace(spectators=3, seeds={"a": "x"}, draws=7)
    assert record_format.decode_record(record_format.encode_record(record)) == record
    record = record.replace(rematch=room.Rematch("r2", "code", "key"))
    assert record_format.decode_record(record_format.encode_record(record)) == record


def test_a_record_of_another_format_is_refused() -> None:
    with pytest.raises(ValueError, match="format"):
        record_format.decode_record(b'{"format": 1}')


def test_claim_takes_the_seat_over_and_names_the_previous_connection() -> None:
    record = lobby("a")
    record, events, previous = room.claim(record, "a", "c-new")
    assert previous == "c-a"
    assert events == []  # a was connected: nobody needs telling
    assert record.owners["a"] == "c-new"
    with pytest.raises(room.SeatTakenError):
        room.require_owner(record, "a", "c-a")
    room.require_owner(record, "a", "c-new")


def test_release_marks_away_once_and_only_for_the_owner() -> None:
    record = lobby("a")
    assert room.release(record, "a", "c-other", now=2_000) is None  # not the owner
    released = room.release(record, "a", "c-a", now=2_000)
    assert released is not None
    record, events = released
    assert events == [room.PlayerAway("a")]
    assert record.away_ms == {"a": 2_000}
    assert room.release(record, "a", "c-a", now=3_000) is None  # already away
    record, events, _ = room.claim(record, "a", "c-a2")
    assert events == [room.PlayerBack("a")]
    assert record.away_ms == {}


def test_turn_timer_restarts_only_when_a_turn_begins() -> None:
    record = started(lobby("a", "b", turn_seconds=30), now=10_000)
    assert record.deadline_ms == 40_000
    again = room.after_game(record, record.game, False, now=20_000)
    assert again.deadline_ms == 40_000
    assert deadlines.wake_at(again) == 40_000
    untimed = started(lobby("a", "b"), now=10_000)
    assert untimed.deadline_ms is None
    assert deadlines.wake_at(untimed) is None
    counted = room.after_game(record, record.game, False, now=20_000, draws=7)
    assert (counted.draws, counted.deadline_ms, counted.game) == (7, 40_000, record.game)
    assert again.draws == record.draws  # not given: left as it was


def test_an_absent_player_on_turn_is_due_after_the_grace() -> None:
    record = started(lobby("a", "b"), now=10_000)
    on_turn = game.current_player(record.game)
    assert on_turn == "a"
    record, _ = room.release(record, "b", "c-b", now=11_000) or (record, [])
    assert deadlines.absent_at(record, 60) is None  # b is away but not on turn
    record, _ = room.release(record, "a", "c-a", now=12_000) or (record, [])
    assert deadlines.absent_at(record, 60) == 72_000
    assert deadlines.absent_at(record, 0) is None  # 0 = never


def test_an_absent_host_blocks_the_lobby_only_while_someone_waits() -> None:
    record = lobby("a", "b")
    record, _ = room.release(record, "a", "c-a", now=1_000) or (record, [])
    assert deadlines.absent_at(record, 10) == 11_000
    record, _ = room.release(record, "b", "c-b", now=2_000) or (record, [])
    assert deadlines.absent_at(record, 10) is None  # nobody connected is waiting


def test_forget_drops_the_bookkeeping_of_a_departed_player() -> None:
    record = lobby("a", "b").replace(join_keys={"k1": "a", "k2": "b"}, away_ms={"a": 1})
    record = room.forget(record, "a")
    assert "a" not in record.owners
    assert record.join_keys == {"k2": "b"}
    assert record.away_ms == {}


def test_invites() -> None:
    assert room.invite_matches(lobby("a"), None)
    private = lobby("a", public=False)
    assert not room.invite_matches(private, None)
    assert not room.invite_matches(private, "wrong")
    assert room.invite_matches(private, "secret")


def test_summary_lists_what_the_lobby_shows() -> None:
    record = lobby("a", "b").replace(spectators=2)
    summary = roomlist.summary("r1", record)
    assert summary["status"] == "lobby"
    assert summary["players"] == ["A", "B"]
    assert (summary["seats"], summary["open_seats"], summary["spectators"]) == (4, 2, 2)
    assert started(record, 1).game.phase != game.Phase.LOBBY
    assert roomlist.summary("r1", started(record, 1))["open_seats"] == 0
    assert (summary["auto_start"], summary["computer_delay_ms"], summary["ghost_at"]) == (
        False,
        0,
        None,
    )


def test_the_away_deadline_is_the_grace_after_the_disconnection_without_a_timer() -> None:
    released = room.release(lobby("a", "b"), "a", "c-a", now=2_000, grace_seconds=60)
    assert released is not None
    record, events = released
    assert events == [room.PlayerAway("a", 62_000)]
    assert room.away_deadline(record, "a", 60) == 62_000
    assert room.away_deadline(record, "b", 60) is None  # connected
    assert room.away_deadline(record, "a", 0) is None  # the grace is off
    timed = room.release(lobby("a", turn_seconds=30), "a", "c-a", now=2_000, grace_seconds=60)
    assert timed is not None
    assert timed[1] == [room.PlayerAway("a", None)]  # the turn timer plays for everyone


def test_a_lobby_whose_people_are_all_away_past_the_grace_is_a_ghost() -> None:
    record = lobby("a", "b")
    assert deadlines.ghost_at(record, 60) is None  # both connected
    away = room.release(record, "a", "c-a", now=2_000)
    assert away is not None
    assert deadlines.ghost_at(away[0], 60) is None  # b is still there
    gone = room.release(away[0], "b", "c-b", now=5_000)
    assert gone is not None
    assert deadlines.ghost_at(gone[0], 60) == 65_000  # the last one to go, plus the grace
    assert roomlist.summary("r1", gone[0], 60)["ghost_at"] == 65_000
    assert deadlines.ghost_at(gone[0], 0) is None  # the grace is off
    assert deadlines.ghost_at(started(gone[0], 6_000), 60) is None  # only lobbies
    assert deadlines.ghost_at(lobby(), 60) is None  # nobody seated yet: a fresh room


def test_a_computer_on_turn_moves_after_the_room_s_delay_and_keeps_its_time() -> None:
    base = lobby("p")
    meta = room.RoomMeta(True, None, 0, 0, "00", computer_delay_ms=700)
    state, _ = game.apply(base.game, game.Join("c", "Ada", computer="hard"))
    record = base.replace(game=state, meta=meta)
    assert deadlines.computer_at(record, 1000) is None  # in the lobby nobody is on turn
    state, _ = game.apply(state, game.Start("p"))  # seat order: the person first
    record = record.replace(game=state)
    assert deadlines.computer_on_turn(state) is None
    assert deadlines.computer_at(record, 1000) is None
    state, _ = game.apply(state, game.Roll("p", (1, 2, 3, 4, 5)))
    state, _ = game.apply(state, game.Score("p", game.Box.CHANCE))
    record = record.replace(game=state)
    assert deadlines.computer_on_turn(state) == ("c", "hard")
    at = deadlines.computer_at(record, 1000)
    assert at == 1700
    record = record.replace(computer_ms=at)
    assert deadlines.wake_at(record) == 1700
    # a change that is not a move (later) does not push the move back
    assert deadlines.computer_at(record, 1500) == 1700
    assert record_format.decode_record(record_format.encode_record(record)) == record


def correspondence(*players: str, seconds: int = 86_400) -> room.RoomRecord:
    record = lobby(*players, turn_seconds=seconds)
    return record.replace(meta=dataclasses.replace(record.meta, correspondence=True))


def test_a_correspondence_record_keeps_its_kind_through_its_stored_form() -> None:
    record = started(correspondence("a", "b"), now=5_000)
    assert record.deadline_ms == 5_000 + 86_400_000  # its clock is the turn timer's
    again = record_format.decode_record(record_format.encode_record(record))
    assert again == record
    assert again.meta.correspondence


def test_a_correspondence_room_lives_while_its_game_runs() -> None:
    idle, retention = 86_400, 3_600
    ordinary = started(lobby("a", "b", turn_seconds=60), now=0)
    assert deadlines.room_ttl(ordinary, idle, retention, 0) == idle
    slow = started(correspondence("a", "b", seconds=14 * 86_400), now=0)
    # a move at the last second of a 14-day clock still finds the room (the TTL covers it)
    assert deadlines.room_ttl(slow, idle, retention, 0) == idle + 14 * 86_400
    over = slow.replace(game=dataclasses.replace(slow.game, phase=game.Phase.FINISHED))
    assert deadlines.room_ttl(over, idle, retention, 0) == retention


def test_a_tournament_entry_lives_until_its_close_has_read_it() -> None:
    idle, retention = 600, 3_600
    entry = started(lobby("a"), now=0)
    entry = entry.replace(meta=dataclasses.replace(entry.meta, closes_ms=86_400_000))
    # an hour into a day-long tournament: the rest of the day, then the retention
    assert deadlines.room_ttl(entry, idle, retention, 3_600_000) == 82_800 + retention
    # past the close only the usual lifetime is left
    assert deadlines.room_ttl(entry, idle, retention, 90_000_000) == idle


def test_a_turn_began_when_its_deadline_was_set() -> None:
    timed = started(lobby("a", "b", turn_seconds=60), now=7_000)
    assert deadlines.turn_began_at(timed, 30_000) == 7_000
    untimed = started(lobby("a", "b"), now=7_000)
    assert deadlines.turn_began_at(untimed, 30_000) == 30_000


def test_nobody_is_absent_in_a_correspondence_room() -> None:
    record = started(correspondence("a", "b", "c"), now=0)
    away, _ = room.release(record, "a", "c-a", now=10, grace_seconds=60) or (None, None)
    assert away is not None
    assert deadlines.absent_at(away, 60) is None  # the player on turn: only the clock plays
    assert room.away_deadline(away, "a", 60) is None
    host_away = correspondence("a", "b")
    host_away, _ = room.release(host_away, "a", "c-a", now=10) or (None, None)
    assert host_away is not None
    assert deadlines.absent_at(host_away, 60) is None  # a host away in the lobby is not removed


def entry(closes_ms: int = 50_000) -> room.RoomRecord:
    """A tournament entry: one seat, the tournament's seed, play until ``closes_ms``."""
    state = game.new_game(game.RuleOptions(), 1)
    state, _ = game.apply(state, game.Join("a", "A"))
    state, _ = game.apply(state, game.Start("a"))
    record = room.new_record(state, public=False, invite_hash=room.hash_secret("x"),
                             turn_seconds=0, now=1_000, dice_seed="cd" * 32,
                             tournament="tCup", closes_ms=closes_ms)  # fmt: skip
    record, _, _ = room.claim(record, "a", "c-a")
    return record


def test_a_tournament_entry_round_trips_with_its_tournament_and_end() -> None:
    record = entry()
    assert record_format.decode_record(record_format.encode_record(record)) == record
    assert record.meta.tournament == "tCup"
    assert record.meta.closes_ms == 50_000


def test_play_in_an_entry_stops_at_the_tournaments_end() -> None:
    record = entry(closes_ms=50_000)
    room.require_open(record, 49_999)
    with pytest.raises(room.TournamentClosedError) as refused:
        room.require_open(record, 50_000)
    assert refused.value.code == "tournament_closed"
    room.require_open(started(lobby("a"), 1_000), 10**12)  # an ordinary room never closes


def test_nobody_plays_for_an_entrant_who_went_away() -> None:
    record, _ = room.release(entry(), "a", "c-a", now=2_000) or (entry(), [])
    assert record.away_ms == {"a": 2_000}
    assert deadlines.absent_at(record, grace_seconds=60) is None
    assert room.away_deadline(record, "a", grace_seconds=60) is None


def test_a_record_copy_equals_dataclasses_replace_and_refuses_unknown_fields() -> None:
    """``RoomRecord.replace`` copies through :func:`server.game.copying.replaced`."""
    record = lobby("a", "b")
    copy = record.replace(computer_ms=5, draws=2)
    assert copy == dataclasses.replace(record, computer_ms=5, draws=2)
    assert (record.computer_ms, record.draws) == (None, 0)
    assert record_format.decode_record(record_format.encode_record(copy)) == copy
    with pytest.raises(TypeError, match="no field phase"):
        record.replace(phase=game.Phase.FINISHED)

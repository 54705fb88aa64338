"""The service against the real Redis fixture (no sockets): CAS, idempotency, timers."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

import pytest
import redis.asyncio as aioredis

import protocol.messages as pm
from server import game, translate
from server.service import GameService, ServiceError, draw_faces
from server.settings import Settings
from server.store import RoomStore


@pytest.fixture
async def service(redis_url: str, redis_prefix: str) -> AsyncIterator[GameService]:
    client = aioredis.Redis.from_url(redis_url)
    settings = Settings(redis_url=redis_url, redis_prefix=redis_prefix)
    yield GameService(RoomStore(client, redis_prefix), settings)
    await client.aclose()


def roll(player: str) -> Callable[[game.GameState], list[game.Command]]:
    def build(state: game.GameState) -> list[game.Command]:
        return [game.Roll(player, draw_faces(len(game.dice_to_roll(state))))]

    return build


async def new_game(
    service: GameService, players: int, turn_seconds: int = 0
) -> tuple[str, list[str]]:
    options = game.RuleOptions(first_player="seat_order")
    room, _ = await service.create_room(options=options, seats=players, turn_seconds=turn_seconds)
    ids = []
    for i in range(players):
        out = await service.join(room, f"P{i}", None)
        ids.append(out.result["player"])
        assert len(out.result["token"]) >= 43  # 32 random bytes
        assert await service.authenticate(room, out.result["token"]) == out.result["player"]
    await service.act(room, ids[0], lambda s: [game.Start(ids[0])])
    return room, ids


async def test_full_game_log_and_totals(service: GameService) -> None:
    room, ids = await new_game(service, 2)
    for _ in range(13 * 2):
        loaded = await service.load(room)
        state = game.from_dict(loaded.record["game"])
        player = game.current_player(state)
        assert player is not None
        await service.act(room, player, roll(player))
        await service.act(
            room, player, lambda s, p=player: [game.Score(p, game.best_auto_score(s))]
        )
    loaded = await service.load(room)
    state = game.from_dict(loaded.record["game"])
    assert state.phase == game.Phase.FINISHED
    log = await service.store.read_events(room)
    assert [seq for seq, _ in log] == list(range(1, loaded.seq + 1))
    over = log[-1][1]
    assert over["type"] == "game_over"
    scored = [e for _, e in log if e["type"] == "scored"]
    for pid in ids:
        assert [e["total"] for e in scored if e["player"] == pid][-1] == game.totals(
            state, pid
        ).grand
    rolled = [e for _, e in log if e["type"] == "rolled"]
    assert all(len(e["preview"]) >= 1 for e in rolled)
    # every log entry is a valid protocol event, and the snapshot is a valid room state
    for seq, entry in log:
        assert translate.event_message(room, seq, entry).seq == seq
    snap = translate.snapshot(room, loaded.seq, loaded.record)
    assert snap.state.status == "finished"
    assert {p.player: p.totals.grand for p in snap.state.players} == {
        pid: game.totals(state, pid).grand for pid in ids
    }


async def test_racing_rolls_at_most_three(service: GameService) -> None:
    room, ids = await new_game(service, 1)
    results = await asyncio.gather(
        *(service.act(room, ids[0], roll(ids[0])) for _ in range(50)),
        return_exceptions=True,
    )
    ok = [r for r in results if not isinstance(r, BaseException)]
    errors = {r.code for r in results if isinstance(r, game.GameError)}
    assert len(ok) == 3
    assert errors == {"no_rolls_left"}
    log = await service.store.read_events(room)
    assert sum(e["type"] == "rolled" for _, e in log) == 3


async def test_retried_command_applied_once(service: GameService) -> None:
    room, ids = await new_game(service, 1)
    first = await service.act(room, ids[0], roll(ids[0]), cache_field="x:1")
    again = await service.act(room, ids[0], roll(ids[0]), cache_field="x:1")
    assert again.cached
    assert not first.cached
    log = await service.store.read_events(room)
    assert sum(e["type"] == "rolled" for _, e in log) == 1


async def test_private_room_needs_invite(service: GameService) -> None:
    room, invite = await service.create_room(options=game.RuleOptions(), seats=2, public=False)
    assert invite
    with pytest.raises(ServiceError) as err:
        await service.join(room, "Eve", "wrong")
    assert err.value.code == "invite_required"
    out = await service.join(room, "Ann", invite)
    assert out.result["player"]


async def test_expired_timer_fires_exactly_once(
    service: GameService, redis_url: str, redis_prefix: str
) -> None:
    room, ids = await new_game(service, 2, turn_seconds=1)
    loaded = await service.load(room)
    # move the deadline into the past instead of waiting for it
    record = {**loaded.record, "deadline_ms": 1}
    await service.store.commit(room, loaded.version, record, ttl_seconds=60)
    await service.store.set_deadline(room, 1)
    other_client = aioredis.Redis.from_url(redis_url)
    other = GameService(RoomStore(other_client, redis_prefix), service.settings)
    try:
        fired = await asyncio.gather(
            *(s.fire_timer(room) for s in (service, other, service, other))
        )
    finally:
        await other_client.aclose()
    assert fired.count(True) == 1
    log = await service.store.read_events(room)
    scored = [e for _, e in log if e["type"] == "scored"]
    assert len(scored) == 1
    assert scored[0]["automatic"] is True
    assert scored[0]["player"] == ids[0]
    loaded = await service.load(room)
    assert loaded.record["deadline_ms"] > 1  # the next player's turn has its own deadline


def roll_faces(player: str, *faces: int) -> Callable[[game.GameState], list[game.Command]]:
    return lambda s: [game.Roll(player, faces)]


async def last_rolled(service: GameService, room: str) -> pm.Rolled:
    """The last log entry, as the wire event (it must be a ``rolled``)."""
    log = await service.store.read_events(room)
    seq, entry = log[-1]
    event = translate.event_message(room, seq, entry)
    assert isinstance(event, pm.Rolled)
    assert event.joker is entry["joker"]  # written in the log, not defaulted
    return event


async def test_expect_seq_refuses_a_stale_command_and_changes_nothing(
    service: GameService,
) -> None:
    room, ids = await new_game(service, 1)
    before = await service.load(room)
    with pytest.raises(ServiceError) as err:
        await service.act(room, ids[0], roll(ids[0]), expect_seq=before.seq - 1)
    assert err.value.code == "stale_state"
    after = await service.load(room)
    assert (after.version, after.seq, after.record) == (before.version, before.seq, before.record)
    out = await service.act(room, ids[0], roll(ids[0]), expect_seq=before.seq)
    assert out.seq == before.seq + 1


async def test_racing_commands_with_one_expect_seq_apply_once(service: GameService) -> None:
    room, ids = await new_game(service, 1)
    seq = (await service.load(room)).seq
    results = await asyncio.gather(
        *(service.act(room, ids[0], roll(ids[0]), expect_seq=seq) for _ in range(20)),
        return_exceptions=True,
    )
    ok = [r for r in results if not isinstance(r, BaseException)]
    codes = {r.code for r in results if isinstance(r, ServiceError)}
    assert len(ok) == 1
    assert codes == {"stale_state"}
    log = await service.store.read_events(room)
    assert sum(e["type"] == "rolled" for _, e in log) == 1


async def test_rolled_and_snapshot_report_the_joker(service: GameService) -> None:
    room, (p,) = await new_game(service, 1)
    loaded = await service.load(room)
    assert translate.room_state(room, loaded.record).joker is False  # awaiting the roll
    await service.act(room, p, roll_faces(p, 6, 6, 6, 6, 6))
    first = await last_rolled(service, room)
    assert first.joker is False  # a Yahtzee with the YAHTZEE box still open: no Joker
    await service.act(room, p, lambda s: [game.Score(p, game.Box.YAHTZEE)])
    await service.act(room, p, roll_faces(p, 6, 6, 6, 6, 6))
    extra = await last_rolled(service, room)
    assert extra.joker is True
    assert extra.yahtzee_bonus_pending is True
    loaded = await service.load(room)
    assert translate.room_state(room, loaded.record).joker is True
    await service.act(room, p, lambda s: [game.Score(p, game.Box.SIXES)])
    await service.act(room, p, roll_faces(p, 1, 2, 3, 4, 6))
    normal = await last_rolled(service, room)
    assert normal.joker is False
    loaded = await service.load(room)
    assert translate.room_state(room, loaded.record).joker is False


async def test_no_joker_without_extra_yahtzees(service: GameService) -> None:
    options = game.RuleOptions(first_player="seat_order", extra_yahtzees="off")
    room, _ = await service.create_room(options=options, seats=1)
    p = (await service.join(room, "Solo", None)).result["player"]
    await service.act(room, p, lambda s: [game.Start(p)])
    await service.act(room, p, roll_faces(p, 2, 2, 2, 2, 2))
    await service.act(room, p, lambda s: [game.Score(p, game.Box.YAHTZEE)])
    await service.act(room, p, roll_faces(p, 2, 2, 2, 2, 2))
    assert (await last_rolled(service, room)).joker is False
    loaded = await service.load(room)
    assert translate.room_state(room, loaded.record).joker is False

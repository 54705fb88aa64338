"""The service against the real Redis fixture (no sockets): CAS, idempotency, timers."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

import pytest
import redis.asyncio as aioredis

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

"""The service on the real Redis fixture, without sockets: the cached record, one store call
per command, conflicts, stale caches, idempotency, dice, timers."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence

import msgspec
import pytest
import redis.asyncio as aioredis
import redis.exceptions

import protocol.messages as pm
from protocol.codec import decode_server
from protocol.types import Box
from server import game
from server.boundary.wire import EncodedEvent
from server.domain import record_format
from server.service import upkeep as upkeep_module
from server.service.outcomes import ServiceError, UnavailableError
from server.service.rooms import GameService
from server.service.seats import Seats
from server.service.upkeep import LEASE_SLICE, WAKE_TICK_MS, Upkeep
from server.settings import Settings
from server.storage.interface import NotReplicatedError, StorageUnavailableError
from server.storage.redis_store import RedisStore, Store, Transition, lease_member


class Dice:
    """Dice chosen by the test (then random-looking filler)."""

    def __init__(self) -> None:
        self.next: list[int] = []

    def __call__(self, count: int) -> tuple[int, ...]:
        faces = [self.next.pop(0) if self.next else 1 + (i % 6) for i in range(count)]
        return tuple(faces)


class Node:
    """One server process's service, seats and upkeep, and what it delivered locally."""

    def __init__(self, store: Store, settings: Settings, dice: Dice) -> None:
        self.delivered: list[EncodedEvent] = []
        self.rechecked: list[str] = []
        self.service = GameService(
            store,
            settings,
            deliver=lambda r, events: self.delivered.extend(events),
            dice=dice,
            recheck=self.rechecked.append,
        )
        self.seats = Seats(self.service)
        self.upkeep = Upkeep(self.service, self.seats)

    async def log(self, room_id: str) -> list[pm.Event]:
        entries = await self.service.store.read_events(room_id, 0)
        events = [decode_server(data, "msgpack") for _, data in entries]
        assert [e.seq for e in events] == [seq for seq, _ in entries]  # type: ignore[union-attr]
        return events  # type: ignore[return-value]


@pytest.fixture
def dice() -> Dice:
    return Dice()


@pytest.fixture
async def clients(redis_url: str) -> AsyncIterator[list[aioredis.Redis]]:
    made = [aioredis.Redis.from_url(redis_url) for _ in range(2)]
    yield made
    for c in made:
        await c.aclose()


@pytest.fixture
def settings(redis_url: str, redis_prefix: str) -> Settings:
    return Settings(redis_url=redis_url, redis_prefix=redis_prefix)


@pytest.fixture
def nodes(clients: list[aioredis.Redis], settings: Settings, dice: Dice) -> list[Node]:
    """Two processes' services on one real Redis, each with its own connection."""
    return [Node(RedisStore(c, settings.redis_prefix), settings, dice) for c in clients]


async def new_game(node: Node, players: int, turn_seconds: int = 0) -> tuple[str, list[str]]:
    options = game.RuleOptions(first_player="seat_order")
    room_id, _ = await node.service.create_room(
        options=options, seats=players, turn_seconds=turn_seconds
    )
    ids = []
    for i in range(players):
        out = await node.seats.join(room_id, f"P{i}", None, conn_id=f"c{i}")
        ids.append(out.result.player)
        assert await node.seats.authenticate(room_id, out.result.token) == ids[-1]
    await node.service.play(room_id, ids[0], pm.Start(id="s"))
    return room_id, ids


async def test_a_commit_whose_reply_is_lost_has_its_room_rechecked(
    nodes: list[Node], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The commit ran but its reply never came: the command is `unavailable`, nothing was
    delivered locally, and the room is handed to the feed to read its log (a commit does not
    publish to the process that made it)."""
    node = nodes[0]
    room_id, ids = await new_game(node, 1)
    store = node.service.store
    real = store.commit

    async def reply_lost(room: str, t: Transition) -> object:
        await real(room, t)
        raise redis.exceptions.ConnectionError("connection lost before the reply")

    monkeypatch.setattr(store, "commit", reply_lost)
    delivered = len(node.delivered)
    with pytest.raises(UnavailableError):
        await node.service.play(room_id, ids[0], pm.Roll(id="lost"))
    assert node.rechecked == [room_id]
    assert len(node.delivered) == delivered
    assert isinstance((await node.log(room_id))[-1], pm.Rolled)  # it did run


async def test_a_full_game_commits_a_gap_free_log_of_wire_events(nodes: list[Node]) -> None:
    node = nodes[0]
    room_id, ids = await new_game(node, 2)
    for turn in range(13 * 2):
        player = ids[turn % 2]
        await node.service.play(room_id, player, pm.Roll(id=f"r{turn}"))
        state = (await node.service.view(room_id)).record.game
        box = game.best_auto_score(state)
        await node.service.play(room_id, player, pm.Score(id=f"s{turn}", box=Box(box.value)))
    current = await node.service.view(room_id)
    assert current.record.game.phase == game.Phase.FINISHED
    assert node.service.cached(room_id) is None  # finished: no longer held in memory
    log = await node.log(room_id)
    assert [e.seq for e in log] == list(range(1, current.seq + 1))
    assert isinstance(log[-1], pm.GameOver)
    # what this process delivered locally is the log, byte for byte
    assert [e.seq for e in node.delivered] == list(range(1, current.seq + 1))
    entries = await node.service.store.read_events(room_id, 0)
    assert [e.msgpack for e in node.delivered] == [data for _, data in entries]


async def test_one_store_call_per_command_in_the_steady_state(nodes: list[Node]) -> None:
    node = nodes[0]
    room_id, ids = await new_game(node, 1)
    calls = {"load": 0, "commit": 0}
    store = node.service.store
    real_load, real_commit = store.load, store.commit

    async def load(room_id: str):  # type: ignore[no-untyped-def]
        calls["load"] += 1
        return await real_load(room_id)

    async def commit(room_id: str, t: Transition):  # type: ignore[no-untyped-def]
        calls["commit"] += 1
        return await real_commit(room_id, t)

    store.load, store.commit = load, commit  # type: ignore[method-assign]
    for i in range(3):
        await node.service.play(room_id, ids[0], pm.Roll(id=f"r{i}"), cache_key=f"k{i}")
    assert calls == {"load": 0, "commit": 3}


async def test_a_stale_cache_costs_one_retry_never_a_wrong_write(nodes: list[Node]) -> None:
    a, b = nodes
    room_id, ids = await new_game(a, 1)
    await b.service.view(room_id)  # b caches the room at this version
    await a.service.play(room_id, ids[0], pm.Roll(id="1"))
    await a.service.play(room_id, ids[0], pm.Roll(id="2"))
    # b's cache says two rolls are left; Redis says one: b retries on the fresh record
    out = await b.service.play(room_id, ids[0], pm.Roll(id="3"))
    log = await a.log(room_id)
    assert out.seq == log[-1].seq
    assert sum(isinstance(e, pm.Rolled) for e in log) == 3
    with pytest.raises(game.GameError) as refused:
        await b.service.play(room_id, ids[0], pm.Roll(id="4"))
    assert refused.value.code == "no_rolls_left"


async def test_a_refusal_is_checked_against_redis_not_only_the_cache(nodes: list[Node]) -> None:
    a, b = nodes
    room_id, ids = await new_game(a, 2)
    await b.service.view(room_id)  # b believes it is P0's turn
    await a.service.play(room_id, ids[0], pm.Roll(id="1"))
    await a.service.play(room_id, ids[0], pm.Score(id="2", box=Box.CHANCE))
    # now it is P1's turn: b's stale cache would refuse with not_your_turn
    out = await b.service.play(room_id, ids[1], pm.Roll(id="3"))
    assert isinstance((await a.log(room_id))[-1], pm.Rolled)
    assert out.seq == (await a.service.view(room_id)).seq


async def test_racing_rolls_on_two_processes_make_at_most_three(nodes: list[Node]) -> None:
    room_id, ids = await new_game(nodes[0], 1)
    results = await asyncio.gather(
        *(nodes[i % 2].service.play(room_id, ids[0], pm.Roll(id=f"r{i}")) for i in range(40)),
        return_exceptions=True,
    )
    ok = [r for r in results if not isinstance(r, BaseException)]
    codes = {r.code for r in results if isinstance(r, game.GameError)}
    assert len(ok) == 3
    assert codes == {"no_rolls_left"}


async def test_a_retried_command_is_applied_once_whichever_process_gets_it(
    nodes: list[Node],
) -> None:
    a, b = nodes
    room_id, ids = await new_game(a, 1)
    first = await a.service.play(room_id, ids[0], pm.Roll(id="x"), cache_key="p:x")
    again = await b.service.play(room_id, ids[0], pm.Roll(id="x"), cache_key="p:x")
    assert again.cached
    assert not first.cached
    assert again.seq == first.seq
    assert sum(isinstance(e, pm.Rolled) for e in await a.log(room_id)) == 1


async def test_expect_seq_refuses_a_stale_command_and_changes_nothing(nodes: list[Node]) -> None:
    node = nodes[0]
    room_id, ids = await new_game(node, 1)
    before = await node.service.view(room_id)
    with pytest.raises(ServiceError) as err:
        await node.service.play(room_id, ids[0], pm.Roll(id="1", expect_seq=before.seq - 1))
    assert err.value.code == "stale_state"
    after = await node.service.view(room_id)
    assert (after.version, after.seq) == (before.version, before.seq)
    out = await node.service.play(room_id, ids[0], pm.Roll(id="2", expect_seq=before.seq))
    assert out.seq == before.seq + 1


async def test_the_dice_are_an_input_and_the_joker_is_reported(
    nodes: list[Node], dice: Dice
) -> None:
    node = nodes[0]
    room_id, (p,) = await new_game(node, 1)
    dice.next = [6] * 5
    await node.service.play(room_id, p, pm.Roll(id="1"))
    await node.service.play(room_id, p, pm.Score(id="2", box=Box.YAHTZEE))
    dice.next = [6] * 5
    await node.service.play(room_id, p, pm.Roll(id="3"))
    rolled = (await node.log(room_id))[-1]
    assert isinstance(rolled, pm.Rolled)
    assert rolled.dice == (6, 6, 6, 6, 6)
    assert rolled.joker is True
    assert rolled.yahtzee_bonus_pending is True


async def test_private_rooms_need_their_invite(nodes: list[Node]) -> None:
    node = nodes[0]
    room_id, invite = await node.service.create_room(
        options=game.RuleOptions(), seats=2, public=False
    )
    assert invite
    with pytest.raises(ServiceError) as err:
        await node.seats.join(room_id, "Eve", "wrong")
    assert err.value.code == "invite_required"
    assert (await node.seats.join(room_id, "Ann", invite)).result.player


async def test_leaving_revokes_the_token(nodes: list[Node]) -> None:
    node = nodes[0]
    room_id, _ = await node.service.create_room(options=game.RuleOptions(), seats=2)
    out = await node.seats.join(room_id, "Ann", None, conn_id="c")
    await node.seats.leave(room_id, out.result.player, "c")
    with pytest.raises(ServiceError) as err:
        await node.seats.authenticate(room_id, out.result.token)
    assert err.value.code == "bad_token"


async def test_an_expired_turn_timer_fires_exactly_once_across_processes(
    nodes: list[Node],
) -> None:
    a, b = nodes
    room_id, ids = await new_game(a, 2, turn_seconds=1)
    current = await a.service.view(room_id)
    past = current.record.replace(deadline_ms=1)
    stored = Transition(current.version, record_format.encode_record(past), 60)
    await a.service.store.commit(room_id, stored)
    fired = await asyncio.gather(
        *(n.upkeep.fire_timer(room_id) for n in (a, b, a, b)), return_exceptions=True
    )
    assert fired.count(True) == 1
    scored = [e for e in await a.log(room_id) if isinstance(e, pm.Scored)]
    assert len(scored) == 1
    assert scored[0].automatic
    assert scored[0].player == ids[0]
    after = await a.service.view(room_id)
    assert after.record.deadline_ms is not None
    assert after.record.deadline_ms > 1


async def test_spectator_counts_are_coalesced(nodes: list[Node]) -> None:
    node = nodes[0]
    room_id, _ = await new_game(node, 1)
    for i in range(30):
        await node.upkeep.spectator_joined(room_id, f"s{i}", 60_000)
    for i in range(10):
        await node.upkeep.spectator_left(room_id, f"s{i}")
    await node.upkeep.flush_spectator_counts()
    counts = [e for e in await node.log(room_id) if isinstance(e, pm.Spectators)]
    assert [msgspec.structs.asdict(e)["count"] for e in counts] == [20]


def test_a_command_result_survives_the_idempotency_cache_typed() -> None:
    from server.service.outcomes import (
        RematchMade,
        Seated,
        decode_result,
        encode_result,
    )

    seat = Seated("p1", 2, previous="c9")
    assert decode_result(encode_result(seat)) == seat
    made = RematchMade("r2", None, "p1", 0, None)
    assert decode_result(encode_result(made)) == made
    assert decode_result(encode_result(None)) is None
    # an entry written before results were typed (a plain JSON object) still reads
    assert decode_result(b'{"player": "p1", "seat": 2}') == Seated("p1", 2)


async def test_thousands_of_leases_are_renewed_a_slice_at_a_time(
    nodes: list[Node], monkeypatch: pytest.MonkeyPatch
) -> None:
    """One script call for every connection of a process held Redis and the loop for tens of
    ms at thousands of connections: the renewal goes a slice at a time, every lease in it."""
    node = nodes[0]
    store = node.service.store
    slices: list[int] = []
    claimed: list[str] = []
    put = store.leases_put

    async def leases_put(leases: Sequence[tuple[str, str]], expires_ms: int) -> list[str]:
        slices.append(len(leases))
        return await put(leases, expires_ms)

    async def claim_seat(room_id: str, player: str, conn_id: str, *, reclaim: bool) -> None:
        claimed.append(conn_id)

    monkeypatch.setattr(store, "leases_put", leases_put)
    monkeypatch.setattr(node.seats, "claim_seat", claim_seat)
    leases = [(f"lr{i % 300}", f"p{i}", f"c{i}") for i in range(2 * LEASE_SLICE + 7)]
    assert await node.upkeep.renew_leases(leases, 60_000) == len(leases)  # all new
    assert await node.upkeep.renew_leases(leases, 60_000) == 0
    assert slices == [LEASE_SLICE, LEASE_SLICE, 7] * 2
    assert sorted(claimed) == sorted(conn for _, _, conn in leases)


async def test_renewing_leases_claims_back_the_seats_of_leases_swept_meanwhile(
    nodes: list[Node],
) -> None:
    node = nodes[0]
    room_id, ids = await new_game(node, 2)
    leases = [(room_id, ids[0], "c0"), (room_id, ids[1], "c1")]
    assert await node.upkeep.renew_leases(leases, 60_000) == 2  # the first renewal adds them
    assert await node.upkeep.renew_leases(leases, 60_000) == 0
    # c1's process looked dead to another one: its lease expired and the seat was released
    await node.service.store.lease_drop(lease_member(room_id, ids[1], "c1"), room_id)
    await node.seats.release_seat(room_id, ids[1], "c1")
    assert ids[1] in (await node.service.view(room_id)).record.away_ms
    # the next renewal finds it gone and claims the seat back: the player is present again
    assert await node.upkeep.renew_leases(leases, 60_000) == 1
    current = await node.service.view(room_id)
    assert ids[1] not in current.record.away_ms
    assert current.record.owners[ids[1]] == "c1"
    assert isinstance((await node.log(room_id))[-1], pm.PlayerReconnected)


async def test_spectator_leases_of_many_rooms_are_renewed_at_once_and_counted(
    nodes: list[Node], monkeypatch: pytest.MonkeyPatch
) -> None:
    node = nodes[0]
    rooms = [(await new_game(node, 1))[0] for _ in range(3)]
    watchers = {
        room_id: [f"{room_id}-s{i}" for i in range(i + 1)] for i, room_id in enumerate(rooms)
    }
    # the recounts go in waves (here of 2 rooms), never all at once
    monkeypatch.setattr(upkeep_module, "RECOUNT_WAVE", 2)
    store = node.service.store
    recounting, most_at_once = 0, 0
    real_recount = store.spectator_drop

    async def recount(room_id: str, conn_id: str, now: int) -> int:
        nonlocal recounting, most_at_once
        recounting += 1
        most_at_once = max(most_at_once, recounting)
        try:
            return await real_recount(room_id, conn_id, now)
        finally:
            recounting -= 1

    monkeypatch.setattr(store, "spectator_drop", recount)
    await node.upkeep.renew_spectators(watchers, 60_000)
    await node.upkeep.flush_spectator_counts()
    assert most_at_once == 2
    for room_id, conn_ids in watchers.items():
        counts = [e for e in await node.log(room_id) if isinstance(e, pm.Spectators)]
        assert [msgspec.structs.asdict(e)["count"] for e in counts] == [len(conn_ids)]
    # a room whose count cannot be read now (Redis) is counted at the next flush; the others
    # are not held up
    await node.upkeep.renew_spectators({rooms[0]: ["late"], rooms[1]: ["late"]}, 60_000)
    real = store.spectator_drop

    async def failing(room_id: str, conn_id: str, now: int) -> int:
        if room_id == rooms[0]:
            raise redis.exceptions.ConnectionError("node down")
        return await real(room_id, conn_id, now)

    monkeypatch.setattr(store, "spectator_drop", failing)
    with pytest.raises(redis.exceptions.ConnectionError):
        await node.upkeep.flush_spectator_counts()
    monkeypatch.setattr(store, "spectator_drop", real)
    await node.upkeep.flush_spectator_counts()
    for room_id, expected in ((rooms[0], [1, 2]), (rooms[1], [2, 3])):
        counts = [e for e in await node.log(room_id) if isinstance(e, pm.Spectators)]
        assert [msgspec.structs.asdict(e)["count"] for e in counts] == expected


async def test_a_count_read_before_another_process_wrote_a_newer_one_is_counted_again(
    nodes: list[Node], monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = nodes
    room_id, _ = await new_game(first, 1)
    await first.upkeep.renew_spectators({room_id: ["a"]}, 60_000)
    await first.upkeep.flush_spectator_counts()  # 1
    store = first.service.store
    real_recount = store.spectator_drop

    async def recount_then_lose_the_race(room_id: str, conn_id: str, now: int) -> int:
        stale = await real_recount(room_id, conn_id, now)
        # before the first process commits what it read, a spectator joins on the second,
        # which counts and announces 2
        await second.upkeep.spectator_joined(room_id, "b", 60_000)
        await second.upkeep.flush_spectator_counts()
        return stale

    await first.upkeep.spectator_left(room_id, "a")
    await first.upkeep.spectator_joined(room_id, "a2", 60_000)
    monkeypatch.setattr(store, "spectator_drop", recount_then_lose_the_race)
    await first.upkeep.flush_spectator_counts()  # read 1, wrote 1 over the second's 2
    monkeypatch.setattr(store, "spectator_drop", real_recount)
    await first.upkeep.flush_spectator_counts()  # counted again: 2
    counts = [e for e in await first.log(room_id) if isinstance(e, pm.Spectators)]
    assert [msgspec.structs.asdict(e)["count"] for e in counts] == [1, 2, 1, 2]


async def test_renewing_unchanged_spectator_leases_costs_one_call_a_room_and_no_recount(
    nodes: list[Node], monkeypatch: pytest.MonkeyPatch
) -> None:
    node = nodes[0]
    store = node.service.store
    rooms = [(await new_game(node, 1))[0] for _ in range(2)]
    watchers = {room_id: [f"{room_id}-s{i}" for i in range(3)] for room_id in rooms}
    await node.upkeep.renew_spectators(watchers, 60_000)
    await node.upkeep.flush_spectator_counts()
    renewals: list[list[tuple[str, int]]] = []
    recounts: list[str] = []
    real_renew, real_drop = store.spectators_renew, store.spectator_drop
    real_renew_rooms = store.spectators_renew_rooms

    async def renew(
        rooms: list[tuple[str, list[str]]], lease_ms: int, now: int
    ) -> list[int | Exception]:
        renewals.append([(room_id, len(conn_ids)) for room_id, conn_ids in rooms])
        return await real_renew_rooms(rooms, lease_ms, now)

    async def drop(room_id: str, conn_id: str, now: int) -> int:
        recounts.append(room_id)
        return await real_drop(room_id, conn_id, now)

    monkeypatch.setattr(store, "spectators_renew_rooms", renew)
    monkeypatch.setattr(store, "spectator_drop", drop)
    await node.upkeep.renew_spectators(watchers, 60_000)
    await node.upkeep.flush_spectator_counts()
    assert renewals == [[(room_id, 3) for room_id in rooms]]  # one batch: a call a room
    assert recounts == []  # nothing changed: nothing recounted, no event
    # a spectator of a process that died: its lease ran out; the next renewal prunes it and
    # the room is recounted and announced
    now = node.service.clock()
    await real_renew(rooms[0], ["dead-process"], 1_000, now - 120_000)
    await node.upkeep.renew_spectators(watchers, 60_000)
    await node.upkeep.flush_spectator_counts()
    assert recounts == []  # the expired lease was pruned by the renewal: the count is unchanged
    await real_renew(rooms[0], ["another-process"], 60_000, now)
    await node.upkeep.renew_spectators(watchers, 60_000)
    await node.upkeep.flush_spectator_counts()
    assert recounts == [rooms[0]]
    counts = [e for e in await node.log(rooms[0]) if isinstance(e, pm.Spectators)]
    assert [msgspec.structs.asdict(e)["count"] for e in counts] == [3, 4]
    # a renewal that could not reach Redis read no count: every room is recounted next flush
    recounts.clear()

    async def down(rooms: object, lease_ms: int, now: int) -> list[int | Exception]:
        raise StorageUnavailableError("ConnectionError: Connection refused")

    monkeypatch.setattr(store, "spectators_renew_rooms", down)
    with pytest.raises(StorageUnavailableError):
        await node.upkeep.renew_spectators(watchers, 60_000)
    await node.upkeep.flush_spectator_counts()
    assert sorted(recounts) == sorted(rooms)


async def test_a_commit_that_moves_the_deadline_writes_it_in_the_same_call(
    nodes: list[Node], monkeypatch: pytest.MonkeyPatch
) -> None:
    node = nodes[0]
    store = node.service.store
    assert store.commits_deadlines  # single Redis: the schedule is written by the commit's script
    room_id, ids = await new_game(node, 2, turn_seconds=30)
    separate: list[int | None] = []

    async def set_deadline(room_id: str, at_ms: int | None) -> None:
        separate.append(at_ms)

    monkeypatch.setattr(store, "set_deadline", set_deadline)
    before = (await node.service.view(room_id)).record.deadline_ms
    await node.service.play(room_id, ids[0], pm.Roll(id="r"))
    await node.service.play(room_id, ids[0], pm.Score(id="s", box=Box.CHANCE))
    record = (await node.service.view(room_id)).record
    assert record.deadline_ms is not None
    assert before is not None
    assert record.deadline_ms > before  # the second player's turn timer
    assert await store.due_deadlines(record.deadline_ms - 1) == []
    assert await store.due_deadlines(record.deadline_ms) == [room_id]
    assert separate == []  # no second round trip


async def test_a_commit_that_waits_for_a_replica_writes_its_deadline_too(
    clients: list[aioredis.Redis], settings: Settings
) -> None:
    """With replicas required, the transition goes through ``WAIT`` (``ReplicaWait.eval``):
    the same script with the schedule's key. No replica here confirms it, so the commit is not
    acknowledged, but it ran, and its deadline with it (the retry finds both)."""
    store = RedisStore(clients[0], settings.redis_prefix, min_replicas=1,
                       replication_timeout=0.05)  # fmt: skip
    create = Transition(0, b"r", 60, deadline_changed=True, deadline_ms=700)
    with pytest.raises(NotReplicatedError):
        await store.commit("waited", create)
    assert await store.due_deadlines(700) == ["waited"]


async def test_a_computers_wake_up_that_comes_early_waits_instead_of_missing_the_move(
    nodes: list[Node], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The loop's timers round to its millisecond clock: a local wake-up can come before the
    computer's move is due by the record's clock. It must wait the rest, not fire a move that
    is not due (which left the move to the polled schedule, up to 250 ms late)."""
    node = nodes[0]
    options = game.RuleOptions(first_player="seat_order")
    room_id, _ = await node.service.create_room(
        options=options, seats=2, computers=[("hard", None)], computer_delay_ms=60_000
    )
    joined = await node.seats.join(room_id, "P", None, conn_id="c")
    await node.service.play(room_id, joined.result.player, pm.Start(id="s"))
    seen = node.service.cached(room_id)
    assert seen is not None
    due = seen.record.computer_ms
    assert due is not None  # the computer (seat 0) is on turn, its move a minute away
    fired: list[str] = []

    async def fire_timer(room_id: str) -> bool:
        fired.append(room_id)
        return True

    monkeypatch.setattr(node.upkeep, "fire_timer", fire_timer)
    monkeypatch.setattr(node.service, "clock", lambda: due - 1)  # one millisecond early
    node.upkeep._wake(room_id)
    assert not node.upkeep._firing  # no move started
    assert room_id in node.upkeep._wakes  # waits again for the rest
    node.upkeep._wakes.pop(room_id)  # (its tick then finds nothing to wake)
    monkeypatch.setattr(node.service, "clock", lambda: due)
    node.upkeep._wake(room_id)
    await asyncio.gather(*node.upkeep._firing)
    assert fired == [room_id]


async def test_computers_moves_due_in_one_tick_are_made_in_one_turn_of_the_loop(
    nodes: list[Node], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Wake-ups are grouped in ticks: rooms due within one tick are woken by one timer (their
    moves start together, so their plans batch and their commits share a write); a room whose
    wake-up moved to a later tick is woken there only, once."""
    upkeep = nodes[0].upkeep
    fired: list[str] = []
    turns: list[list[str]] = []  # what each timer found fired before it ran
    all_fired = asyncio.Event()

    async def fire_timer(room_id: str) -> bool:
        fired.append(room_id)
        if len(fired) == 3:
            all_fired.set()
        return True

    tick = upkeep._tick

    def counting_tick(at: int) -> None:
        turns.append(list(fired))
        tick(at)

    monkeypatch.setattr(upkeep, "fire_timer", fire_timer)
    monkeypatch.setattr(upkeep, "_tick", counting_tick)
    now = nodes[0].service.clock()
    start = -(-now // WAKE_TICK_MS) * WAKE_TICK_MS + 5 * WAKE_TICK_MS  # a tick ahead, its start
    upkeep.wake_soon("a", start + 1)
    upkeep.wake_soon("b", start + 3)
    upkeep.wake_soon("c", start + 2)
    upkeep.wake_soon("c", start + 3 * WAKE_TICK_MS)  # c moved on
    assert len(upkeep._ticks) == 2
    await asyncio.wait_for(all_fired.wait(), 10)
    assert sorted(fired[:2]) == ["a", "b"]
    assert fired[2:] == ["c"]
    assert turns == [[], ["a", "b"]]  # two timers: a and b by the first, c by the later one
    assert not upkeep._ticks
    assert not upkeep._wakes

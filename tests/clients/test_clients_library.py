"""The client library against a real server: a full game, errors, and a resume after a drop."""

from __future__ import annotations

import asyncio
import dataclasses
import secrets
from pathlib import Path

import pytest
from clients_live import LiveServer, spawn_server, stop_server
from websockets.asyncio.client import ClientConnection

from clients.backoff import Backoff
from clients.bot import play_seat
from clients.client import Client, CommandError, ConnectionFailedError
from clients.model import RoomModel
from protocol import (
    Command,
    CreateRoom,
    Encoding,
    Event,
    GameOver,
    Hold,
    PlayerDisconnected,
    PlayerReconnected,
    Release,
    Roll,
    RoomStatus,
    Scored,
    Snapshot,
    Start,
    TurnChanged,
)

TIMEOUT = 60


def comparable(model: RoomModel) -> dict[str, object]:
    """The parts of a model a snapshot carries (results and roll-offs come only as events)."""
    data = dataclasses.asdict(model)
    only_in_events = ("results", "roll_offs", "yahtzee_bonus_pending", "turn_over")
    fair_dice = ("dice_commitment", "seeds", "server_seed")
    for key in (*only_in_events, *fair_dice):
        data.pop(key)
    return data


async def fresh_view(server: LiveServer, room: str, invite: str | None = None) -> RoomModel:
    async with Client(server.ws) as watcher:
        await watcher.spectate(room, invite)
        async with asyncio.timeout(TIMEOUT):
            return await watcher.wait_for(lambda m: True)


@pytest.mark.parametrize("encoding", [Encoding.MSGPACK, Encoding.JSON])
async def test_a_whole_solo_game(live_server: LiveServer, encoding: Encoding) -> None:
    async with Client(live_server.ws, encoding=encoding) as client:
        assert client.welcome is not None
        assert client.welcome.encoding is encoding
        created = await client.create_room(seats=1, first_player="seat_order", public=False)
        assert created.invite_code
        joined = await client.join(created.room, "Ann", created.invite_code)
        assert client.player == joined.player
        assert client.token == joined.token
        await client.ping()
        async with asyncio.timeout(TIMEOUT):
            results = await play_seat(client)
        model = client.model
        assert model is not None
        assert model.status is RoomStatus.FINISHED
        ann = model.player(joined.player)
        assert ann is not None
        assert all(points is not None for points in ann.scorecard.values())
        assert len(results) == 1
        assert results[0].total == ann.grand
        assert ann.grand == ann.upper + ann.upper_bonus + ann.lower + ann.yahtzee_bonus
        # What the events built equals what a newcomer's snapshot says (the newcomer itself
        # may have added a `spectators` event).
        view = await fresh_view(live_server, created.room, created.invite_code)
        assert comparable(view) | {"seq": 0, "spectators": 0} == comparable(model) | {
            "seq": 0,
            "spectators": 0,
        }


async def test_list_and_get_rooms(live_server: LiveServer) -> None:
    async with Client(live_server.ws, encoding="json") as client:
        created = await client.create_room(seats=3, rules="yatzy", joker="free")
        rooms = {r.room: r for r in await client.list_rooms()}
        assert created.room in rooms
        summary = await client.get_room(created.room)
        assert summary.seats == 3
        assert summary.open_seats == 3
        assert summary.options.rules == "yatzy"
        assert summary.options.joker == "free"


async def test_errors_are_typed(live_server: LiveServer) -> None:
    async with Client(live_server.ws) as client:
        with pytest.raises(CommandError) as info:
            await client.join("no-such-room", "Ann")
        assert info.value.code == "room_not_found"
        assert not info.value.retryable
        with pytest.raises(CommandError) as info:
            await client.roll()
        assert info.value.code == "not_in_room"
        created = await client.create_room(seats=2)
        await client.join(created.room, "Ann")
        with pytest.raises(CommandError) as info:
            await client.score("chance")
        assert info.value.code in ("game_not_started", "wrong_phase")
        # The client is still usable after an error.
        summary = await client.get_room(created.room)
        assert summary.players == ("Ann",)


class RecordingClient(Client):
    """A client that keeps every command it sends, to check what goes on the wire."""

    sent: list[Command]

    async def _send(self, ws: ClientConnection, command: Command) -> None:
        self.__dict__.setdefault("sent", []).append(command)
        await super()._send(ws, command)


async def test_play_commands_carry_the_seq_they_were_decided_on(live_server: LiveServer) -> None:
    async with RecordingClient(live_server.ws) as client:
        created = await client.create_room(seats=1, first_player="seat_order")
        await client.join(created.room, "Ann")
        seen: list[int] = []
        for act in (client.start, client.roll, lambda: client.hold([0, 1])):
            assert client.model is not None
            seen.append(client.model.seq)
            await act()
        await client.release([1])
        sent = [c for c in client.sent if isinstance(c, Start | Roll | Hold | Release)]
        assert [c.expect_seq for c in sent[:3]] == seen
        assert sent[3].expect_seq == seen[-1] + 1  # the hold's own `held` event, applied
        create = next(c for c in client.sent if isinstance(c, CreateRoom))
        assert create.create_key is not None
        assert 16 <= len(create.create_key) <= 64


async def test_connecting_to_nothing_fails_clearly() -> None:
    client = Client("ws://127.0.0.1:9/ws")
    with pytest.raises(ConnectionFailedError, match="cannot connect"):
        await client.connect()


class GatedClient(Client):
    """A client whose reconnects wait for ``gate``: the test decides when the network is back."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.gate = asyncio.Event()
        self.gate.set()

    async def _open(self):  # type: ignore[no-untyped-def]
        await self.gate.wait()
        return await super()._open()


async def collect(client: Client, into: list[Event | Snapshot]) -> None:
    async for update in client.events():
        into.append(update)
        if isinstance(update, GameOver):
            return


def seqs(updates: list[Event | Snapshot]) -> list[int]:
    return [u.seq for u in updates if isinstance(u, Event)]


async def test_a_dropped_connection_resumes_without_losing_an_event(
    live_server: LiveServer,
) -> None:
    ann = GatedClient(live_server.ws)
    bob = Client(live_server.ws, encoding="json")
    watcher = Client(live_server.ws)
    for c in (ann, bob, watcher):
        await c.connect()
    try:
        created = await ann.create_room(seats=2, first_player="seat_order")
        room = created.room
        await watcher.spectate(room)
        seen_by_watcher: list[Event | Snapshot] = []
        seen_by_ann: list[Event | Snapshot] = []
        watching = asyncio.create_task(collect(watcher, seen_by_watcher))
        await ann.join(room, "Ann")
        await bob.join(room, "Bob")
        ann_listening = asyncio.create_task(collect(ann, seen_by_ann))
        ann_playing = asyncio.create_task(play_seat(ann))
        bob_playing = asyncio.create_task(play_seat(bob))

        async with asyncio.timeout(TIMEOUT):
            # Round 3, Bob on turn: Ann's network fails and stays down for Bob's whole turn.
            await watcher.wait_for(lambda m: m.round == 3 and m.current_player == bob.player)
            ann.gate.clear()
            await ann.drop_connection()
            await watcher.wait_for(
                lambda m: m.current_player == ann.player and not m.player(ann.player).connected  # type: ignore[union-attr]
            )
            assert ann.status == "reconnecting"
            missed_from = ann.model.seq if ann.model else 0
            ann.gate.set()
            results = await asyncio.gather(ann_playing, bob_playing)
            await asyncio.gather(watching, ann_listening)

        assert ann.reconnects == 1
        assert results[0] == results[1]
        # Ann saw every event exactly once, in order, including those of her own absence.
        ann_seqs = seqs(seen_by_ann)
        assert ann_seqs == list(range(ann_seqs[0], ann_seqs[-1] + 1))
        assert ann_seqs[-1] == seqs(seen_by_watcher)[-1]
        missed = [u for u in seen_by_ann if isinstance(u, Event) and u.seq > missed_from]
        assert any(isinstance(u, PlayerDisconnected) and u.player == ann.player for u in missed)
        assert any(isinstance(u, PlayerReconnected) and u.player == ann.player for u in missed)
        assert any(isinstance(u, TurnChanged) and u.player == ann.player for u in missed)
        assert ann.model is not None
        assert watcher.model is not None
        assert comparable(ann.model) == comparable(watcher.model)
    finally:
        for c in (ann, bob, watcher):
            await c.close()


async def test_a_server_restart_is_survived(redis_server_url: str, tmp_path: Path) -> None:
    """SIGTERM: the server closes with 1012; a new process takes over; the game goes on."""
    prefix = f"tr{secrets.token_hex(4)}:"
    process, server = await asyncio.to_thread(spawn_server, redis_server_url, prefix, tmp_path)
    port = int(server.http.rpartition(":")[2])
    client = Client(server.ws, backoff=Backoff(initial=0.05, maximum=0.5))
    try:
        await client.connect()
        created = await client.create_room(seats=1, first_player="seat_order")
        await client.join(created.room, "Ann")
        await client.start()
        await client.roll()
        async with asyncio.timeout(TIMEOUT):
            model = await client.wait_for(lambda m: m.phase == "rolled")
        seq_before = model.seq
        await asyncio.to_thread(stop_server, process)
        process, _ = await asyncio.to_thread(spawn_server, redis_server_url, prefix, tmp_path, port)
        async with asyncio.timeout(TIMEOUT):
            results = await play_seat(client)
        assert client.reconnects >= 1
        assert results[0].total == client.model.player(client.player).grand  # type: ignore[union-attr]
        assert client.model is not None
        assert client.model.seq > seq_before
    finally:
        await client.close()
        await asyncio.to_thread(stop_server, process)


async def test_a_turn_timer_scores_for_an_idle_player(live_server: LiveServer) -> None:
    async with Client(live_server.ws, encoding="json") as client:
        created = await client.create_room(seats=1, turn_seconds=1, first_player="seat_order")
        joined = await client.join(created.room, "Idle")
        await client.start()
        model = client.model
        assert model is not None
        assert model.turn_deadline_ms is not None
        scored: list[Scored] = []
        async with asyncio.timeout(TIMEOUT):
            async for update in client.events():
                if isinstance(update, Scored):
                    scored.append(update)
                    break
        assert scored[0].automatic
        assert scored[0].player == joined.player
        idle = model.player(joined.player)
        assert idle is not None
        assert idle.scorecard[scored[0].box] == scored[0].points


async def test_leaving_a_game_forfeits_and_frees_the_client(live_server: LiveServer) -> None:
    async with Client(live_server.ws) as ann, Client(live_server.ws, encoding="json") as bob:
        created = await ann.create_room(seats=2, first_player="seat_order")
        await ann.join(created.room, "Ann")
        await bob.join(created.room, "Bob")
        await ann.start()
        assert ann.is_my_turn
        ann_id = ann.player
        await ann.leave()
        assert (ann.model, ann.room, ann.token, ann.player) == (None, None, None, None)
        async with asyncio.timeout(TIMEOUT):
            model = await bob.wait_for(lambda m: m.current_player == bob.player)
        gone = model.player(ann_id)
        assert gone is not None
        assert gone.forfeited
        # Ann's client can enter another room; nothing of the first one leaks into it.
        other = await ann.create_room(seats=1)
        await ann.join(other.room, "Ann")
        assert ann.model is not None
        assert ann.model.room == other.room
        assert [p.name for p in ann.model.players] == ["Ann"]

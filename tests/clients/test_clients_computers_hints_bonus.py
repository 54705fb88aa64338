"""Protocol 1.2 in the Python client: the room model (computer players, hints, bonus_taken) and
the commands of the client API (take_bonus, add_computer, remove_computer, hint), the latter
against a scripted in-test peer that records what the client sends."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import msgspec
import pytest
from test_clients_model import ROOM, lobby_snapshot
from test_clients_reconnect import FAST
from websockets.asyncio.server import ServerConnection, serve
from websockets.typing import Subprotocol

from clients.client import Client, CommandError
from clients.model import RoomModel
from protocol import (
    DEFAULT_LIMITS,
    AddComputer,
    AddComputerResult,
    BonusTaken,
    Box,
    Command,
    ComputerSeat,
    CreateRoom,
    CreateRoomResult,
    Encoding,
    Event,
    FirstPlayer,
    GameStarted,
    Hello,
    Hint,
    HintKind,
    HintOption,
    HintResult,
    HostChanged,
    Join,
    JoinResult,
    Level,
    Message,
    PlayerJoined,
    PlayerLeft,
    PlayerView,
    RemoveComputer,
    Rolled,
    RoomOptions,
    Scored,
    Snapshot,
    TakeBonus,
    Toggle,
    Totals,
    TurnChanged,
    Welcome,
    decode_client,
    encode,
    make_ack,
    make_error,
)

BONUS_OPTIONS = RoomOptions(first_player=FirstPlayer.SEAT_ORDER, bonus_turn=Toggle.ON)


def bonus_lobby(seq: int = 0) -> Snapshot:
    snapshot = lobby_snapshot(seq)
    state = msgspec.structs.replace(snapshot.state, options=BONUS_OPTIONS, hints=True)
    return msgspec.structs.replace(snapshot, state=state)


def five_fours(seq: int, player: str) -> Rolled:
    return Rolled(
        room=ROOM,
        seq=seq,
        player=player,
        dice=(4, 4, 4, 4, 4),
        roll_number=1,
        rolls_left=2,
        held=(),
        preview=(),
        yahtzee_bonus_pending=True,
        joker=True,
    )


def yahtzee_scored(seq: int, player: str) -> Scored:
    return Scored(
        room=ROOM,
        seq=seq,
        player=player,
        box=Box.YAHTZEE,
        points=50,
        upper_bonus=0,
        yahtzee_bonus=0,
        joker=False,
        automatic=False,
        total=50,
    )


# --------------------------------------------------------------------------------------------
# The model
# --------------------------------------------------------------------------------------------


def test_a_computer_joining_is_kept_on_the_roster_with_its_level() -> None:
    model = RoomModel.from_snapshot(bonus_lobby())
    model.apply(
        PlayerJoined(room=ROOM, seq=1, player="c1", name="Ada", seat=0, computer=Level.HARD)
    )
    model.apply(PlayerJoined(room=ROOM, seq=2, player="pa", name="Ann", seat=1))
    ada, ann = model.players
    assert (ada.name, ada.computer) == ("Ada", Level.HARD)
    assert ann.computer is None
    # A removed computer leaves the lobby like a person: the seats above move down.
    model.apply(PlayerLeft(room=ROOM, seq=3, player="c1", seat=0, forfeited=False))
    assert [(p.player, p.seat) for p in model.players] == [("pa", 0)]


def test_a_snapshot_carries_the_computer_level_and_the_hints_flag() -> None:
    card: dict[Box, int | None] = dict.fromkeys(RoomModel.from_snapshot(lobby_snapshot()).boxes)
    view = PlayerView(
        player="c1",
        name="Ada",
        seat=0,
        connected=True,
        forfeited=False,
        scorecard=card,
        totals=Totals(upper=0, upper_bonus=0, lower=0, yahtzee_bonus=0, grand=0),
        computer=Level.OPTIMAL,
    )
    snapshot = bonus_lobby(1)
    snapshot = msgspec.structs.replace(
        snapshot, state=msgspec.structs.replace(snapshot.state, players=(view,))
    )
    model = RoomModel.from_snapshot(snapshot)
    assert model.players[0].computer is Level.OPTIMAL
    assert model.hints is True
    assert RoomModel.from_snapshot(lobby_snapshot()).hints is None  # an older server


def test_bonus_taken_updates_the_totals_and_ends_the_turn_like_scored() -> None:
    model = RoomModel.from_snapshot(bonus_lobby())
    for event in (
        PlayerJoined(room=ROOM, seq=1, player="pa", name="Ann", seat=0),
        HostChanged(room=ROOM, seq=2, player="pa"),
        GameStarted(room=ROOM, seq=3, order=("pa",), first_player=FirstPlayer.SEAT_ORDER),
        TurnChanged(room=ROOM, seq=4, player="pa", round=1, deadline_ms=None),
        five_fours(5, "pa"),
        yahtzee_scored(6, "pa"),
        TurnChanged(room=ROOM, seq=7, player="pa", round=2, deadline_ms=None),
    ):
        assert model.apply(event)
    assert not model.can_take_bonus  # no roll yet
    model.apply(five_fours(8, "pa"))
    assert model.can_take_bonus
    model.apply(
        BonusTaken(room=ROOM, seq=9, player="pa", yahtzee_bonus=100, automatic=False, total=150)
    )
    ann = model.player("pa")
    assert ann is not None
    assert (ann.yahtzee_bonus, ann.grand) == (100, 150)
    assert (ann.upper, ann.lower) == (0, 50)  # no box was filled
    assert [box for box, points in ann.scorecard.items() if points is not None] == [Box.YAHTZEE]
    assert model.turn_over
    assert not model.yahtzee_bonus_pending
    assert not model.can_take_bonus
    model.apply(TurnChanged(room=ROOM, seq=10, player="pa", round=2, deadline_ms=None))
    assert (model.round, model.dice, model.turn_over) == (2, [], False)


def test_the_bonus_take_needs_the_variant() -> None:
    model = RoomModel.from_snapshot(lobby_snapshot())  # bonus_turn off
    for event in (
        PlayerJoined(room=ROOM, seq=1, player="pa", name="Ann", seat=0),
        GameStarted(room=ROOM, seq=2, order=("pa",), first_player=FirstPlayer.SEAT_ORDER),
        TurnChanged(room=ROOM, seq=3, player="pa", round=2, deadline_ms=None),
        five_fours(4, "pa"),
    ):
        model.apply(event)
    assert model.yahtzee_bonus_pending
    assert not model.can_take_bonus


# --------------------------------------------------------------------------------------------
# The client API, against a scripted peer
# --------------------------------------------------------------------------------------------

HINT = HintResult(
    player="pa",
    rolls_left=2,
    options=(
        HintOption(kind=HintKind.ROLL, keep=(0, 1, 3), expected=251.842),
        HintOption(kind=HintKind.SCORE, box=Box.CHANCE, expected=230.5),
    ),
)


@dataclass
class Peer:
    """A scripted server for one player, Ann, in room ROOM: answers each command with the
    events and the reply a v1.2 server would send (events first, then the ack), and records
    the commands. :meth:`push` sends events on its own, as other players' moves."""

    commands: list[Command] = field(default_factory=list)
    seq: int = 0
    hint_refusals: int = 1  # the first hint is answered `unavailable` (table still loading)
    url: str = ""
    ws: ServerConnection | None = None

    def numbered(self, *events: Event) -> list[Event]:
        out = []
        for event in events:
            self.seq += 1
            out.append(msgspec.structs.replace(event, seq=self.seq))
        return out

    async def push(self, *events: Event) -> None:
        assert self.ws is not None
        for event in self.numbered(*events):
            await self.ws.send(encode(event, Encoding.JSON))

    def answer(self, command: Command) -> list[Message]:
        replies: list[Message]
        match command:
            case CreateRoom():
                replies = [make_ack(command, CreateRoomResult(room=ROOM, invite_code=None))]
            case Join():
                ack = make_ack(command, JoinResult(player="pa", seat=0, token="t"), seq=0)
                replies = [ack, bonus_lobby(0)]
            case AddComputer():
                joined = PlayerJoined(
                    room=ROOM,
                    seq=1,
                    player="c2",
                    name=command.name or "Blaise",
                    seat=2,
                    computer=command.level,
                )
                result = AddComputerResult(player="c2", seat=2)
                replies = [*self.numbered(joined), make_ack(command, result, seq=self.seq)]
            case RemoveComputer():
                left = PlayerLeft(room=ROOM, seq=1, player=command.player, seat=2, forfeited=False)
                replies = [*self.numbered(left), make_ack(command, seq=self.seq)]
            case Hint():
                if self.hint_refusals > 0:
                    self.hint_refusals -= 1
                    replies = [make_error("unavailable", command.id, seq=self.seq)]
                else:
                    replies = [make_ack(command, HINT, seq=self.seq)]
            case TakeBonus() if command.expect_seq != self.seq:
                replies = [make_error("stale_state", command.id, seq=self.seq)]
            case TakeBonus():
                taken = BonusTaken(
                    room=ROOM, seq=1, player="pa", yahtzee_bonus=100, automatic=False, total=150
                )
                turn = TurnChanged(room=ROOM, seq=1, player="c1", round=2, deadline_ms=None)
                replies = [*self.numbered(taken, turn), make_ack(command, seq=self.seq)]
            case Hello():
                replies = [make_ack(command)]
            case _:
                replies = []
        return replies

    async def handler(self, ws: ServerConnection) -> None:
        self.ws = ws
        welcome = Welcome(
            server_version="test",
            protocol_version=1,
            encoding=Encoding.JSON,
            limits=DEFAULT_LIMITS,
            heartbeat_seconds=20,
            protocol_minor=2,
        )
        await ws.send(encode(welcome, Encoding.JSON))
        async for frame in ws:
            command = decode_client(frame, Encoding.JSON)
            assert isinstance(command, Command)
            self.commands.append(command)
            for message in self.answer(command):
                await ws.send(encode(message, Encoding.JSON))


@pytest.fixture
async def peer() -> AsyncIterator[Peer]:
    peer = Peer()
    json = Subprotocol("yahtzee.v1.json")
    async with serve(peer.handler, "127.0.0.1", 0, subprotocols=[json]) as srv:
        port = next(iter(srv.sockets)).getsockname()[1]
        peer.url = f"ws://127.0.0.1:{port}/ws"
        yield peer


@pytest.fixture
async def client(peer: Peer) -> AsyncIterator[Client]:
    client = Client(peer.url, encoding=Encoding.JSON, backoff=FAST, heartbeat=False)
    await client.connect()
    try:
        yield client
    finally:
        await client.close()


async def test_create_room_sends_the_v12_fields(peer: Peer, client: Client) -> None:
    await client.create_room(
        3,
        bonus_turn=True,
        computers=[Level.EASY, ComputerSeat(level=Level.HARD, name="Ada")],
        hints=False,
        computer_delay_ms=0,
    )
    sent = peer.commands[-1]
    assert isinstance(sent, CreateRoom)
    assert sent.options.bonus_turn is Toggle.ON
    assert sent.options.upper_first is Toggle.OFF
    assert sent.computers == (
        ComputerSeat(level=Level.EASY),
        ComputerSeat(level=Level.HARD, name="Ada"),
    )
    assert (sent.hints, sent.computer_delay_ms) == (False, 0)


async def test_the_host_seats_and_removes_a_computer(peer: Peer, client: Client) -> None:
    await client.join(ROOM, "Ann")
    result = await client.add_computer("optimal", name="Max")
    assert (result.player, result.seat) == ("c2", 2)
    sent = peer.commands[-1]
    assert isinstance(sent, AddComputer)
    assert (sent.level, sent.name) == (Level.OPTIMAL, "Max")
    assert client.model is not None
    assert [(p.name, p.computer) for p in client.model.players] == [("Max", Level.OPTIMAL)]
    await client.remove_computer("c2")
    assert peer.commands[-1] == RemoveComputer(id=peer.commands[-1].id, player="c2")
    assert client.model.players == []


async def test_hint_is_retried_while_the_server_is_loading(peer: Peer, client: Client) -> None:
    await client.join(ROOM, "Ann")
    assert await client.hint() == HINT
    hints = [c for c in peer.commands if isinstance(c, Hint)]
    assert len(hints) == 2
    assert hints[0].id == hints[1].id  # the retryable `unavailable` was resent with its id


async def test_a_hint_in_a_room_without_hints_is_refused(peer: Peer, client: Client) -> None:
    await client.join(ROOM, "Ann")
    peer.hint_refusals = 0
    original = peer.answer

    def refuse(command: Command) -> list[Message]:
        if isinstance(command, Hint):
            return [make_error("hints_disabled", command.id, seq=peer.seq)]
        return original(command)

    peer.answer = refuse  # type: ignore[method-assign]
    with pytest.raises(CommandError) as info:
        await client.hint()
    assert (info.value.code, info.value.retryable) == ("hints_disabled", False)


async def test_take_bonus_carries_the_seq_and_the_model_follows(peer: Peer, client: Client) -> None:
    await client.join(ROOM, "Ann")
    await peer.push(
        PlayerJoined(room=ROOM, seq=1, player="c1", name="Ada", seat=0, computer=Level.EASY),
        PlayerJoined(room=ROOM, seq=1, player="pa", name="Ann", seat=1),
        HostChanged(room=ROOM, seq=1, player="pa"),
        GameStarted(room=ROOM, seq=1, order=("pa", "c1"), first_player=FirstPlayer.SEAT_ORDER),
        TurnChanged(room=ROOM, seq=1, player="pa", round=1, deadline_ms=None),
        five_fours(1, "pa"),
        yahtzee_scored(1, "pa"),
        TurnChanged(room=ROOM, seq=1, player="c1", round=1, deadline_ms=None),
        TurnChanged(room=ROOM, seq=1, player="pa", round=2, deadline_ms=None),
        five_fours(1, "pa"),
    )
    model = await client.wait_for(lambda m: m.seq == peer.seq)
    assert model.can_take_bonus
    assert client.is_my_turn
    await client.take_bonus()
    sent = peer.commands[-1]
    assert isinstance(sent, TakeBonus)
    assert sent.expect_seq == 10  # the view it was decided on
    ann = model.player("pa")
    assert ann is not None
    assert (ann.yahtzee_bonus, ann.grand) == (100, 150)
    assert model.current_player == "c1"
    assert not client.is_my_turn
    assert [p.computer for p in model.players] == [Level.EASY, None]

"""An asyncio client of the Yahtzee service that survives dropped connections.

Theory of operation
-------------------
A :class:`Client` owns one *supervisor* task. It opens the WebSocket (subprotocol
``yahtzee.v1.msgpack`` or ``yahtzee.v1.json``), reads the ``welcome``, and then reads frames until
the connection ends. When it ends for any reason but a normal close (1000) or :meth:`close`, the
supervisor waits a backoff delay and connects again; once connected it *resumes*: a player sends
``rejoin`` with its seat token, a spectator ``spectate``, both with ``last_seq`` (the last event
applied), so the server replays exactly the events that were missed (or sends a snapshot). Events
are deduplicated by ``seq``, so nothing is lost and nothing is seen twice.

Commands (:meth:`Client.roll`, :meth:`Client.join`, ...) get a fresh ``id`` and wait for their
``ack`` (the method returns the typed result) or ``error`` (it raises :class:`CommandError`),
and then until :attr:`Client.model` has applied the events up to the ack's ``seq`` (a v1.1
server sends them first; an older one may send them after the ack), so a caller always reads
its own writes. Play commands carry ``expect_seq`` (the model's ``seq``): a command decided on
an old view is refused with ``stale_state`` instead of acting on a room that moved on. Transient
refusals (``retryable``) are resent with the same ``id`` a few times first. A
command whose reply was lost with the connection is sent again, with the same ``id``, after the
resume: the server answers a repeated ``id`` from its idempotency cache instead of applying it
twice. That cache is per seat, so it does not cover commands sent before the client held a seat
(SPEC.md "Command ids and retries"): a ``join`` therefore carries a ``join_key`` and a
``create_room`` a ``create_key``, which make their resends return the same seat and room.

Acks are read liberally (:func:`protocol.decode_server_liberally`): a result without the v1.1
``command`` tag is read as the result of the command sent with that id.

Room events reach the application twice over: :attr:`Client.model` (a :class:`RoomModel`,
already updated when the event is delivered) and the async iterator :meth:`Client.events`.

Heartbeats (SPEC.md section 11.2): the WebSocket library answers the server's pings; on top, a
task sends an application ``ping`` every ``heartbeat`` seconds (default: the
``heartbeat_seconds`` of ``welcome``) while the connection is idle (nothing arrived for three
quarters of that time: a player in a room where others play sends none), and a connection on
which nothing at all arrived for twice that long is deemed dead and replaced
(:func:`heartbeat_due`).

Example::

    async with Client("ws://127.0.0.1:8000/ws") as client:
        created = await client.create_room(seats=1)
        await client.join(created.room, "Ann")
        await client.start()
        await client.roll()
        ...
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import secrets
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass
from typing import Literal, TypeVar

import websockets
from msgspec import UnsetType
from websockets.asyncio.client import ClientConnection
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI
from websockets.typing import Subprotocol

from clients.backoff import Backoff
from clients.model import RoomModel, SeqGapError
from protocol import (
    MAX_SERVER_FRAME_BYTES,
    Ack,
    AckResult,
    AddComputer,
    AddComputerResult,
    Box,
    CancelQuickPlay,
    CancelQuickPlayResult,
    CloseCode,
    Command,
    ComputerSeat,
    Correspondence,
    CreateRoom,
    CreateRoomResult,
    DecodeError,
    Encoding,
    Error,
    Event,
    ExtraYahtzees,
    FirstPlayer,
    GetRoom,
    GetRoomResult,
    Hello,
    HelloResult,
    Hint,
    HintResult,
    Hold,
    HoldResult,
    Join,
    JoinResult,
    Joker,
    Leave,
    Level,
    ListRooms,
    ListRoomsResult,
    OfferRematch,
    OfferRematchResult,
    Ping,
    Pong,
    QuickPlay,
    QuickPlayMatched,
    QuickPlayResult,
    QuickPlayStatus,
    Rejoin,
    RejoinResult,
    Release,
    ReleaseResult,
    RememberedPlayer,
    RemoveComputer,
    RemoveComputerResult,
    Roll,
    RollResult,
    RoomOptions,
    RoomSummary,
    Rules,
    Score,
    ScoreResult,
    Snapshot,
    Spectate,
    SpectateResult,
    Start,
    StartResult,
    TakeBonus,
    TakeBonusResult,
    Toggle,
    Welcome,
    decode_server,
    decode_server_liberally,
    encode,
    message_type,
    subprotocol_for,
)

__all__ = [
    "Client",
    "ClientClosedError",
    "CommandError",
    "ConnectionFailedError",
    "RoomUpdate",
    "heartbeat_due",
]

log = logging.getLogger("yahtzee.client")

R = TypeVar("R", bound=AckResult)

RoomUpdate = Event | Snapshot
"""What :meth:`Client.events` yields: a room event or a full snapshot."""

Status = Literal["connecting", "connected", "reconnecting", "closed"]

# Close codes after which reconnecting is pointless (SPEC.md section 11.1): the session is over
# (1000, also sent to the old connection of a seat taken back elsewhere), or we speak no
# subprotocol of the server (1002).
_FINAL_CLOSE_CODES = frozenset({CloseCode.NORMAL, CloseCode.PROTOCOL_ERROR})
_POLICY_PAUSE = 5.0  # after 1008 (rate limit abuse): reconnect only after several seconds


def heartbeat_due(silent: float, interval: float) -> Literal["drop", "ping"] | None:
    """What the heartbeat does after ``silent`` seconds with nothing received; it looks every
    half ``interval``: ``"drop"`` a connection silent for more than two intervals (dead),
    ``"ping"`` an idle one (nothing for three quarters of an interval: an idle connection pings
    once an interval, and its Pong ends the silence), nothing while frames arrive (SPEC.md
    section 11.2: a ping only when idle). Silence before a ping is at most 1.25 intervals, so a
    look may come 0.75 of an interval late before a live connection is dropped."""
    if silent > 2 * interval:
        return "drop"
    if silent >= 0.75 * interval:
        return "ping"
    return None


class CommandError(Exception):
    """The server refused a command: ``code`` is a stable string (SPEC.md section 9)."""

    def __init__(
        self, code: str, message: str, *, retryable: bool = False, seq: int | None = None
    ) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.retryable = retryable
        self.seq = seq

    @classmethod
    def from_error(cls, error: Error) -> CommandError:
        """The exception for an ``error`` reply."""
        return cls(error.code, error.message, retryable=error.retryable, seq=error.seq)


class ClientClosedError(Exception):
    """The client was closed (or gave up reconnecting) before the command got a reply."""


class ConnectionFailedError(Exception):
    """The first connection could not be made (server down, wrong URL, refused handshake)."""


@dataclass
class _Pending:
    command: Command
    future: asyncio.Future[Ack]
    sent_on: int  # connection number the command was last sent on


@dataclass
class _Session:
    """What is needed to take the room back after a reconnect."""

    room: str
    token: str | None = None  # None: a spectator
    invite_code: str | None = None


_END = object()


class Client:
    """A connection to the service that reconnects and resumes by itself."""

    def __init__(
        self,
        url: str = "ws://127.0.0.1:8000/ws",
        *,
        encoding: Encoding | str = Encoding.MSGPACK,
        reconnect: bool = True,
        backoff: Backoff | None = None,
        heartbeat: bool = True,
        ping_interval: float | None = None,
        client_name: str | None = "yahtzee-py",
        on_status: Callable[[Status], None] | None = None,
        max_buffered_events: int = 10_000,
        max_retries: int = 3,
        player_token: str | None = None,
    ) -> None:
        self.url = url
        self.encoding = Encoding(encoding)
        self.reconnect = reconnect
        self.backoff = backoff or Backoff()
        self.heartbeat = heartbeat
        self.ping_interval = ping_interval  # None: welcome.heartbeat_seconds
        self.client_name = client_name
        self.on_status = on_status
        self.max_buffered_events = max_buffered_events
        self.max_retries = max_retries
        # v1.3: a player token of POST /players (or a JWT), sent as `Authorization: Bearer` on
        # every handshake; a secret, never logged (kept out of repr and of every message).
        self._player_token = player_token
        #: who the credential names, from the `hello` of :meth:`connect` (None: anonymous)
        self.remembered: RememberedPlayer | None = None

        self.welcome: Welcome | None = None
        self.model: RoomModel | None = None
        self.player: str | None = None
        self.seat: int | None = None
        self.status: Status = "connecting"
        self.reconnects = 0

        self._session: _Session | None = None
        self._ws: ClientConnection | None = None
        self._connection_no = 0
        self._ids = (f"{self._id_prefix()}{n}" for n in itertools.count(1))
        self._pending: dict[str, _Pending] = {}
        self._pongs: dict[str, asyncio.Future[None]] = {}
        #: the wait of :meth:`quick_play`, and what it last heard of its queue
        self._quick_play: asyncio.Future[QuickPlayMatched] | None = None
        self.quick_play_status: QuickPlayStatus | None = None
        self.quick_play_queued: QuickPlayResult | None = None
        self._ready = asyncio.Event()  # connected and resumed: commands may be sent
        self._closing = False
        self._events: asyncio.Queue[RoomUpdate | object] = asyncio.Queue()
        self._changed: asyncio.Future[None] | None = None  # resolved at the next update
        self._supervisor: asyncio.Task[None] | None = None
        self._failure: BaseException | None = None
        self._last_seq = 0  # highest seq delivered (when no model is kept yet)
        self._force_reconnect = False
        self._entering: str | None = None  # room of a join waiting for its ack
        self._last_received = 0.0  # loop time of the last frame (heartbeat)

    @staticmethod
    def _id_prefix() -> str:
        return f"c{secrets.token_hex(3)}-"

    # ------------------------------------------------------------------ life cycle

    async def __aenter__(self) -> Client:
        await self.connect()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def connect(self) -> Welcome:
        """Open the first connection; raises :class:`ConnectionFailedError` if it cannot be made."""
        if self._supervisor is not None:
            raise RuntimeError("already connected")
        ws = await self._open()
        welcome = await self._read_welcome(ws)
        self._supervisor = asyncio.create_task(self._supervise(ws), name="yahtzee-client")
        if self.client_name or self._player_token is not None:
            # With a player token the answer names the remembered player; a refused token
            # raises CommandError here (bad_player_token, player_token_revoked, unsupported on
            # a server without a database, ...): the caller may connect again without it.
            try:
                hello = await self.hello(self.client_name)
            except BaseException:
                await self.close()
                raise
            if not isinstance(hello.player, UnsetType):
                self.remembered = hello.player
        return welcome

    async def close(self) -> None:
        """Close the connection for good; pending commands fail with :class:`ClientClosedError`."""
        self._closing = True
        ws = self._ws
        if ws is not None:
            with contextlib.suppress(Exception):
                await ws.close()
        if self._supervisor is not None:
            self._supervisor.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._supervisor
        self._finish(ClientClosedError("client closed"))

    async def drop_connection(self) -> None:
        """Cut the network connection abruptly (no close frame), as a failing network would.

        The client then reconnects and resumes by itself; meant for tests and demos.
        """
        ws = self._ws
        if ws is not None:
            ws.transport.abort()

    def _set_status(self, status: Status) -> None:
        self.status = status
        if self.on_status is not None:
            try:
                self.on_status(status)
            except Exception:  # pragma: no cover - a UI callback must not kill the client
                log.exception("on_status callback failed")

    def _finish(self, exc: BaseException) -> None:
        self._set_status("closed")
        self._failure = self._failure or exc
        # Wake the commands waiting for a connection: they find _failure and raise.
        self._ready.set()
        for pending in self._pending.values():
            if not pending.future.done():
                pending.future.set_exception(exc)
        self._pending.clear()
        for fut in self._pongs.values():
            if not fut.done():
                fut.set_exception(exc)
        self._pongs.clear()
        self._end_quick_play(exc)
        self._events.put_nowait(_END)
        self._notify()

    # ------------------------------------------------------------------ connection

    async def _open(self) -> ClientConnection:
        subprotocol = subprotocol_for(self.encoding)
        try:
            headers = (
                {"Authorization": f"Bearer {self._player_token}"}
                if self._player_token is not None
                else None
            )
            return await websockets.connect(
                self.url,
                additional_headers=headers,
                subprotocols=[Subprotocol(subprotocol)],
                max_size=MAX_SERVER_FRAME_BYTES,
                open_timeout=10,
            )
        except (OSError, InvalidHandshake, InvalidURI, TimeoutError) as exc:
            raise ConnectionFailedError(f"cannot connect to {self.url}: {exc}") from exc

    async def _read_welcome(self, ws: ClientConnection) -> Welcome:
        try:
            frame = await asyncio.wait_for(ws.recv(), timeout=10)
            message = decode_server(frame, self.encoding)
        except (ConnectionClosed, TimeoutError, DecodeError) as exc:
            await ws.close()
            raise ConnectionFailedError(f"no welcome from {self.url}: {exc}") from exc
        if not isinstance(message, Welcome):
            await ws.close()
            raise ConnectionFailedError(f"expected welcome, got {message_type(message)}")
        self.welcome = message
        return message

    async def _supervise(self, ws: ClientConnection) -> None:
        """Run connections one after the other until closed or a final close code."""
        delays = self.backoff.delays()
        try:
            while True:
                self._connection_no += 1
                self._ws = ws
                self._force_reconnect = False
                code = await self._run_connection(ws)
                self._ws = None
                self._ready.clear()
                if self._closing:
                    return
                final = code in _FINAL_CLOSE_CODES and not self._force_reconnect
                if not self.reconnect or final:
                    self._finish(ClientClosedError(f"connection closed (code {code})"))
                    return
                self._set_status("reconnecting")
                # the quick-play queue belonged to the lost connection
                self._end_quick_play(CommandError("connection_lost", "the connection was lost"))
                delay = next(delays)
                if code == CloseCode.POLICY_VIOLATION:
                    delay = max(delay, _POLICY_PAUSE)
                elif code == CloseCode.SERVICE_RESTART:
                    delay = min(delay, 0.25)  # another server answers: come back at once
                while True:
                    await asyncio.sleep(delay)
                    try:
                        ws = await self._open()
                        await self._read_welcome(ws)
                        break
                    except ConnectionFailedError as exc:
                        log.info("reconnect failed: %s", exc)
                        delay = next(delays)
                self.reconnects += 1
                delays = self.backoff.delays()
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # pragma: no cover - a bug: surface it to waiters
            log.exception("client supervisor failed")
            self._finish(exc)

    async def _run_connection(self, ws: ClientConnection) -> int | None:
        """Read one connection until it ends; returns the close code (None if unknown)."""
        reader = asyncio.create_task(self._read_loop(ws))
        resumer = asyncio.create_task(self._resume(ws))
        heart = asyncio.create_task(self._heartbeat(ws)) if self.heartbeat else None
        try:
            await reader
        finally:
            for task in (resumer, heart):
                if task is not None:
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError, Exception):
                        await task
        return ws.close_code

    async def _resume(self, ws: ClientConnection) -> None:
        """After a (re)connect: take the room back, then resend unanswered commands."""
        number = self._connection_no
        session = self._session
        if session is not None and self._connection_no > 1:
            # Nothing seen yet (the connection dropped between an ack and its snapshot): ask
            # for a snapshot (None), since a replay from seq 1 would leave no model to fold into.
            last_seq = self.model.seq if self.model is not None else (self._last_seq or None)
            command: Command
            if session.token is not None:
                command = Rejoin(
                    id=next(self._ids), room=session.room, token=session.token, last_seq=last_seq
                )
            else:
                command = Spectate(
                    id=next(self._ids),
                    room=session.room,
                    invite_code=session.invite_code,
                    last_seq=last_seq,
                )
            try:
                resumed = await self._request(command, ws=ws)
            except CommandError as exc:
                log.warning("could not resume room %s: %s", session.room, exc)
                if exc.code in ("bad_token", "room_not_found"):
                    self._session = None
                else:
                    await self._reconnect_now(ws, "resume failed")
                    return
            else:
                self._answer_entering(command, resumed)
        self._set_status("connected")
        self._ready.set()
        for pending in list(self._pending.values()):
            if pending.sent_on != number and not pending.future.done():
                pending.sent_on = number
                await self._send(ws, pending.command)

    def _answer_entering(self, resume: Command, resumed: Ack) -> None:
        """The ``resume`` command (a ``rejoin`` or ``spectate``) just entered the session's
        room: the same kind of command for that room, still waiting for its ack since the lost
        connection, is answered by the resume's ack. Sent again, it would be refused with
        ``already_in_room``."""
        for pending in list(self._pending.values()):
            command = pending.command
            if (
                type(command) is type(resume)
                and isinstance(command, Rejoin | Spectate)
                and isinstance(resume, Rejoin | Spectate)
                and command.room == resume.room
                and not pending.future.done()
            ):
                pending.future.set_result(resumed)

    async def _reconnect_now(self, ws: ClientConnection, reason: str) -> None:
        """Close this connection on purpose so that the supervisor opens a fresh one."""
        self._force_reconnect = True
        await ws.close(CloseCode.NORMAL, reason)

    async def _heartbeat(self, ws: ClientConnection) -> None:
        """Ping when idle; drop the connection after two intervals of silence
        (:func:`heartbeat_due`)."""
        interval = self.ping_interval
        if interval is None:
            interval = float(self.welcome.heartbeat_seconds if self.welcome else 20)
        loop = asyncio.get_running_loop()
        self._last_received = loop.time()
        while True:
            await asyncio.sleep(interval / 2)
            silent = loop.time() - self._last_received
            due = heartbeat_due(silent, interval)
            if due == "drop":
                log.info("nothing received for %.1fs: dropping the connection", silent)
                ws.transport.abort()
                return
            if due == "ping":
                await self._send(ws, Ping(id=next(self._ids)))

    async def _read_loop(self, ws: ClientConnection) -> None:
        try:
            async for frame in ws:
                self._last_received = asyncio.get_running_loop().time()
                try:
                    message = decode_server_liberally(frame, self.encoding, self._command_type)
                except DecodeError as exc:
                    log.warning("ignoring an unreadable server frame: %s", exc)
                    continue
                if not self._dispatch(message):
                    await self._reconnect_now(ws, "event gap")
                    return
        except ConnectionClosed:
            pass

    def _command_type(self, command_id: str) -> str | None:
        """The `type` of the pending command sent with this id (for untagged v1.0 acks)."""
        pending = self._pending.get(command_id)
        return message_type(pending.command) if pending is not None else None

    def _dispatch(self, message: object) -> bool:
        """Handle one server message; False asks to drop the connection (a seq gap)."""
        if isinstance(message, Error) and message.id is None:
            log.warning("server reports an error: %s %s", message.code, message.message)
            return True
        if isinstance(message, Ack | Error):
            assert message.id is not None
            pending = self._pending.pop(message.id, None)
            if pending is not None and not pending.future.done():
                if isinstance(message, Ack):
                    pending.future.set_result(message)
                else:
                    pending.future.set_exception(CommandError.from_error(message))
            return True
        if isinstance(message, Pong):
            fut = self._pongs.get(message.id)
            if fut is not None and not fut.done():
                fut.set_result(None)
            return True
        if isinstance(message, QuickPlayStatus):
            self.quick_play_status = message
            return True
        if isinstance(message, QuickPlayMatched):
            waiting = self._quick_play
            if waiting is not None and not waiting.done():
                waiting.set_result(message)
            return True
        if isinstance(message, Snapshot | Event) and not self._wants(message.room):
            return True  # a room this client left (its last events may still come in)
        if isinstance(message, Snapshot):
            model = self.model
            if model is not None and model.room == message.room and message.seq < model.seq:
                return True  # older than what we have
            self.model = RoomModel.from_snapshot(message)
            self._last_seq = message.seq
            self._deliver(message)
            return True
        if isinstance(message, Event):
            return self._on_event(message)
        return True  # welcome again, or a later type: nothing to do

    def _wants(self, room: str) -> bool:
        session = self._session
        return room == self._entering or (session is not None and room == session.room)

    def _on_event(self, event: Event) -> bool:
        model = self.model
        if model is not None and model.room == event.room:
            try:
                if not model.apply(event):
                    return True  # a duplicate from a replay
            except SeqGapError as gap:
                log.warning("event gap in room %s (%s): resyncing", event.room, gap)
                return False
        elif event.seq <= self._last_seq:
            return True
        self._last_seq = event.seq
        self._deliver(event)
        return True

    def _deliver(self, update: RoomUpdate) -> None:
        if self._events.qsize() >= self.max_buffered_events:
            self._events.get_nowait()  # nobody reads events(): drop the oldest
        self._events.put_nowait(update)
        self._notify()

    def _notify(self) -> None:
        changed, self._changed = self._changed, None
        if changed is not None and not changed.done():
            changed.set_result(None)

    # ------------------------------------------------------------------ sending

    async def _send(self, ws: ClientConnection, command: Command) -> None:
        with contextlib.suppress(ConnectionClosed):
            await ws.send(encode(command, self.encoding))

    async def _usable_connection(self) -> ClientConnection:
        """The current connection once it is resumed; raises if the client is closed."""
        if self._supervisor is None and self._failure is None:
            raise RuntimeError("not connected: call connect() first")
        await self._ready.wait()
        if self._failure is not None:
            raise ClientClosedError(str(self._failure))
        ws = self._ws
        assert ws is not None
        return ws

    async def _request(self, command: Command, *, ws: ClientConnection | None = None) -> Ack:
        """Send ``command`` and wait for its ack (``ws``: send now on that connection)."""
        if self._failure is not None:
            raise ClientClosedError(str(self._failure))
        if ws is None:
            ws = await self._usable_connection()
        loop = asyncio.get_running_loop()
        pending = _Pending(command, loop.create_future(), self._connection_no)
        self._pending[command.id] = pending
        try:
            await self._send(ws, command)
            return await pending.future
        finally:
            self._pending.pop(command.id, None)

    async def _request_retrying(self, command: Command) -> Ack:
        """:meth:`_request`, resending the same command (same ``id``) after a short pause when
        the server says the failure is transient (``retryable``: a lost race, rate limit, ...)."""
        delays = self.backoff.delays()
        for _ in range(self.max_retries):
            try:
                return await self._request(command)
            except CommandError as exc:
                if not exc.retryable:
                    raise
                log.info("retrying %s after %s", message_type(command), exc.code)
                await asyncio.sleep(max(next(delays), 0.05))
        return await self._request(command)

    async def _command(
        self, command: Command, result_type: type[R], *, room: str | None = None
    ) -> R:
        """Send, wait for the ack, and then for the model to include the command's effects.

        The ack carries the room's ``seq`` after the command; events may arrive just after it.
        Waiting until :attr:`model` reaches that ``seq`` means a caller reads its own writes:
        after ``await client.roll()`` the model shows the dice. ``room``: the room the command
        enters (join, rejoin, spectate), whose snapshot is awaited the same way.
        """
        ack = await self._request_retrying(command)
        result = ack.result
        if not isinstance(result, result_type):
            raise CommandError("invalid_field", f"the ack of {command.id} has a wrong result")
        target = room or (self._session.room if self._session else None)
        if ack.seq is not None and target is not None:
            seq = ack.seq
            await self.wait_for(lambda m: m.room == target and m.seq >= seq)
        return result

    # ------------------------------------------------------------------ events

    async def events(self) -> AsyncIterator[RoomUpdate]:
        """Room events and snapshots, in order, without duplicates, until the client closes.

        One stream per client, buffered from the start (the newest ``max_buffered_events``):
        iterate it from one task. :attr:`model` is already updated when an item is yielded.
        """
        while True:
            item = await self._events.get()
            if item is _END:
                self._events.put_nowait(_END)  # let other iterators end too
                return
            assert isinstance(item, Event | Snapshot)
            yield item

    def next_id(self) -> str:
        """A command id never used before in this client's session.

        See SPEC.md "Command ids and retries".
        """
        return next(self._ids)

    # ------------------------------------------------------------------ commands

    async def hello(self, client: str | None = None) -> HelloResult:
        """Introduce the client to the server (sent by :meth:`connect` with ``client_name``)."""
        return await self._command(Hello(id=self.next_id(), client=client), HelloResult)

    async def create_room(
        self,
        seats: int = 2,
        *,
        public: bool = True,
        turn_seconds: int = 0,
        rules: Rules | str = Rules.YAHTZEE,
        extra_yahtzees: ExtraYahtzees | str = ExtraYahtzees.ON,
        joker: Joker | str = Joker.FORCED,
        first_player: FirstPlayer | str = FirstPlayer.ROLL_OFF,
        upper_first: bool = False,
        bonus_turn: bool = False,
        computers: Iterable[ComputerSeat | Level | str] = (),
        hints: bool = True,
        computer_delay_ms: int | None = None,
        auto_start: bool = False,
        correspondence_seconds: int | None = None,
    ) -> CreateRoomResult:
        """Create a room with these rule options; the result has its id (and invite code if
        private). The client does not enter it: :meth:`join` or :meth:`spectate` next.

        v1.2: ``upper_first`` and ``bonus_turn`` turn the house variants on; ``computers`` are
        seated at once (a :class:`ComputerSeat`, or just a level: the server names it);
        ``hints`` allows :meth:`hint` in the room; ``computer_delay_ms`` is the pause before
        each computer move (None: the server's default). v1.3: ``auto_start`` starts the game
        by itself once every seat is taken. v1.4: ``correspondence_seconds`` (3600..1209600)
        makes a correspondence room, each turn with that long a clock (not with
        ``turn_seconds``); :func:`clients.players.fetch_turns` lists a player's turns.

        The command carries a fresh ``create_key``: if its ack is lost with the connection, the
        resend after the reconnect returns the same room instead of creating a second one.
        """
        options = RoomOptions(
            rules=Rules(rules),
            extra_yahtzees=ExtraYahtzees(extra_yahtzees),
            joker=Joker(joker),
            first_player=FirstPlayer(first_player),
            upper_first=Toggle.ON if upper_first else Toggle.OFF,
            bonus_turn=Toggle.ON if bonus_turn else Toggle.OFF,
        )
        command = CreateRoom(
            id=self.next_id(),
            seats=seats,
            public=public,
            turn_seconds=turn_seconds,
            options=options,
            create_key=secrets.token_urlsafe(24),
            computers=tuple(
                c if isinstance(c, ComputerSeat) else ComputerSeat(level=Level(c))
                for c in computers
            ),
            hints=hints,
            computer_delay_ms=computer_delay_ms,
            auto_start=auto_start,
            correspondence=(
                Correspondence(seconds_per_move=correspondence_seconds)
                if correspondence_seconds is not None
                else None
            ),
        )
        return await self._command(command, CreateRoomResult)

    async def list_rooms(self) -> list[RoomSummary]:
        """The public rooms."""
        result = await self._command(ListRooms(id=self.next_id()), ListRoomsResult)
        return list(result.rooms)

    async def get_room(self, room: str, invite_code: str | None = None) -> RoomSummary:
        """One room's summary (a private room needs its ``invite_code``)."""
        command = GetRoom(id=self.next_id(), room=room, invite_code=invite_code)
        return (await self._command(command, GetRoomResult)).room

    async def join(self, room: str, name: str, invite_code: str | None = None) -> JoinResult:
        """Take a seat; the seat token is kept for automatic rejoins (and in the result).

        The ``join`` carries a fresh ``join_key``: if its ack is lost with the connection, the
        resend after the reconnect gets the same seat back instead of taking a second one.
        """
        command = Join(
            id=self.next_id(),
            room=room,
            name=name,
            invite_code=invite_code,
            join_key=secrets.token_urlsafe(24),
        )
        self._entering = room  # its snapshot may arrive before this coroutine resumes
        try:
            ack = await self._request_retrying(command)
        finally:
            self._entering = None
        result = ack.result
        if not isinstance(result, JoinResult):
            raise CommandError("invalid_field", f"the ack of {command.id} has a wrong result")
        # The session is set before waiting for the snapshot, so that a reconnect in between
        # takes the seat back with the new token.
        self._session = _Session(room=room, token=result.token, invite_code=invite_code)
        self.player, self.seat = result.player, result.seat
        if ack.seq is not None:
            seq = ack.seq
            await self.wait_for(lambda m: m.room == room and m.seq >= seq)
        return result

    async def rejoin(self, room: str, token: str, last_seq: int | None = None) -> RejoinResult:
        """Take a seat back with its token (e.g. after restarting the program)."""
        command = Rejoin(id=self.next_id(), room=room, token=token, last_seq=last_seq)
        result = await self._enter(_Session(room=room, token=token), command, RejoinResult)
        self.player, self.seat = result.player, result.seat
        return result

    async def spectate(
        self, room: str, invite_code: str | None = None, last_seq: int | None = None
    ) -> None:
        """Watch a room (a private room needs its ``invite_code``); resumed after reconnects."""
        command = Spectate(id=self.next_id(), room=room, invite_code=invite_code, last_seq=last_seq)
        await self._enter(_Session(room=room, invite_code=invite_code), command, SpectateResult)

    async def _enter(self, session: _Session, command: Command, result_type: type[R]) -> R:
        """Run ``command``, which enters ``session.room``; the session is kept only if it
        succeeds. It is set first so that a reconnect while waiting resumes that room."""
        self._session = session
        try:
            return await self._command(command, result_type, room=session.room)
        except CommandError:
            self._session = None
            raise

    async def leave(self) -> None:
        """Leave the room (a player in a game forfeits). The client forgets the room and the
        seat token at once, as SPEC.md (`leave`) asks: leaving is final."""
        self._session = None
        self.model = None
        self.player = self.seat = None
        self._last_seq = 0
        await self._request_retrying(Leave(id=self.next_id()))

    def _expect_seq(self) -> int | None:
        """The seq of the view the caller decided on: the model's, if it shows our room."""
        model, session = self.model, self._session
        if model is None or session is None or model.room != session.room:
            return None
        return model.seq

    async def start(self) -> None:
        """Start the game (the host only)."""
        command = Start(id=self.next_id(), expect_seq=self._expect_seq())
        await self._command(command, StartResult)

    async def roll(self, keep: Iterable[int] = ()) -> None:
        """Roll the dice, keeping those at the die indexes ``keep`` (the held ones)."""
        command = Roll(id=self.next_id(), keep=tuple(keep), expect_seq=self._expect_seq())
        await self._command(command, RollResult)

    async def hold(self, dice: Iterable[int]) -> None:
        """Hold the dice at these indexes (0..4)."""
        command = Hold(id=self.next_id(), dice=tuple(dice), expect_seq=self._expect_seq())
        await self._command(command, HoldResult)

    async def release(self, dice: Iterable[int]) -> None:
        """Release held dice at these indexes (0..4)."""
        command = Release(id=self.next_id(), dice=tuple(dice), expect_seq=self._expect_seq())
        await self._command(command, ReleaseResult)

    async def score(self, box: Box | str) -> None:
        """Score the current dice in ``box`` (one whose preview entry is allowed)."""
        command = Score(id=self.next_id(), box=Box(box), expect_seq=self._expect_seq())
        await self._command(command, ScoreResult)

    async def take_bonus(self) -> None:
        """Take the +100 of an extra Yahtzee and fill no box (v1.2, room option `bonus_turn`;
        possible when :attr:`RoomModel.can_take_bonus`). Ends the turn like :meth:`score`."""
        command = TakeBonus(id=self.next_id(), expect_seq=self._expect_seq())
        await self._command(command, TakeBonusResult)

    async def add_computer(
        self, level: Level | str = Level.MEDIUM, name: str | None = None
    ) -> AddComputerResult:
        """Seat a computer player (v1.2; the host, in the lobby). ``name`` None: the server
        picks one. The result has its player id (for :meth:`remove_computer`) and seat."""
        command = AddComputer(id=self.next_id(), level=Level(level), name=name)
        return await self._command(command, AddComputerResult)

    async def remove_computer(self, player: str) -> None:
        """Free a computer player's seat (v1.2; the host, in the lobby)."""
        await self._command(RemoveComputer(id=self.next_id(), player=player), RemoveComputerResult)

    async def hint(self) -> HintResult:
        """The advisor's best options for the player on turn, best first (v1.2; a player or a
        spectator of a room created with hints). Changes nothing. ``unavailable`` (the server's
        strategy table still loading) is retryable, so it is resent a few times first."""
        return await self._command(Hint(id=self.next_id()), HintResult)

    async def offer_rematch(self) -> OfferRematchResult:
        """Offer a rematch of the finished game (v1.3; a player): the rematch room (the same
        for every offer) and this player's seat there, not yet taken up (see :meth:`rematch`)."""
        return await self._command(OfferRematch(id=self.next_id()), OfferRematchResult)

    async def rematch(self) -> OfferRematchResult:
        """Offer a rematch and move there: leave the finished room, take the seat in the
        rematch room with its token. Without a seat (the room filled up) the client stays."""
        offer = await self.offer_rematch()
        if offer.token is None:
            return offer
        await self.leave()
        self._session = None
        command = Rejoin(id=self.next_id(), room=offer.room, token=offer.token)
        session = _Session(room=offer.room, token=offer.token, invite_code=offer.invite_code)
        result = await self._enter(session, command, RejoinResult)
        self.player, self.seat = result.player, result.seat
        return offer

    async def quick_play(
        self, seats: int = 2, rules: Rules = Rules.YAHTZEE, computers: bool = True
    ) -> QuickPlayMatched:
        """Quick play (v1.4; needs a remembered player, ``player_token``): wait in the queue
        for ``seats`` and ``rules`` until a room is made, take the seat there (``rejoin``) and
        return the match (its ``computers`` name the computers that filled open seats).
        :attr:`quick_play_queued` is the ack's result, :attr:`quick_play_status` the last
        news of the queue. Raises :class:`CommandError` (``identity_required``,
        ``already_queued``, ...; ``cancelled`` after :meth:`cancel_quick_play`;
        ``connection_lost``: the queue belongs to the connection)."""
        waiting: asyncio.Future[QuickPlayMatched] = asyncio.get_running_loop().create_future()
        self._quick_play, self.quick_play_status = waiting, None
        try:
            command = QuickPlay(id=self.next_id(), seats=seats, rules=rules, computers=computers)
            self.quick_play_queued = await self._command(command, QuickPlayResult)
            match = await waiting
        finally:
            if self._quick_play is waiting:
                self._quick_play = None
        session = _Session(room=match.room, token=match.token, invite_code=match.invite_code)
        rejoin = Rejoin(id=self.next_id(), room=match.room, token=match.token)
        result = await self._enter(session, rejoin, RejoinResult)
        self.player, self.seat = result.player, result.seat
        return match

    async def cancel_quick_play(self) -> None:
        """Leave the quick-play queue; a waiting :meth:`quick_play` raises ``cancelled``."""
        await self._command(CancelQuickPlay(id=self.next_id()), CancelQuickPlayResult)
        self._end_quick_play(CommandError("cancelled", "quick play was cancelled"))

    def _end_quick_play(self, exc: BaseException) -> None:
        waiting, self._quick_play = self._quick_play, None
        if waiting is not None and not waiting.done():
            waiting.set_exception(exc)

    async def ping(self) -> None:
        """An application round trip (waits for the ``pong``)."""
        ws = await self._usable_connection()
        command_id = self.next_id()
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._pongs[command_id] = fut
        try:
            await self._send(ws, Ping(id=command_id))
            await fut
        finally:
            self._pongs.pop(command_id, None)

    # ------------------------------------------------------------------ helpers

    @property
    def room(self) -> str | None:
        """The room the client is in (as a player or a spectator), or None."""
        return self._session.room if self._session else None

    @property
    def token(self) -> str | None:
        """The token of the seat held (a secret: never show or log it), or None."""
        return self._session.token if self._session else None

    @property
    def is_my_turn(self) -> bool:
        """Whether the player on turn is this client's player."""
        return (
            self.model is not None
            and self.player is not None
            and self.model.current_player == self.player
        )

    async def wait_for(self, predicate: Callable[[RoomModel], bool]) -> RoomModel:
        """Wait until ``predicate(model)`` holds (checked after every update); returns the model.

        Independent of :meth:`events` (it consumes nothing). Wrap it in ``asyncio.timeout(...)``
        to bound the wait. Raises :class:`ClientClosedError` if the client closes first.
        """
        while True:
            if self.model is not None and predicate(self.model):
                return self.model
            if self._failure is not None:
                raise ClientClosedError(str(self._failure))
            if self._changed is None:
                self._changed = asyncio.get_running_loop().create_future()
            await asyncio.shield(self._changed)

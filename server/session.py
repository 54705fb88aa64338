"""One WebSocket connection: a reader task, a writer task and a bounded send queue.

The reader decodes each frame (size limit, token-bucket rate limit, ``protocol`` codec), runs the
command and answers it with exactly one ``ack`` or typed ``error`` carrying the room's current
seq; commands of one connection run one at a time, in order. Room events come from the
:class:`~server.feed.Feed` through a non-blocking sink into the send queue. When the queue is
full the client is not reading: it is closed with 4000 and never delays its room. The writer is
the only task that sends.

Seat tokens are ``secrets.token_urlsafe(32)``, stored in Redis only as sha256 hashes, and sent
only in the ``join`` ack, on the joining connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from starlette.websockets import WebSocket, WebSocketDisconnect

import protocol.messages as pm
from protocol.codec import decode_client, encode
from protocol.errors import ERROR_CODES, DecodeError, make_error
from protocol.transport import CloseCode, Encoding
from server import game, translate
from server.feed import Subscription, raise_if_cancelling
from server.limits import TokenBucket
from server.service import SeatTakenError, ServiceError, draw_faces
from server.store import now_ms

if TYPE_CHECKING:
    from server.app import Runtime

__all__ = ["Session"]

log = logging.getLogger("yahtzee.session")

_ids = itertools.count(1)
_PROCESS = f"{os.getpid()}-{secrets.token_hex(3)}"
_LOCAL_CACHE = 256
_CLOSE = object()
#: Consecutive rate-limited messages after which the connection is closed (1008).
_FLOOD_LIMIT = 200
#: Engine codes the protocol names differently.
_CODE_ALIASES = {"name_taken": "invalid_name", "invalid_command": "invalid_field"}

Frame = bytes | str


class _RefusalError(Exception):
    def __init__(self, code: str, message: str | None = None) -> None:
        super().__init__(code)
        self.code = code
        self.message = message


class Session:
    def __init__(self, websocket: WebSocket, runtime: Runtime, encoding: Encoding) -> None:
        self.ws = websocket
        self.rt = runtime
        self.encoding = encoding
        self.conn_id = f"{_PROCESS}-{next(_ids)}"
        settings = runtime.settings
        self.bucket = TokenBucket(settings.rate_per_second, settings.rate_burst)
        self.queue: asyncio.Queue[Frame | object] = asyncio.Queue()
        self.queue_limit = settings.send_queue_size
        self.close_code: int | None = None
        self.room: str | None = None
        self.role: str | None = None  # "player" | "spectator"
        self.player: str | None = None
        self.subscription: Subscription | None = None
        self.idle = asyncio.Event()
        self.idle.set()
        self._answers: OrderedDict[str, Frame] = OrderedDict()
        self._flood = 0
        self._reader: asyncio.Task[None] | None = None

    # -- lifecycle ---------------------------------------------------------------------------

    async def run(self) -> None:
        settings = self.rt.settings
        self._send(
            pm.Welcome(
                server_version=self.rt.version,
                protocol_version=1,
                encoding=self.encoding,
                limits=pm.Limits(
                    max_frame_bytes=settings.max_frame_bytes,
                    max_messages_per_second=max(1, int(settings.rate_per_second)),
                    burst=settings.rate_burst,
                    max_name_length=min(settings.max_name_length, game.MAX_NAME_LENGTH),
                    max_id_length=64,
                    send_queue_limit=settings.send_queue_size,
                ),
                heartbeat_seconds=max(1, round(settings.heartbeat_seconds)),
                server_time_ms=now_ms(),
            )
        )
        writer = asyncio.create_task(self._writer(), name=f"writer-{self.conn_id}")
        self._reader = asyncio.create_task(self._read_loop(), name=f"reader-{self.conn_id}")
        try:
            await asyncio.wait({writer, self._reader}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if not self._reader.done():
                self._reader.cancel()
            await asyncio.wait({self._reader}, timeout=5)
            if not writer.done():
                self.close(CloseCode.NORMAL)
                await asyncio.wait({writer}, timeout=5)
                writer.cancel()  # a client that does not read its close frame
            await self._leave_room(disconnect=True)

    def close(self, code: int) -> None:
        """Ask the writer to flush what is queued and close with ``code``."""
        if self.close_code is None:
            self.close_code = code
            self.queue.put_nowait(_CLOSE)

    async def drain(self) -> None:
        """Shutdown: let the command in flight finish, then close with 1012 (service restart)."""
        await self.idle.wait()
        if self._reader is not None:
            self._reader.cancel()
        self.close(CloseCode.SERVICE_RESTART)

    async def _writer(self) -> None:
        try:
            while True:
                frame = await self.queue.get()
                if frame is _CLOSE:
                    break
                if isinstance(frame, bytes):
                    await self.ws.send_bytes(frame)
                elif isinstance(frame, str):
                    await self.ws.send_text(frame)
        except (WebSocketDisconnect, RuntimeError, OSError):
            return
        with contextlib.suppress(Exception):
            await self.ws.close(self.close_code or CloseCode.NORMAL)

    def _send(self, message: pm.Message) -> Frame | None:
        """Encode and queue one message; returns the frame (None when it was not queued)."""
        if self.close_code is not None:
            return None
        frame: Frame = encode(message, self.encoding)
        return frame if self._enqueue(frame) else None

    def _enqueue(self, frame: Frame) -> bool:
        """Queue one frame; a client whose queue is full is closed with 4000 instead."""
        if self.close_code is not None:
            return False
        if self.queue.qsize() >= self.queue_limit:
            self.rt.metrics.slow_clients.inc()
            log.info("closing slow client %s", self.conn_id)
            self.close(CloseCode.SLOW_CONSUMER)
            return False
        self.queue.put_nowait(frame)
        return True

    def _on_event(self, seq: int, entry: dict[str, Any]) -> None:
        """Feed sink: never blocks."""
        assert self.room is not None
        self._send(translate.event_message(self.room, seq, entry))

    # -- reading -----------------------------------------------------------------------------

    async def _read_loop(self) -> None:
        while True:
            message = await self.ws.receive()
            if message["type"] == "websocket.disconnect":
                return
            frame: Frame | None = message.get("bytes")
            if frame is None:
                frame = message.get("text")
            if frame is None or self.rt.draining:
                continue
            self.idle.clear()
            try:
                await self._handle_frame(frame)
            finally:
                self.idle.set()
            if self.close_code is not None:
                return

    async def _handle_frame(self, frame: Frame) -> None:
        size = len(frame.encode()) if isinstance(frame, str) else len(frame)
        limit = self.rt.settings.max_frame_bytes
        if size > 64 * limit:
            self.close(CloseCode.MESSAGE_TOO_BIG)
            return
        try:
            command = decode_client(frame, self.encoding, max_frame_bytes=limit)
        except DecodeError as exc:
            self.rt.metrics.commands.labels("invalid", exc.code).inc()
            self._send(exc.to_message(seq=await self._room_seq()))
            return
        kind = pm.message_type(command)
        if not self.bucket.take():
            self._flood += 1
            self.rt.metrics.commands.labels(kind, "rate_limited").inc()
            if self._flood > _FLOOD_LIMIT:
                self.close(CloseCode.POLICY_VIOLATION)
                return
            self._send(make_error("rate_limited", command.id, seq=await self._room_seq()))
            return
        self._flood = 0
        started = time.perf_counter()
        outcome = "ok"
        after: Callable[[], Any] | None = None
        try:
            if isinstance(command, pm.Ping):
                self._send(pm.Pong(id=command.id))
                return
            previous = self._answers.get(command.id)
            if previous is not None:  # retried on this connection: same answer again
                outcome = "cached"
                self._enqueue(previous)
                return
            reply, after = await self._dispatch(command)
            sent = self._send(reply)
            if sent is not None:
                self._remember(command.id, sent)
        except (_RefusalError, ServiceError, game.GameError) as exc:
            outcome = _code(exc.code)
            text = exc.message if isinstance(exc, _RefusalError | ServiceError) else str(exc)
            seq = await self._room_seq()
            self._send(make_error(outcome, command.id, seq=seq, message=text))
            if isinstance(exc, SeatTakenError):  # another connection took the seat back
                await self._leave_room(disconnect=True)
                self.close(CloseCode.NORMAL)
        except Exception:
            raise_if_cancelling()
            outcome = "internal_error"
            self.rt.metrics.redis_errors.labels("command").inc()
            log.exception("command %s failed", kind)
            self._send(make_error("internal_error", command.id, seq=None))
        finally:
            self.rt.metrics.commands.labels(kind, outcome).inc()
            self.rt.metrics.command_seconds.labels(kind).observe(time.perf_counter() - started)
        if after is not None:
            await self._after_reply(after, kind)

    async def _after_reply(self, after: Callable[[], Any], kind: str) -> None:
        """Run what a command does once its ack is queued (attach to the room, kick the seat's
        previous connection). The command has had its one answer already, so a failure here
        closes the connection (1011): the client reconnects and resumes, with no second reply.
        """
        try:
            await after()
        except Exception:
            raise_if_cancelling()
            self.rt.metrics.redis_errors.labels("attach").inc()
            log.exception("after %s failed", kind)
            self.close(CloseCode.INTERNAL_ERROR)

    def _remember(self, command_id: str, frame: Frame) -> None:
        self._answers[command_id] = frame
        while len(self._answers) > _LOCAL_CACHE:
            self._answers.popitem(last=False)

    async def _room_seq(self) -> int | None:
        if self.room is None:
            return None
        with contextlib.suppress(Exception):
            return await self.rt.store.current_seq(self.room)
        return None

    # -- commands ----------------------------------------------------------------------------

    async def _dispatch(
        self, command: pm.ClientMessage
    ) -> tuple[pm.Message, Callable[[], Any] | None]:
        """Run one command: the reply, and what to do once the reply is queued."""
        svc = self.rt.service
        if isinstance(command, pm.Hello):
            return pm.make_ack(command.id, seq=await self._room_seq()), None
        if isinstance(command, pm.ListRooms):
            rooms = [
                translate.room_summary(info)
                for _, info in await self.rt.store.index_list(limit=200)
                if info.get("public")
            ]
            result = pm.ListRoomsResult(rooms=tuple(rooms[:100]))
            return pm.make_ack(command.id, result, seq=await self._room_seq()), None
        if isinstance(command, pm.GetRoom):
            loaded = await svc.load(command.room)
            svc.check_invite(loaded, command.invite_code)
            summary = translate.room_summary(translate.summary(command.room, loaded.record))
            result2 = pm.GetRoomResult(room=summary)
            return pm.make_ack(command.id, result2, seq=await self._room_seq()), None
        if isinstance(command, pm.CreateRoom):
            room_id, invite = await svc.create_room(
                options=translate.engine_options(command.options),
                seats=command.seats,
                public=command.public,
                turn_seconds=command.turn_seconds,
            )
            result3 = pm.CreateRoomResult(room=room_id, invite_code=invite)
            return pm.make_ack(command.id, result3, seq=await self._room_seq()), None
        if isinstance(command, pm.Join):
            return await self._join(command)
        if isinstance(command, pm.Rejoin):
            return await self._rejoin(command)
        if isinstance(command, pm.Spectate):
            return await self._spectate(command)
        if isinstance(command, pm.Leave):
            return await self._leave(command)
        return await self._play(command)

    def _require_free(self) -> None:
        if self.room is not None:
            raise _RefusalError("already_in_room")

    async def _join(self, command: pm.Join) -> tuple[pm.Message, Callable[[], Any] | None]:
        self._require_free()
        out = await self.rt.service.join(
            command.room,
            command.name,
            command.invite_code,
            conn_id=self.conn_id,
            join_key=command.join_key,
        )
        result = pm.JoinResult(
            player=out.result["player"], seat=out.result["seat"], token=out.result["token"]
        )
        self._enter(command.room, "player", out.result["player"])
        previous = out.result.get("previous")

        async def after() -> None:
            await self._attach(None)
            await self._kick(command.room, previous)

        return pm.make_ack(command.id, result, seq=out.seq), after

    async def _rejoin(self, command: pm.Rejoin) -> tuple[pm.Message, Callable[[], Any] | None]:
        self._require_free()
        svc = self.rt.service
        player = await svc.authenticate(command.room, command.token)
        loaded = await svc.load(command.room)
        state = game.from_dict(loaded.record["game"])
        seat = state.seat_of(player)
        record = state.player(player)
        if seat is None or record is None or record.forfeited:  # leaving is final
            raise _RefusalError("bad_token", "this seat was given up")
        self._enter(command.room, "player", player)
        last_seq = command.last_seq

        async def after() -> None:
            await self._attach(last_seq)
            previous = await self.rt.service.claim_seat(command.room, player, self.conn_id)
            await self._kick(command.room, previous)

        result = pm.RejoinResult(player=player, seat=seat)
        return pm.make_ack(command.id, result, seq=loaded.seq), after

    async def _kick(self, room: str, previous: str | None) -> None:
        """Close the connection that held our seat before (1000), wherever it is."""
        if previous is None or previous == self.conn_id:
            return
        self.rt.kick(previous)
        await self.rt.store.kick(room, previous)

    async def _spectate(self, command: pm.Spectate) -> tuple[pm.Message, Callable[[], Any] | None]:
        self._require_free()
        svc = self.rt.service
        loaded = await svc.load(command.room)
        svc.check_invite(loaded, command.invite_code)
        self._enter(command.room, "spectator", None)
        last_seq = command.last_seq

        async def after() -> None:
            await self._attach(last_seq)
            count = await self.rt.store.spectator_put(
                command.room, self.conn_id, self.rt.spectator_lease_ms
            )
            await self.rt.service.set_spectators(command.room, count)

        return pm.make_ack(command.id, seq=loaded.seq), after

    async def _leave(self, command: pm.Leave) -> tuple[pm.Message, Callable[[], Any] | None]:
        if self.room is None:
            raise _RefusalError("not_in_room")
        room = self.room
        seq: int | None
        if self.role == "player" and self.player is not None:
            player = self.player
            out = await self.rt.service.leave(room, player, self.conn_id, f"{player}:{command.id}")
            seq = out.seq
        else:
            seq = await self._room_seq()
        await self._leave_room(disconnect=False)
        return pm.make_ack(command.id, seq=seq), None

    async def _play(self, command: pm.ClientMessage) -> tuple[pm.Message, Callable[[], Any] | None]:
        if self.room is None:
            raise _RefusalError("not_in_room")
        if self.role != "player" or self.player is None:
            raise _RefusalError("spectator_cannot_act")
        player = self.player
        build: Callable[[game.GameState], Sequence[game.Command]]
        if isinstance(command, pm.Start):
            choice = secrets.randbelow(2**32)
            build = lambda s: [game.Start(player, random_choice=choice)]  # noqa: E731
        elif isinstance(command, pm.Roll):
            keep = frozenset(command.keep)

            def build(state: game.GameState) -> Sequence[game.Command]:
                faces = draw_faces(len(game.dice_to_roll(state, keep)))
                return [game.Roll(player, faces, keep)]
        elif isinstance(command, pm.Hold):
            dice = frozenset(command.dice)
            build = lambda s: [game.Hold(player, dice)]  # noqa: E731
        elif isinstance(command, pm.Release):
            dice = frozenset(command.dice)
            build = lambda s: [game.Release(player, dice)]  # noqa: E731
        elif isinstance(command, pm.Score):
            box = _engine_box(command.box.value)
            build = lambda s: [game.Score(player, box)]  # noqa: E731
        else:  # pragma: no cover - every client message type is handled above
            raise _RefusalError("unsupported")
        out = await self.rt.service.act(
            self.room,
            player,
            build,
            f"{player}:{command.id}",
            self.conn_id,
            expect_seq=command.expect_seq,
        )
        return pm.make_ack(command.id, seq=out.seq), None

    # -- room membership ---------------------------------------------------------------------

    def _enter(self, room: str, role: str, player: str | None) -> None:
        self.room, self.role, self.player = room, role, player

    async def _attach(self, last_seq: int | None) -> None:
        """Send what the client missed (events after ``last_seq``, or a snapshot), then live."""
        assert self.room is not None
        store = self.rt.store
        room = self.room
        if self.role == "player" and self.player is not None:
            await store.player_lease_put(room, self.player, self.conn_id, self.rt.player_lease_ms)
        after: int
        replay = False
        if last_seq is not None:
            current = await store.current_seq(room) or 0
            first = await store.first_seq(room)
            if last_seq == current or (
                last_seq < current and first is not None and first <= last_seq + 1
            ):
                replay = True
        if replay and last_seq is not None:
            after = last_seq
        else:
            loaded = await self.rt.service.load(room)
            self._send(translate.snapshot(room, loaded.seq, loaded.record))
            after = loaded.seq
        self.subscription = await self.rt.feed.subscribe(room, after, self._on_event)

    async def _leave_room(self, *, disconnect: bool) -> None:
        room, role, player = self.room, self.role, self.player
        if room is None or role is None:
            return
        self.room = self.role = self.player = None
        if self.subscription is not None:
            self.subscription.close()
            self.subscription = None
        try:
            if role == "spectator":
                count = await self.rt.store.spectator_drop(room, self.conn_id)
                await self.rt.service.set_spectators(room, count)
            elif player is not None and disconnect and not self.rt.draining:
                # a draining process keeps the lease: it runs out unless the player rejoins
                await self.rt.service.release_seat(room, player, self.conn_id)
                await self.rt.store.player_lease_drop(room, player, self.conn_id)
            elif player is not None and not disconnect:
                await self.rt.store.player_lease_drop(room, player, self.conn_id)
        except Exception as exc:  # the room may be gone, or Redis down: nothing to undo
            raise_if_cancelling()
            self.rt.metrics.redis_errors.labels("leave").inc()
            log.info("leaving room %s: %s", room, exc)


def _code(code: str) -> str:
    code = _CODE_ALIASES.get(code, code)
    return code if code in ERROR_CODES else "internal_error"


def _engine_box(value: str) -> game.Box:
    try:
        return game.Box(value)
    except ValueError:
        raise _RefusalError("unknown_box", f"no box {value!r}") from None

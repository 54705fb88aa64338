"""The HTTP endpoints: health, readiness, metrics, the lobby (a list, and a live stream of it),
a room, a room's event log.

A private room is shown only with its invite code in the ``X-Invite-Code`` header: secrets
never travel in URLs (they would land in access logs and proxies).
"""

from __future__ import annotations

import asyncio
import collections
import json
from collections.abc import Callable, Coroutine
from typing import Any

import msgspec
import redis.exceptions
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.types import Receive, Scope, Send

import protocol.messages as pm
from protocol.codec import decode_server
from protocol.transport import Encoding
from server.boundary import views
from server.domain import room
from server.ops.retry import LRU
from server.service.outcomes import Cached, ServiceError, UnavailableError
from server.storage.interface import TRANSIENT_ERRORS
from server.strategy import computers
from server.transport.handlers import TABLE_WAIT_SECONDS
from server.transport.listing import public_rooms
from server.transport.lobby import Lobby, Watcher
from server.transport.lobby_turns import follow_turns, stream_identity, turns_reader
from server.transport.runtime import SERVER_FULL, Runtime

__all__ = [
    "UNAVAILABLE_ERRORS",
    "get_room",
    "healthz",
    "list_rooms",
    "lobby_body",
    "lobby_stream",
    "metrics",
    "readyz",
    "room_events",
    "storage_unavailable",
]

INVITE_HEADER = "x-invite-code"
LOBBY_MAX_ROOMS = 1000
EVENTS_PAGE = 500
EVENTS_PAGE_MAX = 1000
READY_TIMEOUT_SECONDS = 1.0

_ANY = msgspec.msgpack.Decoder()


def runtime_of(request: Request) -> Runtime:
    rt: Runtime = request.app.state.runtime
    return rt


def _json(value: object, status_code: int = 200) -> Response:
    return Response(
        msgspec.json.encode(value), status_code=status_code, media_type="application/json"
    )


def _error(code: str, message: str, status_code: int) -> Response:
    return _json({"code": code, "message": message}, status_code)


async def storage_unavailable(request: Request, exc: Exception) -> Response:
    """Any route whose storage call failed (Redis down, frozen, failing over): 503
    ``unavailable``, retryable, never a 500 (the handler the app installs for the storage's
    retryable errors)."""
    response = _error("unavailable", f"storage unavailable, retry: {exc}", 503)
    response.headers["Retry-After"] = "1"
    return response


#: The errors :func:`storage_unavailable` answers (the storage's retryable ones).
UNAVAILABLE_ERRORS: tuple[type[Exception], ...] = (*TRANSIENT_ERRORS, UnavailableError)


async def healthz(request: Request) -> Response:
    """Liveness: the process answers HTTP."""
    return PlainTextResponse("ok")


async def readyz(request: Request) -> Response:
    """Readiness: Redis answers PING within a second (and the process is not shutting down)."""
    rt = runtime_of(request)
    if rt.draining:
        return JSONResponse({"ready": False, "reason": "shutting down"}, status_code=503)
    try:
        async with asyncio.timeout(READY_TIMEOUT_SECONDS):
            await rt.redis.ping()
    except (redis.exceptions.RedisError, OSError, TimeoutError) as exc:
        rt.metrics.redis_errors.labels("readyz").inc()
        return JSONResponse({"ready": False, "redis": str(exc) or "timeout"}, status_code=503)
    # The database is reported apart: play stays ready while it is down (protocol 1.3).
    extra = await rt.players.readiness() if rt.players is not None else {}
    return JSONResponse({"ready": True, **extra})


async def metrics(request: Request) -> Response:
    """Prometheus text format; connection and room gauges are counted at scrape time."""
    rt = runtime_of(request)
    roles = collections.Counter(c.role for c in rt.connections.values())
    for role in ("player", "spectator"):
        rt.metrics.connections.labels(role).set(roles[role])
    rt.metrics.connections.labels("all").set(len(rt.connections))
    try:
        counts = collections.Counter({"lobby": 0, "playing": 0, "finished": 0})
        raw = await rt.store.index_list(rt.service.clock(), 100_000)
        counts.update(json.loads(s).get("status", "lobby") for s in raw)
        for status, n in counts.items():
            rt.metrics.rooms.labels(status).set(n)
    except (redis.exceptions.RedisError, OSError):
        rt.metrics.redis_errors.labels("metrics").inc()
    return Response(rt.metrics.render(), media_type="text/plain; version=0.0.4; charset=utf-8")


async def lobby_body(rt: Runtime) -> bytes:
    """The public rooms as ``GET /rooms`` answers them (and ``GET /lobby`` sends them)."""
    return msgspec.json.encode({"rooms": await public_rooms(rt, LOBBY_MAX_ROOMS)})


async def list_rooms(request: Request) -> Response:
    """The public rooms."""
    return Response(await lobby_body(runtime_of(request)), media_type="application/json")


class _LobbyStream(StreamingResponse):
    """One watcher's SSE stream; the watcher is let go, and ``beside`` (the task that keeps
    its ``turns`` events current, if any) ended, however the response ends."""

    def __init__(
        self,
        lobby: Lobby,
        watcher: Watcher,
        release: Callable[[], None],
        beside: Callable[[], Coroutine[Any, Any, None]] | None = None,
    ) -> None:
        super().__init__(
            lobby.stream(watcher),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
        )
        self._release = release
        self._beside = beside

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        task = asyncio.create_task(self._beside()) if self._beside is not None else None
        try:
            await super().__call__(scope, receive, send)
        finally:
            if task is not None:
                task.cancel()
            self._release()


async def lobby_stream(request: Request) -> Response:
    """The public rooms, live (Server-Sent Events): the list at once, then again whenever it
    changes (at most about once a second), a keep-alive comment every 15 s of silence. With a
    player token (Authorization: Bearer) also the player's turn list (``lobby_turns``)."""
    rt = runtime_of(request)
    lobby: Lobby = request.app.state.lobby
    if rt.draining or lobby.closed:
        return _error("unavailable", "the server is shutting down", 503)
    identity = await stream_identity(request)
    if isinstance(identity, Response):
        return identity
    if len(lobby.watchers) >= rt.settings.max_lobby_watchers:
        return _error("rate_limited", "too many lobby watchers on this server", 429)
    address = request.client.host if request.client else ""
    refused = rt.admit(address)
    if refused == SERVER_FULL:
        return _error("unavailable", refused, 503)
    if refused is not None:
        return _error("rate_limited", refused, 429)
    watcher = lobby.add(address)

    def release() -> None:
        lobby.remove(watcher)
        rt.release(address)

    beside = _turns_task(rt, watcher, identity) if identity is not None else None
    return _LobbyStream(lobby, watcher, release, beside)


def _turns_task(
    rt: Runtime, watcher: Watcher, identity: str
) -> Callable[[], Coroutine[Any, Any, None]] | None:
    """The task that keeps ``watcher``'s turn list current (None: no correspondence index)."""
    correspondence = rt.correspondence
    if correspondence is None:
        return None
    read = turns_reader(correspondence, rt.service.clock, identity)

    async def follow() -> None:
        with correspondence.notices.listen(identity) as wake:
            await follow_turns(
                watcher,
                read,
                wake,
                rt.settings.lobby_turns_seconds,
                on_error=lambda exc: rt.metrics.redis_errors.labels("lobby").inc(),
            )

    return follow


async def _visible(request: Request) -> Cached | Response:
    """The room of the path, or the 404 / 403 answer (private rooms need the invite header)."""
    room_id = request.path_params["room_id"]
    try:
        current = await runtime_of(request).service.view(room_id)
    except ServiceError as exc:
        return _error(exc.code, exc.message, 404)
    if not room.invite_matches(current.record, request.headers.get(INVITE_HEADER)):
        message = "this room is private: send its invite code in the X-Invite-Code header"
        return _error("invite_required", message, 403)
    return current


async def get_room(request: Request) -> Response:
    """Snapshot of one room."""
    current = await _visible(request)
    if isinstance(current, Response):
        return current
    grace = runtime_of(request).settings.absent_turn_seconds
    room_id = request.path_params["room_id"]
    return _json(views.snapshot(room_id, current.seq, current.record, grace))


class _BadParamError(ValueError):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def _int_param(request: Request, name: str, default: int, low: int, high: int) -> int:
    raw = request.query_params.get(name)
    try:
        value = default if raw is None else int(raw)
    except ValueError:
        raise _BadParamError("invalid_field", f"{name} must be an integer") from None
    if not low <= value <= high:
        raise _BadParamError("out_of_range", f"{name} must be {low}..{high}")
    return value


async def room_events(request: Request) -> Response:
    """One page of the room's event log: events after ``after`` (default 0), at most
    ``limit`` (default 500, at most 1000); ``next_after`` is null on the last page."""
    current = await _visible(request)
    if isinstance(current, Response):
        return current
    try:
        after = _int_param(request, "after", 0, 0, 2**53 - 1)
        limit = _int_param(request, "limit", EVENTS_PAGE, 1, EVENTS_PAGE_MAX)
    except _BadParamError as exc:
        return _error(exc.code, str(exc), 400)
    room_id = request.path_params["room_id"]
    entries = await runtime_of(request).store.read_events(room_id, after, limit)
    events = [_ANY.decode(data) for _, data in entries]
    last = entries[-1][0] if entries else after
    more = len(entries) == limit and last < current.seq
    return _json({"room": room_id, "events": events, "next_after": last if more else None})


ANALYSES_KEPT = 64
_analyses: LRU[tuple[str, int], bytes] = LRU(ANALYSES_KEPT)


async def room_analysis(request: Request) -> Response:
    """Every decision of the room's game so far against optimal play, from its log alone.
    A finished game's analysis is computed once per process (kept for the latest rooms)."""
    current = await _visible(request)
    if isinstance(current, Response):
        return current
    rt, room_id = runtime_of(request), request.path_params["room_id"]
    table = await rt.upkeep.advisor.ready(current.record.game.options, TABLE_WAIT_SECONDS)
    if table is None:
        message = "the strategy table of these rules is still loading: retry shortly"
        response = _error("unavailable", message, 503)
        response.headers["Retry-After"] = "5"
        return response
    key = (room_id, current.seq)
    body = _analyses.get(key)
    if body is None:
        entries = await rt.store.read_events(room_id, 0)
        log = [decode_server(data, Encoding.MSGPACK) for _, data in entries]
        events = views.engine_events(e for e in log if isinstance(e, pm.Event))
        review = await asyncio.to_thread(computers.analyse, table, events)
        seq = entries[-1][0] if entries else 0
        body = msgspec.json.encode(views.game_analysis(room_id, seq, current.record, review))
        _analyses.put(key, body)
    return Response(body, media_type="application/json")

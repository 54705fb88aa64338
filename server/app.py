"""The Starlette application: ``create_app(settings)``, its lifespan and its routes.

The lifespan opens Redis (or starts a private embedded server when ``REDIS_URL`` is unset),
starts the per-process room feed (one pub/sub listener), the turn-timer task and the spectator
lease refresher, and keeps everything the handlers need in one :class:`Runtime`, reachable as
``app.state.runtime``; there are no module-level globals.

On SIGTERM (when ``handle_signals`` is on, as under ``yahtzee serve``) the process stops reading
new commands, lets the commands in flight finish, closes every WebSocket with 1012 (service
restart) so clients reconnect elsewhere, and only then hands the signal to uvicorn, which stops
accepting connections and shuts down.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import importlib.metadata
import importlib.util
import logging
import signal
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import redis.asyncio as aioredis
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import BaseRoute, Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.websockets import WebSocket

from protocol.transport import (
    ENDPOINT_PATH,
    SUBPROTOCOL_REFUSAL_REASON,
    SUBPROTOCOLS,
    CloseCode,
    select_subprotocol,
)
from server import translate
from server.embedded_redis import EmbeddedRedis
from server.feed import Feed, raise_if_cancelling
from server.metrics import Metrics
from server.service import GameService, ServiceError
from server.settings import Settings
from server.store import LoadedRoom, RoomStore

__all__ = ["Runtime", "create_app", "create_app_from_env"]

log = logging.getLogger("yahtzee.server")


def _version() -> str:
    try:
        return importlib.metadata.version("yahtzee-service")
    except importlib.metadata.PackageNotFoundError:
        return "0.1.0+source"


@dataclass(eq=False)
class Runtime:
    """What the lifespan opens and the handlers use."""

    settings: Settings
    redis: aioredis.Redis
    redis_url: str
    store: RoomStore
    service: GameService
    feed: Feed
    metrics: Metrics
    embedded: EmbeddedRedis | None = None
    version: str = field(default_factory=_version)
    draining: bool = False
    sessions: set[Any] = field(default_factory=set)
    spectator_lease_ms: int = 60_000

    @property
    def player_lease_ms(self) -> int:
        return max(1, int(self.settings.player_lease_seconds * 1000))

    def kick(self, conn_id: str) -> None:
        """Close this process's connection ``conn_id`` (if any) with 1000: its seat was taken
        back by another connection."""
        for session in list(self.sessions):
            if session.conn_id == conn_id:
                session.close(CloseCode.NORMAL)

    async def drain(self) -> None:
        """Stop reading commands, finish those in flight, close every socket with 1012."""
        self.draining = True
        sessions = list(self.sessions)
        if sessions:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.settings.shutdown_grace_seconds):
                    await asyncio.gather(*(s.drain() for s in sessions))
            for s in sessions:
                s.close(CloseCode.SERVICE_RESTART)


def runtime_of(request: Request | WebSocket) -> Runtime:
    rt: Runtime = request.app.state.runtime
    return rt


# -- HTTP ------------------------------------------------------------------------------------


async def healthz(request: Request) -> Response:
    """Liveness: the process answers HTTP."""
    return PlainTextResponse("ok")


async def readyz(request: Request) -> Response:
    """Readiness: Redis answers PING (and the process is not shutting down)."""
    rt = runtime_of(request)
    if rt.draining:
        return JSONResponse({"ready": False, "reason": "shutting down"}, status_code=503)
    try:
        await rt.redis.ping()
    except (aioredis.RedisError, OSError) as exc:
        rt.metrics.redis_errors.labels("readyz").inc()
        return JSONResponse({"ready": False, "redis": str(exc)}, status_code=503)
    return JSONResponse({"ready": True})


async def metrics(request: Request) -> Response:
    """Prometheus text format; connection and room gauges are counted at scrape time."""
    rt = runtime_of(request)
    roles = collections.Counter(session.role for session in rt.sessions)
    for role in ("player", "spectator"):
        rt.metrics.connections.labels(role).set(roles[role])
    rt.metrics.connections.labels("all").set(len(rt.sessions))
    try:
        counts = collections.Counter({"lobby": 0, "playing": 0, "finished": 0})
        counts.update(
            info.get("status", "lobby") for _, info in await rt.store.index_list(limit=100_000)
        )
        for status, n in counts.items():
            rt.metrics.rooms.labels(status).set(n)
    except (aioredis.RedisError, OSError):
        rt.metrics.redis_errors.labels("metrics").inc()
    return Response(rt.metrics.render(), media_type="text/plain; version=0.0.4; charset=utf-8")


def _json(value: Any, status_code: int = 200) -> Response:
    return Response(
        msgspec.json.encode(value), status_code=status_code, media_type="application/json"
    )


def _error(code: str, message: str, status_code: int) -> Response:
    return _json({"code": code, "message": message}, status_code)


async def list_rooms(request: Request) -> Response:
    rt = runtime_of(request)
    rooms = [info for _, info in await rt.store.index_list(limit=1000) if info.get("public")]
    return _json({"rooms": rooms})


async def _load_visible(request: Request) -> LoadedRoom | Response:
    """The room of the path, or the 404 / 403 error response (a private room needs
    ``?invite_code=``)."""
    service = runtime_of(request).service
    try:
        loaded = await service.load(request.path_params["room_id"])
        service.check_invite(loaded, request.query_params.get("invite_code"))
    except ServiceError as exc:
        return _error(exc.code, exc.message, 404 if exc.code == "room_not_found" else 403)
    return loaded


async def get_room(request: Request) -> Response:
    """Snapshot of one room (a private room needs ``?invite_code=``)."""
    loaded = await _load_visible(request)
    if isinstance(loaded, Response):
        return loaded
    snap = translate.snapshot(loaded.room_id, loaded.seq, loaded.record)
    return _json(snap)


async def room_events(request: Request) -> Response:
    """The room's whole event log, as protocol events (for replays)."""
    loaded = await _load_visible(request)
    if isinstance(loaded, Response):
        return loaded
    rt = runtime_of(request)
    entries = await rt.store.read_events(loaded.room_id, 0)
    events = [translate.event_message(loaded.room_id, seq, e) for seq, e in entries]
    return _json({"room": loaded.room_id, "seq": loaded.seq, "events": events})


# -- WebSocket -------------------------------------------------------------------------------


async def websocket_endpoint(websocket: WebSocket) -> None:
    from server.session import Session  # imports the protocol codec

    rt = runtime_of(websocket)
    offered = websocket.scope.get("subprotocols") or []
    chosen = select_subprotocol(offered)
    if chosen is None or rt.draining:
        reason = SUBPROTOCOL_REFUSAL_REASON if chosen is None else "shutting down"
        status = 400 if chosen is None else 503
        if "websocket.http.response" in websocket.scope.get("extensions", {}):
            await websocket.send_denial_response(PlainTextResponse(reason, status_code=status))
        else:
            await websocket.close(CloseCode.PROTOCOL_ERROR, reason)
        return
    await websocket.accept(subprotocol=chosen)
    session = Session(websocket, rt, SUBPROTOCOLS[chosen])
    rt.sessions.add(session)
    try:
        await session.run()
    finally:
        rt.sessions.discard(session)


def web_client_dir() -> Path | None:
    """The browser client's folder (``clients/web``), located without importing ``clients``."""
    spec = importlib.util.find_spec("clients")
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        folder = Path(location) / "web"
        if (folder / "index.html").is_file():
            return folder
    return None


def routes() -> list[BaseRoute]:
    web: list[BaseRoute] = []
    folder = web_client_dir()
    if folder is not None:
        index = folder / "index.html"

        async def home(request: Request) -> Response:
            return FileResponse(index, media_type="text/html")

        web = [
            Route("/", home, methods=["GET"]),
            Mount("/static", StaticFiles(directory=folder), name="static"),
        ]
    return [
        *web,
        Route("/healthz", healthz, methods=["GET"]),
        Route("/readyz", readyz, methods=["GET"]),
        Route("/metrics", metrics, methods=["GET"]),
        Route("/rooms", list_rooms, methods=["GET"]),
        Route("/rooms/{room_id}", get_room, methods=["GET"]),
        Route("/rooms/{room_id}/events", room_events, methods=["GET"]),
        WebSocketRoute(ENDPOINT_PATH, websocket_endpoint),
    ]


# -- background tasks ------------------------------------------------------------------------


async def _timer_loop(rt: Runtime) -> None:
    """Fire expired deadlines and sweep expired player leases (each claimed atomically, so one
    process acts on each)."""
    while True:
        try:
            await rt.service.fire_due_timers()
            await rt.service.sweep_player_leases()
        except (aioredis.RedisError, OSError) as exc:
            raise_if_cancelling()
            rt.metrics.redis_errors.labels("timer").inc()
            log.warning("turn timer: %s", exc)
        except Exception:
            raise_if_cancelling()
            log.exception("turn timer failed")
        raise_if_cancelling()
        await asyncio.sleep(rt.settings.timer_poll_seconds)


async def _lease_loop(rt: Runtime) -> None:
    """Renew this process's player and spectator leases; recount rooms whose count changed.

    A player lease that was swept meanwhile (this process was stalled for a whole lease) takes
    the seat back, unless another connection holds it by now: then this one is closed (1000).
    """
    period = min(rt.spectator_lease_ms, rt.player_lease_ms) / 3000
    while True:
        raise_if_cancelling()
        await asyncio.sleep(period)
        spectators: dict[str, int] = {}  # room -> live count after our last renewal there
        for session in list(rt.sessions):
            room = session.room
            if room is None:
                continue
            try:
                if session.role == "spectator":
                    spectators[room] = await rt.store.spectator_put(
                        room, session.conn_id, rt.spectator_lease_ms
                    )
                elif session.player is not None and session.subscription is not None:
                    await _renew_player(rt, session, room, session.player)
            except Exception as exc:
                raise_if_cancelling()
                _lease_error(rt, exc)
        for room, count in spectators.items():  # one recount per room, not per spectator
            try:
                await rt.service.set_spectators(room, count)
            except Exception as exc:
                raise_if_cancelling()
                _lease_error(rt, exc)


def _lease_error(rt: Runtime, exc: Exception) -> None:
    rt.metrics.redis_errors.labels("leases").inc()
    log.info("lease renewal: %s", exc)


async def _renew_player(rt: Runtime, session: Any, room: str, player: str) -> None:
    swept = await rt.store.player_lease_put(room, player, session.conn_id, rt.player_lease_ms)
    loaded = await rt.store.load(room)
    owner = loaded.record.get("owners", {}).get(player) if loaded is not None else None
    if owner is not None and owner != session.conn_id:
        session.close(CloseCode.NORMAL)  # the kick was lost: another connection holds the seat
    elif swept:
        await rt.service.claim_seat(room, player, session.conn_id, reclaim=True)


def _install_sigterm(rt: Runtime) -> Callable[[], None]:
    """Drain before uvicorn's own SIGTERM handling; returns the undo function."""
    loop = asyncio.get_running_loop()
    previous = signal.getsignal(signal.SIGTERM)
    pending: set[asyncio.Task[None]] = set()

    def hand_over() -> None:
        loop.remove_signal_handler(signal.SIGTERM)
        signal.signal(signal.SIGTERM, previous)
        if callable(previous):
            previous(signal.SIGTERM, None)
        else:  # pragma: no cover - no uvicorn handler installed
            signal.raise_signal(signal.SIGTERM)

    async def drain_then_exit() -> None:
        try:
            await rt.drain()
        finally:
            hand_over()

    def on_sigterm() -> None:
        if rt.draining:
            return
        log.info("SIGTERM: draining connections")
        rt.draining = True
        pending.add(loop.create_task(drain_then_exit()))

    try:
        loop.add_signal_handler(signal.SIGTERM, on_sigterm)
    except (RuntimeError, ValueError, NotImplementedError):  # not the main thread
        return lambda: None

    def undo() -> None:
        with contextlib.suppress(Exception):
            loop.remove_signal_handler(signal.SIGTERM)

    return undo


# -- the app ---------------------------------------------------------------------------------


def create_app(settings: Settings | None = None, *, handle_signals: bool = False) -> Starlette:
    """Build the ASGI application for ``settings`` (default: from the environment)."""
    settings = settings or Settings.from_env()

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        embedded: EmbeddedRedis | None = None
        url = settings.redis_url
        if url is None:
            embedded = EmbeddedRedis()
            url = embedded.start()
            log.warning(
                "REDIS_URL is not set: rooms live in a private embedded server at %s "
                "and vanish when it stops",
                url,
            )
        client = aioredis.Redis.from_url(url, decode_responses=False)
        feed_client = aioredis.Redis.from_url(url, decode_responses=False)
        metrics_ = Metrics()
        store = RoomStore(client, settings.redis_prefix)
        kicks: list[Callable[[str], None]] = []

        def on_kick(conn_id: str) -> None:
            for kick in kicks:
                kick(conn_id)

        feed = Feed(
            RoomStore(feed_client, settings.redis_prefix),
            on_redis_error=lambda exc: metrics_.redis_errors.labels("feed").inc(),
            on_kick=on_kick,
        )
        service = GameService(store, settings, metrics_, feed)
        tasks: list[asyncio.Task[None]] = []
        undo_signals: Callable[[], None] = lambda: None  # noqa: E731
        try:
            await client.ping()
            rt = Runtime(
                settings=settings,
                redis=client,
                redis_url=url,
                store=store,
                service=service,
                feed=feed,
                metrics=metrics_,
                embedded=embedded,
            )
            app.state.runtime = rt
            kicks.append(rt.kick)
            await feed.start()
            tasks = [
                asyncio.create_task(_timer_loop(rt), name="turn-timer"),
                asyncio.create_task(_lease_loop(rt), name="spectator-leases"),
            ]
            if handle_signals:
                undo_signals = _install_sigterm(rt)
            yield
        finally:
            undo_signals()
            for task in tasks:
                task.cancel()
            if tasks:
                await asyncio.wait(tasks, timeout=5)
            await feed.stop()
            await feed_client.aclose()
            await client.aclose()
            if embedded is not None:
                embedded.stop()

    return Starlette(routes=routes(), lifespan=lifespan)


def create_app_from_env() -> Starlette:
    """Factory for ``uvicorn --factory server.app:create_app_from_env`` (used by workers)."""
    return create_app(Settings.from_env(), handle_signals=True)

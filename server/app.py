"""The Starlette application: ``create_app(settings)``, its lifespan and its routes.

The lifespan opens Redis (or starts a private embedded server when ``REDIS_URL`` is unset),
builds the :class:`~server.transport.runtime.Runtime` (store, service, upkeep, feed, metrics),
starts the
background loops, and keeps the runtime as ``app.state.runtime``.

On SIGTERM (when ``handle_signals`` is on, as under ``yahtzee serve``) the process stops reading
new commands, lets the commands in flight finish, closes every WebSocket with 1012 (service
restart) so clients reconnect elsewhere, and only then hands the signal to uvicorn.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import logging
import signal
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, Final

import httpx
import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import Receive, Scope, Send

from protocol.transport import (
    ENDPOINT_PATH,
)
from server.domain.matching import Policy
from server.fanout.feed import ClusterNodes, Feed, SingleNode
from server.ops.cancel import cancel_and_wait
from server.ops.collector import (
    CollectorState,
    PacedCollector,
    restore_collector,
    tune_collector,
)
from server.ops.embedded_redis import EmbeddedRedis, start_embedded
from server.ops.metrics import Metrics
from server.players import Players
from server.service.correspondence import Correspondence
from server.service.facade import Rooms
from server.service.quickplay import (
    ArchiveRatings,
    QuickPlay,
    RatingLookup,
    SimulatedRatings,
    Timing,
)
from server.service.rooms import GameService
from server.service.seats import Seats
from server.service.upkeep import Upkeep
from server.service.webhooks import WebhookSender
from server.settings import Settings
from server.solver import SolverRules
from server.storage.cluster_client import cluster_client
from server.storage.connection_options import CLIENT_OPTIONS
from server.storage.correspondence import CorrespondenceStore
from server.storage.quickplay import QuickPlayQueue
from server.storage.redis_store import RedisStore
from server.strategy.computers import Advisor
from server.transport import background, endpoint, http, logs, sandbox_http, tournaments_http
from server.transport import players_http as archive_http
from server.transport.guard import ON_SHUTDOWN
from server.transport.lobby import Lobby
from server.transport.runtime import Runtime

__all__ = ["App", "create_app", "create_app_from_env", "redis_client"]

#: PRIVATE API: this module relies on internals of uvicorn's signal handlers (draining before
#: uvicorn's own SIGTERM handling), checked against these versions; tests/test_private_api.py fails
#: when an installed version differs: re-read this module against the new version, then update the
#: pin.
PRIVATE_API: Final = {"uvicorn": "0.54.0"}

log = logging.getLogger("yahtzee.server")


def redis_client(url: str, settings: Settings) -> Any:
    """A client whose calls wait (bounded) for a pooled connection and time out, so a Redis
    that is down or frozen turns into a typed, retryable error instead of a hang.

    With ``settings.redis_cluster`` it is redis-py's ``RedisCluster`` (``url`` names any node;
    the slots are discovered from it): the same timeouts, at most ``redis_max_connections``
    connections per node (beyond that a call fails at once with ``unavailable``: the cluster
    client has no blocking pool), and a call that meets a failed node is retried after the slot
    map is refreshed, so a promoted replica is found (:mod:`server.storage.cluster_client`: a
    refresh
    no longer fails on the dead node)."""
    if settings.redis_cluster:
        return cluster_client(
            url,
            max_connections=settings.redis_max_connections,
            socket_timeout=settings.redis_timeout_seconds,
            socket_connect_timeout=settings.redis_timeout_seconds,
            retry=Retry(ExponentialBackoff(cap=0.2), 2),
            require_full_coverage=False,
            **CLIENT_OPTIONS,
        )
    pool = aioredis.BlockingConnectionPool.from_url(
        url,
        max_connections=settings.redis_max_connections,
        timeout=settings.redis_timeout_seconds,  # waiting for a free pooled connection
        socket_timeout=settings.redis_timeout_seconds,
        socket_connect_timeout=settings.redis_timeout_seconds,
        retry=Retry(ExponentialBackoff(cap=0.2), 1),
        **CLIENT_OPTIONS,
    )
    return aioredis.Redis.from_pool(pool)  # closing the client closes the pool


# -- WebSocket ----------------------------------------------------------------------------------


class App(Starlette):
    """The Starlette application, with the game's WebSocket endpoint served as raw ASGI.

    A connection's task lives as long as the connection, and every layer between the server
    and the endpoint keeps a coroutine frame (and its closures) on it for that whole time:
    Starlette's middleware, router, route and ``WebSocket`` layers are twelve frames and about
    4 KiB of each idle connection's RSS. The endpoint needs none of what they add (routing one
    fixed path, request objects, exception handlers for HTTP), so :data:`ENDPOINT_PATH` goes to
    :func:`server.transport.endpoint.websocket_endpoint` directly; every other request goes
    through Starlette as usual."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket" and endpoint.route_path(scope) == ENDPOINT_PATH:
            await endpoint.websocket_endpoint(self.state.runtime, scope, receive, send)
        else:
            await super().__call__(scope, receive, send)


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


def routes(sandbox: bool = False) -> list[BaseRoute]:
    """The HTTP routes; the sandbox's (SPEC.md 13.15) only on a ``--sandbox`` server."""
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
        Route("/healthz", http.healthz, methods=["GET"]),
        Route("/readyz", http.readyz, methods=["GET"]),
        Route("/metrics", http.metrics, methods=["GET"]),
        Route("/rooms", http.list_rooms, methods=["GET"]),
        Route("/lobby", http.lobby_stream, methods=["GET"]),
        Route("/rooms/{room_id}", http.get_room, methods=["GET"]),
        Route("/rooms/{room_id}/events", http.room_events, methods=["GET"]),
        Route("/rooms/{room_id}/analysis", http.room_analysis, methods=["GET"]),
        *archive_http.routes(),
        *(sandbox_http.routes() if sandbox else []),
        *tournaments_http.routes(),
        # ENDPOINT_PATH (the WebSocket) is served by App itself, before Starlette's routing
    ]


# -- shutdown -----------------------------------------------------------------------------------


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


# -- the app ------------------------------------------------------------------------------------


def _runtime(
    settings: Settings, url: str, embedded: EmbeddedRedis | None, ratings: RatingLookup
) -> Runtime:
    client = redis_client(url, settings)
    metrics = Metrics()
    store = RedisStore(
        client,
        settings.redis_prefix,
        settings.redis_buckets,
        min_replicas=settings.min_replicas,
        replication_timeout=settings.replication_timeout_seconds,
    )
    kicks: list[Callable[[str], None]] = []

    def on_kick(conn_id: str) -> None:
        for kick in kicks:
            kick(conn_id)

    nodes = ClusterNodes(client, url) if settings.redis_cluster else SingleNode(url)
    feed = Feed(
        nodes,
        store,
        on_redis_error=lambda exc: metrics.redis_errors.labels("feed").inc(),
        on_kick=on_kick,
    )
    # The service tells upkeep when a computer's move is due, and upkeep acts through the
    # service: the name `upkeep` is bound below, before the service first calls `wake`.
    index = CorrespondenceStore(client, settings.redis_prefix)
    correspondence = Correspondence(store, index, webhook=settings.webhook_url is not None)
    service = GameService(
        store,
        settings,
        metrics,
        deliver=feed.publish_local,
        recheck=feed.recheck,
        wake=lambda room_id, at_ms: upkeep.wake_soon(room_id, at_ms),
        correspondence=correspondence,
    )
    seats = Seats(service)
    upkeep = Upkeep(service, seats, Advisor())
    webhooks = (
        WebhookSender(
            index,
            correspondence,
            settings,
            httpx.AsyncClient(timeout=settings.webhook_timeout_seconds, follow_redirects=False),
        )
        if settings.webhook_url is not None
        else None
    )
    quickplay = QuickPlay(
        QuickPlayQueue(client, settings.redis_prefix),
        service,
        seats,
        policy=Policy(computers_after_ms=round(settings.quick_play_computers_after_seconds * 1000)),
        timing=Timing(ttl_ms=round(settings.quick_play_ttl_seconds * 1000)),
        prepare=upkeep.advisor.prepare,
        ratings=ratings,
    )
    rt = Runtime(
        settings=settings,
        redis=client,
        redis_url=url,
        store=store,
        service=service,
        seats=seats,
        upkeep=upkeep,
        rooms=Rooms(service, seats, upkeep),
        feed=feed,
        metrics=metrics,
        quickplay=quickplay,
        embedded=embedded,
        correspondence=correspondence,
        webhooks=webhooks,
    )
    kicks.append(rt.kick_local)
    return rt


def _start_collector(rt: Runtime, tasks: list[asyncio.Task[None]]) -> CollectorState:
    """The garbage collector as the settings say (:mod:`server.ops.collector`): paced by the
    server (its loop added to ``tasks``), or Python's with a larger young threshold."""
    young = rt.settings.gc_young_threshold
    if young is not None:
        return tune_collector(young)
    paced = PacedCollector(growth=rt.settings.gc_growth, on_collect=rt.metrics.collection)
    previous = paced.start()
    tasks.append(background.collector_loop(rt, paced))
    return previous


def _preload_tables(rt: Runtime) -> None:
    """Start loading the strategy tables the settings name (in the background)."""
    names = rt.settings.preload_tables.split(",")
    for name in filter(lambda n: n not in ("", "none"), (n.strip() for n in names)):
        rt.upkeep.advisor.prepare(SolverRules.from_name(name).options())


def create_app(
    settings: Settings | None = None,
    *,
    handle_signals: bool = False,
    ratings: RatingLookup | None = None,
) -> App:
    """Build the ASGI application for ``settings`` (default: from the environment);
    ``ratings`` gives quick play the players' ratings (default: everyone unrated)."""
    settings = settings or Settings.from_env()

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[dict[str, Any]]:
        embedded = start_embedded(log) if settings.redis_url is None else None
        url = embedded.url if embedded is not None else str(settings.redis_url)
        archive_ratings = ArchiveRatings()  # quick play matches on them once the database is up
        lookup: RatingLookup = ratings or archive_ratings
        if ratings is None and settings.quick_play_simulated_ratings:
            lookup = SimulatedRatings()
        rt = _runtime(settings, url, embedded, lookup)
        lobby = Lobby(
            lambda: http.lobby_body(rt),
            on_error=lambda exc: rt.metrics.redis_errors.labels("lobby").inc(),
        )
        tasks: list[asyncio.Task[None]] = []
        players: Players | None = None
        undo_signals: Callable[[], None] = lambda: None  # noqa: E731
        collector: CollectorState | None = None
        try:
            await rt.redis.ping()
            app.state.runtime = rt
            app.state.lobby = lobby
            await rt.feed.start()
            _preload_tables(rt)
            tasks = background.start_loops(rt)
            players = await Players.start(rt)  # the archive and identities (a database)
            if players is not None:
                archive_ratings.connect(players.ratings)
            if handle_signals:
                undo_signals = _install_sigterm(rt)
            collector = _start_collector(rt, tasks)
            # uvicorn calls this when its shutdown begins (server.transport.guard): the lobby
            # streams end then, so uvicorn does not wait for them.
            with logs.installed(rt.metrics):
                yield {ON_SHUTDOWN: lobby.close}
        finally:
            undo_signals()
            await lobby.stop()
            await cancel_and_wait(tasks, 5)
            if collector is not None:  # in-process tests: the next app starts afresh
                # (after its loop has stopped: no collection of its own runs after this)
                restore_collector(collector)
            if players is not None:
                await players.stop()
            await rt.quickplay.stop()
            await rt.upkeep.stop()
            if rt.webhooks is not None:
                await rt.webhooks.stop()
                await rt.webhooks.client.aclose()
            await rt.service.hints.stop()
            await rt.feed.stop()
            await rt.redis.aclose()
            if embedded is not None:
                embedded.stop()

    unavailable = {error: http.storage_unavailable for error in http.UNAVAILABLE_ERRORS}
    return App(routes=routes(settings.sandbox), lifespan=lifespan, exception_handlers=unavailable)


def create_app_from_env() -> App:
    """Factory for ``uvicorn --factory server.app:create_app_from_env`` (used by workers)."""
    return create_app(Settings.from_env(), handle_signals=True)

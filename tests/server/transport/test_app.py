"""The ASGI app in-process, with its lifespan, against the real Redis fixture."""

from __future__ import annotations

import asyncio
import gc

import httpx

from server.app import create_app
from server.settings import Settings


async def test_health_and_ready(redis_url: str, redis_prefix: str) -> None:
    app = create_app(
        Settings(redis_url=redis_url, redis_prefix=redis_prefix, preload_tables="none")
    )
    before = (gc.isenabled(), gc.get_threshold())
    async with app.router.lifespan_context(app):
        # automatic collection is off while the app serves: it paces its own (server.ops.collector)
        assert not gc.isenabled()
        assert "collector" in {task.get_name() for task in asyncio.all_tasks()}
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            assert (await client.get("/healthz")).text == "ok"
            assert (await client.get("/readyz")).json() == {"ready": True}
    assert (gc.isenabled(), gc.get_threshold()) == before  # put back for the next app
    # the lifespan closes every Redis connection it opened: nothing is left for the collector
    # to find (an unclosed one is a ResourceWarning, an error here)
    gc.collect()


async def test_a_young_threshold_keeps_pythons_automatic_collection(
    redis_url: str, redis_prefix: str
) -> None:
    app = create_app(
        Settings(
            redis_url=redis_url,
            redis_prefix=redis_prefix,
            preload_tables="none",
            gc_young_threshold=50_000,
        )
    )
    before = (gc.isenabled(), gc.get_threshold())
    async with app.router.lifespan_context(app):
        assert gc.isenabled()
        assert gc.get_threshold() == (50_000, *before[1][1:])  # the older keep Python's
        assert "collector" not in {task.get_name() for task in asyncio.all_tasks()}
    assert (gc.isenabled(), gc.get_threshold()) == before


async def test_embedded_redis_when_no_url() -> None:
    app = create_app(Settings(redis_url=None, preload_tables="none"))
    async with app.router.lifespan_context(app):
        runtime = app.state.runtime
        assert runtime.embedded is not None
        assert await runtime.redis.ping()
    assert runtime.embedded.port is None  # stopped with the app

"""The ASGI app in-process, with its lifespan, against the real Redis fixture."""

from __future__ import annotations

import gc

import httpx

from server.app import create_app
from server.settings import Settings


async def test_health_and_ready(redis_url: str, redis_prefix: str) -> None:
    app = create_app(
        Settings(redis_url=redis_url, redis_prefix=redis_prefix, preload_tables="none")
    )
    before = gc.get_threshold()
    async with app.router.lifespan_context(app):
        # the young generation is let grow (server.ops.collector), the older keep Python's
        assert gc.get_threshold() == (50_000, *before[1:])
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            assert (await client.get("/healthz")).text == "ok"
            assert (await client.get("/readyz")).json() == {"ready": True}
    assert gc.get_threshold() == before  # put back for the next app of this process
    # the lifespan closes every Redis connection it opened: nothing is left for the collector
    # to find (an unclosed one is a ResourceWarning, an error here)
    gc.collect()


async def test_embedded_redis_when_no_url() -> None:
    app = create_app(Settings(redis_url=None, preload_tables="none"))
    async with app.router.lifespan_context(app):
        runtime = app.state.runtime
        assert runtime.embedded is not None
        assert await runtime.redis.ping()
    assert runtime.embedded.port is None  # stopped with the app

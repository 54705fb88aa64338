"""A seat taken back by a new connection (``rejoin``) while the kick of its old connection
cannot be published (Redis restarting): the new connection is in the room once, and sees every
event once. A server in this test's process (uvicorn on a free port, real WebSockets, the real
Redis fixture), so that the kick's publish can be made to fail alone."""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator

import pytest
from gameplay import best_box
from inprocess import InProcess, serve_in_process
from wsclient import WsClient

from server.settings import Settings
from server.storage.interface import StorageUnavailableError


@pytest.fixture
async def served(redis_url: str, redis_prefix: str) -> AsyncIterator[InProcess]:
    settings = Settings(redis_url=redis_url, redis_prefix=redis_prefix, preload_tables="none")
    async with serve_in_process(settings) as served:
        yield served


async def test_a_kick_that_cannot_be_published_leaves_one_subscription(
    served: InProcess, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = await WsClient(served.ws, "json", "first").connect()
    second = await WsClient(served.ws, "json", "second").connect()
    try:
        created = await first.ok("create_room", seats=1, public=True)
        room = created["result"]["room"]
        await first.join(room, "P")
        await first.ok("start")
        failed: list[str] = []

        async def unpublishable(room_id: str, conn_id: str) -> None:
            failed.append(conn_id)
            raise StorageUnavailableError("ConnectionError: Redis restarting")

        monkeypatch.setattr(served.runtime.store, "publish_kick", unpublishable)
        assert first.token is not None
        rejoin = {"room": room, "token": first.token, "last_seq": first.last_seq()}
        reply = await second.call("rejoin", **rejoin)
        if reply["type"] == "error" and reply["retryable"]:
            reply = await second.call("rejoin", **rejoin)  # as a client does after `unavailable`
        assert reply["type"] == "ack", reply
        assert len(failed) == 1  # the kick was tried, and failed
        assert await first.wait_closed() == 1000  # closed on this process all the same
        for _ in range(3):
            await second.ok("roll")
        await second.wait_for(lambda: sum(e["type"] == "rolled" for e in second.events) >= 3)
        await second.ok("score", box=best_box(second.events[-1]))
        await second.wait_event(lambda e: e["type"] == "game_over" or e["type"] == "turn_changed")
        seen = Counter(e["seq"] for e in second.events)
        assert seen
        assert max(seen.values()) == 1, seen  # every event once
    finally:
        await first.close()
        await second.close()

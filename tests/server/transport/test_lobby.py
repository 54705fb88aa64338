"""The live lobby's fan-out (``server.transport.lobby``) in one event loop: one producer for all
watchers,
the newest list for a slow watcher, keep-alive comments, and streams that end on close. The lists
come from a queue the test fills, so every step waits for a real state, never for time."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

from procs import scaled

from server.transport.lobby import Lobby, event_frame


class Source:
    """The lobby's reader: hands out the lists the test puts, counting the reads."""

    def __init__(self) -> None:
        self.lists: asyncio.Queue[bytes] = asyncio.Queue()
        self.reads = 0

    async def read(self) -> bytes:
        data = await self.lists.get()
        self.reads += 1
        return data


async def next_chunk(stream: AsyncIterator[bytes]) -> bytes:
    async with asyncio.timeout(scaled(5)):
        return await anext(stream)


async def until(predicate: Callable[[], bool]) -> None:
    """Let the producer run until ``predicate`` holds (a poll with a deadline)."""
    async with asyncio.timeout(scaled(5)):
        while not predicate():  # noqa: ASYNC110 - the state is the lobby's, it has no event
            await asyncio.sleep(0)


async def test_one_producer_feeds_every_watcher_and_a_slow_one_gets_the_newest() -> None:
    source = Source()
    lobby = Lobby(source.read, interval=0, keepalive=60)
    watchers = [lobby.add("10.0.0.1") for _ in range(50)]
    streams = [lobby.stream(w) for w in watchers]
    source.lists.put_nowait(b'{"rooms":[]}')
    for stream in streams[1:]:
        assert await next_chunk(stream) == b"retry: 3000\n\n"
        assert await next_chunk(stream) == event_frame(b'{"rooms":[]}')
    assert source.reads == 1  # one read for fifty watchers
    # The first watcher reads nothing while three lists go by: it gets only the newest.
    for data in (b'{"rooms":[1]}', b'{"rooms":[2]}', b'{"rooms":[3]}'):
        source.lists.put_nowait(data)
        await until(lambda d=data: lobby.current == event_frame(d))
    assert await next_chunk(streams[0]) == b"retry: 3000\n\n"
    assert await next_chunk(streams[0]) == event_frame(b'{"rooms":[3]}')
    # A list equal to the last one is not sent again; a watcher arriving now gets it at once.
    source.lists.put_nowait(b'{"rooms":[3]}')
    await until(lambda: source.reads == 5)
    assert all(w.latest in (None, event_frame(b'{"rooms":[3]}')) for w in watchers)
    late = lobby.stream(lobby.add("10.0.0.2"))
    await next_chunk(late)
    assert await next_chunk(late) == event_frame(b'{"rooms":[3]}')
    lobby.close()  # every stream ends, without sending what was pending
    for stream in (*streams, late):
        async with asyncio.timeout(scaled(5)):
            assert [chunk async for chunk in stream] == []
    await lobby.stop()


async def test_keep_alive_comment_after_silence() -> None:
    source = Source()
    lobby = Lobby(source.read, interval=0, keepalive=0.05)
    stream = lobby.stream(lobby.add("a"))
    source.lists.put_nowait(b'{"rooms":[]}')
    await next_chunk(stream)
    assert await next_chunk(stream) == event_frame(b'{"rooms":[]}')
    assert await next_chunk(stream) == b": keep-alive\n\n"  # nothing changed: a comment
    await lobby.stop()


async def test_the_producer_runs_only_while_someone_watches() -> None:
    source = Source()
    lobby = Lobby(source.read, interval=0, keepalive=60)
    watcher = lobby.add("a")
    source.lists.put_nowait(b'{"rooms":[1]}')
    await until(lambda: lobby.current is not None)
    lobby.remove(watcher)
    await until(lambda: lobby.current is None)  # nobody watches: the producer ended
    reads = source.reads
    # A new watcher starts it again and does not get the list from before.
    again = lobby.add("a")
    assert again.latest is None
    source.lists.put_nowait(b'{"rooms":[4]}')
    await until(lambda: again.latest is not None)
    assert (source.reads, again.take()) == (reads + 1, event_frame(b'{"rooms":[4]}'))
    await lobby.stop()


async def test_a_failing_read_keeps_the_last_list_and_is_counted() -> None:
    failures: list[Exception] = []
    calls = 0

    async def read() -> bytes:
        nonlocal calls
        calls += 1
        if calls == 2:
            raise ConnectionError("storage down")
        return b'{"rooms":[]}'

    lobby = Lobby(read, interval=0, keepalive=60, on_error=failures.append)
    watcher = lobby.add("a")
    await until(lambda: calls >= 3)
    assert len(failures) == 1
    assert watcher.take() == event_frame(b'{"rooms":[]}')
    await lobby.stop()

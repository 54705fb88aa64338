"""A lobby stream's ``turns`` events (``server.transport.lobby_turns``) in one event loop: the
list at once, again after a notice of this process's commit, only when it changed, a failed
read kept quiet; and the per-player notices of ``server.service.correspondence``. The lists
come from a queue the test fills, so every step waits for a real state, never for time."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

import msgspec
import pytest
from procs import scaled

from server.service.correspondence import TurnNotices
from server.transport.lobby import Lobby, Watcher, event_frame
from server.transport.lobby_turns import TURNS_EVENT, follow_turns

HOUR = 3600.0


def turns(*rooms: str, now: int = 0) -> dict[str, Any]:
    """A turn list whose turns are ``rooms`` (the body of ``GET /players/{id}/turns``)."""
    mine = [{"room": room, "my_turn": True} for room in rooms]
    return {"player": "p1", "server_time_ms": now, "turns": mine, "games": []}


def frame(body: dict[str, Any]) -> bytes:
    return event_frame(msgspec.json.encode(body), TURNS_EVENT)


class Lists:
    """The stream's reader: hands out the lists (or errors) the test puts, counting the reads."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[dict[str, Any] | Exception] = asyncio.Queue()
        self.reads = 0

    async def read(self) -> dict[str, Any]:
        item = await self.queue.get()
        self.reads += 1
        if isinstance(item, Exception):
            raise item
        return item


async def until(predicate: Callable[[], bool]) -> None:
    """Let the task run until ``predicate`` holds (a poll with a deadline)."""
    async with asyncio.timeout(scaled(5)):
        while not predicate():  # noqa: ASYNC110 - the state is the watcher's, it has no event
            await asyncio.sleep(0)


@contextlib.asynccontextmanager
async def following(
    watcher: Watcher, lists: Lists, wake: asyncio.Event, errors: list[Exception] | None = None
) -> AsyncIterator[asyncio.Task[None]]:
    on_error = errors.append if errors is not None else (lambda exc: None)
    task = asyncio.create_task(follow_turns(watcher, lists.read, wake, HOUR, on_error))
    try:
        yield task
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def test_the_list_at_once_then_after_a_notice_only_when_it_changed() -> None:
    watcher, lists, wake = Watcher("a"), Lists(), asyncio.Event()
    async with following(watcher, lists, wake):
        lists.queue.put_nowait(turns(now=1))
        await until(lambda: watcher.turns is not None)
        assert watcher.take() == frame(turns(now=1))  # at once, as the route answers it
        # A notice with the same games and turns (only the clock moved): nothing is sent.
        wake.set()
        lists.queue.put_nowait(turns(now=2))
        await until(lambda: lists.reads == 2 and not wake.is_set())
        assert watcher.take() is None
        # A notice after the turn became the player's: the new list, read within the hour.
        wake.set()
        lists.queue.put_nowait(turns("r1", now=3))
        await until(lambda: watcher.turns is not None)
        assert watcher.take() == frame(turns("r1", now=3))


async def test_a_failed_read_sends_nothing_is_counted_and_the_next_notice_reads_again() -> None:
    watcher, lists, wake, errors = Watcher("a"), Lists(), asyncio.Event(), []
    async with following(watcher, lists, wake, errors):
        lists.queue.put_nowait(ConnectionError("storage down"))
        await until(lambda: len(errors) == 1)
        assert watcher.take() is None
        wake.set()
        lists.queue.put_nowait(turns("r1"))
        await until(lambda: watcher.turns is not None)
        assert watcher.take() == frame(turns("r1"))


async def test_the_stream_sends_the_rooms_and_the_turns_that_wait() -> None:
    async def rooms() -> bytes:
        return b'{"rooms":[]}'

    lobby = Lobby(rooms, interval=HOUR, keepalive=60)
    watcher = lobby.add("a")
    stream = lobby.stream(watcher)
    assert await anext(stream) == b"retry: 3000\n\n"
    await until(lambda: watcher.latest is not None)
    watcher.offer_turns(frame(turns("r1")))
    watcher.offer_turns(frame(turns("r2")))  # a slow reader gets only the newest list
    async with asyncio.timeout(scaled(5)):
        assert await anext(stream) == event_frame(b'{"rooms":[]}') + frame(turns("r2"))
    await lobby.stop()


def test_notices_wake_the_streams_of_the_players_named_while_they_listen() -> None:
    notices = TurnNotices()
    with (
        notices.listen("ann") as ann,
        notices.listen("ann") as ann_too,
        notices.listen("bob") as bob,
    ):
        assert notices.listening == 3
        notices.notify(["ann", "cy"])
        assert (ann.is_set(), ann_too.is_set(), bob.is_set()) == (True, True, False)
    assert notices.listening == 0  # a closed stream is forgotten
    notices.notify(["ann"])  # nobody listens: nothing to do


@pytest.mark.parametrize("failing", [False, True])
def test_a_listener_is_forgotten_however_its_block_ends(failing: bool) -> None:
    notices = TurnNotices()
    with contextlib.suppress(RuntimeError), notices.listen("ann"):
        if failing:
            raise RuntimeError("stream broke")
    assert notices.listening == 0

"""The lobby list as a process reads it (server/transport/listing.py): public rooms only, no
ghost rooms, and an entry decoded once while it does not change."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any, cast

import pytest

from server.transport import listing
from server.transport.runtime import Runtime


def entry(
    room: str, *, public: bool = True, ghost_at: int | None = None, spectators: int = 0
) -> bytes:
    return json.dumps({
        "room": room, "status": "lobby", "public": public, "players": ["Ann"], "seats": 2,
        "open_seats": 1, "spectators": spectators, "options": {}, "turn_seconds": 0,
        "ghost_at": ghost_at,
    }).encode()  # fmt: skip


class Index:
    def __init__(self) -> None:
        self.entries: list[bytes] = []

    async def index_list(self, now: int, limit: int) -> list[bytes]:
        return self.entries[:limit]


def runtime(index: Index, clock: list[int]) -> Any:
    service = SimpleNamespace(clock=lambda: clock[0], index_writes=0)
    return SimpleNamespace(service=service, store=index, lobby_cache=None, lobby_entries={})


async def test_the_list_has_public_live_rooms_in_index_order_and_decodes_each_entry_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    index, clock = Index(), [10_000]
    rt = runtime(index, clock)
    index.entries = [entry("r1"), entry("r2", public=False), entry("r3", ghost_at=15_000)]
    decoded: list[bytes] = []
    real = listing._decode

    def counting(text: bytes) -> Any:
        decoded.append(text)
        return real(text)

    monkeypatch.setattr(listing, "_decode", counting)
    rooms = await listing.public_rooms(cast(Runtime, rt), 50)
    assert [r.room for r in rooms] == ["r1", "r3"]  # r2 is private
    assert len(decoded) == 3
    # a second later: r3 has become a ghost room (by time alone), r1 changed, nothing new read
    clock[0] = 16_000
    index.entries = [
        entry("r1", spectators=1),
        entry("r2", public=False),
        entry("r3", ghost_at=15_000),
    ]
    rooms = await listing.public_rooms(cast(Runtime, rt), 50)
    assert [(r.room, r.spectators) for r in rooms] == [("r1", 1)]
    assert decoded[3:] == [entry("r1", spectators=1)]  # only the changed entry decoded again
    assert len(rt.lobby_entries) == 3  # the entries of the last read, no more


async def test_the_list_is_read_again_at_most_once_a_second_unless_this_process_wrote() -> None:
    index, clock = Index(), [10_000]
    rt = runtime(index, clock)
    index.entries = [entry("r1")]
    assert [r.room for r in await listing.public_rooms(cast(Runtime, rt), 50)] == ["r1"]
    index.entries = [entry("r2"), entry("r1")]
    clock[0] = 10_500
    assert [r.room for r in await listing.public_rooms(cast(Runtime, rt), 50)] == ["r1"]
    rt.service.index_writes = 1  # this process changed an entry: read at once
    assert [r.room for r in await listing.public_rooms(cast(Runtime, rt), 1)] == ["r2"]

"""Watching live tournament entries with a delay (SPEC.md 13.18, 13.23), on the real Redis and a
real PostgreSQL, without sockets: the test's clock is the service's, so an entry's events are
aged by moving the clock, never by waiting.

What must hold: while open, a watcher sees an event only once it was committed at least the
delay ago (an event younger than that is absent, whoever asks); a commit whose time was not
recorded hides its events until a later recorded commit is old enough (less, never more); a
tournament without a delay refuses the watch while open and shows everything after its end; no
answer carries the entry's invite code or its seat token."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import msgspec
import pytest
from procs import BOTH_BACKENDS, async_client

from server import game
from server.domain import record_format
from server.ops.database_settings import ArchiveSettings
from server.service.identities import Identities
from server.service.outcomes import Cached, Change
from server.service.rooms import GameService
from server.service.seats import Seats
from server.service.tournament_spec import Spec
from server.service.tournaments import Entered, TournamentError, Tournaments
from server.settings import Settings
from server.storage.postgres import Database
from server.storage.redis_store import RedisStore
from server.storage.standings import Standings
from server.storage.tournaments import TournamentRepository

DELAY = 60
"""The tournaments' watch delay (seconds)."""
HOUR_MS = 3_600_000


class Clock:
    """The test's clock (Unix ms), the service's and the tournaments' alike."""

    def __init__(self) -> None:
        self.now = int(time.time() * 1000)

    def __call__(self) -> int:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += int(seconds * 1000)


@dataclass
class Node:
    service: GameService
    tournaments: Tournaments
    identities: Identities
    clock: Clock


@pytest.fixture
async def node(
    redis_url: str, redis_prefix: str, redis_backend: str, database: Database
) -> AsyncIterator[Node]:
    client = async_client(redis_url, redis_backend)
    settings = Settings(redis_url=redis_url, redis_prefix=redis_prefix)
    store = RedisStore(client, redis_prefix)
    clock = Clock()
    service = GameService(store, settings, clock=clock)
    tournaments = Tournaments(
        TournamentRepository(database), Standings(store), service, Seats(service), settings
    )
    service.entries.connect(tournaments.on_commit)  # as the players part does when it starts
    try:
        yield Node(service, tournaments, Identities(database, ArchiveSettings()), clock)
    finally:
        await client.aclose()


async def new_tournament(node: Node, **body: Any) -> str:
    made, _ = await node.tournaments.create({"ends_ms": node.clock() + HOUR_MS, **body}, None)
    return made.id


async def entered(node: Node, tournament_id: str, name: str) -> Entered:
    identity, _ = await node.identities.create_guest(name)
    return await node.tournaments.enter(tournament_id, identity.id, name, None)


async def play(node: Node, entry: Entered, command: game.Command) -> int:
    """Commit ``command`` in the entry's room; the last seq it wrote."""
    room_id = entry.entry.room_id

    def step(cached: Cached) -> Change:
        return Change(*node.service.apply(room_id, cached.record, [command]))

    outcome = await node.service.transact(room_id, step)
    return outcome.seq


async def roll(node: Node, entry: Entered) -> int:
    return await play(node, entry, game.Roll(entry.entry.player_id, ()))


async def score(node: Node, entry: Entered) -> int:
    stored = await node.service.store.load(entry.entry.room_id)
    assert stored is not None
    record = record_format.decode_record(stored.record)
    return await play(
        node, entry, game.Score(entry.entry.player_id, game.best_auto_score(record.game))
    )


async def watched(node: Node, tournament_id: str, entry: Entered, after: int = 0) -> list[int]:
    """The seqs a watcher is shown now (every page), after checking no secret is in them."""
    seqs: list[int] = []
    while True:
        page = await node.tournaments.watch(tournament_id, entry.entry.room_id, None, after, 3)
        text = msgspec.json.encode([msgspec.msgpack.decode(data) for _, data in page.events])
        assert entry.entry.invite.encode() not in text
        assert entry.token.encode() not in text
        seqs.extend(seq for seq, _ in page.events)
        if page.next_after is None:
            return seqs
        after = page.next_after


async def whole_log(node: Node, entry: Entered) -> list[int]:
    return [seq for seq, _ in await node.service.store.read_events(entry.entry.room_id, 0)]


@BOTH_BACKENDS
async def test_a_watcher_sees_an_entrys_events_only_once_older_than_the_delay(
    node: Node,
) -> None:
    tid = await new_tournament(node, watch_delay_seconds=DELAY)
    t = await node.tournaments.get(tid, None)
    assert node.tournaments.view(t)["watch_delay_seconds"] == DELAY
    ann = await entered(node, tid, "Ann")
    seated = (await whole_log(node, ann))[-1]  # her seat taken and the game started
    assert await watched(node, tid, ann) == []  # all of it just committed

    node.clock.advance(30)
    rolled = await roll(node, ann)
    assert rolled > seated
    node.clock.advance(DELAY - 30)  # the seat is DELAY old, the roll only 30 s
    shown = await watched(node, tid, ann)
    assert shown == list(range(1, seated + 1))
    assert rolled not in shown  # the dice of a roll younger than the delay stay hidden

    node.clock.advance(30)
    assert await watched(node, tid, ann) == await whole_log(node, ann)
    assert await watched(node, tid, ann, after=seated) == list(range(seated + 1, rolled + 1))

    board = await node.tournaments.standings_view(tid, None, 10)
    assert [row["room"] for row in board["entries"]] == [ann.entry.room_id]
    assert ann.entry.invite not in str(board)
    assert ann.token not in str(board)


async def test_a_commit_without_its_time_hides_its_events_until_a_later_one_is_old_enough(
    node: Node,
) -> None:
    tid = await new_tournament(node, watch_delay_seconds=DELAY)
    ann = await entered(node, tid, "Ann")
    seated = (await whole_log(node, ann))[-1]
    node.service.entries.disconnect()  # the hook that records the time failed for this roll
    rolled = await roll(node, ann)
    node.service.entries.connect(node.tournaments.on_commit)
    node.clock.advance(DELAY)
    assert await watched(node, tid, ann) == list(range(1, seated + 1))  # less, never more

    node.clock.advance(10)
    scored = await score(node, ann)
    node.clock.advance(DELAY - 1)
    assert rolled not in await watched(node, tid, ann)
    node.clock.advance(1)
    assert (await watched(node, tid, ann))[-1] == scored


async def test_without_a_delay_the_watch_is_refused_while_open_and_everything_shown_after(
    node: Node,
) -> None:
    tid = await new_tournament(node)
    ann = await entered(node, tid, "Ann")
    await roll(node, ann)
    node.clock.advance(DELAY * 10)
    with pytest.raises(TournamentError) as refused:
        await watched(node, tid, ann)
    assert (refused.value.code, refused.value.status) == ("watch_not_allowed", 409)
    board = await node.tournaments.standings_view(tid, None, 10)
    assert all("room" not in row for row in board["entries"])  # nothing to pick while open

    node.clock.advance(HOUR_MS / 1000)  # past the end time
    assert await watched(node, tid, ann) == await whole_log(node, ann)


async def test_the_watch_refuses_an_unknown_tournament_and_a_room_that_is_not_its_entry(
    node: Node,
) -> None:
    tid = await new_tournament(node, watch_delay_seconds=DELAY)
    other = await new_tournament(node, watch_delay_seconds=DELAY)
    bob = await entered(node, other, "Bob")
    cases = [(tid, bob.entry.room_id), (tid, "no-such-room"), ("tNope", bob.entry.room_id)]
    codes = []
    for tournament_id, room_id in cases:
        with pytest.raises(TournamentError) as refused:
            await node.tournaments.watch(tournament_id, room_id, None, 0, 10)
        codes.append((refused.value.code, refused.value.status))
    not_an_entry, unknown = ("room_not_found", 404), ("tournament_not_found", 404)
    assert codes == [not_an_entry, not_an_entry, unknown]


def test_the_watch_delay_of_a_request_its_default_and_its_range() -> None:
    now = int(time.time() * 1000)
    body = {"ends_ms": now + HOUR_MS}
    assert Spec.parse(body, now).watch_delay_seconds is None
    assert Spec.parse(body, now, default_delay=120).watch_delay_seconds == 120
    assert Spec.parse({**body, "watch_delay_seconds": None}, now, 120).watch_delay_seconds is None
    assert Spec.parse({**body, "watch_delay_seconds": 60}, now).watch_delay_seconds == 60
    refusals = []
    for bad in (59, 86_401, "60", True):
        with pytest.raises(TournamentError) as refused:
            Spec.parse({**body, "watch_delay_seconds": bad}, now)
        refusals.append(refused.value.code)
    assert refusals == ["out_of_range", "out_of_range", "invalid_field", "invalid_field"]


def test_the_operators_default_watch_delay_is_checked_like_a_requests() -> None:
    env = "YAHTZEE_TOURNAMENT_WATCH_DELAY_SECONDS"
    assert Settings.from_env({env: "300"}).tournament_watch_delay_seconds == 300
    assert Settings.from_env({}).tournament_watch_delay_seconds is None
    with pytest.raises(ValueError, match="tournament_watch_delay_seconds"):
        Settings.from_env({env: "30"})

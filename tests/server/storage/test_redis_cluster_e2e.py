"""The service on a real Redis Cluster (3 masters, one replica each): rooms on every master,
and a master killed in the middle of games.

Every room's keys and channel share the hash tag ``{room:<id>}``, so a room lives in one slot
and the master owning that slot serves it: these tests compute the slot of each room and ask
the cluster which node owns it.
"""

from __future__ import annotations

import asyncio
import itertools
import random
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from gameplay import assert_gap_free, best_box, next_player, replay, totals_of
from procs import ROOT, ServerProcess, StartServer
from redis.asyncio.cluster import RedisCluster
from redis.crc import key_slot
from wsclient import Msg, WsClient, get_json

from server import game
from server.app import redis_client
from server.ops.embedded_cluster import ClusterNodeProcess, EmbeddedCluster
from server.settings import Settings

ON_CLUSTER = pytest.mark.parametrize("redis_backend", ["cluster"], indirect=True)
#: The tests create rooms until every master serves one: lift the room-creation quota.
MANY_ROOMS = {
    "YAHTZEE_ROOMS_PER_MINUTE": "1000000000",
    "YAHTZEE_ROOMS_PER_MINUTE_PER_ADDRESS": "100000",
}
_ids = itertools.count()


def slot_of(prefix: str, room: str) -> int:
    return key_slot(f"{prefix}{{room:{room}}}:room".encode())


async def rooms_on_every_master(
    cluster: EmbeddedCluster, prefix: str, host: WsClient, seats: int
) -> dict[str, str]:
    """Create rooms until every master owns one; master name -> a room it serves."""
    chosen: dict[str, str] = {}
    masters = {n.name for n in cluster.master_nodes if n.alive}
    for _ in range(200):  # P(a master is still missed after n rooms) = 3 * (2/3)^n
        created = await host.ok("create_room", seats=seats, public=True,
                                options={"first_player": "seat_order"})  # fmt: skip
        room = created["result"]["room"]
        owner = cluster.slot_owner(slot_of(prefix, room)).name
        chosen.setdefault(owner, room)
        if set(chosen) == masters:
            return chosen
    raise AssertionError(f"rooms never reached every master: {chosen}")


@dataclass
class Game:
    """One room: its players (seat order), a spectator, and what the players were told."""

    room: str
    players: list[WsClient]
    watcher: WsClient
    acks: list[tuple[str, Msg]] = field(default_factory=list)
    refusals: list[str] = field(default_factory=list)

    @property
    def unavailable(self) -> int:
        return len(self.refusals)

    @property
    def clients(self) -> list[WsClient]:
        return [*self.players, self.watcher]

    async def command(self, client: WsClient, kind: str, deadline: float, **fields: object) -> Msg:
        """Send ``kind`` until it is acknowledged. The only refusal allowed is ``unavailable``
        (typed and retryable); the retry keeps the command id, so it is applied at most once."""
        cid = f"{client.name}-{kind}-{next(_ids)}"
        while True:
            client.replies.pop(cid, None)
            reply = await client.call(kind, command_id=cid, **fields)
            if reply["type"] == "ack":
                self.acks.append((kind, reply))
                return reply
            assert (reply["code"], reply["retryable"]) == ("unavailable", True), reply
            self.refusals.append(f"{kind}: {reply['message']}")
            assert time.monotonic() < deadline, f"{self.room}: still unavailable"
            await asyncio.sleep(0.1)  # back-off between retries, bounded by the deadline

    async def play(self, turns: int | None, deadline: float) -> Msg | None:
        """Play ``turns`` turns (all when None); returns ``game_over`` if the game ended."""
        by_id = {c.player: c for c in self.players}
        for _ in itertools.count() if turns is None else range(turns):
            await self.watcher.wait_for(
                lambda: any(e["type"] in ("turn_changed", "game_over") for e in self.watcher.events)
            )
            current = next_player(self.watcher.events)
            if current is None:
                return next(e for e in self.watcher.events if e["type"] == "game_over")
            client = by_id[current]
            rolled = await self.command(client, "roll", deadline)
            event = await client.wait_event(lambda e, s=rolled["seq"]: e["seq"] == s)
            assert event["type"] == "rolled"
            scored = await self.command(client, "score", deadline, box=best_box(event))
            await self.watcher.wait_event(lambda e, s=scored["seq"]: e["seq"] >= s)
        return None

    async def check(self, server: ServerProcess, game_over: Msg, seats: int) -> None:
        """Every client's stream is gap-free and equal to the log; every acknowledged command's
        event is in the log; the log replays to the announced totals."""
        for client in self.clients:
            await client.wait_for(lambda c=client: c.last_seq() >= game_over["seq"])
        log = (await get_json(f"{server.http}/rooms/{self.room}/events?limit=1000"))["events"]
        assert_gap_free(log, 0)
        assert log[game_over["seq"] - 1] == game_over  # (a spectator count may follow)
        for client in self.clients:
            start = client.snapshots[0]["seq"] if client.snapshots else 0
            assert_gap_free(client.events, start)
            assert client.events == log[start : start + len(client.events)], client.name
        for kind, ack in self.acks:
            event = log[ack["seq"] - 1]
            wanted = ("rolled",) if kind == "roll" else ("turn_changed", "game_over")
            assert event["type"] in wanted, (kind, ack, event)
        state = replay(log, game.RuleOptions(first_player="seat_order"), seats)
        assert state.phase == game.Phase.FINISHED
        assert totals_of(game_over) == {
            p.player: game.totals(state, p.player).grand for p in self.players if p.player
        }

    async def close(self) -> None:
        for client in self.clients:
            await client.close()


async def start_games(
    rooms: Sequence[str], servers: Sequence[ServerProcess], seats: int
) -> list[Game]:
    """Seat ``seats`` players in each room (alternating processes), a spectator on the other
    process, and start."""
    games = []
    for n, room in enumerate(rooms):
        players = [
            await WsClient(servers[(n + i) % len(servers)].ws, "json", f"g{n}p{i}").connect()
            for i in range(seats)
        ]
        watcher = await WsClient(servers[(n + 1) % len(servers)].ws, "msgpack", f"g{n}w").connect()
        await watcher.ok("spectate", room=room, last_seq=0)
        for i, client in enumerate(players):
            await client.join(room, f"P{n}.{i}")
        await players[0].ok("start")
        games.append(Game(room, players, watcher))
    return games


@ON_CLUSTER
async def test_rooms_on_every_master_play_at_once(
    start_server: StartServer, redis_cluster: EmbeddedCluster, redis_prefix: str
) -> None:
    servers = [start_server(env=MANY_ROOMS), start_server(env=MANY_ROOMS)]
    host = await WsClient(servers[0].ws, "json", "host").connect()
    games: list[Game] = []
    try:
        by_master = await rooms_on_every_master(redis_cluster, redis_prefix, host, 1)
        assert len(by_master) == 3
        games = await start_games(list(by_master.values()), servers, 1)
        deadline = time.monotonic() + 60
        overs = await asyncio.gather(*(g.play(None, deadline) for g in games))
        for g, over in zip(games, overs, strict=True):
            assert over is not None
            assert g.unavailable == 0
            await g.check(servers[0], over, 1)
        # the lobby (bucketed over the masters) lists every room; readiness and metrics answer
        listed = {r["room"] for r in (await get_json(f"{servers[1].http}/rooms"))["rooms"]}
        assert set(by_master.values()) <= listed
        assert (await get_json(f"{servers[1].http}/readyz"))["ready"] is True
    finally:
        await host.close()
        for g in games:
            await g.close()


@pytest.fixture
def failing_cluster() -> Iterator[EmbeddedCluster]:
    """A cluster of this test's own: a master of it is killed."""
    with EmbeddedCluster(node_timeout_ms=1000) as cluster:
        yield cluster


async def test_a_killed_master_fails_over_and_no_acknowledged_event_is_lost(
    failing_cluster: EmbeddedCluster, start_server: StartServer, redis_prefix: str
) -> None:
    cluster = failing_cluster
    env = {"REDIS_URL": cluster.url, "REDIS_CLUSTER": "1", **MANY_ROOMS}
    servers = [start_server(env=env), start_server(env=env)]
    host = await WsClient(servers[0].ws, "json", "host").connect()
    games: list[Game] = []
    try:
        by_master = await rooms_on_every_master(cluster, redis_prefix, host, 2)
        masters = {n.name: n for n in cluster.master_nodes}
        games = await start_games(list(by_master.values()), servers, 2)
        by_room = {g.room: g for g in games}
        deadline = time.monotonic() + 90
        await asyncio.gather(*(g.play(3, deadline) for g in games))

        # kill the master the service was pointed at (REDIS_URL) while every game goes on
        doomed: ClusterNodeProcess = masters[cluster.nodes[0].name]
        hit = by_room[by_master[doomed.name]]
        others = [g for g in games if g is not hit]
        playing = [asyncio.create_task(g.play(None, deadline)) for g in games]
        await hit.watcher.wait_for(lambda: hit.watcher.last_seq() > 0)
        cluster.kill(doomed)
        promoted = await asyncio.to_thread(cluster.wait_promoted, doomed)
        assert promoted in cluster.replicas_of(0)
        overs = await asyncio.gather(*playing)

        assert cluster.slot_owner(slot_of(redis_prefix, hit.room)) is promoted
        assert hit.unavailable > 0  # its commands met the dead master, and were retried
        # The other masters kept serving without a single refusal (redis-py's cluster client
        # used to refuse some of their commands in the failover window: see
        # server/storage/cluster_client.py), and their games finish below with intact logs.
        assert all(g.refusals == [] for g in others), [g.refusals for g in others]
        for g, over in zip(games, overs, strict=True):
            assert over is not None
            await g.check(servers[1], over, 2)
        for server in servers:
            assert "Traceback" not in server.log()
    finally:
        await host.close()
        for g in games:
            await g.close()


def key_on(node: ClusterNodeProcess, name: str) -> str:
    """A key whose slot ``node`` (a master) was given."""
    assert node.slots is not None
    low, high = node.slots
    keys = (f"{name}{i}" for i in itertools.count())
    return next(k for k in keys if low <= key_slot(k.encode()) <= high)


def stop_replication(master: ClusterNodeProcess, replica: ClusterNodeProcess) -> None:
    """Freeze ``replica`` (SIGSTOP) and then stuff the master's replication stream with 32 MB:
    more than the loopback socket buffers hold, so what the master writes next stays in its own
    output buffer, and dies with it, instead of waiting in the kernel for the replica."""
    replica.process.send_signal(signal.SIGSTOP)
    with master.client() as c:
        c.set(key_on(master, "junk"), b"x" * (32 << 20))


async def test_no_acknowledged_event_is_lost_when_a_lagging_replica_is_promoted(
    failing_cluster: EmbeddedCluster, start_server: StartServer, redis_prefix: str
) -> None:
    """The master's replica stops taking the replication stream; games go on; the master dies
    and the replica, missing the master's last writes, is promoted. Commands are acked only
    after a replica confirmed them (WAIT), so every acked command is in the promoted log, and
    no client saw an event the promoted log lacks (events are published once replicated).
    With ``YAHTZEE_MIN_REPLICAS=0`` (no WAIT) this test fails: acked rolls are lost."""
    cluster = failing_cluster
    env = {"REDIS_URL": cluster.url, "REDIS_CLUSTER": "1", "YAHTZEE_MIN_REPLICAS": "1",
           "YAHTZEE_REPLICATION_TIMEOUT": "0.3", **MANY_ROOMS}  # fmt: skip
    servers = [start_server(env=env), start_server(env=env)]
    host = await WsClient(servers[0].ws, "json", "host").connect()
    games: list[Game] = []
    replica: ClusterNodeProcess | None = None
    try:
        by_master = await rooms_on_every_master(cluster, redis_prefix, host, 2)
        master = cluster.master_nodes[0]
        (replica,) = cluster.replicas_of(0)
        games = await start_games(list(by_master.values()), servers, 2)
        hit = next(g for g in games if g.room == by_master[master.name])
        others = [g for g in games if g is not hit]
        deadline = time.monotonic() + 120
        await asyncio.gather(*(g.play(2, deadline) for g in games))
        playing = [asyncio.create_task(g.play(None, deadline)) for g in games]

        await asyncio.to_thread(stop_replication, master, replica)
        before = len(hit.acks) + hit.unavailable
        while len(hit.acks) + hit.unavailable < before + 3:  # commands met the stalled stream
            assert time.monotonic() < deadline
            await asyncio.sleep(0.05)  # polling interval, bounded by the deadline
        assert hit.unavailable > 0  # not replicated in time: refused, not acked
        cluster.kill(master)
        replica.process.send_signal(signal.SIGCONT)
        promoted = await asyncio.to_thread(cluster.wait_promoted, master)
        assert promoted is replica
        # One replica is required: the room waits for the old master to come back as the new
        # master's replica (its commands are refused with `unavailable` meanwhile).
        await asyncio.to_thread(cluster.restart, master)
        overs = await asyncio.gather(*playing)

        for g, over in zip(games, overs, strict=True):
            assert over is not None
            await g.check(servers[1], over, 2)  # every acked command's event is in the log
        assert all(g.refusals == [] for g in others), [g.refusals for g in others]
        for server in servers:
            assert "Traceback" not in server.log()
    finally:
        if replica is not None and replica.alive:
            replica.process.send_signal(signal.SIGCONT)
        await host.close()
        for g in games:
            await g.close()


async def test_redis_cluster_selects_the_cluster_client(redis_cluster: EmbeddedCluster) -> None:
    single = redis_client("redis://127.0.0.1:1/0", Settings())
    assert not isinstance(single, RedisCluster)
    await single.aclose()
    settings = Settings(redis_url=redis_cluster.url, redis_cluster=True, redis_max_connections=7)
    client = redis_client(redis_cluster.url, settings)
    try:
        assert isinstance(client, RedisCluster)
        assert await client.ping()
        assert {n.name for n in client.get_primaries()} == {
            n.name for n in redis_cluster.master_nodes
        }
        assert all(n.max_connections == 7 for n in client.get_nodes())
    finally:
        await client.aclose()


def free_port_pair() -> int:
    """Two consecutive free ports (the demo numbers its servers from the first), below the
    kernel's ephemeral range: the cluster nodes the demo starts first bind ephemeral ports,
    which would otherwise often be the very next ones."""
    rng = random.Random()
    for _ in range(200):
        port = rng.randrange(20_000, 32_000)
        try:
            for candidate in (port, port + 1):
                with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
                    sock.bind(("127.0.0.1", candidate))
        except OSError:
            continue
        return port
    raise AssertionError("no two consecutive free ports")


def test_the_cluster_demo_starts_a_cluster_and_servers(tmp_path: Path) -> None:
    """``python3 .ci/dev.py cluster`` runs this module: a cluster, N servers, URLs printed;
    SIGTERM stops everything."""
    port = free_port_pair()
    out = tmp_path / "demo.log"
    with out.open("wb") as log:
        demo = subprocess.Popen(
            [sys.executable, "-m", "server.ops.cluster_demo", "--servers", "2",
             "--port", str(port)],
            cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while out.read_text().count("Yahtzee server") < 2:
            assert demo.poll() is None, out.read_text()
            assert time.monotonic() < deadline, out.read_text()
            time.sleep(0.1)  # polling interval, bounded by the deadline
        text = out.read_text()
        assert text.count("  master 127.0.0.1:") == 3
        for p in (port, port + 1):
            assert f"http://127.0.0.1:{p}" in text
            with urllib.request.urlopen(f"http://127.0.0.1:{p}/readyz", timeout=5) as r:
                assert r.status == 200
        masters = [int(line.split(":")[1].split()[0]) for line in text.splitlines()
                   if line.startswith("  master ")]  # fmt: skip
    finally:
        demo.send_signal(signal.SIGTERM)
        assert demo.wait(timeout=30) == 0
    for master in masters:  # the cluster is gone with it
        with (
            pytest.raises(ConnectionRefusedError),
            socket.create_connection(("127.0.0.1", master), timeout=1),
        ):
            pass

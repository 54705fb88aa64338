"""Minimal reproductions of the server bugs the chaos soak (``soak.py``) found; each prints what
it observed and exits 1 while the bug is there, 0 once it is fixed (all three are fixed; the
suite's regression tests are ``test_unknown_outcome_e2e.py``). Not part of the test suite.

    .venv/bin/python tests/faults/soak_repros.py http-500          # about 15 s
    .venv/bin/python tests/faults/soak_repros.py computer-stall    # about 45 s
    .venv/bin/python tests/faults/soak_repros.py double-subscribe  # about 15 s

- ``http-500``: ``GET /rooms/{id}/events``, ``GET /rooms/{id}`` and ``GET /rooms`` answer 500
  (and log a traceback) while Redis is frozen or down, instead of 503 ``unavailable``.
- ``computer-stall``: a person's ``score`` that hands the turn to a computer meets a Redis freeze
  (the command is answered ``unavailable``, runs when Redis wakes, and its retry gets the cached
  result): the computer never moves.
- ``double-subscribe``: a ``spectate`` answered ``unavailable`` after it had subscribed the
  connection, then retried: the connection gets two snapshots and every later event twice.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
for _path in (HERE, ROOT / "tests", ROOT):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

import httpx  # noqa: E402
import websockets  # noqa: E402
from faultkit import FaultClient, RedisProcess, Stats  # noqa: E402
from procs import ServerProcess, free_port  # noqa: E402
from websockets.typing import Subprotocol  # noqa: E402

from clients.strategy import choose_box  # noqa: E402
from protocol import Phase  # noqa: E402

JSON = [Subprotocol("yahtzee.v1.json")]


def start(directory: Path) -> tuple[RedisProcess, ServerProcess]:
    redis_process = RedisProcess(directory / "redis")
    redis_process.start()
    env = {
        **os.environ,
        "REDIS_URL": redis_process.url,
        "PYTHONPATH": str(ROOT),
        "YAHTZEE_LOG_LEVEL": "warning",
        "YAHTZEE_ABSENT_TURN_SECONDS": "0",
    }
    server = ServerProcess(port=free_port(), env=env, log_path=directory / "server.log")
    server.start()
    return redis_process, server


async def http_500(redis_process: RedisProcess, server: ServerProcess) -> bool:
    client = FaultClient([server.ws], Stats(), "c")
    await client.connect()
    room = (await client.create_room(seats=1)).room
    await client.close()
    statuses = []
    redis_process.signal(signal.SIGSTOP)
    try:
        for path in (f"/rooms/{room}/events", f"/rooms/{room}", "/rooms"):
            async with httpx.AsyncClient(timeout=10) as http:
                reply = await http.get(server.http + path)
            print(f"Redis frozen: GET {path} -> {reply.status_code} {reply.text[:60]!r}")
            statuses.append(reply.status_code)
    finally:
        redis_process.signal(signal.SIGCONT)
    print(f"tracebacks in the server log: {server.log_path.read_text().count('Traceback')}")
    return all(s == 503 for s in statuses)


async def computer_stall(redis_process: RedisProcess, server: ServerProcess) -> bool:
    stats = Stats()
    person = FaultClient([server.ws], stats, "p")
    await person.connect()
    created = await person.create_room(
        seats=2, computers=["easy"], first_player="seat_order", computer_delay_ms=100
    )
    await person.join(created.room, "P0")
    await person.start()
    me = person.player
    await person.wait_for(lambda m: m.current_player == me and m.phase is Phase.AWAITING_ROLL)
    await person.roll()
    assert person.model is not None
    seq = person.model.seq
    redis_process.signal(signal.SIGSTOP)
    score = asyncio.create_task(person.score(choose_box(person.model.preview)))
    await asyncio.sleep(3)  # the freeze
    redis_process.signal(signal.SIGCONT)
    await score
    print(f"score acked after a 3 s freeze; errors on the way: {dict(stats.errors)}")
    try:
        async with asyncio.timeout(30):
            await person.wait_for(lambda m: m.current_player == me and m.seq > seq + 2)
        print("the computer played its turn")
        return True
    except TimeoutError:
        m = person.model
        print(f"STALL: 30 s on, the computer ({m.current_player}) has not moved; seq {m.seq}")
        return False
    finally:
        await person.close()


async def double_subscribe(redis_process: RedisProcess, server: ServerProcess) -> bool:
    host = FaultClient([server.ws], Stats(), "host")
    await host.connect()
    room = (await host.create_room(seats=1, first_player="seat_order")).room
    await host.join(room, "P0")
    admin = redis_process.client()
    try:
        async with websockets.connect(server.ws, subprotocols=JSON) as ws:
            await ws.recv()  # welcome
            admin.execute_command("CLIENT", "PAUSE", "2500", "WRITE")  # reads pass, writes wait
            await ws.send(json.dumps({"type": "spectate", "id": "s1", "room": room}))
            while True:
                reply = json.loads(await asyncio.wait_for(ws.recv(), 15))
                print(f"first spectate <- {reply['type']} {reply.get('code', '')}")
                if reply.get("id") == "s1":
                    break
            await asyncio.sleep(3)  # the pause is over: the retry, with the same id
            await ws.send(json.dumps({"type": "spectate", "id": "s1", "room": room}))
            await host.start()
            await host.roll()
            seen: Counter[tuple[str, int]] = Counter()
            deadline = time.monotonic() + 2
            while time.monotonic() < deadline:
                try:
                    message = json.loads(await asyncio.wait_for(ws.recv(), 0.5))
                except TimeoutError:
                    continue
                if message["type"] not in ("ack", "error", "pong"):
                    seen[(message["type"], message["seq"])] += 1
            print(f"after the retry, (type, seq) -> times received: {dict(seen)}")
            return all(n == 1 for n in seen.values())
    finally:
        admin.close()
        await host.close()


CASES = {
    "http-500": http_500,
    "computer-stall": computer_stall,
    "double-subscribe": double_subscribe,
}


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0] not in CASES:
        print(__doc__)
        return 2
    with tempfile.TemporaryDirectory(prefix="soak-repro-") as tmp:
        redis_process, server = start(Path(tmp))
        try:
            fixed = asyncio.run(CASES[argv[0]](redis_process, server))
        finally:
            server.kill()
            redis_process.stop()
    print("fixed" if fixed else "BUG REPRODUCED")
    return 0 if fixed else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""More load-generator processes for the ramps (``yahtzee bench --ccu ... --drivers N``).

One asyncio process drives about 8,000 users at human pace per core it gets; beyond that the
generator, not the server, would set the figures. With ``--drivers N`` the bench starts N - 1
child processes (``python -m clients.bench.drivers``) and deals each step's rooms to itself and
to them in turn. A child speaks one JSON object a line on its stdin / stdout:

- ``{"op": "init", "ports": [...], "options": {...}, "index": k}`` -> ``{"ok": true}``
- ``{"op": "grow", "shapes": [[people, computers, spectators], ...]}`` -> ``{"ok": true}``
  (the rooms are open and playing)
- ``{"op": "measure", "seconds": s}`` -> a :class:`~clients.bench.crowdrun.Window` as JSON
  (the parent measures the server over the same seconds and merges every window)
- ``{"op": "close"}`` -> ``{"violations": [...], "errors": [...]}``, then the child exits.

A child that fails answers ``{"error": "..."}``; the parent raises it. The lobby streams stay in
the parent.
"""

from __future__ import annotations

import asyncio
import json
import random
import sys
from typing import Any

from clients.bench.crowd import MixShape
from clients.bench.crowdrun import Crowd, CrowdOptions, Window, client_window, settle_collector
from clients.bench.pacing import run_generator

__all__ = ["RemoteDriver", "main"]

INDEX_STRIDE = 10_000_000  # room labels of child k start at k * INDEX_STRIDE (disjoint)
LINE_LIMIT = 2**26  # a window's histograms fit well within a line of this size


class RemoteDriver:
    """The parent's handle on one child generator process."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    @classmethod
    async def start(cls, ports: list[int], opts: CrowdOptions, index: int) -> RemoteDriver:
        """Start child ``index`` (1, 2, ...) and give it the servers and the rooms' options."""
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "clients.bench.drivers",
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, limit=LINE_LIMIT,
        )  # fmt: skip
        driver = cls(process)
        await driver._call({"op": "init", "ports": ports, "options": opts.to_json(),
                            "index": index})  # fmt: skip
        return driver

    async def _call(self, message: dict[str, Any]) -> dict[str, Any]:
        stdin, stdout = self.process.stdin, self.process.stdout
        assert stdin is not None
        assert stdout is not None
        stdin.write(json.dumps(message).encode() + b"\n")
        await stdin.drain()
        line = await stdout.readline()
        if not line:
            raise RuntimeError(f"generator process exited (code {await self.process.wait()})")
        reply: dict[str, Any] = json.loads(line)
        if "error" in reply:
            raise RuntimeError(f"generator process: {reply['error']}")
        return reply

    async def grow(self, shapes: list[MixShape]) -> None:
        """Open these rooms in the child (they play from then on)."""
        rows = [[s.people, s.computers, s.spectators] for s in shapes]
        await self._call({"op": "grow", "shapes": rows})

    async def measure(self, seconds: float) -> Window:
        """What the child's connections saw over the next ``seconds``."""
        return Window.from_json(await self._call({"op": "measure", "seconds": seconds}))

    async def close(self) -> tuple[list[str], list[str]]:
        """Stop the child's rooms; (stream violations, errors)."""
        try:
            reply = await self._call({"op": "close"})
        finally:
            if self.process.stdin is not None:
                self.process.stdin.close()
            await self.process.wait()
        return list(reply["violations"]), list(reply["errors"])


class _Child:
    """The child's side: one :class:`~clients.bench.crowdrun.Crowd` run on command."""

    def __init__(self) -> None:
        self.crowd: Crowd | None = None

    async def handle(self, message: dict[str, Any]) -> dict[str, Any]:
        op = message["op"]
        if op == "init":
            opts = CrowdOptions.from_json(message["options"])
            index = int(message["index"])
            rng = random.Random(opts.seed + index)
            self.crowd = Crowd(list(message["ports"]), opts, rng, index * INDEX_STRIDE)
            return {"ok": True}
        crowd = self.crowd
        if crowd is None:
            return {"error": "init first"}
        if op == "grow":
            await crowd.add_rooms([MixShape(*row) for row in message["shapes"]])
            settle_collector()
            return {"ok": True}
        if op == "measure":
            return (await client_window(crowd, float(message["seconds"]))).to_json()
        if op == "close":
            violations, errors = await crowd.close()
            return {"violations": violations[:100], "errors": errors[:20]}
        return {"error": f"unknown op {op!r}"}


async def _serve() -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=LINE_LIMIT)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    child = _Child()
    while line := await reader.readline():
        message = json.loads(line)
        try:
            reply = await child.handle(message)
        except Exception as exc:  # reported to the parent, which fails the run
            reply = {"error": f"{type(exc).__name__}: {exc}"}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
        if message.get("op") == "close":
            return


def main() -> None:
    """Entry point of a child generator process."""
    import logging

    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    logging.getLogger("yahtzee.client").setLevel(logging.ERROR)
    run_generator(_serve())


if __name__ == "__main__":
    main()

"""Giving the C heap's free pages back (``server.ops.memory``): in a process of its own whose
heap is fragmented the way a long-lived server's is, and in a real server's loop."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import httpx
from procs import ROOT, StartServer, scaled, until

from server.ops.memory import trim_available

_FRAGMENTED = textwrap.dedent(
    """
    import random
    from server.ops.memory import release_free_memory

    def rss_kib():
        for line in open("/proc/self/status"):
            if line.startswith("VmRSS"):
                return int(line.split()[1])

    random.seed(7)
    kept, freed = [], []
    for i in range(20_000):  # about 300 MiB allocated, one block in 8 kept between the others
        block = bytearray(random.randint(1_000, 30_000))
        (kept if i % 8 == 0 else freed).append(block)
    freed.clear()
    before = rss_kib()
    seconds = release_free_memory()
    print(before, rss_kib(), seconds)
    """
)


def test_the_free_pages_between_live_blocks_go_back_to_the_system() -> None:
    assert trim_available(), "glibc's malloc_trim: the Linux machines this runs on have it"
    out = subprocess.run(
        [sys.executable, "-c", _FRAGMENTED], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    before, after, seconds = int(out[0]), int(out[1]), float(out[2])
    # what was freed (7/8 of the heap) stayed resident until the trim gave it back
    assert before - after > 150 * 1024, (before, after)
    assert seconds > 0


async def test_a_server_trims_its_heap_every_period(start_server: StartServer) -> None:
    server = start_server({"YAHTZEE_MALLOC_TRIM_SECONDS": "0.05"})
    off = start_server({"YAHTZEE_MALLOC_TRIM_SECONDS": "0"})

    async def trimmed(url: str) -> float:
        async with httpx.AsyncClient() as http:
            text = (await http.get(f"{url}/metrics")).text
        line = next(x for x in text.splitlines() if x.startswith("yahtzee_heap_trim_seconds_total"))
        return float(line.split()[1])

    async def has_trimmed() -> bool:
        return await trimmed(server.http) > 0

    await until(has_trimmed, scaled(10.0), "a heap trim counted in /metrics")
    assert await trimmed(off.http) == 0.0

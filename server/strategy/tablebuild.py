"""A strategy table built in a child process at a lower priority than the games.

A build is 10-60 s of pure Python and numpy. In a thread of the server it held the
interpreter's lock for most of that time: every connection of the process waited behind it
(a room created with a new rule set and one ``hint`` were enough to make every game of the
process slow). Here the build runs as ``python -m server.strategy.tablebuild RULES CACHE_DIR`` at a
lower priority (below); the server's thread only waits for it and then maps the file the child
wrote (the cache writes atomically, so a reader never sees half a table). The child logs its
progress on the server's standard error and stops when the server process is gone.

The priority: ``nice`` 10 and, on Linux, the ``SCHED_IDLE`` policy. Niceness alone did not
keep the build off the games: with the kernel's autogroup scheduling (the default on desktop
and many server kernels) niceness only ranks the tasks of one session against each other, and a
build started during the live fuzz test took about half a core from a saturated 2-core machine
(honest players' median round trip 4 x). ``SCHED_IDLE`` runs the build when no other task wants
the CPU, so on a machine that is never idle a build waits; a ``hint`` answers ``unavailable``
(retryable) meanwhile.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from server.solver import SolverRules, table_for
from server.solver.cache import default_cache_dir

__all__ = ["build_in_child", "main"]

log = logging.getLogger("yahtzee.tablebuild")

NICENESS = 10
"""How much lower than the server the build runs (``nice``): the games come first."""


def build_in_child(rules: SolverRules, cache_dir: Path | None) -> None:
    """Build ``rules``' table into the cache in a child process; return when it is there
    (``RuntimeError`` if the child failed)."""
    directory = cache_dir or default_cache_dir()
    command = [sys.executable, "-m", "server.strategy.tablebuild", rules.name, str(directory)]
    child = subprocess.Popen(command, stdin=subprocess.DEVNULL)
    code = child.wait()
    if code != 0:
        raise RuntimeError(f"building the {rules.name} strategy table failed (exit code {code})")


def lower_priority() -> None:
    """Run this process after everything else: ``nice`` and, where there is one, the idle
    scheduling policy (any process may lower its own priority)."""
    if hasattr(os, "nice"):
        os.nice(NICENESS)
    if hasattr(os, "sched_setscheduler") and hasattr(os, "SCHED_IDLE"):
        try:
            os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
        except OSError as exc:  # a sandbox that forbids it: niceness is still there
            log.warning("the table build keeps the normal scheduling policy: %s", exc)


def _stop_with_parent(parent: int) -> None:
    """Exit when the server that started this build is gone (this process was re-parented)."""
    while os.getppid() == parent:
        time.sleep(1.0)  # a watchdog's poll, not synchronisation
    os._exit(1)


def main(argv: list[str] | None = None) -> int:
    """``python -m server.strategy.tablebuild RULES CACHE_DIR``."""
    name, directory = argv if argv is not None else sys.argv[1:3]
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    # the watchdog first: at the idle priority on a busy machine this process may wait long
    # for each slice of CPU, and it must still notice that its server is gone
    threading.Thread(target=_stop_with_parent, args=(os.getppid(),), daemon=True).start()
    lower_priority()
    rules = SolverRules.from_name(name)
    shown = [-1]

    def progress(count: int, total: int) -> None:
        percent = 100 * count // max(total, 1)
        if percent // 10 > shown[0]:
            shown[0] = percent // 10
            log.info("building the %s strategy table: %d%%", rules.name, percent)

    table_for(rules, Path(directory), progress=progress)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""A strategy table built in a child process at a lower priority than the games.

A build is 10-60 s of pure Python and numpy. In a thread of the server it held the
interpreter's lock for most of that time: every connection of the process waited behind it
(a room created with a new rule set and one ``hint`` were enough to make every game of the
process slow). Here the build runs as ``python -m server.tablebuild RULES CACHE_DIR`` under
``nice``; the server's thread only waits for it and then maps the file the child wrote (the
cache writes atomically, so a reader never sees half a table). The child logs its progress on
the server's standard error and stops when the server process is gone.
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
    command = [sys.executable, "-m", "server.tablebuild", rules.name, str(directory)]
    child = subprocess.Popen(command, stdin=subprocess.DEVNULL)
    code = child.wait()
    if code != 0:
        raise RuntimeError(f"building the {rules.name} strategy table failed (exit code {code})")


def _stop_with_parent(parent: int) -> None:
    """Exit when the server that started this build is gone (this process was re-parented)."""
    while os.getppid() == parent:
        time.sleep(1.0)  # a watchdog's poll, not synchronisation
    os._exit(1)


def main(argv: list[str] | None = None) -> int:
    """``python -m server.tablebuild RULES CACHE_DIR``."""
    name, directory = argv if argv is not None else sys.argv[1:3]
    if hasattr(os, "nice"):
        os.nice(NICENESS)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    threading.Thread(target=_stop_with_parent, args=(os.getppid(),), daemon=True).start()
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

"""Giving the C heap's free pages back to the system (glibc's ``malloc_trim``).

glibc keeps the pages a process frees inside its heap: the heap's top cannot shrink past a live
block, so what a burst of work freed below it stays resident. ``malloc_trim(0)`` gives every
free page back (``madvise``), wherever it lies. In a chaos soak one trim of a process that had
run for half an hour under tracemalloc gave back 29 MiB of its 508 MiB; a trim a minute costs
about 0.2 ms. It was not the cure of the slow growth a soak measured (it grew as much on
jemalloc): that was memory the process kept, the turn plans of the weaker computers' tables
(heaptrack; now one budget for all tables, :data:`server.solver.policy.MEMO_PLANS`).
Elsewhere than glibc this does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import time
from collections.abc import Callable

__all__ = ["release_free_memory", "trim_available"]


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        trim = ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):  # not glibc (musl, macOS): nothing to trim
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


def trim_available() -> bool:
    """Whether this C library can give free heap pages back (glibc)."""
    return _malloc_trim() is not None


def release_free_memory() -> float:
    """Give the heap's free pages back to the system; the seconds it took (0 if it cannot)."""
    trim = _malloc_trim()
    if trim is None:
        return 0.0
    started = time.perf_counter()
    trim(0)
    return time.perf_counter() - started

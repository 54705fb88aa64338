"""Giving the C heap's free pages back to the system (glibc's ``malloc_trim``).

A long-lived server process frees memory in the middle of its heap that glibc keeps: the
heap's top cannot shrink past a live block, and blocks freed around live ones (turn plans kept
in the solver's memo, say, between the buffers of frames and replies) stay resident. In the
chaos soak the process that lived the whole hour grew about 300 KiB a minute this way while
the Python objects it held (``tracemalloc``) stayed flat; ``malloc_trim(0)`` gives such pages
back (``madvise``), whatever their place in the heap. Elsewhere than glibc it does nothing.
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

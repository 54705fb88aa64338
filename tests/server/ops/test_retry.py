"""The one retry pause and the one bounded cache of the server (``server.ops.retry``)."""

from __future__ import annotations

from server.ops.retry import LRU, RetryPause


def test_pauses_grow_to_the_cap_and_start_again_after_a_success() -> None:
    pause = RetryPause(base=0.01, cap=0.05)
    assert [pause.next_pause() for _ in range(5)] == [0.02, 0.04, 0.05, 0.05, 0.05]
    pause.reset()
    assert pause.next_pause() == 0.02


def test_the_least_recently_used_entry_goes_first() -> None:
    cache: LRU[str, int] = LRU(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.touch("a") == 1  # "b" is now the oldest
    cache.put("c", 3)
    assert list(cache) == ["a", "c"]
    assert cache.touch("b") is None

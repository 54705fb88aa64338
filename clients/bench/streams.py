"""What every run checks and times on the client side, the same way for the game and the bare
server: HDR latency histograms, and a per-room check of every connection's stream.

:class:`RoomStreams` sees each frame each connection of one room receives. It verifies, as
``yahtzee load`` does, that every connection's seqs are consecutive (no gap, no duplicate) and that
all connections got the very same payload for a seq; and it times each measured command to the
moment its last event reached the *last* connection of the room. A command whose events never
reach every connection is a violation too: no speed may come from skipped work.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["LatencyHistogram", "RoomStreams"]

# An HDR (high dynamic range) histogram in the manner of HdrHistogram, kept here because the
# PyPI package ships no wheels for most of the platforms the project supports: values in
# microseconds are counted exactly below 2**_BITS and, above, in buckets of the top _BITS
# significant bits: a relative error below 1 / 2**(_BITS - 1), 0.1 % (3 significant digits), at
# any magnitude, in a few thousand buckets at most.
_BITS = 11
_EXACT = 1 << _BITS


def _bucket(micros: int) -> tuple[int, int]:
    """(shift, top bits) of a value: it lies in [top << shift, (top + 1) << shift)."""
    shift = max(0, micros.bit_length() - _BITS)
    return shift, micros >> shift


class LatencyHistogram:
    """Latencies in seconds, counted in microseconds with 3 significant digits (HDR style)."""

    def __init__(self) -> None:
        self.counts: Counter[tuple[int, int]] = Counter()
        self.max_us = 0

    def record(self, seconds: float) -> None:
        micros = max(0, round(seconds * 1e6))
        self.counts[_bucket(micros)] += 1
        self.max_us = max(self.max_us, micros)

    def add(self, other: LatencyHistogram) -> None:
        self.counts.update(other.counts)
        self.max_us = max(self.max_us, other.max_us)

    @property
    def count(self) -> int:
        return sum(self.counts.values())

    def to_json(self) -> dict[str, Any]:
        """The counts as plain data (another process's histogram is merged from it)."""
        return {"max_us": self.max_us, "counts": [[s, t, n] for (s, t), n in self.counts.items()]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LatencyHistogram:
        hist = cls()
        hist.max_us = int(data["max_us"])
        for shift, top, n in data["counts"]:
            hist.counts[(int(shift), int(top))] += int(n)
        return hist

    def value_at(self, percentile: float) -> int:
        """The highest value (microseconds) equivalent to the recorded one at ``percentile``:
        at least that share of the values are at or below it."""
        rank = max(1, math.ceil(percentile / 100 * self.count))
        seen = 0
        for (shift, top), n in sorted(self.counts.items(), key=lambda kv: kv[0][1] << kv[0][0]):
            seen += n
            if seen >= rank:
                return min(((top + 1) << shift) - 1, self.max_us)
        return self.max_us

    def summary_ms(self) -> dict[str, float]:
        """p50, p99, p99.9 and max in milliseconds (zeros when empty)."""
        if not self.counts:
            return {"p50": 0.0, "p99": 0.0, "p99.9": 0.0, "max": 0.0}
        return {
            "p50": self.value_at(50.0) / 1000,
            "p99": self.value_at(99.0) / 1000,
            "p99.9": self.value_at(99.9) / 1000,
            "max": self.max_us / 1000,
        }


@dataclass
class RoomStreams:
    """Every connection's stream of one room. ``members``: connections that must get each event;
    ``on_delivered(seconds)`` gets each measured command's time to its last delivery."""

    room: str
    members: int
    on_delivered: Callable[[float], None]
    violations: list[str] = field(default_factory=list)
    _last: dict[str, int] = field(default_factory=dict)  # connection -> last seq seen
    _payload: dict[int, object] = field(default_factory=dict)  # seq -> first payload seen
    _count: dict[int, int] = field(default_factory=dict)  # seq -> connections that got it
    _done: dict[int, float] = field(default_factory=dict)  # seq -> when the last one got it
    _expected: dict[int, float] = field(default_factory=dict)  # seq -> intended send time

    def start(self, connection: str, seq: int) -> None:
        """The connection entered the room at ``seq`` (a snapshot): events follow from seq + 1."""
        if connection in self._last:
            self.violations.append(f"{self.room}/{connection}: resynchronised at seq {seq}")
        self._last[connection] = seq

    def arrive(self, connection: str, seq: int, payload: object, now: float) -> None:
        """``connection`` received the event ``seq`` with ``payload`` at ``now``."""
        last = self._last.get(connection)
        if last is not None and seq != last + 1:
            kind = "duplicate" if seq <= last else "gap"
            self.violations.append(f"{self.room}/{connection}: {kind}: seq {seq} after {last}")
        self._last[connection] = seq if last is None else max(last, seq)
        first = self._payload.setdefault(seq, payload)
        if first != payload:
            self.violations.append(f"{self.room}: seq {seq} differs at {connection}")
        count = self._count.get(seq, 0) + 1
        self._count[seq] = count
        if count >= self.members:
            # Everyone has it: forget the payload, keep only the time.
            del self._payload[seq], self._count[seq]
            self._done[seq] = now
            self._match(seq)

    def expect(self, seq: int, intended: float) -> None:
        """A measured command's last event is ``seq``; it was meant to be sent at ``intended``."""
        self._expected[seq] = intended
        # A room's commands run one after the other: earlier seqs nobody expects (events of
        # unmeasured commands) will never be asked for.
        for old in [s for s in self._done if s < seq]:
            del self._done[old]
        self._match(seq)

    def _match(self, seq: int) -> None:
        if seq in self._expected and seq in self._done:
            self.on_delivered(self._done.pop(seq) - self._expected.pop(seq))

    @property
    def outstanding(self) -> int:
        """Measured commands whose events have not reached every connection yet."""
        return len(self._expected)

    def finish(self) -> list[str]:
        """The violations, including measured commands never delivered to every connection."""
        missing = sorted(self._expected)
        if missing:
            self.violations.append(
                f"{self.room}: {len(missing)} commands not delivered to all {self.members}"
                f" connections (seqs {missing[:5]})"
            )
            self._expected.clear()
        self._done.clear()
        return self.violations

"""One connection's protocol logic, sans I/O: frame in -> a command to run, or what to answer.

It enforces the per-connection limits before any work is done for a frame: every frame counts
against the message rate, valid or not, and its bytes against a byte budget, so malformed or
oversized frames cannot be used to walk around the limits; a client that keeps flooding is
closed (1008). It decodes with the protocol codec and keeps the answers of recent commands, so
a command retried on the same connection gets the same answer without running again.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import protocol.messages as pm
from protocol.codec import decode_client
from protocol.errors import DecodeError, ErrorCode
from protocol.transport import CloseCode, Encoding
from server.ops.retry import LRU

__all__ = ["Answer", "Close", "Connection", "Limits", "Refuse", "TokenBucket"]

_ANSWER_CACHE = 256
#: Consecutive refused frames after which the connection is closed (1008).
_FLOOD_LIMIT = 200


class TokenBucket:
    """``rate`` tokens per second, at most ``burst`` saved up."""

    __slots__ = ("burst", "clock", "rate", "stamp", "tokens")

    def __init__(
        self, rate: float, burst: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.rate = rate
        self.burst = float(burst)
        self.tokens = float(burst)
        self.clock = clock
        self.stamp = clock()

    def take(self, amount: float = 1.0) -> bool:
        now = self.clock()
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= amount:
            self.tokens -= amount
            return True
        return False


@dataclass(frozen=True, slots=True)
class Limits:
    max_frame_bytes: int
    rate_per_second: float
    burst: int
    #: bytes of frames per second a connection may send, and how many it may save up: a
    #: player's frames are tens of bytes, and what decoding a frame costs grows with its bytes
    #: (a 16 KiB frame of nested empty arrays takes ~4 ms of CPU), so the budget bounds the
    #: CPU one connection can take (tests/faults/test_fuzz_e2e.py measures it)
    bytes_per_second: int = 16_384
    bytes_burst: int = 65_536


@dataclass(frozen=True, slots=True)
class Refuse:
    """Answer with an ``error`` (the command did not run)."""

    code: str
    message: str
    command_id: str | None


@dataclass(frozen=True, slots=True)
class Answer:
    """Send this frame again: the command already ran on this connection."""

    frame: bytes | str


@dataclass(frozen=True, slots=True)
class Close:
    """Close the connection with ``code``."""

    code: int


Incoming = pm.ClientMessage | Refuse | Answer | Close


class Connection:
    """The sans-I/O state of one WebSocket connection; see the module docstring.

    An idle connection is most of what a server holds, so the state is small: the token
    buckets start full when the first frame arrives (a bucket made at connect would be full by
    then too) and the answer cache exists once there is an answer to keep."""

    __slots__ = ("_answers", "_bytes", "_clock", "_messages", "_refused_in_a_row", "encoding",
                 "limits")  # fmt: skip

    def __init__(
        self, encoding: Encoding, limits: Limits, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.encoding = encoding
        self.limits = limits
        self._clock = clock
        self._messages: TokenBucket | None = None
        self._bytes: TokenBucket | None = None
        self._answers: LRU[str, bytes | str] | None = None
        self._refused_in_a_row = 0

    def receive(self, frame: bytes | str) -> Incoming:
        """What to do with one received frame."""
        size = len(frame.encode()) if isinstance(frame, str) else len(frame)
        limits = self.limits
        if size > 64 * limits.max_frame_bytes:
            return Close(CloseCode.MESSAGE_TOO_BIG)
        if self._bytes is None or self._messages is None:
            self._bytes = TokenBucket(limits.bytes_per_second, limits.bytes_burst, self._clock)
            self._messages = TokenBucket(limits.rate_per_second, limits.burst, self._clock)
        if not self._bytes.take(size):  # decoding costs by the byte: refused before it
            return self._refuse(Refuse(ErrorCode.RATE_LIMITED, "too many bytes", None))
        allowed = self._messages.take()  # every frame counts, valid or not
        try:
            limit = self.limits.max_frame_bytes
            command = decode_client(frame, self.encoding, max_frame_bytes=limit)
        except DecodeError as exc:
            if not allowed:
                return self._refuse(_rate_limited(exc.command_id))
            return self._refuse(Refuse(exc.code, exc.message, exc.command_id))
        if not allowed:
            return self._refuse(_rate_limited(command.id))
        self._refused_in_a_row = 0
        previous = self._answers.get(command.id) if self._answers is not None else None
        if previous is not None and not isinstance(command, pm.Ping):
            return Answer(previous)
        return command

    def _refuse(self, refusal: Refuse) -> Refuse | Close:
        self._refused_in_a_row += 1
        if self._refused_in_a_row > _FLOOD_LIMIT:
            return Close(CloseCode.POLICY_VIOLATION)
        return refusal

    def remember(self, command_id: str, frame: bytes | str) -> None:
        """Keep a command's answer for a retry on this connection."""
        answers = self._answers
        if answers is None:
            answers = self._answers = LRU(_ANSWER_CACHE)
        answers.put(command_id, frame)


def _rate_limited(command_id: str | None) -> Refuse:
    return Refuse(ErrorCode.RATE_LIMITED, "too many messages: slow down, then resend", command_id)

"""The sans-I/O connection layer: limits, decoding and the answer cache, without sockets."""

from __future__ import annotations

import json

import protocol.messages as pm
from protocol.transport import CloseCode, Encoding
from server.transport.connection import Answer, Close, Connection, Limits, Refuse


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def connection(clock: Clock, **limits: int) -> Connection:
    values = {"max_frame_bytes": 1024, "rate_per_second": 10, "burst": 5, **limits}
    return Connection(Encoding.JSON, Limits(**values), clock)


def frame(kind: str, cid: str, **fields: object) -> str:
    return json.dumps({"type": kind, "id": cid, **fields})


def test_a_valid_frame_is_a_command_and_a_retry_gets_the_same_answer() -> None:
    conn = connection(Clock())
    command = conn.receive(frame("hello", "a"))
    assert isinstance(command, pm.Hello)
    conn.remember("a", "ANSWER")
    assert conn.receive(frame("hello", "a")) == Answer("ANSWER")


def test_malformed_frames_count_against_the_rate_limit() -> None:
    clock = Clock()
    conn = connection(clock)
    codes = [conn.receive("{not json") for _ in range(6)]
    assert [c.code for c in codes if isinstance(c, Refuse)] == ["malformed"] * 5 + ["rate_limited"]
    clock.now += 1.0  # ten more tokens per second, five at most
    assert isinstance(conn.receive(frame("hello", "b")), pm.Hello)


def test_rate_limited_commands_keep_their_id() -> None:
    conn = connection(Clock(), burst=1)
    assert isinstance(conn.receive(frame("hello", "a")), pm.Hello)
    refused = conn.receive(frame("hello", "b"))
    assert refused == Refuse("rate_limited", refused.message, "b")  # type: ignore[union-attr]


def test_bytes_are_budgeted_before_decoding() -> None:
    conn = connection(Clock(), bytes_per_second=100, bytes_burst=1000, burst=1000)
    big = frame("hello", "a", pad="x" * 900)
    assert isinstance(conn.receive(big), pm.Hello)
    refused = conn.receive(big)
    assert isinstance(refused, Refuse)
    assert (refused.code, refused.command_id) == ("rate_limited", None)


def test_a_huge_frame_closes_and_a_large_one_is_refused() -> None:
    conn = connection(Clock(), max_frame_bytes=100, bytes_burst=100_000)
    refused = conn.receive(frame("hello", "a", pad="x" * 200))
    assert isinstance(refused, Refuse)
    assert refused.code == "frame_too_large"
    assert conn.receive("x" * 6401) == Close(CloseCode.MESSAGE_TOO_BIG)


def test_a_flood_of_refused_frames_closes_the_connection() -> None:
    conn = connection(Clock(), burst=1_000_000, rate_per_second=1_000_000)
    results = [conn.receive("[]") for _ in range(201)]
    assert results[-1] == Close(CloseCode.POLICY_VIOLATION)
    assert all(isinstance(r, Refuse) for r in results[:-1])

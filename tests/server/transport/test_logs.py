"""What the logs may hold (``server.transport.logs``): no secret in an access line, whatever a
client sends, and client-caused noise counted and let through at a bounded rate."""

from __future__ import annotations

import logging

from server.ops.metrics import Metrics
from server.transport.logs import ClientNoiseFilter, RedactingAccessFilter, redact_target


def test_every_query_value_but_the_harmless_ones_is_redacted() -> None:
    target = "/rooms/r1?invite_code=S3CR3T&after=5&token=T0K&x=1&limit=10"
    assert redact_target(target) == (
        "/rooms/r1?invite_code=REDACTED&after=5&token=REDACTED&REDACTED&limit=10"
    )
    assert redact_target("/rooms/r1") == "/rooms/r1"
    assert redact_target("/ws?S3CR3T") == "/ws?REDACTED"  # a bare name can be the secret
    assert redact_target("/ws?;S3CR3T") == "/ws?REDACTED"
    assert redact_target("/ws?Invite_Code=S3CR3T") == "/ws?invite_code=REDACTED"


def access_record(target: str) -> logging.LogRecord:
    """An access line as uvicorn's h11/httptools protocols log it."""
    return logging.LogRecord(
        "uvicorn.access", logging.INFO, __file__, 1, '%s - "%s %s HTTP/%s" %d',
        ("127.0.0.1:5000", "GET", target, "1.1", 403), None,
    )  # fmt: skip


def test_an_access_line_keeps_no_secret() -> None:
    record = access_record("/rooms/r1?invite_code=S3CR3T")
    assert RedactingAccessFilter().filter(record)
    assert "S3CR3T" not in record.getMessage()
    assert "/rooms/r1?invite_code=REDACTED" in record.getMessage()


def noise(message: str) -> logging.LogRecord:
    try:
        b"\xff".decode()
    except UnicodeDecodeError:
        import sys

        exc_info = sys.exc_info()
    return logging.LogRecord("uvicorn.error", logging.ERROR, __file__, 1, message, None, exc_info)


def test_client_noise_is_counted_and_let_through_at_a_bounded_rate() -> None:
    metrics = Metrics()
    noise_filter = ClientNoiseFilter(metrics, per_minute=3)
    passed = [
        noise_filter.filter(noise("Invalid UTF-8 sequence received from client."))
        for _ in range(50)
    ]
    assert passed.count(True) == 3  # the bucket starts full; refills at 3 a minute
    counted = metrics.refused.labels("invalid_utf8")._value.get()
    assert counted == 50


def test_let_through_noise_is_info_without_a_traceback() -> None:
    record = noise("ASGI callable returned without completing handshake.")
    assert ClientNoiseFilter(Metrics()).filter(record)
    assert record.levelno == logging.INFO
    assert record.exc_info is None


def test_other_messages_pass_unchanged() -> None:
    record = noise("Exception in ASGI application")
    assert ClientNoiseFilter(Metrics()).filter(record)
    assert record.levelno == logging.ERROR
    assert record.exc_info is not None

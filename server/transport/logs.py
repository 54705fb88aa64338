"""What the server's logs may hold: no secret, whatever a client sends, and what clients cause
at a bounded rate.

uvicorn writes one access line per request with the request's target, query string included:
a client that sends an invite code, a seat token or a player token as a query parameter (the
pre-1.1 way, or by mistake) would have it written to the log. :class:`RedactingAccessFilter`
keeps only the values of parameters known to be harmless (paging, periods), replaces the values
of parameters named like secrets, and every other parameter whole. Headers (``Authorization``,
cookies) are never logged by uvicorn.

Handshakes a client gets wrong and frames that are not valid UTF-8 make uvicorn log at ERROR,
the latter with a traceback: any client could fill the log. :class:`ClientNoiseFilter` counts
each in the ``yahtzee_refused`` metric and lets at most :data:`NOISE_PER_MINUTE` of them a
minute through, at INFO and without the traceback.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import parse_qsl, quote, urlsplit

from server.ops.metrics import Metrics
from server.transport.connection import TokenBucket

__all__ = [
    "NOISE_PER_MINUTE",
    "SAFE_QUERY_PARAMETERS",
    "SECRET_QUERY_PARAMETERS",
    "ClientNoiseFilter",
    "RedactingAccessFilter",
    "installed",
    "redact_target",
]

#: Query parameters whose values may be logged: none of them can carry a secret.
SAFE_QUERY_PARAMETERS = frozenset(
    {"after", "limit", "since", "until", "period", "around", "page", "turn", "status", "encoding"}
)
#: Names of query parameters that may carry a secret: logged with the value replaced. A
#: parameter of any other name is replaced whole (its name could be the secret: ``/ws?<token>``).
SECRET_QUERY_PARAMETERS = frozenset(
    {
        "invite_code",
        "invite",
        "token",
        "seat_token",
        "player_token",
        "access_token",
        "id_token",
        "jwt",
        "code",
        "key",
        "secret",
        "password",
        "auth",
        "authorization",
        "session",
        "cookie",
        "sig",
        "signature",
    }
)
REDACTED = "REDACTED"

#: uvicorn's messages that a client causes (the start of the message), and their reason label.
CLIENT_CAUSED = (
    ("Invalid UTF-8 sequence received from client", "invalid_utf8"),
    ("ASGI callable returned without completing handshake", "handshake"),
    ("connection rejected", "handshake"),
    ("Invalid HTTP request received", "bad_http"),
    ("Unsupported upgrade request", "bad_http"),
    ("Failed to open a WebSocket connection", "handshake"),
)
NOISE_PER_MINUTE = 10


def redact_target(target: str) -> str:
    """``target`` (a request path with its query) with the value of every query parameter
    not in :data:`SAFE_QUERY_PARAMETERS` replaced by ``REDACTED``."""
    if "?" not in target:
        return target
    parts = urlsplit(target)
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    query = "&".join(_redact_pair(name, value) for name, value in pairs)
    return f"{parts.path}?{query or REDACTED}"


def _redact_pair(name: str, value: str) -> str:
    if name in SAFE_QUERY_PARAMETERS:
        return f"{quote(name)}={quote(value)}"
    if name.lower() in SECRET_QUERY_PARAMETERS:
        return f"{name.lower()}={REDACTED}"
    return REDACTED


class RedactingAccessFilter(logging.Filter):
    """On uvicorn's loggers: every request target in a line redacted (:func:`redact_target`)."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple):
            record.args = tuple(
                redact_target(arg) if isinstance(arg, str) and "?" in arg else arg for arg in args
            )
        elif isinstance(record.msg, str) and "?" in record.msg:
            record.msg = " ".join(redact_target(word) for word in record.msg.split(" "))
        return True


class ClientNoiseFilter(logging.Filter):
    """On ``uvicorn.error``: client-caused messages counted, and let through at INFO, without a
    traceback, at most :data:`NOISE_PER_MINUTE` a minute (see the module docstring)."""

    def __init__(self, metrics: Metrics, per_minute: float = NOISE_PER_MINUTE) -> None:
        super().__init__()
        self.metrics = metrics
        self.bucket = TokenBucket(per_minute / 60, per_minute, time.monotonic)
        self.suppressed = 0

    def filter(self, record: logging.LogRecord) -> bool:
        message = str(record.msg)
        reason = next((label for start, label in CLIENT_CAUSED if message.startswith(start)), None)
        if reason is None:
            return True
        self.metrics.refused.labels(reason).inc()
        if not self.bucket.take():
            self.suppressed += 1
            return False
        record.levelno, record.levelname = logging.INFO, "INFO"
        record.exc_info = record.exc_text = None
        if self.suppressed:
            record.msg = f"{message} ({self.suppressed} more like it not logged)"
            self.suppressed = 0
        return True


@contextmanager
def installed(metrics: Metrics) -> Iterator[None]:
    """Both filters on uvicorn's loggers for as long as the application runs."""
    access, noise = RedactingAccessFilter(), ClientNoiseFilter(metrics)
    access_log, error_log = logging.getLogger("uvicorn.access"), logging.getLogger("uvicorn.error")
    # uvicorn's WebSocket protocols write their access lines to "uvicorn.error"
    access_log.addFilter(access)
    error_log.addFilter(access)
    error_log.addFilter(noise)
    try:
        yield
    finally:
        access_log.removeFilter(access)
        error_log.removeFilter(access)
        error_log.removeFilter(noise)

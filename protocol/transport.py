"""Transport-level constants: endpoint, subprotocol negotiation, limits and close codes.

The protocol version and the encoding are negotiated in one step, with the WebSocket
subprotocol (``Sec-WebSocket-Protocol``) header. See SPEC.md sections 3 and 11.
"""

import enum
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Final

__all__ = [
    "CLOSE_CODES",
    "DEFAULT_HEARTBEAT_SECONDS",
    "ENDPOINT_PATH",
    "MAX_CLIENT_FRAME_BYTES",
    "MAX_NESTING_DEPTH",
    "MAX_SERVER_FRAME_BYTES",
    "PROTOCOL_MINOR",
    "PROTOCOL_VERSION",
    "SUBPROTOCOLS",
    "SUBPROTOCOL_REFUSAL_REASON",
    "CloseCode",
    "Encoding",
    "select_subprotocol",
    "subprotocol_for",
]

PROTOCOL_VERSION: Final = 1
"""Version of the wire protocol defined by this package (part of every subprotocol name)."""

PROTOCOL_MINOR: Final = 4
"""Minor version (compatible additions) of this package; announced in ``welcome``, not in the
subprotocol name (SPEC.md "Versioning")."""

ENDPOINT_PATH: Final = "/ws"
"""Path of the WebSocket endpoint."""


class Encoding(enum.StrEnum):
    """How messages are serialised on a connection, chosen by the negotiated subprotocol."""

    MSGPACK = "msgpack"
    """MessagePack, one message per binary frame."""
    JSON = "json"
    """UTF-8 JSON (RFC 8259), one message per text frame."""


SUBPROTOCOLS: Final[Mapping[str, Encoding]] = MappingProxyType(
    {
        f"yahtzee.v{PROTOCOL_VERSION}.msgpack": Encoding.MSGPACK,
        f"yahtzee.v{PROTOCOL_VERSION}.json": Encoding.JSON,
    }
)
"""Subprotocol names this server speaks, in its order of preference, with their encodings.

Iterating the mapping yields the names, e.g. ``list(SUBPROTOCOLS)`` for a WebSocket library.
"""

SUBPROTOCOL_REFUSAL_REASON: Final = "no supported subprotocol offered; supported: " + ", ".join(
    SUBPROTOCOLS
)
"""Reason sent when a client offers no subprotocol we speak (HTTP 400 body or close reason).

Shorter than 123 bytes, so it also fits in a WebSocket close frame.
"""

MAX_CLIENT_FRAME_BYTES: Final = 16384
"""Default largest frame (payload bytes) a client may send; announced in ``welcome.limits``."""

MAX_SERVER_FRAME_BYTES: Final = 1_048_576
"""Largest frame the server ever sends; clients must accept frames up to this size."""

MAX_NESTING_DEPTH: Final = 16
"""Deepest nesting of maps and arrays a message may have; the top-level map is depth 1."""

DEFAULT_HEARTBEAT_SECONDS: Final = 20
"""Default interval of server WebSocket pings; announced in ``welcome.heartbeat_seconds``."""


class CloseCode(enum.IntEnum):
    """WebSocket close codes used by the server; see :data:`CLOSE_CODES` for their meaning."""

    NORMAL = 1000
    PROTOCOL_ERROR = 1002
    INVALID_DATA = 1007
    POLICY_VIOLATION = 1008
    MESSAGE_TOO_BIG = 1009
    INTERNAL_ERROR = 1011
    SERVICE_RESTART = 1012
    TRY_AGAIN_LATER = 1013
    SLOW_CONSUMER = 4000
    #: Reserved: not sent by version 1 servers (a heartbeat timeout closes with 1011).
    HEARTBEAT_TIMEOUT = 4001


CLOSE_CODES: Final[Mapping[CloseCode, tuple[str, str]]] = MappingProxyType(
    {
        CloseCode.NORMAL: (
            "Normal closure: the session is over.",
            "Do not reconnect automatically.",
        ),
        CloseCode.PROTOCOL_ERROR: (
            "No supported subprotocol was offered (only if the server cannot answer HTTP 400).",
            "Do not retry: offer a supported subprotocol.",
        ),
        CloseCode.INVALID_DATA: (
            "A text frame was not valid UTF-8 (json subprotocol).",
            "A client bug: fix the encoder, then reconnect and resume.",
        ),
        CloseCode.POLICY_VIOLATION: (
            "The client kept sending while rate limited.",
            "Fix the client; reconnect only after a pause of several seconds.",
        ),
        CloseCode.MESSAGE_TOO_BIG: (
            "A frame was far larger than `max_frame_bytes` (the transport refused it).",
            "A client bug: reconnect and resume, never resend that frame.",
        ),
        CloseCode.INTERNAL_ERROR: (
            "Unexpected server failure, or heartbeat timeout: neither a Pong nor a message "
            "arrived within `heartbeat_seconds` of a server Ping (section 11.2).",
            "Reconnect with backoff and resume.",
        ),
        CloseCode.SERVICE_RESTART: (
            "The server is shutting down or restarting (e.g. deploy).",
            "Reconnect at once (with jitter) and resume; another server will answer.",
        ),
        CloseCode.TRY_AGAIN_LATER: (
            "The server holds as many connections as it may (only if it cannot answer the "
            "handshake with HTTP 503).",
            "Reconnect with backoff, to this or another server.",
        ),
        CloseCode.SLOW_CONSUMER: (
            "The client read too slowly: its send queue overflowed.",
            "Reconnect and resume with `last_seq`.",
        ),
        CloseCode.HEARTBEAT_TIMEOUT: (
            "Reserved; not sent by this version (a heartbeat timeout is 1011).",
            "Handle like 1011: reconnect and resume with `last_seq`.",
        ),
    }
)
"""Meaning of each close code and what a client should do, in SPEC.md order."""


def select_subprotocol(offered: Iterable[str]) -> str | None:
    """Pick the subprotocol for a handshake: the first name the client offered that we speak.

    Honours the client's order of preference. Names are compared exactly (they are
    case-sensitive tokens). Returns ``None`` when nothing matches; the server must then refuse
    the handshake (HTTP 400 with :data:`SUBPROTOCOL_REFUSAL_REASON`).
    """
    for name in offered:
        if name in SUBPROTOCOLS:
            return name
    return None


def subprotocol_for(encoding: Encoding) -> str:
    """Return the subprotocol name of this protocol version for an encoding."""
    for name, value in SUBPROTOCOLS.items():
        if value is Encoding(encoding):
            return name
    raise ValueError(f"no subprotocol for encoding {encoding!r}")  # pragma: no cover

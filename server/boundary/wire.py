"""Room events encoded once per process: the bytes the log stores, pub/sub carries and every
subscriber's socket receives.

An event is encoded to MessagePack once, by the process that commits it; those bytes go into
the room's log and, batched, into the room's pub/sub message. A process that receives the batch
hands the very same bytes to its MessagePack subscribers and derives the JSON text once, the
first time a JSON subscriber needs it. Nothing is encoded per subscriber: not even the
WebSocket frame, which a server sends unmasked and (without compression) the same to every
connection, so it is built once per encoding (:meth:`EncodedEvent.ws_frame`).
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import Final

import msgspec

import protocol.messages as pm
from protocol.codec import encode_msgpack
from protocol.transport import Encoding

__all__ = [
    "EncodedEvent",
    "Kick",
    "decode_batch",
    "decode_channel",
    "encode_batch",
    "encode_events",
    "encode_kick",
    "from_log",
    "server_frame",
]

_SHORT: Final = struct.Struct("!BB")
_MEDIUM: Final = struct.Struct("!BBH")
_LONG: Final = struct.Struct("!BBQ")


def server_frame(payload: bytes, *, text: bool) -> bytes:
    """One whole WebSocket data frame as a server sends it without extensions (RFC 6455 5.2:
    final, unmasked, the payload's length in 7, 16 or 64 bits): the bytes websockets'
    ``Frame.serialize`` makes, in a few C calls instead of its Python (every event, and every
    command's ack)."""
    first = 0x81 if text else 0x82  # FIN + the text or binary opcode
    size = len(payload)
    if size < 126:
        return _SHORT.pack(first, size) + payload
    if size < 1 << 16:
        return _MEDIUM.pack(first, 126, size) + payload
    return _LONG.pack(first, 127, size) + payload


class _SeqOnly(msgspec.Struct):
    seq: int


class Kick(msgspec.Struct, tag="kick", tag_field="type"):
    """A message on a room's channel for every process serving the room: connection ``conn``
    no longer holds its seat (another connection took it back); its process closes it."""

    conn: str


_SEQ_DECODER: Final = msgspec.msgpack.Decoder(_SeqOnly)
_CHANNEL_DECODER: Final = msgspec.msgpack.Decoder(list[msgspec.Raw] | Kick)
_BATCH_DECODER: Final = msgspec.msgpack.Decoder(list[msgspec.Raw])
_ANY_DECODER: Final = msgspec.msgpack.Decoder()
_BATCH_ENCODER: Final = msgspec.msgpack.Encoder()
_JSON_ENCODER: Final = msgspec.json.Encoder()


class EncodedEvent:
    """One room event at ``seq``: its MessagePack bytes, and its JSON text on demand."""

    __slots__ = ("_json", "_ws_json", "_ws_msgpack", "msgpack", "seq")

    def __init__(self, seq: int, msgpack: bytes, json: str | None = None) -> None:
        self.seq = seq
        self.msgpack = msgpack
        self._json = json
        self._ws_msgpack: bytes | None = None
        self._ws_json: bytes | None = None

    def frame(self, encoding: Encoding) -> bytes | str:
        """The frame for a connection of ``encoding``."""
        if encoding is Encoding.MSGPACK:
            return self.msgpack
        if self._json is None:
            # The MessagePack map keeps the wire's key order, so this is the canonical JSON.
            self._json = _JSON_ENCODER.encode(_ANY_DECODER.decode(self.msgpack)).decode()
        return self._json

    def ws_frame(self, encoding: Encoding) -> bytes:
        """The whole WebSocket data frame (header and payload) a server sends with this event,
        without extensions: binary for MessagePack, text for JSON; built once."""
        if encoding is Encoding.MSGPACK:
            if self._ws_msgpack is None:
                self._ws_msgpack = server_frame(self.msgpack, text=False)
            return self._ws_msgpack
        if self._ws_json is None:
            text = self.frame(Encoding.JSON)
            assert isinstance(text, str)
            self._ws_json = server_frame(text.encode(), text=True)
        return self._ws_json


def encode_events(events: Sequence[pm.Event]) -> list[EncodedEvent]:
    """Encode freshly made events (their JSON is made here too only if asked for later)."""
    return [EncodedEvent(e.seq, encode_msgpack(e)) for e in events]


def encode_batch(events: Sequence[EncodedEvent]) -> bytes:
    """The pub/sub message for ``events``: a MessagePack array of the encoded events."""
    return _BATCH_ENCODER.encode([msgspec.Raw(e.msgpack) for e in events])


def decode_batch(payload: bytes) -> list[EncodedEvent]:
    """Inverse of :func:`encode_batch` (the event bytes are not copied into new encodings)."""
    return [
        from_log(_SEQ_DECODER.decode(raw).seq, bytes(raw)) for raw in _BATCH_DECODER.decode(payload)
    ]


def encode_kick(conn_id: str) -> bytes:
    """The room-channel message that closes connection ``conn_id`` wherever it is served."""
    return _BATCH_ENCODER.encode(Kick(conn_id))


def decode_channel(payload: bytes, after_seq: int | None = None) -> Kick | list[EncodedEvent]:
    """A message of a room's channel: a :class:`Kick` or a batch of events
    (:func:`encode_batch`), without those at or before ``after_seq`` (already delivered)."""
    if payload.startswith(b"kick "):  # a kick published by a process of an earlier version
        return Kick(payload[5:].decode())
    message = _CHANNEL_DECODER.decode(payload)
    if isinstance(message, Kick):
        return message
    # The echo of a commit this process made is the common case: its events went to the
    # sockets before the command's ack, so the batch's last seq says it is all old.
    if after_seq is not None and message and _SEQ_DECODER.decode(message[-1]).seq <= after_seq:
        return []
    events = (from_log(_SEQ_DECODER.decode(raw).seq, bytes(raw)) for raw in message)
    return [e for e in events if after_seq is None or e.seq > after_seq]


def from_log(seq: int, data: bytes) -> EncodedEvent:
    """An event as read from the room's log."""
    return EncodedEvent(seq, data)

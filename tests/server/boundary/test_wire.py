"""An event's WebSocket frame is built once and is what a client's WebSocket parser reads back
as the event's payload, in either encoding and at every length class of the header."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import msgspec
import pytest
from websockets.frames import Frame, Opcode
from websockets.streams import StreamReader

import protocol.messages as pm
from protocol.transport import Encoding
from server.boundary import wire
from server.boundary.wire import EncodedEvent


def parse(data: bytes) -> Frame:
    """One frame, read by websockets' own parser as a client reads a server's frames."""
    reader = StreamReader()
    reader.feed_data(data)
    reader.feed_eof()
    parser: Generator[Any, Any, Frame] = Frame.parse(
        reader.read_exact, mask=False, max_size=None, extensions=[]
    )
    try:
        step = next(parser)
        while True:
            step = parser.send(step)
    except StopIteration as done:
        assert reader.at_eof()  # the whole frame and nothing more
        return done.value


@pytest.mark.parametrize("size", [1, 100, 126, 65_000, 65_536, 200_000])
def test_the_shared_frame_carries_the_event_in_both_encodings(size: int) -> None:
    # payloads whose frames need the 7-bit, the 16-bit and the 64-bit length forms
    payload = msgspec.msgpack.encode({"type": "spectators", "seq": 7, "pad": "\u00e9" * size})
    event = EncodedEvent(7, payload)
    binary = parse(event.ws_frame(Encoding.MSGPACK))
    assert binary.opcode is Opcode.BINARY
    assert binary.data == payload
    text = parse(event.ws_frame(Encoding.JSON))
    assert text.opcode is Opcode.TEXT
    assert text.data.decode() == event.frame(Encoding.JSON)
    assert msgspec.json.decode(text.data)["pad"] == "\u00e9" * size
    assert event.ws_frame(Encoding.MSGPACK) is event.ws_frame(Encoding.MSGPACK)  # built once


@pytest.mark.parametrize("size", [0, 1, 125, 126, 127, 65_535, 65_536, 70_000])
@pytest.mark.parametrize("text", [False, True])
def test_a_server_frame_is_the_frame_websockets_would_send(size: int, text: bool) -> None:
    # every length form and its edges, byte for byte as websockets serialises a server's frame
    payload = bytes(range(256)) * (size // 256) + bytes(size % 256)
    opcode = Opcode.TEXT if text else Opcode.BINARY
    expected = Frame(opcode, payload).serialize(mask=False, extensions=[])
    assert wire.server_frame(payload, text=text) == expected
    assert parse(wire.server_frame(payload, text=text)).data == payload


def test_a_room_channel_carries_typed_kicks_beside_event_batches() -> None:
    kick = wire.decode_channel(wire.encode_kick("conn-7"))
    assert kick == wire.Kick("conn-7")
    assert wire.decode_channel(b"kick conn-8") == wire.Kick("conn-8")  # an earlier version's
    batch = wire.encode_batch(wire.encode_events([pm.Spectators(room="r", seq=3, count=1)]))
    decoded = wire.decode_channel(batch)
    assert isinstance(decoded, list)
    assert [e.seq for e in decoded] == [3]


def test_a_batch_read_from_a_channel_leaves_out_what_was_delivered() -> None:
    batch = wire.encode_batch(
        wire.encode_events([pm.Spectators(room="r", seq=seq, count=1) for seq in (3, 4, 5)])
    )
    everything = wire.decode_channel(batch)
    assert isinstance(everything, list)
    assert [e.seq for e in everything] == [3, 4, 5]
    assert wire.decode_channel(batch, 5) == []  # the echo of this process's own commit
    newer = wire.decode_channel(batch, 3)
    assert isinstance(newer, list)
    assert [(e.seq, e.msgpack) for e in newer] == [(e.seq, e.msgpack) for e in everything[1:]]
    assert wire.decode_channel(wire.encode_kick("c"), 9) == wire.Kick("c")  # kicks always

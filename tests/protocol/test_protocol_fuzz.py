"""Codec fuzzing beyond ``test_protocol_properties.py``: nesting far past the limit (where a
recursive decoder would overflow the stack), MessagePack headers that announce huge containers,
frames around the size limit, large random inputs, and wrong types in every field of every client
message. The contract: ``DecodeError`` with a decode code and nothing else, the frame's ``id``
recovered whenever the frame has a valid one, and quickly (no input costs more than its bytes).
"""

from __future__ import annotations

import json
import struct
from typing import Any

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocol import (
    CLIENT_MESSAGE_TYPES,
    ERROR_CODES,
    DecodeError,
    Encoding,
    Message,
    decode_client,
    encode,
)
from protocol.codec import MAX_CLIENT_FRAME_BYTES, MAX_NESTING_DEPTH
from protocol.errors import ErrorCode

FUZZ = settings(
    max_examples=300,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
DECODE_CODES = {code for code, info in ERROR_CODES.items() if info.category == "decode"}
VALID: dict[str, dict[str, Any]] = {
    "hello": {"type": "hello", "id": "h1", "client": "fuzz"},
    "create_room": {"type": "create_room", "id": "c1", "seats": 2, "public": True},
    "join": {"type": "join", "id": "j1", "room": "AbCdEf12", "name": "Ann"},
    "roll": {"type": "roll", "id": "r1", "keep": [0, 1]},
    "hold": {"type": "hold", "id": "o1", "dice": [2]},
    "score": {"type": "score", "id": "s1", "box": "chance"},
    "spectate": {"type": "spectate", "id": "p1", "room": "AbCdEf12", "last_seq": 3},
}


def _frame(value: Any, encoding: Encoding) -> str | bytes:
    if encoding is Encoding.JSON:
        return json.dumps(value)
    packed: bytes = msgpack.packb(value)
    return packed


def _outcome(frame: str | bytes, encoding: Encoding, **kwargs: Any) -> Message | DecodeError:
    """The decoded message, or the DecodeError (anything else propagates and fails the test)."""
    try:
        return decode_client(frame, encoding, **kwargs)
    except DecodeError as exc:
        return exc


def _refused(frame: str | bytes, encoding: Encoding, **kwargs: Any) -> DecodeError:
    # (what a frame costs is measured by the abuse benchmark, not timed here: a timed unit test
    # fails on a busy machine)
    with pytest.raises(DecodeError) as caught:
        decode_client(frame, encoding, **kwargs)
    assert caught.value.code in DECODE_CODES
    return caught.value


@pytest.mark.parametrize("encoding", list(Encoding))
@pytest.mark.parametrize("depth", [MAX_NESTING_DEPTH, 100, 1000, 20_000, 200_000])
@pytest.mark.parametrize("container", ["array", "map"])
def test_deep_nesting_is_refused_without_overflowing(
    encoding: Encoding, depth: int, container: str
) -> None:
    if encoding is Encoding.JSON:
        opening, closing = ("[", "]") if container == "array" else ('{"a":', "}")
        nested = opening * depth + "0" + closing * depth
        frame: str | bytes = '{"type":"hello","id":"deep1","client":' + nested + "}"
    else:
        opening_b = b"\x91" if container == "array" else b"\x81\xa1a"
        frame = b"\x83\xa4type\xa5hello\xa2id\xa5deep1\xa6client" + opening_b * depth + b"\x00"
    error = _refused(frame, encoding, max_frame_bytes=10**7)
    if depth + 1 > MAX_NESTING_DEPTH:
        assert error.code == ErrorCode.TOO_DEEP
    if error.code == ErrorCode.TOO_DEEP:
        assert error.command_id in ("deep1", None)


@pytest.mark.parametrize(
    "header",
    [b"\xdd", b"\xdf", b"\xdb", b"\xc6", b"\xc9\x00"],  # array32, map32, str32, bin32, ext32
    ids=["array32", "map32", "str32", "bin32", "ext32"],
)
def test_headers_announcing_huge_containers_cost_nothing(header: bytes) -> None:
    for size in (2**32 - 1, 2**31, 10**6):
        frame = b"\x82\xa4type\xa5hello\xa2id" + header + struct.pack(">I", size) + b"\x00" * 4
        _refused(frame, Encoding.MSGPACK)


@pytest.mark.parametrize("encoding", list(Encoding))
def test_frames_around_the_size_limit(encoding: Encoding) -> None:
    limit = 2048
    for padding in range(limit - 80, limit + 80):
        value = {"type": "hello", "id": "pad", "client": "x" * 8}
        frame = _frame(value, encoding)
        size = len(frame.encode() if isinstance(frame, str) else frame)
        extra = {"type": "hello", "id": "pad", "client": "x" * 8, "zz": "y" * (padding - size)}
        frame = _frame(extra, encoding)
        size = len(frame.encode() if isinstance(frame, str) else frame)
        outcome = _outcome(frame, encoding, max_frame_bytes=limit)
        too_large = isinstance(outcome, DecodeError) and outcome.code == ErrorCode.FRAME_TOO_LARGE
        assert too_large == (size > limit), (size, outcome)


@FUZZ
@given(st.binary(min_size=1000, max_size=40_000))
def test_large_random_frames(frame: bytes) -> None:
    for encoding in Encoding:
        _refused(frame, encoding, max_frame_bytes=MAX_CLIENT_FRAME_BYTES)
        text = frame.decode("latin-1")
        _refused(text, encoding, max_frame_bytes=MAX_CLIENT_FRAME_BYTES)


@FUZZ
@given(
    prefix=st.sampled_from([b"\x81", b"\x82\xa4type", b"\xde\x00\x10", b"\x91"]), rest=st.binary()
)
def test_random_bytes_after_a_valid_looking_header(prefix: bytes, rest: bytes) -> None:
    outcome = _outcome(prefix + rest, Encoding.MSGPACK)
    if isinstance(outcome, DecodeError):
        assert outcome.code in DECODE_CODES
    else:
        assert decode_client(encode(outcome, Encoding.MSGPACK), Encoding.MSGPACK) == outcome


_wrong = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**64 - 1),
    st.floats(allow_nan=False),
    st.text(max_size=80),
    st.binary(max_size=8),
    st.lists(st.integers(min_value=-(2**63), max_value=2**63 - 1), max_size=8),
    st.dictionaries(st.text(max_size=4), st.integers(min_value=0, max_value=9), max_size=3),
)


@FUZZ
@given(
    kind=st.sampled_from(sorted(VALID)),
    data=st.data(),
    encoding=st.sampled_from(list(Encoding)),
)
def test_a_wrong_value_in_any_field_keeps_the_id(
    kind: str, data: st.DataObject, encoding: Encoding
) -> None:
    value = dict(VALID[kind])
    field = data.draw(
        st.sampled_from([f for f in CLIENT_MESSAGE_TYPES[kind].__struct_fields__ if f != "type"])
    )
    value[field] = data.draw(_wrong)
    if encoding is Encoding.JSON and isinstance(value[field], bytes):
        value[field] = value[field].hex()
    frame = _frame(value, encoding)
    outcome = _outcome(frame, encoding)
    if isinstance(outcome, DecodeError):
        assert outcome.code in DECODE_CODES
        if field != "id":  # the error can be matched to its command
            assert outcome.command_id == VALID[kind]["id"]
    else:
        assert decode_client(encode(outcome, encoding), encoding) == outcome

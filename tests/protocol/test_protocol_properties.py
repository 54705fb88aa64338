"""Property tests: round trips of every message type, schema agreement, and decoder fuzzing.

Strategies are derived from the message classes themselves (``msgspec.inspect``), so every
generated message respects the bounds declared in the code, and a new message or field is
covered without touching this file.
"""

import json
import math
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import msgpack
import msgspec
import msgspec.inspect as mi
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocol import (
    CLIENT_MESSAGE_TYPES,
    ERROR_CODES,
    RESULT_TYPES,
    SERVER_MESSAGE_TYPES,
    DecodeError,
    Encoding,
    Message,
    RoomState,
    decode_client,
    decode_result,
    decode_server,
    encode,
    to_dict,
)
from protocol.tools.generate import schema

PROPERTY = settings(
    max_examples=40,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
FUZZ = settings(PROPERTY, max_examples=600)

VECTORS = Path(__file__).resolve().parents[2] / "protocol" / "vectors"

# --------------------------------------------------------------------------------------------
# Strategies derived from the message definitions
# --------------------------------------------------------------------------------------------

_OVERRIDES: dict[tuple[type[Any], str], st.SearchStrategy[Any]] = {
    # Snapshot dice: 0 or 5 faces (a rule JSON Schema and msgspec bounds cannot express alone).
    (RoomState, "dice"): st.one_of(
        st.just(()), st.tuples(*[st.integers(min_value=1, max_value=6)] * 5)
    ),
}


def _int_bounds(info: mi.IntType) -> tuple[int, int]:
    low = info.ge if info.ge is not None else (info.gt + 1 if info.gt is not None else -(2**63))
    high = info.le if info.le is not None else (info.lt - 1 if info.lt is not None else 2**63 - 1)
    return low, high


def strategy_for(info: mi.Type) -> st.SearchStrategy[Any]:
    """A strategy of valid Python values for a msgspec type description."""
    if isinstance(info, mi.Metadata):
        return strategy_for(info.type)
    if isinstance(info, mi.IntType):
        low, high = _int_bounds(info)
        return st.integers(min_value=low, max_value=high)
    if isinstance(info, mi.FloatType):
        return st.floats(
            min_value=info.ge if info.ge is not None else -1e9,
            max_value=info.le if info.le is not None else 1e9,
            allow_nan=False,
            allow_infinity=False,
        )
    if isinstance(info, mi.StrType):
        low, high = info.min_length or 0, info.max_length if info.max_length is not None else 40
        if info.pattern is not None:
            return st.from_regex(info.pattern, fullmatch=True).filter(
                lambda text: low <= len(text) <= high and not text.endswith("\n")
            )
        return st.text(min_size=low, max_size=high)
    if isinstance(info, mi.BoolType):
        return st.booleans()
    if isinstance(info, mi.NoneType):
        return st.none()
    if isinstance(info, mi.EnumType):
        return st.sampled_from(list(info.cls))
    if isinstance(info, mi.LiteralType):
        return st.sampled_from(info.values)
    if isinstance(info, mi.VarTupleType | mi.ListType):
        return st.lists(
            strategy_for(info.item_type),
            min_size=info.min_length or 0,
            max_size=info.max_length if info.max_length is not None else 4,
        ).map(tuple)
    if isinstance(info, mi.DictType):
        return st.dictionaries(
            strategy_for(info.key_type),
            strategy_for(info.value_type),
            max_size=info.max_length if info.max_length is not None else 6,
        )
    if isinstance(info, mi.UnionType):
        return st.one_of(*[strategy_for(option) for option in info.types])
    if isinstance(info, mi.StructType):
        return message_strategy(info.cls)
    raise NotImplementedError(f"no strategy for {info!r}")


@cache
def message_strategy(cls: type[Any]) -> st.SearchStrategy[Any]:
    """A strategy of valid instances of a message or object class."""
    info = mi.type_info(cls)
    assert isinstance(info, mi.StructType)
    fields: dict[str, st.SearchStrategy[Any]] = {}
    for field in info.fields:
        if (cls, field.name) in _OVERRIDES:
            fields[field.name] = _OVERRIDES[(cls, field.name)]
        else:
            fields[field.name] = strategy_for(field.type)
    return st.builds(cls, **fields)


ALL_TYPES = {**CLIENT_MESSAGE_TYPES, **SERVER_MESSAGE_TYPES}
DECODE_CODES = {code for code, info in ERROR_CODES.items() if info.category == "decode"}


@cache
def _validator(direction: str) -> jsonschema.protocols.Validator:
    document = schema()
    root = {"$defs": document["$defs"], "$ref": f"#/$defs/{direction}"}
    validator_class = jsonschema.validators.validator_for(document)
    return validator_class(root)


def _decoder(tag: str) -> Callable[[Any, Encoding], Message]:
    return decode_client if tag in CLIENT_MESSAGE_TYPES else decode_server


# --------------------------------------------------------------------------------------------
# Round trips
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("tag", list(ALL_TYPES))
@PROPERTY
@given(data=st.data())
def test_round_trip_in_both_encodings(tag: str, data: st.DataObject) -> None:
    message = data.draw(message_strategy(ALL_TYPES[tag]))
    decode = _decoder(tag)
    text = encode(message, Encoding.JSON)
    binary = encode(message, Encoding.MSGPACK)
    assert isinstance(text, str)
    assert isinstance(binary, bytes)
    assert decode(text, Encoding.JSON) == message
    assert decode(binary, Encoding.MSGPACK) == message
    # Both encodings carry the same value, with `type` first.
    value = to_dict(message)
    assert next(iter(value)) == "type"
    assert msgpack.unpackb(binary, raw=False) == value
    assert json.loads(text) == value
    # Canonical: encoding again gives the same bytes.
    assert encode(decode(binary, Encoding.MSGPACK), Encoding.MSGPACK) == binary
    assert encode(decode(text, Encoding.JSON), Encoding.JSON) == text


@pytest.mark.parametrize("tag", list(ALL_TYPES))
@settings(PROPERTY, max_examples=15)
@given(data=st.data())
def test_generated_messages_validate_against_schema(tag: str, data: st.DataObject) -> None:
    message = data.draw(message_strategy(ALL_TYPES[tag]))
    direction = "ClientMessage" if tag in CLIENT_MESSAGE_TYPES else "ServerMessage"
    _validator(direction).validate(to_dict(message))


@pytest.mark.parametrize("command", list(RESULT_TYPES))
@settings(PROPERTY, max_examples=15)
@given(data=st.data())
def test_ack_results_round_trip(command: str, data: st.DataObject) -> None:
    result = data.draw(message_strategy(RESULT_TYPES[command]))
    value = msgspec.json.decode(msgspec.json.encode(result))
    assert value["command"] == command
    assert decode_result(command, value) == result
    del value["command"]  # a v1.0 result: read by the command that was sent
    assert decode_result(command, value) == result


# --------------------------------------------------------------------------------------------
# Fuzzing: the decoders raise DecodeError and nothing else
# --------------------------------------------------------------------------------------------


def _decode_all_ways(frame: str | bytes) -> None:
    """Feed a frame to every decoder; anything but DecodeError fails the test."""
    for decode in (decode_client, decode_server):
        for encoding in Encoding:
            failure: DecodeError | None = None
            try:
                message = decode(frame, encoding)
            except DecodeError as exc:
                failure = exc
            if failure is None:
                # Whatever decodes re-encodes canonically and decodes to the same message.
                assert decode(encode(message, encoding), encoding) == message
                continue
            assert failure.code in DECODE_CODES
            assert failure.command_id is None or 1 <= len(failure.command_id) <= 64
            reply = failure.to_message()
            assert decode_server(encode(reply, Encoding.JSON), Encoding.JSON) == reply


@FUZZ
@given(st.binary(max_size=300))
def test_fuzz_random_bytes(frame: bytes) -> None:
    _decode_all_ways(frame)


@FUZZ
@given(st.text(max_size=300))
def test_fuzz_random_text(frame: str) -> None:
    _decode_all_ways(frame)


_FIELD_NAMES = sorted(
    {"type", "id", "x"} | {field for cls in ALL_TYPES.values() for field in cls.__struct_fields__}
)
_TAGS = st.sampled_from([*ALL_TYPES, "", "TYPE", "ping\n"])

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**64), max_value=2**64),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=70),
    _TAGS,
    st.integers(min_value=-2, max_value=9),
)
_json_values = st.recursive(
    _scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=6),
        st.dictionaries(st.sampled_from(_FIELD_NAMES) | st.text(max_size=5), children, max_size=6),
    ),
    max_leaves=30,
)
_maps = st.dictionaries(st.sampled_from(_FIELD_NAMES), _json_values, max_size=10).flatmap(
    lambda base: _TAGS.map(lambda tag: {"type": tag, **base}) | st.just(base)
)


@FUZZ
@given(_maps)
def test_fuzz_json_like_maps(value: dict[str, Any]) -> None:
    _decode_all_ways(json.dumps(value, allow_nan=True))
    try:
        binary = msgpack.packb(value, use_bin_type=True)
    except OverflowError:  # integers beyond 64 bits do not exist in MessagePack
        return
    _decode_all_ways(binary)


_msgpack_extras = st.one_of(
    st.binary(max_size=8),
    st.builds(msgpack.ExtType, st.integers(min_value=0, max_value=127), st.binary(max_size=8)),
    st.just(math.nan),
)


@FUZZ
@given(
    st.dictionaries(
        st.sampled_from(_FIELD_NAMES) | st.binary(max_size=4) | st.integers(),
        _json_values | _msgpack_extras,
        max_size=8,
    )
)
def test_fuzz_msgpack_specific_values(value: dict[Any, Any]) -> None:
    try:
        binary = msgpack.packb(value, use_bin_type=True, strict_types=False)
    except (OverflowError, ValueError):
        return
    _decode_all_ways(binary)


def _vector_frames() -> list[str | bytes]:
    frames: list[str | bytes] = []
    for name in ("client.json", "server.json"):
        for vector in json.loads((VECTORS / name).read_text(encoding="utf-8"))["vectors"]:
            frames.append(vector["json"])
            frames.append(bytes.fromhex(vector["msgpack_hex"]))
    return frames


@FUZZ
@given(
    frame=st.sampled_from(_vector_frames()),
    edits=st.lists(
        st.tuples(
            st.sampled_from(["flip", "insert", "delete", "truncate"]),
            st.integers(min_value=0, max_value=10**6),
            st.integers(min_value=0, max_value=255),
        ),
        min_size=1,
        max_size=4,
    ),
)
def test_fuzz_mutated_valid_frames(frame: str | bytes, edits: list[tuple[str, int, int]]) -> None:
    data = bytearray(frame.encode("utf-8") if isinstance(frame, str) else frame)
    for operation, where, byte in edits:
        position = where % (len(data) + 1)
        if operation == "flip" and position < len(data):
            data[position] ^= byte or 1
        elif operation == "insert":
            data.insert(position, byte)
        elif operation == "delete" and position < len(data):
            del data[position]
        elif operation == "truncate":
            del data[position:]
    _decode_all_ways(bytes(data))
    _decode_all_ways(bytes(data).decode("utf-8", "replace"))


@FUZZ
@given(data=st.data())
def test_fuzz_one_field_replaced(data: st.DataObject) -> None:
    tag = data.draw(st.sampled_from(list(ALL_TYPES)))
    value = to_dict(data.draw(message_strategy(ALL_TYPES[tag])))
    field = data.draw(st.sampled_from(list(value)))
    value[field] = data.draw(_json_values)
    _decode_all_ways(json.dumps(value, allow_nan=True))

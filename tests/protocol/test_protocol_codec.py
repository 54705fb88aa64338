"""The codec: canonical encoding, every decode error code in both encodings, reply builders."""

import json
import math
from typing import Any

import msgpack
import pytest

import protocol.messages as pm
from protocol import (
    ERROR_CODES,
    MAX_CLIENT_FRAME_BYTES,
    MAX_NESTING_DEPTH,
    Ack,
    Box,
    CreateRoom,
    DecodeError,
    Encoding,
    Error,
    ErrorCode,
    Hello,
    HelloResult,
    Hold,
    Join,
    JoinResult,
    Ping,
    Release,
    Roll,
    Rolled,
    RollResult,
    RoomOptions,
    Rules,
    Score,
    Spectators,
    Start,
    decode_client,
    decode_result,
    decode_server,
    decode_server_liberally,
    encode,
    encode_json,
    encode_msgpack,
    make_ack,
    make_error,
    to_dict,
)
from protocol.types import FirstPlayer


def frame_of(value: Any, encoding: Encoding) -> str | bytes:
    """Serialise an arbitrary value the way a (possibly buggy) peer would."""
    if encoding is Encoding.JSON:
        return json.dumps(value, ensure_ascii=False)
    data: bytes = msgpack.packb(value, use_bin_type=True)
    return data


def decode_error(frame: Any, encoding: Encoding, **kwargs: Any) -> DecodeError:
    with pytest.raises(DecodeError) as info:
        decode_client(frame, encoding, **kwargs)
    return info.value


BOTH = pytest.mark.parametrize("encoding", list(Encoding))

# --------------------------------------------------------------------------------------------
# Encoding
# --------------------------------------------------------------------------------------------


def test_encode_json_is_compact_text_with_type_first() -> None:
    text = encode(Join(id="c1", room="r1", name="Zoë"), Encoding.JSON)
    assert text == (
        '{"type":"join","id":"c1","room":"r1","name":"Zoë","invite_code":null,"join_key":null,'
        '"seed":null}'
    )


def test_encode_msgpack_is_binary_with_type_first() -> None:
    data = encode(Ping(id="c1"), Encoding.MSGPACK)
    assert data == bytes.fromhex("82a474797065a470696e67a26964a26331")
    assert encode_msgpack(Ping(id="c1")) == data
    assert encode_json(Ping(id="c1")) == '{"type":"ping","id":"c1"}'


def test_encode_accepts_the_encoding_as_a_string() -> None:
    assert encode(Ping(id="1"), "json") == '{"type":"ping","id":"1"}'  # type: ignore[call-overload]


def test_encode_writes_defaults_and_nested_objects() -> None:
    value = to_dict(CreateRoom(id="c", seats=2, public=True))
    assert value == {
        "type": "create_room",
        "id": "c",
        "seats": 2,
        "public": True,
        "turn_seconds": 0,
        "options": {
            "rules": "yahtzee",
            "extra_yahtzees": "on",
            "joker": "forced",
            "first_player": "roll_off",
            "upper_first": "off",
            "bonus_turn": "off",
        },
        "create_key": None,
        "computers": [],
        "hints": True,
        "computer_delay_ms": None,
        "auto_start": False,
        "correspondence": None,
        "rated": False,
    }


def test_equal_messages_give_identical_bytes() -> None:
    one = CreateRoom(id="c", seats=2, public=True, options=RoomOptions(rules=Rules.YATZY))
    two = CreateRoom(options=RoomOptions(rules=Rules.YATZY), public=True, seats=2, id="c")
    for encoding in Encoding:
        assert encode(one, encoding) == encode(two, encoding)


# --------------------------------------------------------------------------------------------
# Decoding valid input
# --------------------------------------------------------------------------------------------


@BOTH
def test_decode_accepts_any_key_order_unknown_fields_and_absent_optionals(
    encoding: Encoding,
) -> None:
    value = {"extra": {"nested": [1.5, None]}, "box": "chance", "id": "s1", "type": "score"}
    assert decode_client(frame_of(value, encoding), encoding) == Score(id="s1", box=Box.CHANCE)
    assert decode_client(frame_of({"type": "roll", "id": "r"}, encoding), encoding) == Roll(id="r")


@BOTH
def test_decode_accepts_null_for_nullable_optionals(encoding: Encoding) -> None:
    value = {"type": "hello", "id": "h", "client": None}
    assert decode_client(frame_of(value, encoding), encoding) == Hello(id="h")


PLAY_COMMANDS: list[Any] = [
    Start(id="c", expect_seq=7),
    Roll(id="c", keep=(1,), expect_seq=7),
    Hold(id="c", dice=(2,), expect_seq=7),
    Release(id="c", dice=(2,), expect_seq=7),
    Score(id="c", box=Box.CHANCE, expect_seq=7),
]


@BOTH
@pytest.mark.parametrize("command", PLAY_COMMANDS, ids=lambda c: type(c).__name__)
def test_expect_seq_round_trips_and_is_optional(encoding: Encoding, command: Any) -> None:
    assert decode_client(encode(command, encoding), encoding) == command
    value = to_dict(command)
    assert value["expect_seq"] == 7
    for absent in (
        {k: v for k, v in value.items() if k != "expect_seq"},
        {**value, "expect_seq": None},
    ):
        decoded = decode_client(frame_of(absent, encoding), encoding)
        assert decoded.expect_seq is None
    zero = decode_client(frame_of({**value, "expect_seq": 0}, encoding), encoding)
    assert zero.expect_seq == 0


@BOTH
def test_expect_seq_must_be_an_integer(encoding: Encoding) -> None:
    value = {"type": "hold", "id": "o", "dice": [0], "expect_seq": "3"}
    error = decode_error(frame_of(value, encoding), encoding)
    assert (error.code, error.command_id) == ("invalid_field", "o")


@BOTH
def test_rolled_joker_is_written_and_defaults_to_null(encoding: Encoding) -> None:
    rolled = Rolled(
        room="r",
        seq=3,
        player="p",
        dice=(6, 6, 6, 6, 6),
        roll_number=1,
        rolls_left=2,
        held=(),
        preview=(),
        yahtzee_bonus_pending=True,
        joker=True,
    )
    assert decode_server(encode(rolled, encoding), encoding) == rolled
    value = to_dict(rolled)
    assert list(value)[-1] == "joker"
    del value["joker"]
    assert decode_server(frame_of(value, encoding), encoding).joker is None  # an older server
    assert decode_server(frame_of({**value, "joker": False}, encoding), encoding).joker is False


def test_decode_accepts_bytes_like_frames() -> None:
    data = encode(Ping(id="p"), Encoding.MSGPACK)
    for frame in (data, bytearray(data), memoryview(data)):
        assert decode_client(frame, Encoding.MSGPACK) == Ping(id="p")


def test_decode_accepts_non_minimal_msgpack() -> None:
    # uint64 for 4, str8 for the id.
    data = bytes.fromhex(
        "84"
        "a474797065"
        "ab6372656174655f726f6f6d"  # "type": "create_room"
        "a26964"
        "d9017a"  # "id": str8 "z"
        "a57365617473"
        "cf0000000000000004"  # "seats": uint64 4
        "a67075626c6963"
        "c3"  # "public": true
    )
    assert decode_client(data, Encoding.MSGPACK) == CreateRoom(id="z", seats=4, public=True)


@BOTH
def test_duplicate_keys_keep_the_last(encoding: Encoding) -> None:
    if encoding is Encoding.JSON:
        frame: str | bytes = '{"type":"ping","id":"a","id":"b"}'
    else:
        frame = bytes.fromhex("83a474797065a470696e67a26964a161a26964a162")
    assert decode_client(frame, encoding) == Ping(id="b")


@BOTH
def test_unicode_lengths_count_code_points(encoding: Encoding) -> None:
    name = "🎲" * 32  # 64 UTF-16 units, 128 UTF-8 bytes
    value = {"type": "join", "id": "j", "room": "r", "name": name}
    assert decode_client(frame_of(value, encoding), encoding) == Join(id="j", room="r", name=name)


def test_decode_server_uses_a_larger_default_frame_limit() -> None:
    message = Spectators(room="r", seq=1, count=3)
    padded = json.dumps({**to_dict(message), "padding": "x" * (2 * MAX_CLIENT_FRAME_BYTES)})
    assert decode_server(padded, Encoding.JSON) == message
    with pytest.raises(DecodeError) as info:
        decode_server(padded, Encoding.JSON, max_frame_bytes=MAX_CLIENT_FRAME_BYTES)
    assert info.value.code == "frame_too_large"


def test_invalid_encoding_argument_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="cbor"):
        decode_client(b"", "cbor")  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------------
# Every decode error code
# --------------------------------------------------------------------------------------------


def test_wrong_frame_type() -> None:
    text = encode(Ping(id="p"), Encoding.JSON)
    binary = encode(Ping(id="p"), Encoding.MSGPACK)
    assert decode_error(text, Encoding.MSGPACK).code == "wrong_frame_type"
    assert decode_error(binary, Encoding.JSON).code == "wrong_frame_type"
    assert decode_error(bytearray(binary), Encoding.JSON).code == "wrong_frame_type"


@BOTH
def test_non_frame_objects_are_malformed(encoding: Encoding) -> None:
    assert decode_error(12, encoding).code == "malformed"


@BOTH
def test_frame_too_large_is_checked_in_bytes_before_parsing(encoding: Encoding) -> None:
    value = {"type": "join", "id": "big", "room": "r", "name": "é" * 20}
    frame = frame_of(value, encoding)
    size = len(frame.encode() if isinstance(frame, str) else frame)
    assert decode_client(frame, encoding, max_frame_bytes=size)
    error = decode_error(frame, encoding, max_frame_bytes=size - 1)
    assert (error.code, error.command_id) == ("frame_too_large", None)
    assert str(size) in error.message


def test_frame_too_large_counts_utf8_bytes_not_characters() -> None:
    frame = json.dumps({"type": "ping", "id": "p", "x": "é" * 10}, ensure_ascii=False)
    assert len(frame) < 50 < len(frame.encode())
    assert decode_error(frame, Encoding.JSON, max_frame_bytes=50).code == "frame_too_large"


@pytest.mark.parametrize(
    "frame",
    [
        "",
        "{",
        "[1,2",
        '{"type":"ping","id":"1"}x',
        '{"type":"ping","id":"1","x":NaN}',
        '{"type":"ping","id":"1","x":Infinity}',
        '{"type":"ping","id":"1","x":"\\ud800"}',
        "{'type':'ping'}",
        '{"type":"ping","id":"\ud800"}',  # a lone surrogate in the str itself
    ],
)
def test_malformed_json(frame: str) -> None:
    error = decode_error(frame, Encoding.JSON)
    assert (error.code, error.command_id) == ("malformed", None)


@pytest.mark.parametrize(
    "hex_frame",
    [
        "",
        "c1",
        "82a474797065",  # truncated map
        "81a474797065a470696e67c0",  # trailing byte
        "81a474797065a2c328",  # invalid UTF-8 in a str
        "82a474797065a470696e670102",  # int key
        "82a474797065a470696e67c4016b01",  # bin key
        "d6ff00000001",  # a timestamp at the top level
    ],
)
def test_malformed_msgpack(hex_frame: str) -> None:
    error = decode_error(bytes.fromhex(hex_frame), Encoding.MSGPACK)
    assert (error.code, error.command_id) == ("malformed", None)


@BOTH
@pytest.mark.parametrize("value", [[], "ping", 1, None, True])
def test_top_level_must_be_a_map(encoding: Encoding, value: Any) -> None:
    assert decode_error(frame_of(value, encoding), encoding).code == "malformed"


@BOTH
def test_too_deep_keeps_the_id(encoding: Encoding) -> None:
    nested: Any = []
    for _ in range(MAX_NESTING_DEPTH - 2):
        nested = [nested]
    ok = {"type": "ping", "id": "d", "x": nested}  # exactly MAX_NESTING_DEPTH levels
    assert decode_client(frame_of(ok, encoding), encoding) == Ping(id="d")
    too_deep = {"type": "ping", "id": "d", "x": [nested]}
    error = decode_error(frame_of(too_deep, encoding), encoding)
    assert (error.code, error.command_id) == ("too_deep", "d")


def test_too_deep_for_the_parser() -> None:
    depth = 100_000
    text = "[" * depth + "]" * depth
    assert decode_error(text, Encoding.JSON, max_frame_bytes=10**6).code == "too_deep"
    data = b"\x91" * depth + b"\xc0"
    assert decode_error(data, Encoding.MSGPACK, max_frame_bytes=10**6).code == "too_deep"


@BOTH
def test_unknown_type_keeps_the_id(encoding: Encoding) -> None:
    for tag in ("teleport", "welcome", "Ping", ""):
        error = decode_error(frame_of({"type": tag, "id": "u"}, encoding), encoding)
        assert (error.code, error.command_id) == ("unknown_type", "u")
    with pytest.raises(DecodeError) as info:
        decode_server(frame_of({"type": "ping", "id": "u"}, encoding), encoding)
    assert info.value.code == "unknown_type"


@BOTH
@pytest.mark.parametrize(
    ("value", "command_id"),
    [
        ({"id": "m"}, "m"),
        ({"type": "join", "id": "m", "room": "r"}, "m"),
        ({"type": "score", "id": "m"}, "m"),
        ({"type": "ping"}, None),
        ({"type": "hold", "id": "m"}, "m"),
    ],
)
def test_missing_field(encoding: Encoding, value: dict[str, Any], command_id: str | None) -> None:
    error = decode_error(frame_of(value, encoding), encoding)
    assert (error.code, error.command_id) == ("missing_field", command_id)


@BOTH
@pytest.mark.parametrize(
    "value",
    [
        {"type": 3, "id": "i"},
        {"type": None, "id": "i"},
        {"type": "create_room", "id": "i", "seats": "4", "public": True},
        {"type": "create_room", "id": "i", "seats": 4.0, "public": True},
        {"type": "create_room", "id": "i", "seats": True, "public": True},
        {"type": "create_room", "id": "i", "seats": 4, "public": 1},
        {"type": "create_room", "id": "i", "seats": 4, "public": True, "options": []},
        {"type": "create_room", "id": "i", "seats": 4, "public": True, "options": {"joker": "x"}},
        {"type": "roll", "id": "i", "keep": None},
        {"type": "roll", "id": "i", "keep": "0,1"},
        {"type": "roll", "id": "i", "keep": [0.0]},
        {"type": "score", "id": "i", "box": "bonus"},
        {"type": "score", "id": "i", "box": "Chance"},
        {"type": "get_room", "id": "i", "room": "a b"},
        {"type": "get_room", "id": "i", "room": "abc\n"},
        {"type": "get_room", "id": "i", "room": "é"},
        {"type": "hello", "id": "i", "client": 7},
    ],
)
def test_invalid_field(encoding: Encoding, value: dict[str, Any]) -> None:
    error = decode_error(frame_of(value, encoding), encoding)
    assert (error.code, error.command_id) == ("invalid_field", "i")


def test_msgpack_floats_bin_and_ext_where_a_value_is_expected_are_invalid() -> None:
    for bad in (b"Ann", msgpack.ExtType(1, b"x"), math.nan, math.inf, 3.0):
        value = {"type": "join", "id": "i", "room": "r", "name": bad}
        error = decode_error(frame_of(value, Encoding.MSGPACK), Encoding.MSGPACK)
        assert (error.code, error.command_id) == ("invalid_field", "i")


@BOTH
@pytest.mark.parametrize(
    "value",
    [
        {"type": "create_room", "id": "o", "seats": 0, "public": True},
        {"type": "create_room", "id": "o", "seats": 9, "public": True},
        {"type": "create_room", "id": "o", "seats": 2, "public": True, "turn_seconds": 3601},
        {"type": "create_room", "id": "o", "seats": 2**63, "public": True},
        {"type": "create_room", "id": "o", "seats": -(2**63), "public": True},
        {"type": "roll", "id": "o", "keep": [5]},
        {"type": "roll", "id": "o", "keep": [-1]},
        {"type": "roll", "id": "o", "keep": [0, 1, 2, 3, 4, 0]},
        {"type": "hold", "id": "o", "dice": [0, 0, 0, 0, 0, 0]},
        {"type": "rejoin", "id": "o", "room": "r", "token": "t", "last_seq": -1},
        {"type": "rejoin", "id": "o", "room": "r", "token": "t", "last_seq": 2**53},
        {"type": "roll", "id": "o", "expect_seq": -1},
        {"type": "score", "id": "o", "box": "chance", "expect_seq": 2**53},
        {"type": "join", "id": "o", "room": "r", "name": ""},
        {"type": "join", "id": "o", "room": "", "name": "n"},
        {"type": "rejoin", "id": "o", "room": "r", "token": ""},
        # v1.2
        {"type": "create_room", "id": "o", "seats": 2, "public": True, "computer_delay_ms": -1},
        {"type": "create_room", "id": "o", "seats": 2, "public": True, "computer_delay_ms": 10001},
        {
            "type": "create_room",
            "id": "o",
            "seats": 8,
            "public": True,
            "computers": [{"level": "easy"}] * 8,
        },
    ],
)
def test_out_of_range(encoding: Encoding, value: dict[str, Any]) -> None:
    error = decode_error(frame_of(value, encoding), encoding)
    assert (error.code, error.command_id) == ("out_of_range", "o")


def test_json_numbers_beyond_64_bits_are_out_of_range() -> None:
    for number in ("123456789012345678901234567890", "9" * 5000, "1e400"):
        frame = '{"type":"rejoin","id":"o","room":"r","token":"t","last_seq":' + number + "}"
        assert decode_error(frame, Encoding.JSON).code == "out_of_range"


@BOTH
@pytest.mark.parametrize(
    ("value", "command_id"),
    [
        ({"type": "join", "id": "s", "room": "r", "name": "x" * 33}, "s"),
        ({"type": "join", "id": "s", "room": "r", "name": "🎲" * 33}, "s"),
        ({"type": "join", "id": "s", "room": "r" * 33, "name": "n"}, "s"),
        ({"type": "hello", "id": "s", "client": "c" * 65}, "s"),
        ({"type": "rejoin", "id": "s", "room": "r", "token": "t" * 129}, "s"),
        ({"type": "ping", "id": "x" * 65}, None),
    ],
)
def test_string_too_long(encoding: Encoding, value: dict[str, Any], command_id: str | None) -> None:
    error = decode_error(frame_of(value, encoding), encoding)
    assert (error.code, error.command_id) == ("string_too_long", command_id)


@BOTH
@pytest.mark.parametrize("bad_id", [7, None, "", "x" * 65, ["a"]])
def test_an_invalid_id_is_not_recovered(encoding: Encoding, bad_id: Any) -> None:
    error = decode_error(frame_of({"type": "teleport", "id": bad_id}, encoding), encoding)
    assert (error.code, error.command_id) == ("unknown_type", None)


def test_every_decode_code_is_in_the_table() -> None:
    decode_codes = {code for code, info in ERROR_CODES.items() if info.category == "decode"}
    assert decode_codes == {
        "malformed",
        "unknown_type",
        "missing_field",
        "invalid_field",
        "out_of_range",
        "frame_too_large",
        "too_deep",
        "string_too_long",
        "wrong_frame_type",
    }


def test_error_messages_are_bounded() -> None:
    frame = json.dumps({"type": "x" * 10_000, "id": "i"})
    assert len(decode_error(frame, Encoding.JSON).message) <= 256
    frame = json.dumps({"type": "score", "id": "i", "box": "b" * 10_000})
    assert len(decode_error(frame, Encoding.JSON).message) <= 256


# --------------------------------------------------------------------------------------------
# Replies
# --------------------------------------------------------------------------------------------


def test_decode_error_to_message() -> None:
    error = decode_error('{"type":"teleport","id":"t1"}', Encoding.JSON)
    reply = error.to_message(seq=7)
    assert reply == Error(
        id="t1", code="unknown_type", message=error.message, seq=7, retryable=False
    )
    assert str(error).startswith("unknown_type: ")


def test_make_error_uses_the_table() -> None:
    reply = make_error(ErrorCode.RATE_LIMITED, "c9")
    assert reply == Error(
        id="c9",
        code="rate_limited",
        message=ERROR_CODES["rate_limited"].meaning,
        seq=None,
        retryable=True,
    )
    assert encode(reply, Encoding.JSON).startswith(
        '{"type":"error","id":"c9","code":"rate_limited"'
    )
    custom = make_error("room_full", message="No seat left in r-1.", seq=3)
    assert (custom.id, custom.message, custom.seq, custom.retryable) == (
        None,
        "No seat left in r-1.",
        3,
        False,
    )
    assert len(make_error("conflict", message="m" * 5000).message) == 1024


def test_make_error_rejects_undocumented_codes() -> None:
    with pytest.raises(ValueError, match="ERROR_CODES"):
        make_error("it_broke")


def test_make_ack_builds_the_typed_result_of_its_command() -> None:
    join = Join(id="j1", room="r", name="Ann")
    ack = make_ack(join, JoinResult(player="p", seat=2, token="t"), seq=4)
    assert ack == Ack(id="j1", seq=4, result=JoinResult(player="p", seat=2, token="t"))
    received = decode_server(encode(ack, Encoding.MSGPACK), Encoding.MSGPACK)
    assert received == ack
    assert make_ack(Hello(id="h1")) == Ack(id="h1", seq=None, result=HelloResult())
    assert make_ack(Roll(id="r1"), seq=7).result == RollResult()


def test_ack_results_are_tagged_with_their_command_on_the_wire() -> None:
    with pytest.raises(TypeError):  # a create_room result has required fields
        make_ack(CreateRoom(id="c", seats=2, public=True))
    ack = make_ack(Roll(id="r1"), seq=7)
    assert encode(ack, Encoding.JSON) == (
        '{"type":"ack","id":"r1","seq":7,"result":{"command":"roll"}}'
    )


def test_make_ack_refuses_ping_and_a_result_of_another_command() -> None:
    with pytest.raises(ValueError, match="not answered by an ack"):
        make_ack(Ping(id="p1"))
    with pytest.raises(ValueError, match="RollResult"):
        make_ack(Roll(id="r1"), HelloResult())


def test_decode_result_reads_an_untagged_v10_result_by_its_command() -> None:
    assert decode_result("hello", {}) == HelloResult()
    value = {"player": "p", "seat": 2, "token": "t"}
    assert decode_result("join", value) == JoinResult(player="p", seat=2, token="t")


def test_an_untagged_v10_ack_is_refused_strictly_and_read_liberally() -> None:
    frame = '{"type":"ack","id":"j1","seq":4,"result":{"player":"p","seat":2,"token":"t"}}'
    with pytest.raises(DecodeError) as info:
        decode_server(frame, Encoding.JSON)
    assert info.value.code == "missing_field"
    commands = {"j1": "join"}
    expected = Ack(id="j1", seq=4, result=JoinResult(player="p", seat=2, token="t"))
    assert decode_server_liberally(frame, Encoding.JSON, commands.get) == expected
    binary = msgpack.packb(json.loads(frame))
    assert decode_server_liberally(binary, Encoding.MSGPACK, commands.get) == expected


def test_liberal_decoding_keeps_the_strict_error_when_it_cannot_help() -> None:
    unknown_id = '{"type":"ack","id":"x","seq":4,"result":{}}'
    with pytest.raises(DecodeError) as info:
        decode_server_liberally(unknown_id, Encoding.JSON, {}.get)
    assert info.value.code == "missing_field"
    with pytest.raises(DecodeError) as info:
        decode_server_liberally("{", Encoding.JSON, {}.get)
    assert info.value.code == "malformed"
    bad = '{"type":"ack","id":"j1","seq":4,"result":{"player":"p","seat":9,"token":"t"}}'
    with pytest.raises(DecodeError) as info:
        decode_server_liberally(bad, Encoding.JSON, {"j1": "join"}.get)
    assert info.value.code == "out_of_range"


def test_decode_result_errors() -> None:
    with pytest.raises(DecodeError) as info:
        decode_result("ping", {})
    assert info.value.code == "unknown_type"
    with pytest.raises(DecodeError) as info:
        decode_result("join", {"player": "p", "seat": 9, "token": "t"})
    assert info.value.code == "out_of_range"
    with pytest.raises(DecodeError) as info:
        decode_result("create_room", {"invite_code": None})
    assert info.value.code == "missing_field"


# --------------------------------------------------------------------------------------------
# v1.2: hint results and expected scores
# --------------------------------------------------------------------------------------------

_ROLL_OPTION = {"kind": "roll", "keep": [0, 1], "box": None, "expected": 251.842}


def _hint_ack(**changes: Any) -> dict[str, Any]:
    result = {"command": "hint", "player": "p", "rolls_left": 2, "options": [_ROLL_OPTION]}
    return {"type": "ack", "id": "h", "seq": 7, "result": {**result, **changes}}


@BOTH
def test_a_hint_result_decodes_with_its_expected_scores_as_floats(encoding: Encoding) -> None:
    message = decode_server(frame_of(_hint_ack(), encoding), encoding)
    assert to_dict(message)["result"]["options"] == [_ROLL_OPTION]
    whole = _hint_ack(options=[{**_ROLL_OPTION, "expected": 250}])  # an integer is a number too
    option = to_dict(decode_server(frame_of(whole, encoding), encoding))["result"]["options"][0]
    assert option["expected"] == 250.0
    assert isinstance(option["expected"], float)


@BOTH
@pytest.mark.parametrize(
    "changes",
    [
        {"options": []},
        {"options": [_ROLL_OPTION] * 4},
        {"options": [{**_ROLL_OPTION, "expected": -0.5}]},
        {"options": [{**_ROLL_OPTION, "expected": 2000.5}]},
        {"rolls_left": 4},
    ],
    ids=["no_option", "four_options", "negative_expected", "expected_too_big", "rolls_left"],
)
def test_a_hint_result_out_of_range_is_refused(encoding: Encoding, changes: dict[str, Any]) -> None:
    with pytest.raises(DecodeError) as info:
        decode_server(frame_of(_hint_ack(**changes), encoding), encoding)
    assert info.value.code == "out_of_range"


def test_a_nan_expected_score_is_refused_in_msgpack() -> None:
    value = _hint_ack(options=[{**_ROLL_OPTION, "expected": math.nan}])
    with pytest.raises(DecodeError):
        decode_server(frame_of(value, Encoding.MSGPACK), Encoding.MSGPACK)


@BOTH
@pytest.mark.parametrize(
    ("message", "field"),
    [
        (
            pm.GameOver(
                room="r1",
                seq=9,
                results=(
                    pm.Standing(player="p1", name="Ann", total=200, place=1, forfeited=False),
                ),
                server_seed="ab" * 32,
            ),
            "server_seed",
        ),
        (
            pm.GameStarted(
                room="r1",
                seq=2,
                order=("p1",),
                first_player=FirstPlayer.SEAT_ORDER,
                dice_commitment="cd" * 32,
            ),
            "dice_commitment",
        ),
    ],
)
def test_an_anchored_field_of_a_server_message_refuses_a_final_newline(
    encoding: Encoding, message: pm.Message, field: str
) -> None:
    # msgspec's `$` matches before a final newline, JSON Schema's does not: they agree here
    value = to_dict(message)
    assert decode_server(frame_of(value, encoding), encoding) == message
    with pytest.raises(DecodeError) as info:
        decode_server(frame_of({**value, field: value[field] + "\n"}, encoding), encoding)
    assert info.value.code == "invalid_field"

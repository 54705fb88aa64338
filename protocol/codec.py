"""Pure codec: messages to frames and frames to messages, with no I/O.

``encode`` writes the canonical form: the map's keys are `type` first, then the fields in
definition order; JSON is compact (no whitespace) UTF-8 text with non-ASCII characters written
as is; MessagePack uses the smallest representation of every value (as the ``msgpack`` package
does). Equal messages therefore give identical bytes, which the golden vectors rely on.

``decode_client`` and ``decode_server`` accept any valid encoding (any key order, any integer
width, unknown fields) and turn every problem into one :class:`~protocol.errors.DecodeError`.
They check, in this order (SPEC.md section 7.2):

1. frame type (text for json, binary for msgpack)   -> ``wrong_frame_type``
2. frame size in bytes                               -> ``frame_too_large``
3. syntax: one MessagePack/JSON value, UTF-8 strings,
   string map keys                                   -> ``malformed`` (``too_deep`` for a
   nesting that defeats the parser, ``out_of_range`` for a JSON number too big to represent)
4. the top level is a map                            -> ``malformed``
5. nesting depth <= 16                               -> ``too_deep``
6. `type` present, a string, known                   -> ``missing_field`` / ``invalid_field`` /
                                                        ``unknown_type``
7. fields: present, right type, within bounds        -> ``missing_field``, ``invalid_field``,
                                                        ``out_of_range``, ``string_too_long``

From step 5 on, ``DecodeError.command_id`` holds the frame's `id` when it is a valid command id.
"""

import re
from collections.abc import Mapping
from itertools import chain
from typing import Any, Final, Literal, TypeAlias, TypeVar, cast, overload

import msgspec

from protocol.errors import DecodeError, ErrorCode
from protocol.messages import (
    CLIENT_MESSAGE_TYPES,
    RESULT_TYPES,
    SERVER_MESSAGE_TYPES,
    AckResult,
    ClientMessage,
    Message,
    ServerMessage,
)
from protocol.transport import (
    MAX_CLIENT_FRAME_BYTES,
    MAX_NESTING_DEPTH,
    MAX_SERVER_FRAME_BYTES,
    Encoding,
)
from protocol.types import MAX_ID_LENGTH

__all__ = [
    "Frame",
    "decode_body",
    "decode_client",
    "decode_result",
    "decode_server",
    "encode",
    "encode_json",
    "encode_msgpack",
    "to_dict",
]

_T = TypeVar("_T")

Frame: TypeAlias = bytes | bytearray | memoryview | str
"""A WebSocket message payload: ``str`` for a text frame, bytes-like for a binary frame."""

_MAX_DETAIL: Final = 256
_MISSING: Final = object()
_JSON_DECODER: Final = msgspec.json.Decoder()

_CLASSIFY: Final = (
    (re.compile(r"^Object missing required field"), ErrorCode.MISSING_FIELD),
    (re.compile(r"^Expected `str` of length <= "), ErrorCode.STRING_TOO_LONG),
    (re.compile(r"^Expected `\w+` (?:>=|<=|>|<|of length) "), ErrorCode.OUT_OF_RANGE),
    (re.compile(r"^(?:Integer value|Number) out of range"), ErrorCode.OUT_OF_RANGE),
)


# --------------------------------------------------------------------------------------------
# Encoding
# --------------------------------------------------------------------------------------------


_MSGPACK_ENCODER: Final = msgspec.msgpack.Encoder()
_MSGPACK_DECODER: Final = msgspec.msgpack.Decoder()
_JSON_ENCODER: Final = msgspec.json.Encoder()


def encode_msgpack(message: Message) -> bytes:
    """Encode a message as MessagePack (the payload of one binary frame)."""
    return _MSGPACK_ENCODER.encode(message)


def encode_json(message: Message) -> str:
    """Encode a message as compact JSON text (the payload of one text frame)."""
    return _JSON_ENCODER.encode(message).decode("utf-8")


@overload
def encode(message: Message, encoding: Literal[Encoding.MSGPACK]) -> bytes: ...
@overload
def encode(message: Message, encoding: Literal[Encoding.JSON]) -> str: ...
@overload
def encode(message: Message, encoding: Encoding) -> bytes | str: ...
def encode(message: Message, encoding: Encoding) -> bytes | str:
    """Encode a message for a connection: ``bytes`` for msgpack, ``str`` for json.

    Send ``bytes`` as a binary frame and ``str`` as a text frame. The output is canonical
    (deterministic). Bounds are not checked: build messages with valid values.
    """
    if Encoding(encoding) is Encoding.MSGPACK:
        return encode_msgpack(message)
    return encode_json(message)


def to_dict(message: Message) -> dict[str, Any]:
    """Return the message as the JSON-compatible map that both encodings carry.

    Enumerations become strings, tuples lists; keys are in wire order. Used by the golden
    vectors (their ``value``) and handy for logging.
    """
    value: dict[str, Any] = msgspec.json.decode(msgspec.json.encode(message))
    return value


# --------------------------------------------------------------------------------------------
# Decoding
# --------------------------------------------------------------------------------------------


def decode_client(
    frame: Frame, encoding: Encoding, *, max_frame_bytes: int = MAX_CLIENT_FRAME_BYTES
) -> ClientMessage:
    """Decode one frame received by the server into a client message.

    ``frame`` is the payload (``str`` for a text frame, bytes-like for a binary frame),
    ``encoding`` the connection's encoding and ``max_frame_bytes`` the size limit in force.
    Raises :class:`~protocol.errors.DecodeError` for every invalid input and nothing else
    (only an ``encoding`` that is not an :class:`Encoding` raises ``ValueError``).
    """
    return cast(
        ClientMessage, _decode(frame, Encoding(encoding), max_frame_bytes, CLIENT_MESSAGE_TYPES)
    )


def decode_server(
    frame: Frame, encoding: Encoding, *, max_frame_bytes: int = MAX_SERVER_FRAME_BYTES
) -> ServerMessage:
    """Decode one frame received by a client into a server message.

    Same contract as :func:`decode_client`. A client should ignore a frame that fails with
    ``unknown_type``: new server message types are a compatible change (SPEC.md section 12).
    """
    return cast(
        ServerMessage, _decode(frame, Encoding(encoding), max_frame_bytes, SERVER_MESSAGE_TYPES)
    )


def decode_result(command_type: str, result: Mapping[str, Any]) -> AckResult:
    """Read the `result` of an `ack` as the result class of the command it answers.

    ``command_type`` is the `type` of the command that was sent (the client knows it from the
    `id`), e.g. ``decode_result("join", ack.result)`` returns a :class:`JoinResult`. Raises
    :class:`~protocol.errors.DecodeError` (``unknown_type`` for a command without a result).
    """
    cls = RESULT_TYPES.get(command_type)
    if cls is None:
        raise DecodeError(ErrorCode.UNKNOWN_TYPE, f"no ack result for {_short(command_type)}")
    return cast(AckResult, _convert(result, cls, None))


def decode_body(body: bytes, cls: type[_T], *, max_bytes: int) -> _T:
    """A JSON request body of the HTTP API as the object type ``cls`` (e.g.
    :class:`~protocol.messages.SandboxRoomRequest`), checked as strictly as a frame: a
    :class:`DecodeError` with the codes of SPEC.md 9.2 (``frame_too_large`` above ``max_bytes``,
    ``malformed``, ``missing_field``, ``invalid_field``, ``out_of_range``, ...)."""
    if len(body) > max_bytes:
        raise _too_large(len(body), max_bytes)
    obj = _parse(body, Encoding.JSON)
    if not isinstance(obj, dict):
        raise DecodeError(ErrorCode.MALFORMED, f"the body must be a map, not {_kind(obj)}")
    _check_structure(obj, None)
    return cast(_T, _convert(obj, cls, None))


def _decode(
    frame: object, encoding: Encoding, limit: int, types: Mapping[str, type[Message]]
) -> Message:
    data = _payload(frame, encoding, limit)
    obj = _parse(data, encoding)
    if not isinstance(obj, dict):
        raise DecodeError(
            ErrorCode.MALFORMED, f"the top level must be a map, not {_kind(obj)}", None
        )
    command_id = _recover_id(obj)
    _check_structure(obj, command_id)
    tag = obj.get("type", _MISSING)
    if tag is _MISSING:
        raise DecodeError(
            ErrorCode.MISSING_FIELD, "Object missing required field `type`", command_id
        )
    if not isinstance(tag, str):
        raise DecodeError(
            ErrorCode.INVALID_FIELD, f"Expected `str`, got `{_kind(tag)}` - at `$.type`", command_id
        )
    cls = types.get(tag)
    if cls is None:
        raise DecodeError(ErrorCode.UNKNOWN_TYPE, f"unknown message type {_short(tag)}", command_id)
    return cast(Message, _convert(obj, cls, command_id))


def _payload(frame: object, encoding: Encoding, limit: int) -> bytes:
    if encoding is Encoding.MSGPACK:
        if isinstance(frame, str):
            raise DecodeError(
                ErrorCode.WRONG_FRAME_TYPE, "text frame on the msgpack subprotocol; use binary"
            )
        if not isinstance(frame, bytes | bytearray | memoryview):
            raise DecodeError(ErrorCode.MALFORMED, f"a frame cannot be {_kind(frame)}")
        data = bytes(frame)
    else:
        if isinstance(frame, bytes | bytearray | memoryview):
            raise DecodeError(
                ErrorCode.WRONG_FRAME_TYPE, "binary frame on the json subprotocol; use text"
            )
        if not isinstance(frame, str):
            raise DecodeError(ErrorCode.MALFORMED, f"a frame cannot be {_kind(frame)}")
        if len(frame) > limit:  # every character takes at least one byte
            raise _too_large(len(frame.encode("utf-8", "surrogatepass")), limit)
        try:
            data = frame.encode("utf-8")
        except UnicodeEncodeError:
            raise DecodeError(ErrorCode.MALFORMED, "the text is not valid UTF-8") from None
    if len(data) > limit:
        raise _too_large(len(data), limit)
    return data


def _too_large(size: int, limit: int) -> DecodeError:
    return DecodeError(ErrorCode.FRAME_TOO_LARGE, f"frame of {size} bytes, limit {limit}")


def _parse(data: bytes, encoding: Encoding) -> object:
    try:
        if encoding is Encoding.MSGPACK:
            return _MSGPACK_DECODER.decode(data)
        return _JSON_DECODER.decode(data)
    except RecursionError:
        raise DecodeError(ErrorCode.TOO_DEEP, "nesting too deep to parse") from None
    except msgspec.ValidationError as exc:  # a JSON number beyond 64-bit range
        raise DecodeError(ErrorCode.OUT_OF_RANGE, _detail(exc)) from None
    except Exception as exc:
        raise DecodeError(ErrorCode.MALFORMED, f"not valid {encoding}: {_detail(exc)}") from None


def _recover_id(obj: dict[Any, Any]) -> str | None:
    value = obj.get("id")
    if isinstance(value, str) and 1 <= len(value) <= MAX_ID_LENGTH:
        return value
    return None


def _check_structure(obj: dict[Any, Any], command_id: str | None) -> None:
    # Walks the whole value, one nesting level at a time: non-string keys anywhere are
    # `malformed` (a syntax problem, reported first), then nesting deeper than the limit is
    # `too_deep`. Its cost must be bounded by the frame's bytes whatever the frame's shape (a
    # 16 KiB frame can hold 16,000 empty arrays): each level's containers are flattened and
    # filtered by comprehensions and `chain` (C loops), no Python call or tuple per node.
    level: list[Any] = [obj]
    depth = 1
    while True:
        maps = [value for value in level if type(value) is dict]
        for value in maps:
            if not all(type(key) is str for key in value):
                key = next(key for key in value if type(key) is not str)
                raise DecodeError(
                    ErrorCode.MALFORMED, f"map keys must be strings, not {_kind(key)}"
                )
        items = list(chain.from_iterable(value for value in level if type(value) is list))
        items += chain.from_iterable(value.values() for value in maps)
        level = [item for item in items if type(item) is list or type(item) is dict]
        if not level:
            break
        depth += 1
    if depth > MAX_NESTING_DEPTH:
        raise DecodeError(
            ErrorCode.TOO_DEEP, f"nested deeper than {MAX_NESTING_DEPTH} levels", command_id
        )


def _convert(obj: object, cls: type[Any], command_id: str | None) -> object:
    try:
        return msgspec.convert(obj, cls, strict=True)
    except msgspec.ValidationError as exc:
        text = str(exc)
        for pattern, code in _CLASSIFY:
            if pattern.match(text):
                raise DecodeError(code, _detail(exc), command_id) from None
        raise DecodeError(ErrorCode.INVALID_FIELD, _detail(exc), command_id) from None
    except Exception as exc:  # defensive: the contract is "DecodeError and nothing else"
        raise DecodeError(ErrorCode.INVALID_FIELD, _detail(exc), command_id) from None


def _detail(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return text if len(text) <= _MAX_DETAIL else text[: _MAX_DETAIL - 3] + "..."


def _short(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:40] + "...")


_KINDS: Final = {
    dict: "map",
    list: "array",
    str: "str",
    int: "int",
    float: "float",
    bool: "bool",
    bytes: "bytes",
    type(None): "null",
}


def _kind(value: object) -> str:
    return _KINDS.get(type(value), type(value).__name__)

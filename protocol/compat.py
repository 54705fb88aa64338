"""Liberal reading of server frames for clients: v1.0 acks without the result's `command` tag.

Protocol v1.1 tags every ack result with `command` (the command it answers), so the result is a
discriminated union. A v1.0 server leaves the tag out, and the strict decoder
(:func:`protocol.codec.decode_server`) then refuses the ack. A client is liberal in what it
accepts (SPEC.md "Decoding"): it knows which command each of its ids carried, so it can read such
a result anyway. :func:`decode_server_liberally` does that; every other frame is decoded exactly
as by ``decode_server``.
"""

from collections.abc import Callable
from typing import Any

import msgspec

from protocol.codec import Frame, decode_server
from protocol.errors import DecodeError
from protocol.messages import RESULT_TYPES, ServerMessage
from protocol.transport import Encoding

__all__ = ["decode_server_liberally", "tag_v10_ack"]


def tag_v10_ack(value: object, command_of: Callable[[str], str | None]) -> dict[str, Any] | None:
    """Return a v1.0 `ack` value with its result tagged, or ``None`` if ``value`` is not one.

    ``command_of`` maps a command id to the `type` of the command sent with it (``None`` when
    the id is unknown). Only an ack whose `result` is a map without `command` is changed.
    """
    if not isinstance(value, dict) or value.get("type") != "ack":
        return None
    result, command_id = value.get("result"), value.get("id")
    if not isinstance(result, dict) or "command" in result or not isinstance(command_id, str):
        return None
    command = command_of(command_id)
    if command not in RESULT_TYPES:
        return None
    return {**value, "result": {"command": command, **result}}


def decode_server_liberally(
    frame: Frame, encoding: Encoding, command_of: Callable[[str], str | None]
) -> ServerMessage:
    """Decode a server frame like ``decode_server``, also accepting untagged (v1.0) acks.

    Raises the original :class:`~protocol.errors.DecodeError` when the frame is not such an
    ack, or when even the tagged ack does not decode.
    """
    try:
        return decode_server(frame, encoding)
    except DecodeError as strict:
        upgraded = tag_v10_ack(_parse_or_none(frame, encoding), command_of)
        if upgraded is None:
            raise strict from None
        if Encoding(encoding) is Encoding.MSGPACK:
            return decode_server(msgspec.msgpack.encode(upgraded), encoding)
        return decode_server(msgspec.json.encode(upgraded).decode("utf-8"), encoding)


def _parse_or_none(frame: Frame, encoding: Encoding) -> object:
    try:
        if Encoding(encoding) is Encoding.MSGPACK and not isinstance(frame, str):
            return msgspec.msgpack.decode(bytes(frame))
        if Encoding(encoding) is Encoding.JSON and isinstance(frame, str):
            return msgspec.json.decode(frame.encode("utf-8"))
    except (msgspec.DecodeError, UnicodeEncodeError):
        return None
    return None

"""Wire protocol of the Yahtzee game service, version 1.

The contract a client in any language is written from is ``protocol/SPEC.md``, with the golden
vectors in ``protocol/vectors/`` and the JSON Schema ``protocol/schema.json``. This package is
the Python side of that contract, free of I/O:

* :mod:`protocol.transport`: endpoint, subprotocols (version + encoding), limits, close codes;
* :mod:`protocol.types`: constrained value types and enumerations (boxes, options, ...);
* :mod:`protocol.messages`: one frozen ``msgspec.Struct`` per message, the ``ClientMessage``
  and ``ServerMessage`` unions, ack results;
* :mod:`protocol.errors`: error codes (``ERROR_CODES``), ``DecodeError``, ``make_error``;
* :mod:`protocol.codec`: ``encode``, ``decode_client``, ``decode_server``, ``decode_result``.

``python -m protocol.generate`` regenerates the vectors, the schema and the generated parts of
SPEC.md from this code (``--check`` verifies they are up to date).

Example::

    from protocol import Encoding, Join, decode_client, encode, make_ack, JoinResult

    frame = encode(Join(id="c3", room="r-5fK2", name="Ann"), Encoding.JSON)
    command = decode_client(frame, Encoding.JSON)          # -> Join(...)
    reply = make_ack(command.id, JoinResult(player="p-ann", seat=0, token="..."), seq=1)
"""

from protocol import codec, compat, errors, messages, transport
from protocol.codec import *  # noqa: F403
from protocol.compat import *  # noqa: F403
from protocol.errors import *  # noqa: F403
from protocol.messages import *  # noqa: F403
from protocol.transport import *  # noqa: F403
from protocol.types import (
    YAHTZEE_BOXES,
    YATZY_BOXES,
    Box,
    ExtraYahtzees,
    FirstPlayer,
    HintKind,
    Joker,
    Level,
    Phase,
    RoomStatus,
    Rules,
    Toggle,
    boxes_for,
)

# Everything public of codec, errors, messages and transport (their ``__all__``), plus the
# enumerations and box lists of types (its constrained scalar aliases stay in protocol.types).
__all__ = [
    "YAHTZEE_BOXES",
    "YATZY_BOXES",
    "Box",
    "ExtraYahtzees",
    "FirstPlayer",
    "HintKind",
    "Joker",
    "Level",
    "Phase",
    "RoomStatus",
    "Rules",
    "Toggle",
    "boxes_for",
]
__all__ += codec.__all__
__all__ += compat.__all__
__all__ += errors.__all__
__all__ += messages.__all__
__all__ += transport.__all__

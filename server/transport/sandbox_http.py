"""The sandbox's HTTP route (``yahtzee serve --sandbox`` only; SPEC.md 13.15).

    POST /sandbox/rooms     {seed, seats, options, turn_seconds, hints, position}
                            -> 201 {room, invite_code, seats: [{player, seat, name, token}]}

A normal server does not have the route (404): seeded dice are for testing clients, never for
real games. A body that does not decode is answered with the decode error codes of a frame
(400), a position that cannot happen with ``invalid_field`` (400), a storage fault with
``503 unavailable``. The answer carries seat tokens: it is never logged.
"""

from __future__ import annotations

import msgspec
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

import protocol.messages as pm
from protocol.codec import decode_body
from protocol.errors import DecodeError, ErrorCode
from server import game
from server.boundary import translate
from server.service import sandbox
from server.service.outcomes import ServiceError, UnavailableError
from server.transport.runtime import Runtime

__all__ = ["routes"]


def _json(value: object, status: int) -> Response:
    return Response(msgspec.json.encode(value), status_code=status, media_type="application/json")


def _error(code: str, message: str, status: int) -> Response:
    return _json({"code": code, "message": message}, status)


async def create_room(request: Request) -> Response:
    """A sandbox room: seeded dice, in the lobby or at the position of the body."""
    rt: Runtime = request.app.state.runtime
    try:
        wanted = decode_body(
            await request.body(), pm.SandboxRoomRequest, max_bytes=rt.settings.max_frame_bytes
        )
    except DecodeError as exc:
        status = 413 if exc.code == ErrorCode.FRAME_TOO_LARGE else 400
        return _error(exc.code, exc.message, status)
    try:
        made = await sandbox.create_room(rt.service, rt.seats, wanted)
    except UnavailableError:
        raise  # the app's handler: 503 unavailable
    except ServiceError as exc:
        return _error(exc.code, exc.message, 400)
    except game.GameError as exc:
        return _error(translate.error_code(exc.code), str(exc), 400)
    except ValueError as exc:  # a state the engine's own check refused
        return _error(ErrorCode.INVALID_FIELD, str(exc), 400)
    return _json(made, 201)


def routes() -> list[BaseRoute]:
    """The sandbox's routes (mounted by the app only with ``settings.sandbox``)."""
    return [Route("/sandbox/rooms", create_room, methods=["POST"])]

"""The game's WebSocket endpoint as raw ASGI (served by :class:`server.app.App` ahead of
Starlette's routing): the handshake's checks (subprotocol, draining, the connection cap and the
per-address limit), then the connection's :class:`~server.transport.session.Session`."""

from __future__ import annotations

from starlette.responses import PlainTextResponse
from starlette.types import Receive, Scope, Send

from protocol.transport import (
    SUBPROTOCOL_REFUSAL_REASON,
    SUBPROTOCOLS,
    CloseCode,
    select_subprotocol,
)
from server.transport import players_http
from server.transport.runtime import SERVER_FULL, Runtime
from server.transport.session import Session

__all__ = ["route_path", "websocket_endpoint"]


def route_path(scope: Scope) -> str:
    """The path below the application's root path, as Starlette's router matches it."""
    path: str = scope["path"]
    root: str = scope.get("root_path", "")
    if root and path.startswith(root) and path[len(root) : len(root) + 1] == "/":
        return path[len(root) :]
    return path


async def websocket_endpoint(rt: Runtime, scope: Scope, receive: Receive, send: Send) -> None:
    """One WebSocket connection (raw ASGI): the handshake's checks, then its session."""
    offered = scope.get("subprotocols") or []
    chosen = select_subprotocol(offered)
    if chosen is None or rt.draining:
        reason = SUBPROTOCOL_REFUSAL_REASON if chosen is None else "shutting down"
        status = 400 if chosen is None else 503
        await _refuse(scope, receive, send, status, CloseCode.PROTOCOL_ERROR, reason)
        return
    client = scope.get("client")
    address = str(client[0]) if client else ""
    refused = rt.admit(address)
    if refused is not None:
        if refused == SERVER_FULL:
            await _refuse(scope, receive, send, 503, CloseCode.TRY_AGAIN_LATER, refused)
        else:
            await _refuse(scope, receive, send, 429, CloseCode.POLICY_VIOLATION, refused)
        return
    try:
        if not await _accept(receive, send, chosen):
            return
        session = Session(scope, receive, send, rt, SUBPROTOCOLS[chosen], address)
        # A player token or JWT of the handshake (remembered players): kept, not logged;
        # ignored by a server that keeps no players.
        if rt.players is not None:
            session.ctx.credential = players_http.bearer(_Headers(scope))
        # The handshake's headers were read: what the connection keeps for its lifetime need
        # not hold them (the scope lives as long as the connection's task).
        scope["headers"] = []
        rt.connections[session.conn_id] = session
        try:
            await session.run()
        finally:
            rt.connections.pop(session.conn_id, None)
    finally:
        rt.release(address)


class _Headers:
    """The one header lookup :func:`server.transport.players_http.bearer` needs, on raw ASGI
    headers."""

    def __init__(self, scope: Scope) -> None:
        self.scope = scope

    def get(self, name: str) -> str | None:
        wanted = name.lower().encode()
        for key, value in self.scope.get("headers") or []:
            if key.lower() == wanted:
                return bytes(value).decode("latin-1")
        return None


async def _accept(receive: Receive, send: Send, subprotocol: str) -> bool:
    """Complete the handshake with ``subprotocol``; False when the client left before."""
    message = await receive()
    if message["type"] != "websocket.connect":
        return False
    await send({"type": "websocket.accept", "subprotocol": subprotocol, "headers": []})
    return True


async def _refuse(
    scope: Scope, receive: Receive, send: Send, status: int, code: int, reason: str
) -> None:
    """Refuse a WebSocket handshake: an HTTP answer where the server can send one, else an
    accepted-then-closed socket with ``code``."""
    if "websocket.http.response" in scope.get("extensions", {}):
        await PlainTextResponse(reason, status_code=status)(scope, receive, send)
    else:
        await send({"type": "websocket.close", "code": code, "reason": reason})

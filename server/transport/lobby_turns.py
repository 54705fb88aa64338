"""A lobby stream's ``turns`` events: the player's own turn list on ``GET /lobby`` (SPEC.md 13.6).

A stream opened with ``Authorization: Bearer <player token>`` carries, besides the public
``rooms`` events, ``turns`` events whose data is the body ``GET /players/{id}/turns`` answers
(13.14): at once, then again whenever the list changes. Browsers' ``EventSource`` cannot send
that header; the page reads the stream with ``fetch()`` and a streaming body reader instead.
The token is never read from the query string (the access log holds the request's target) and
never logged.

When the list is read again: a push first. The commit that moves a correspondence room's turn
on this process wakes its players' streams at once (``Correspondence.notices``); a commit on
another process is not heard here (pub/sub carries rooms, not players), so each authenticated
stream also re-reads its list every ``Settings.lobby_turns_seconds`` (5 s). Either way the list
is sent only when its games or turns changed (``server_time_ms`` alone is no change). The cost
is bounded by the stream caps of 13.6: one small task per authenticated stream.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec
import redis.exceptions
from starlette.requests import Request
from starlette.responses import Response

from server.service.correspondence import Correspondence
from server.service.identities import IdentityError
from server.storage.postgres import DATABASE_ERRORS
from server.transport.lobby import Watcher, event_frame
from server.transport.players_http import bearer, error_answer, turns_body

__all__ = ["TURNS_EVENT", "follow_turns", "stream_identity", "turns_reader"]

log = logging.getLogger("yahtzee.lobby")

TURNS_EVENT = b"turns"

TurnsReader = Callable[[], Awaitable[dict[str, Any]]]


async def stream_identity(request: Request) -> str | Response | None:
    """The identity the stream's Bearer credential names; None for an anonymous stream; the
    refusal the player routes give otherwise (401 for a refused credential, 503 without a
    player database)."""
    credential = bearer(request.headers)
    if credential is None:
        return None
    players = getattr(request.app.state.runtime, "players", None)
    if players is None:
        return error_answer("unavailable", "this server keeps no players (no database)", 503)
    try:
        identity = await players.identities.resolve(credential)
    except IdentityError as exc:  # its message never quotes the credential
        return error_answer(exc.code, exc.message, exc.status)
    except DATABASE_ERRORS as exc:
        return error_answer("unavailable", f"player database unavailable: {exc}", 503)
    except redis.exceptions.RedisError as exc:
        return error_answer("unavailable", f"storage unavailable: {type(exc).__name__}", 503)
    return str(identity.id)


def turns_reader(
    correspondence: Correspondence, clock: Callable[[], int], identity: str
) -> TurnsReader:
    """What :func:`follow_turns` reads: ``identity``'s list as ``GET /players/{id}/turns``."""
    return lambda: turns_body(correspondence, clock, identity)


async def follow_turns(
    watcher: Watcher,
    read: TurnsReader,
    wake: asyncio.Event,
    interval: float,
    on_error: Callable[[Exception], None] = lambda exc: None,
) -> None:
    """Offer ``watcher`` the list at once, then again whenever it changed after ``wake`` was
    set or ``interval`` seconds passed. Runs until cancelled (when its stream ends)."""
    sent: bytes | None = None
    while True:
        wake.clear()  # before the read: a notice during the read makes another one
        try:
            body = await read()
        except Exception as exc:  # the storage is down: keep the last list, retry
            log.warning("turn list not read: %s", type(exc).__name__)
            on_error(exc)
        else:
            shown = _listed(body)
            if shown != sent:
                sent = shown
                watcher.offer_turns(event_frame(msgspec.json.encode(body), TURNS_EVENT))
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(interval):
                await wake.wait()


def _listed(body: dict[str, Any]) -> bytes:
    """What makes a list new: its games and turns (the server's clock moves on every read)."""
    return msgspec.json.encode([body["turns"], body["games"]])

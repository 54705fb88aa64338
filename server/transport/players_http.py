"""The HTTP routes of remembered players and archived games (protocol 1.3, SPEC.md 13.8).

    POST   /players                 create a guest: {name} -> {player, name, token}
    GET    /players/me              who a credential (Authorization: Bearer) names
    POST   /players/me/link         link the guest of the Bearer token to {jwt}
    DELETE /players/me/token        revoke the Bearer player token
    GET    /players/{id}            a player's profile (statistics of archived games)
    GET    /players/{id}/games      a player's games, newest first (limit, before)
    GET    /players/{id}/turns      the player's correspondence games and turns (v1.4; own only)
    GET    /games/export            public games finished since ``since`` (Unix ms), NDJSON
    GET    /games/{id}              one archived game (``<room>.<n>`` or a room id)
    GET    /leaderboards/{board}    a leaderboard (period, family, limit, around), from Redis

Credentials travel only in the Authorization header, never in URLs. A private room's game is
shown only to its players (their Bearer credential); to anyone else it does not exist (404).
Every refusal is ``{code, message}`` with a protocol error code; a database that does not answer
is ``503 unavailable`` with ``Retry-After``.
"""

from __future__ import annotations

import collections
import dataclasses
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import msgspec
import redis.exceptions
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import BaseRoute, Route

from server.service.correspondence import Correspondence
from server.service.identities import IdentityError
from server.storage.archived_game import to_utc
from server.storage.leaderboards import PERIODS
from server.storage.postgres import DATABASE_ERRORS
from server.storage.ratings import BOARDS, FAMILIES
from server.strategy.calibration import DECISION_RATINGS
from server.transport.connection import TokenBucket

__all__ = ["bearer", "error_answer", "json_answer", "routes", "turns_body"]

Handler = Callable[[Request], Awaitable[Response]]


def json_answer(value: object, status: int = 200) -> Response:
    """A JSON body (msgspec) with ``status``."""
    return Response(msgspec.json.encode(value), status_code=status, media_type="application/json")


def error_answer(code: str, message: str, status: int) -> Response:
    """A typed error body (``code``, ``message``); a 503 says when to retry."""
    response = json_answer({"code": code, "message": message}, status)
    if status == 503:
        response.headers["Retry-After"] = "5"
    return response


def bearer(headers: Any) -> str | None:
    """The credential of an ``Authorization: Bearer ...`` header (None without one)."""
    value = headers.get("authorization")
    if not value:
        return None
    scheme, _, credential = value.partition(" ")
    credential = credential.strip()
    return credential if scheme.lower() == "bearer" and credential else None


def _players(request: Request) -> Any:
    rt = request.app.state.runtime
    return getattr(rt, "players", None)


def _guarded(handler: Handler) -> Handler:
    """503 without a database; typed answers for refused credentials and a database down."""

    async def guarded(request: Request) -> Response:
        if _players(request) is None:
            return error_answer("unavailable", "this server keeps no players (no database)", 503)
        try:
            return await handler(request)
        except IdentityError as exc:
            return error_answer(exc.code, exc.message, exc.status)
        except DATABASE_ERRORS as exc:
            return error_answer("unavailable", f"player database unavailable: {exc}", 503)
        except redis.exceptions.RedisError as exc:
            return error_answer("unavailable", f"storage unavailable: {type(exc).__name__}", 503)

    guarded.__name__ = handler.__name__
    guarded.__doc__ = handler.__doc__
    return guarded


async def _viewer(request: Request) -> str | None:
    """The identity the request's Bearer credential names (None without one)."""
    credential = bearer(request.headers)
    if credential is None:
        return None
    identity = await _players(request).identities.resolve(credential)
    return str(identity.id)


async def _required_viewer(request: Request) -> Any:
    credential = bearer(request.headers)
    if credential is None:
        raise IdentityError("bad_player_token", "send Authorization: Bearer <player token>", 401)
    return credential


_quotas: collections.OrderedDict[str, TokenBucket] = collections.OrderedDict()


def _quota(request: Request, per_hour: int) -> bool:
    address = request.client.host if request.client else ""
    bucket = _quotas.get(address)
    if bucket is None:
        bucket = _quotas[address] = TokenBucket(per_hour / 3600, max(1, per_hour // 3))
        while len(_quotas) > 10_000:
            _quotas.popitem(last=False)
    return bucket.take()


async def _body(request: Request) -> dict[str, Any]:
    try:
        body = msgspec.json.decode(await request.body())
    except msgspec.DecodeError:
        raise IdentityError("malformed", "the body is not JSON") from None
    if not isinstance(body, dict):
        raise IdentityError("malformed", "the body is not a JSON object")
    return body


@_guarded
async def create_player(request: Request) -> Response:
    """A new guest identity and its player token (shown once)."""
    players = _players(request)
    body = await _body(request)
    name = body.get("name")
    if not isinstance(name, str):
        raise IdentityError("missing_field" if name is None else "invalid_field", "name: a string")
    if not _quota(request, players.settings.players_per_hour):
        return error_answer("rate_limited", "too many new players from this address: wait", 429)
    identity, token = await players.identities.create_guest(name)
    return json_answer({"player": identity.id, "name": identity.name, "token": token}, 201)


@_guarded
async def me(request: Request) -> Response:
    """Who the Bearer credential names."""
    identity = await _players(request).identities.resolve(await _required_viewer(request))
    return json_answer({"player": identity.id, "name": identity.name, "linked": identity.linked})


@_guarded
async def link(request: Request) -> Response:
    """Link the Bearer guest to the JWT of the body."""
    token = await _required_viewer(request)
    body = await _body(request)
    jwt_token = body.get("jwt")
    if not isinstance(jwt_token, str):
        raise IdentityError("missing_field", "jwt: the identity provider's token")
    identity = await _players(request).identities.link(token, jwt_token)
    return json_answer({"player": identity.id, "name": identity.name, "linked": True})


@_guarded
async def revoke(request: Request) -> Response:
    """Revoke the Bearer player token."""
    identity = await _players(request).identities.revoke(await _required_viewer(request))
    return json_answer({"player": identity.id, "revoked": True})


@_guarded
async def profile(request: Request) -> Response:
    players = _players(request)
    viewer = await _viewer(request)
    body = await players.archive.profile(request.path_params["player_id"], viewer)
    if body is None:
        return error_answer("player_not_found", "no player has this id", 404)
    return json_answer(body)


def _int(request: Request, name: str, default: int, low: int, high: int) -> int:
    raw = request.query_params.get(name)
    try:
        value = default if raw is None else int(raw)
    except ValueError:
        raise IdentityError("invalid_field", f"{name} must be an integer") from None
    if not low <= value <= high:
        raise IdentityError("out_of_range", f"{name} must be {low}..{high}")
    return value


@_guarded
async def player_games(request: Request) -> Response:
    players = _players(request)
    player_id = request.path_params["player_id"]
    limit = _int(request, "limit", 20, 1, 100)
    viewer = await _viewer(request)
    if await players.archive.profile(player_id, viewer) is None:
        return error_answer("player_not_found", "no player has this id", 404)
    try:
        games, cursor = await players.archive.games_of(
            player_id, viewer, limit, request.query_params.get("before")
        )
    except ValueError as exc:
        raise IdentityError("invalid_field", str(exc)) from None
    return json_answer({"player": player_id, "games": games, "next_before": cursor})


@_guarded
async def player_turns(request: Request) -> Response:
    """The player's running correspondence games, their turns first (only for the player:
    anyone else is told no such player exists). Read from Redis, the games' truth."""
    rt = request.app.state.runtime
    identity = await _players(request).identities.resolve(await _required_viewer(request))
    player_id = request.path_params["player_id"]
    if identity.id != player_id or rt.correspondence is None:
        return error_answer("player_not_found", "no player has this id", 404)
    return json_answer(await turns_body(rt.correspondence, rt.service.clock, player_id))


async def turns_body(
    correspondence: Correspondence, clock: Callable[[], int], player_id: str
) -> dict[str, Any]:
    """The body of ``GET /players/{id}/turns`` (also the data of a lobby stream's ``turns``)."""
    entries = [dataclasses.asdict(e) for e in await correspondence.turns(player_id)]
    return {
        "player": player_id,
        "server_time_ms": clock(),
        "turns": [e for e in entries if e["my_turn"]],
        "games": [e for e in entries if not e["my_turn"]],
    }


@_guarded
async def get_game(request: Request) -> Response:
    players = _players(request)
    gid = request.path_params["game_id"]
    body = await players.archive.game(gid)
    if body is not None and not body["public"]:
        viewer = await _viewer(request)
        if viewer is None or viewer not in {p["identity"] for p in body["players"]}:
            body = None
    if body is None:
        return error_answer("game_not_found", "no archived game has this id", 404)
    return json_answer(body)


@_guarded
async def export(request: Request) -> Response:
    """Public games finished at or after ``since`` (Unix ms), oldest first, one JSON a line."""
    archive = _players(request).archive
    since = _int(request, "since", 0, 0, 2**53 - 1)

    async def lines() -> AsyncIterator[bytes]:
        async for game in archive.export(since):
            yield msgspec.json.encode(game) + b"\n"

    return StreamingResponse(lines(), media_type="application/x-ndjson")


def _choice(request: Request, name: str, default: str, allowed: tuple[str, ...]) -> str:
    value = request.query_params.get(name, default)
    if value not in allowed:
        raise IdentityError("unknown_period", f"{name} must be one of {', '.join(allowed)}")
    return value


@_guarded
async def leaderboard(request: Request) -> Response:
    """A leaderboard, served from Redis (README "Leaderboards")."""
    players = _players(request)
    board = request.path_params["board"]
    if board not in BOARDS:
        return error_answer("unknown_board", f"board must be one of {', '.join(BOARDS)}", 404)
    period = _choice(request, "period", "all", PERIODS)
    family = _choice(request, "family", "yahtzee", FAMILIES)
    limit = _int(request, "limit", 20, 1, 100)
    around = request.query_params.get("around") or None
    now = to_utc(players.rt.service.clock())
    rows, size = await players.leaderboards.read(
        board, family, period, now, limit=limit, around=around
    )
    body = {
        "board": board,
        "family": family,
        "period": period,
        "players": size,
        "rows": [
            {
                "rank": r.rank,
                "player": r.identity_id,
                "name": r.name,
                "value": _shown(board, r.value),
                "provisional": r.provisional,
            }
            for r in rows
        ],
        "references": [
            {"level": level, "value": value}
            for level, value in (
                DECISION_RATINGS.get(family, {}).items() if board == "decision" else ()
            )
        ],
    }
    return json_answer(body)


def _shown(board: str, value: float) -> int:
    """Ratings and scores are shown as integers (the sets keep the exact values)."""
    return round(value)


def routes() -> list[BaseRoute]:
    return [
        Route("/players", create_player, methods=["POST"]),
        Route("/players/me", me, methods=["GET"]),
        Route("/players/me/link", link, methods=["POST"]),
        Route("/players/me/token", revoke, methods=["DELETE"]),
        Route("/players/{player_id}", profile, methods=["GET"]),
        Route("/players/{player_id}/games", player_games, methods=["GET"]),
        Route("/players/{player_id}/turns", player_turns, methods=["GET"]),
        Route("/games/export", export, methods=["GET"]),
        Route("/games/{game_id}", get_game, methods=["GET"]),
        Route("/leaderboards/{board}", leaderboard, methods=["GET"]),
    ]

"""The HTTP routes of duplicate tournaments (protocol 1.4, SPEC.md 13.18 to 13.23).

    POST /tournaments                  create one (the operator; or any player, by setting)
    GET  /tournaments                  public tournaments, soonest end first
    GET  /tournaments/{id}             one tournament (its seed once it is over)
    POST /tournaments/{id}/entries     enter: a room id and a seat token to play over /ws
    GET  /tournaments/{id}/standings   the leaderboard (live; final once archived)
    GET  /tournaments/{id}/entries/{room}/events   an entry's events, with the watch delay

Credentials travel in ``Authorization: Bearer`` (a player token, a JWT, or the operator's admin
token), invite codes in ``X-Invite-Code``. Refusals are ``{code, message}`` with a protocol
error code; a database that does not answer is ``503 unavailable`` (retryable).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import msgspec
import redis.exceptions
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from server.service.identities import IdentityError
from server.service.tournaments import TournamentError
from server.storage.postgres import DATABASE_ERRORS
from server.transport.players_http import bearer, error_answer, json_answer

__all__ = ["routes"]

EVENTS_PAGE = 500
EVENTS_PAGE_MAX = 1000
_ANY = msgspec.msgpack.Decoder()

Handler = Callable[[Request], Awaitable[Response]]


def _tournaments(request: Request) -> Any:
    players = getattr(request.app.state.runtime, "players", None)
    return None if players is None else players.tournaments


def _guarded(handler: Handler) -> Handler:
    """503 without a database; typed answers for every refusal and for storage faults."""

    async def guarded(request: Request) -> Response:
        if _tournaments(request) is None:
            return error_answer(
                "unavailable", "this server keeps no tournaments (no database)", 503
            )
        try:
            return await handler(request)
        except (TournamentError, IdentityError) as exc:
            return error_answer(exc.code, exc.message, exc.status)
        except DATABASE_ERRORS as exc:
            return error_answer("unavailable", f"tournament database unavailable: {exc}", 503)
        except redis.exceptions.RedisError as exc:
            return error_answer("unavailable", f"storage unavailable: {exc}", 503)

    guarded.__name__ = handler.__name__
    guarded.__doc__ = handler.__doc__
    return guarded


async def _body(request: Request) -> dict[str, Any]:
    raw = await request.body()
    if not raw:
        return {}
    try:
        body = msgspec.json.decode(raw)
    except msgspec.DecodeError:
        raise TournamentError("malformed", "the body is not JSON") from None
    if not isinstance(body, dict):
        raise TournamentError("malformed", "the body is not a JSON object")
    return body


async def _identity(request: Request) -> Any:
    credential = bearer(request.headers)
    if credential is None:
        raise IdentityError("bad_player_token", "send Authorization: Bearer <player token>", 401)
    return await request.app.state.runtime.players.identity_of(credential)


def _invite(request: Request) -> str | None:
    return request.headers.get("x-invite-code") or None


@_guarded
async def create_tournament(request: Request) -> Response:
    """A new tournament: the operator's (admin token) or, by setting, any player's."""
    tournaments = _tournaments(request)
    credential = bearer(request.headers)
    created_by = None
    if not tournaments.is_admin(credential):
        if tournaments.settings.tournaments_open_to != "identities":
            raise TournamentError("not_allowed", "only the operator creates tournaments", 403)
        created_by = (await _identity(request)).id
    made, invite = await tournaments.create(await _body(request), created_by)
    body = tournaments.view(made)
    if invite is not None:
        body["invite_code"] = invite
    return json_answer(body, 201)


@_guarded
async def list_tournaments(request: Request) -> Response:
    """The public tournaments not ended for more than a day."""
    tournaments = _tournaments(request)
    return json_answer({"tournaments": [tournaments.view(t) for t in await tournaments.listing()]})


@_guarded
async def get_tournament(request: Request) -> Response:
    tournaments = _tournaments(request)
    found = await tournaments.get(request.path_params["tournament_id"], _invite(request))
    return json_answer(tournaments.view(found))


@_guarded
async def enter(request: Request) -> Response:
    """An entry for the Bearer player: the room, the seat and its token (shown this once)."""
    tournaments = _tournaments(request)
    identity = await _identity(request)
    entered = await tournaments.enter(
        request.path_params["tournament_id"], identity.id, identity.name, _invite(request)
    )
    t = entered.tournament
    return json_answer(
        {
            "tournament": t.id,
            "room": entered.entry.room_id,
            "player": entered.entry.player_id,
            "seat": entered.seat,
            "token": entered.token,
            "attempt": entered.entry.attempt,
            "dice_commitment": t.commitment,
            "ends_ms": int(t.ends_at.timestamp() * 1000),
        },
        201,
    )


@_guarded
async def standings(request: Request) -> Response:
    tournaments = _tournaments(request)
    raw = request.query_params.get("limit", "100")
    if not raw.isdigit() or not 1 <= int(raw) <= 1000:
        raise TournamentError("out_of_range", "limit must be 1..1000")
    body = await tournaments.standings_view(
        request.path_params["tournament_id"], _invite(request), int(raw)
    )
    return json_answer(body)


def _count(request: Request, name: str, default: int, low: int, high: int) -> int:
    """Query parameter ``name``: an integer ``low``..``high`` (``default`` when absent)."""
    raw = request.query_params.get(name)
    if raw is None:
        return default
    if not raw.isdigit():
        raise TournamentError("invalid_field", f"{name} must be a non-negative integer")
    if not low <= int(raw) <= high:
        raise TournamentError("out_of_range", f"{name} must be {low}..{high}")
    return int(raw)


@_guarded
async def entry_events(request: Request) -> Response:
    """An entry's events as ``GET /rooms/{id}/events`` pages them, only those old enough to
    watch while the tournament is open (SPEC.md 13.23): no invite code needed, none shown."""
    after = _count(request, "after", 0, 0, 2**53 - 1)
    limit = _count(request, "limit", EVENTS_PAGE, 1, EVENTS_PAGE_MAX)
    page = await _tournaments(request).watch(
        request.path_params["tournament_id"],
        request.path_params["room"],
        _invite(request),
        after,
        limit,
    )
    return json_answer(
        {
            "tournament": page.tournament,
            "room": page.room,
            "events": [_ANY.decode(data) for _, data in page.events],
            "next_after": page.next_after,
        }
    )


def routes() -> list[BaseRoute]:
    return [
        Route("/tournaments", create_tournament, methods=["POST"]),
        Route("/tournaments", list_tournaments, methods=["GET"]),
        Route("/tournaments/{tournament_id}", get_tournament, methods=["GET"]),
        Route("/tournaments/{tournament_id}/entries", enter, methods=["POST"]),
        Route("/tournaments/{tournament_id}/standings", standings, methods=["GET"]),
        # {room}, not {room_id}: the second id of the path (the contract test names ids {id})
        Route("/tournaments/{tournament_id}/entries/{room}/events", entry_events, methods=["GET"]),
    ]

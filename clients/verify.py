"""``yahtzee verify ROOM``: recompute every die of a room's game from its public event log.

It reads every page of ``GET /rooms/{id}/events`` (a private room's invite code goes in the
``X-Invite-Code`` header, never in the URL), hands the events to
:func:`protocol.fairdice.verify_log` and prints the verdict. Exit status: 0 verified, 1 mismatch
(the server could have cheated), 2 not verifiable yet (game not over, seed not revealed) or the
room could not be read (unknown room, wrong invite code, no answer).

Standard library only (``urllib``): verifying must not need anything the service ships.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from typing import Any

from protocol.duplicate import verify_duplicate_log
from protocol.fairdice import Mismatch, Status, Verdict, verify_log

__all__ = [
    "EXIT_CODES",
    "FetchError",
    "fetch_analysis",
    "fetch_events",
    "fetch_tournament",
    "http_url",
    "register",
    "run",
    "service_url",
]

DEFAULT_URL = "http://127.0.0.1:8000"
PAGE_SIZE = 1000  # the largest page the service serves
TIMEOUT_SECONDS = 10.0

EXIT_CODES: dict[Status, int] = {Status.VERIFIED: 0, Status.MISMATCH: 1, Status.UNVERIFIABLE: 2}
"""Exit status of ``yahtzee verify`` for each verdict (2 also when the log cannot be read)."""
EXIT_UNREADABLE = 2


def service_url(value: str) -> str:
    """The WebSocket URL for ``--url`` / ``$YAHTZEE_URL``: a ws(s):// URL as given; an
    http(s):// address (what ``serve`` prints) or a bare ``host:port`` becomes ``ws(s)://.../ws``."""
    url = value.strip()
    if "://" not in url:
        url = "ws://" + url
    scheme, rest = url.split("://", 1)
    scheme = {"http": "ws", "https": "wss"}.get(scheme.lower(), scheme.lower())
    if "/" not in rest.rstrip("/"):
        rest = rest.rstrip("/") + "/ws"
    return f"{scheme}://{rest}"


def http_url(value: str) -> str:
    """The service's HTTP base URL from any form ``play`` accepts: ``http(s)://host:port``,
    a bare ``host:port`` or the WebSocket URL ``ws(s)://host:port/ws`` (its path dropped)."""
    url = value.strip()
    if "://" not in url:
        url = "http://" + url
    scheme, rest = url.split("://", 1)
    scheme = {"ws": "http", "wss": "https"}.get(scheme.lower(), scheme.lower())
    host, _, path = rest.partition("/")
    if path.rstrip("/") == "ws":  # the WebSocket endpoint: the API is beside it
        path = ""
    return f"{scheme}://{host}" + (f"/{path}".rstrip("/") if path else "")


class FetchError(Exception):
    """The room's events could not be read: unknown room (HTTP 404), refused (403), no answer,
    or an answer that is not the events page the API describes."""


def _get_json(url: str, invite_code: str | None) -> Any:
    request = urllib.request.Request(url, headers={"Accept": "application/json"})
    if invite_code is not None:
        request.add_header("X-Invite-Code", invite_code)
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as exc:
        raise FetchError(_http_error_text(exc)) from None
    except (urllib.error.URLError, OSError) as exc:
        raise FetchError(f"no answer from {url}: {exc}") from None
    except ValueError as exc:  # JSON or UTF-8
        raise FetchError(f"the answer of {url} is not JSON: {exc}") from None


def _http_error_text(exc: urllib.error.HTTPError) -> str:
    try:
        body = json.loads(exc.read())
        detail = f"{body['code']}: {body['message']}"
    except (ValueError, KeyError, TypeError):
        detail = exc.reason
    if exc.code == 404:
        return f"room not found ({detail})"
    return f"HTTP {exc.code} ({detail})"


def _page(body: Any, after: int) -> tuple[list[Mapping[str, object]], int | None]:
    if not isinstance(body, Mapping) or not isinstance(body.get("events"), list):
        raise FetchError("the answer has no `events` list")
    events = body["events"]
    if not all(isinstance(e, Mapping) for e in events):
        raise FetchError("an event is not a JSON object")
    following = body.get("next_after")
    if following is not None and (
        not isinstance(following, int) or isinstance(following, bool) or following <= after
    ):
        # a cursor that does not move forward would page for ever
        raise FetchError(f"`next_after` {following!r} does not follow `after` {after}")
    return events, following


def fetch_analysis(base_url: str, room: str, *, invite_code: str | None = None) -> Any:
    """``GET /rooms/{room}/analysis`` (the game's decisions against optimal play) as JSON;
    :class:`FetchError` for a refusal, e.g. HTTP 503 while the server loads its table."""
    path = f"{base_url.rstrip('/')}/rooms/{urllib.parse.quote(room, safe='')}/analysis"
    return _get_json(path, invite_code)


def fetch_events(
    base_url: str, room: str, *, invite_code: str | None = None, page_size: int = PAGE_SIZE
) -> list[Mapping[str, object]]:
    """Every event of ``room``, all pages of ``GET /rooms/{room}/events`` in order."""
    path = f"{base_url.rstrip('/')}/rooms/{urllib.parse.quote(room, safe='')}/events"
    events: list[Mapping[str, object]] = []
    after: int | None = 0
    while after is not None:
        query = urllib.parse.urlencode({"after": after, "limit": page_size})
        page, after = _page(_get_json(f"{path}?{query}", invite_code), after)
        events.extend(page)
    return events


def fetch_tournament(base_url: str, tournament: str) -> Mapping[str, Any]:
    """``GET /tournaments/{tournament}`` (protocol 1.4): its commitment, and its seed once over."""
    path = f"{base_url.rstrip('/')}/tournaments/{urllib.parse.quote(tournament, safe='')}"
    body = _get_json(path, None)
    if not isinstance(body, Mapping) or not isinstance(body.get("dice_commitment"), str):
        raise FetchError("the answer is not a tournament")
    return body


def verify_entry(
    events: list[Mapping[str, object]], tournament: Mapping[str, Any], seed: str | None = None
) -> Verdict:
    """The verdict on a tournament entry's log: its dice against the tournament's revealed
    seed (or ``seed``, to check a seed from elsewhere) and commitment."""
    seed = seed if seed is not None else tournament.get("seed")
    if not isinstance(seed, str):
        return Verdict(
            Status.UNVERIFIABLE,
            pending=("the tournament is not over: its seed is revealed at the end time",),
            commitment=str(tournament["dice_commitment"]),
        )
    if not events:
        return Verdict(Status.MISMATCH, (Mismatch(None, "the entry's log", "events", "none"),))
    return verify_duplicate_log(events, seed, str(tournament["dice_commitment"]))


def _verdict_json(room: str, verdict: Verdict) -> str:
    value = dataclasses.asdict(verdict)
    value["status"] = verdict.status.value
    return json.dumps({"room": room, **value}, indent=2)


def run(
    room: str,
    base_url: str,
    invite_code: str | None = None,
    *,
    as_json: bool = False,
    tournament: str | None = None,
    seed: str | None = None,
) -> int:
    """Fetch, verify and print; returns the exit status (see the module docstring). With
    ``tournament`` the room is an entry of that duplicate tournament: its dice are checked
    against the tournament's revealed seed (or ``seed``)."""
    try:
        events = fetch_events(base_url, room, invite_code=invite_code)
        about = fetch_tournament(base_url, tournament) if tournament else None
    except FetchError as exc:
        print(f"yahtzee verify: room {room}: {exc}")
        return EXIT_UNREADABLE
    verdict = verify_log(events) if about is None else verify_entry(events, about, seed)
    if as_json:
        print(_verdict_json(room, verdict))
    else:
        print(f"room {room}: {len(events)} events")
        print("\n".join(verdict.describe()))
    return EXIT_CODES[verdict.status]


def _execute(args: argparse.Namespace) -> int:
    return run(
        args.room,
        args.url,
        args.invite_code,
        as_json=args.json,
        tournament=args.tournament,
        seed=args.seed,
    )


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``verify`` to the ``yahtzee`` command line."""
    parser = subparsers.add_parser(
        "verify",
        help="check that a room's dice were fair (provably fair dice)",
        description="Recompute every die of a finished game from the room's public event log "
        "and the server seed revealed at game over. Exit status: 0 verified, 1 mismatch, "
        "2 not verifiable yet or room unknown.",
    )
    parser.add_argument("room", metavar="ROOM")
    parser.add_argument(
        "--url",
        type=http_url,
        default=http_url(os.environ.get("YAHTZEE_URL") or DEFAULT_URL),
        help="the service, as for play: http://host:port, host:port or ws://host:port/ws "
        "(default: $YAHTZEE_URL, else %(default)s)",
    )
    parser.add_argument("--invite-code", help="invite code of a private room (sent as a header)")
    parser.add_argument("--json", action="store_true", help="print the verdict as JSON")
    parser.add_argument(
        "--tournament",
        help="the room is an entry of this duplicate tournament: check it against the seed "
        "the tournament reveals at its end (protocol 1.4)",
    )
    parser.add_argument(
        "--seed", help="with --tournament: check this seed instead of the revealed one"
    )
    parser.set_defaults(func=_execute)

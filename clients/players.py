"""Remembered players over HTTP (protocol 1.3, SPEC.md 13.8-13.12), standard library only.

A server with a database remembers players: :func:`create_guest` makes a guest and returns its
id and **player token** (shown once: keep it, never print or log it). Present the token on the
WebSocket (``Client(url, player_token=...)``, sent as ``Authorization: Bearer``) and every seat
taken is linked to the player; :func:`fetch_profile`, :func:`fetch_games` and
:func:`fetch_game` read the statistics, the history and an archived game (also after its room
left the server). A server without a database answers 503 (:class:`PlayersError` with code
``unavailable``); anonymous play is unchanged there.

The functions block (``urllib``): call them from asyncio code with ``asyncio.to_thread``.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import unicodedata
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "Guest",
    "PlayersError",
    "create_guest",
    "default_player_file",
    "fetch_game",
    "fetch_games",
    "fetch_me",
    "fetch_profile",
    "fetch_turns",
    "forget_guest",
    "guest_name",
    "load_guest",
    "read_private_json",
    "remembered_guest",
    "write_private_json",
]

TIMEOUT_SECONDS = 10.0


class PlayersError(Exception):
    """A refused or failed request: ``code`` is the server's error code (``name_taken``,
    ``bad_player_token``, ``player_not_found``, ``unavailable``, ...), ``http_<status>``
    without one, or ``unreachable`` when no answer came."""

    def __init__(self, code: str, message: str, status: int | None = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.status = status


@dataclass(frozen=True)
class Guest:
    """A guest made by ``POST /players``. ``token`` is a secret: keep it, never show it."""

    player: str
    name: str
    token: str

    def __repr__(self) -> str:  # never the token, not even in a traceback
        return f"Guest(player={self.player!r}, name={self.name!r})"


def _request(
    base_url: str,
    method: str,
    path: str,
    *,
    token: str | None = None,
    body: Any = None,
    invite_code: str | None = None,
) -> Any:
    headers = {"Accept": "application/json"}
    if invite_code is not None:  # in a header, never in the URL
        headers["X-Invite-Code"] = invite_code
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    url = base_url.rstrip("/") + path
    request = urllib.request.Request(url, data=data, headers=headers, method=method)
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as exc:
        with exc:  # its socket is closed with it
            try:
                answer = json.loads(exc.read())
                code, message = str(answer["code"]), str(answer["message"])
            except (ValueError, KeyError, TypeError):
                code, message = f"http_{exc.code}", str(exc.reason)
        raise PlayersError(code, message, exc.code) from None
    except (urllib.error.URLError, OSError) as exc:
        raise PlayersError("unreachable", f"no answer from {base_url}: {exc}") from None
    except ValueError as exc:
        raise PlayersError("invalid_answer", f"the answer is not JSON: {exc}") from None


def _quote(value: str) -> str:
    return urllib.parse.quote(value, safe="")


def create_guest(base_url: str, name: str) -> Guest:
    """``POST /players``: a new guest named ``name`` (2..24 letters, digits and single
    spaces, unique: else ``invalid_name`` / ``name_taken``)."""
    answer = _request(base_url, "POST", "/players", body={"name": name})
    return Guest(player=answer["player"], name=answer["name"], token=answer["token"])


def fetch_me(base_url: str, token: str) -> dict[str, Any]:
    """``GET /players/me``: who the token names (``{player, name, linked}``)."""
    answer: dict[str, Any] = _request(base_url, "GET", "/players/me", token=token)
    return answer


def fetch_profile(base_url: str, player: str, *, token: str | None = None) -> dict[str, Any]:
    """``GET /players/{id}``: games, wins, average and best score, Yahtzee rate, upper bonus
    rate, accuracy. With the player's own ``token`` private games count too."""
    answer: dict[str, Any] = _request(base_url, "GET", f"/players/{_quote(player)}", token=token)
    return answer


def fetch_games(
    base_url: str,
    player: str,
    *,
    limit: int = 20,
    before: str | None = None,
    token: str | None = None,
) -> dict[str, Any]:
    """``GET /players/{id}/games``: ``{player, games, next_before}``, newest first."""
    query: dict[str, str] = {"limit": str(limit)}
    if before is not None:
        query["before"] = before
    path = f"/players/{_quote(player)}/games?{urllib.parse.urlencode(query)}"
    answer: dict[str, Any] = _request(base_url, "GET", path, token=token)
    return answer


def fetch_turns(base_url: str, player: str, token: str) -> dict[str, Any]:
    """``GET /players/{id}/turns`` (protocol 1.4): the player's running correspondence games,
    ``{player, server_time_ms, turns, games}``; ``turns`` wait for the player's move, soonest
    deadline first. Only with the player's own ``token`` (else ``player_not_found``)."""
    answer: dict[str, Any] = _request(
        base_url, "GET", f"/players/{_quote(player)}/turns", token=token
    )
    return answer


def fetch_game(base_url: str, game: str, *, token: str | None = None) -> dict[str, Any]:
    """``GET /games/{id}`` (``<room>.1`` or a room id): the archived game with its whole log;
    a private game only with the token of one of its players."""
    answer: dict[str, Any] = _request(base_url, "GET", f"/games/{_quote(game)}", token=token)
    return answer


# ------------------------------------------------------------------ the terminal's memory


def default_player_file() -> Path:
    """Where a terminal client keeps its players: ``$YAHTZEE_PLAYER_FILE``, else
    ``$XDG_CONFIG_HOME/yahtzee/players.json`` (``~/.config/yahtzee/players.json``)."""
    given = os.environ.get("YAHTZEE_PLAYER_FILE")
    if given:
        return Path(given)
    config = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(config) / "yahtzee" / "players.json"


def read_private_json(path: Path) -> dict[str, Any]:
    """The JSON object kept in ``path`` (empty when missing or unreadable)."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def load_guest(path: Path, base_url: str) -> Guest | None:
    """The guest kept in ``path`` for the server at ``base_url`` (one per server), or None."""
    entry = read_private_json(path).get(base_url.rstrip("/"))
    if not isinstance(entry, dict):
        return None
    try:
        return Guest(player=entry["player"], name=entry["name"], token=entry["token"])
    except (TypeError, KeyError):
        return None


def _save(path: Path, base_url: str, guest: Guest | None) -> None:
    data = read_private_json(path)
    if guest is None:
        data.pop(base_url.rstrip("/"), None)
    else:
        data[base_url.rstrip("/")] = {
            "player": guest.player,
            "name": guest.name,
            "token": guest.token,
        }
    write_private_json(path, data)


def write_private_json(path: Path, data: dict[str, Any]) -> None:
    """Replace ``path`` with ``data``, atomically, readable by its owner only (it holds
    tokens: secrets, from the file's creation on)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        json.dump(data, out, indent=2)
    os.replace(temporary, path)


def forget_guest(path: Path, base_url: str) -> None:
    """Drop the guest kept for ``base_url`` (its token was refused)."""
    _save(path, base_url, None)


def guest_name(name: str) -> str | None:
    """``name`` as a guest's name may be (2..24 letters, marks, digits, single spaces), or
    None when too little of it is left."""
    kept = "".join(
        c if unicodedata.category(c)[0] in "LMN" else " "
        for c in unicodedata.normalize("NFC", name)
    )
    cleaned = re.sub(" +", " ", kept).strip()[:24].strip()
    return cleaned if len(cleaned) >= 2 else None


def remembered_guest(path: Path, base_url: str, name: str) -> Guest | None:
    """The guest kept for this server, else a new one (under ``name``, or with a number when
    that is taken or not a guest's name), kept in ``path``. None when the server keeps no
    players (503) or refuses (rate limit): play goes on anonymously."""
    kept = load_guest(path, base_url)
    if kept is not None:
        return kept
    wanted = guest_name(name)
    names = [n for n in (wanted, wanted and f"{wanted[:17]} {secrets.randbelow(900) + 100}") if n]
    names.append(f"Player {secrets.randbelow(900_000) + 100_000}")
    for candidate in names:
        try:
            guest = create_guest(base_url, candidate)
        except PlayersError as exc:
            if exc.code in ("name_taken", "invalid_name"):
                continue
            return None
        _save(path, base_url, guest)
        return guest
    return None

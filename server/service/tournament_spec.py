"""What a tournament request asks for, checked: ``POST /tournaments``'s body as a :class:`Spec`,
and the typed refusal every tournament route answers with (:class:`TournamentError`)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import msgspec

import protocol.messages as pm
from protocol.types import Toggle
from server.settings import WATCH_DELAY_SECONDS

__all__ = ["MAX_ATTEMPTS", "MAX_DAYS", "Spec", "TournamentError", "at", "ms"]

MAX_DAYS = 30
"""Longest tournament."""
MAX_ATTEMPTS = 10


class TournamentError(Exception):
    """A refused tournament request: a protocol error code and its HTTP status."""

    def __init__(self, code: str, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status


def ms(moment: dt.datetime) -> int:
    """``moment`` in Unix ms."""
    return int(moment.timestamp() * 1000)


def at(unix_ms: int) -> dt.datetime:
    """The UTC time of ``unix_ms``."""
    return dt.datetime.fromtimestamp(unix_ms / 1000, dt.UTC)


def _field(body: Mapping[str, Any], name: str, kind: type, default: Any) -> Any:
    value = body.get(name, default)
    if value is None and default is None:
        return None
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise TournamentError("invalid_field", f"{name}: expected {kind.__name__}")
    return value


def _watch_delay(body: Mapping[str, Any], default: int | None) -> int | None:
    """The body's ``watch_delay_seconds``: absent, the operator's default; null, none."""
    if "watch_delay_seconds" not in body:
        return default
    delay: int | None = _field(body, "watch_delay_seconds", int, None)
    if delay is not None and delay not in WATCH_DELAY_SECONDS:
        low, high = WATCH_DELAY_SECONDS[0], WATCH_DELAY_SECONDS[-1]
        raise TournamentError("out_of_range", f"watch_delay_seconds: {low}..{high} or null")
    return delay


@dataclass(frozen=True, slots=True)
class Spec:
    """A tournament as ``POST /tournaments`` asks for it (checked)."""

    name: str
    options: pm.RoomOptions
    starts_ms: int
    ends_ms: int
    entry_limit: int | None
    public: bool
    attempts: int
    rated: bool
    watch_delay_seconds: int | None

    @classmethod
    def parse(cls, body: Mapping[str, Any], now: int, default_delay: int | None = None) -> Spec:
        """The spec of a request body, or ``TournamentError`` naming the bad field;
        ``default_delay`` is the watch delay of a body that does not name one."""
        name = _field(body, "name", str, "Tournament").strip()
        if not 1 <= len(name) <= 40:
            raise TournamentError("out_of_range", "name: 1..40 characters")
        starts, ends = _times(body, now)
        limit = _field(body, "entry_limit", int, None)
        if limit is not None and limit < 1:
            raise TournamentError("out_of_range", "entry_limit: at least 1 (null: no limit)")
        attempts = _field(body, "attempts", int, 1)
        if not 1 <= attempts <= MAX_ATTEMPTS:
            raise TournamentError("out_of_range", f"attempts: 1..{MAX_ATTEMPTS}")
        return cls(
            name=name,
            options=_options(body),
            starts_ms=starts,
            ends_ms=ends,
            entry_limit=limit,
            public=_field(body, "public", bool, True),
            attempts=attempts,
            rated=_field(body, "rated", bool, False),
            watch_delay_seconds=_watch_delay(body, default_delay),
        )


def _options(body: Mapping[str, Any]) -> pm.RoomOptions:
    try:
        options = msgspec.convert(body.get("options") or {}, pm.RoomOptions)
    except msgspec.ValidationError as exc:
        raise TournamentError("invalid_field", f"options: {exc}") from None
    if options.bonus_turn is Toggle.ON:
        # turn t of the dice indexing counts filled boxes: a bonus turn fills none
        raise TournamentError("invalid_field", "options: bonus_turn is off in tournaments")
    return options


def _times(body: Mapping[str, Any], now: int) -> tuple[int, int]:
    starts = _field(body, "starts_ms", int, now)
    ends = _field(body, "ends_ms", int, None)
    if ends is None:
        raise TournamentError("missing_field", "ends_ms: the end time (Unix ms)")
    if not starts < ends <= starts + MAX_DAYS * 86_400_000 or ends <= now:
        raise TournamentError(
            "out_of_range", f"ends_ms: after starts_ms and now, within {MAX_DAYS} days"
        )
    return starts, ends

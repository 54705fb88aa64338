"""The ONE place that translates between the rules engine and the wire protocol.

- :func:`log_entries` turns engine events (with the state right after them) into room-log
  entries: dicts holding exactly the fields of the protocol event (without ``room`` and ``seq``,
  which the log position gives). Engine events without a wire counterpart (``roll_off_started``)
  are not logged, so the seqs clients see have no holes.
- :func:`event_message` turns a log entry back into the protocol ``Event`` struct.
- :func:`snapshot` / :func:`room_state` / :func:`summary` describe a room record for the wire.

The engine and the protocol may evolve separately; only this module knows both.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

import protocol.messages as pm
from protocol.types import Box, Phase, RoomStatus
from server import game

__all__ = [
    "event_message",
    "log_entries",
    "room_state",
    "snapshot",
    "summary",
    "wire_options",
]

LogEntry = dict[str, Any]

_SKIPPED = frozenset({"roll_off_started"})


def room_status(phase: str) -> str:
    if phase == game.Phase.LOBBY:
        return "lobby"
    if phase == game.Phase.FINISHED:
        return "finished"
    return "playing"


def _totals(t: game.Totals) -> dict[str, int]:
    return {
        "upper": t.upper,
        "upper_bonus": t.upper_bonus,
        "lower": t.lower,
        "yahtzee_bonus": t.yahtzee_bonus,
        "grand": t.grand,
    }


def _preview(state: game.GameState) -> list[dict[str, Any]]:
    return [
        {"box": p.box.value, "allowed": p.allowed, "points": p.points} for p in game.preview(state)
    ]


def log_entries(event: game.Event, state: game.GameState) -> list[LogEntry]:
    """Log entries for one engine event; ``state`` is the state right after it."""
    if event.type in _SKIPPED:
        return []
    if isinstance(event, game.PlayerJoined):
        return [{"type": "player_joined", "player": event.player, "name": event.name,
                 "seat": event.seat}]  # fmt: skip
    if isinstance(event, game.PlayerLeft):
        return [{"type": "player_left", "player": event.player, "seat": event.seat,
                 "forfeited": event.forfeited}]  # fmt: skip
    if isinstance(event, game.HostChanged):
        return [{"type": "host_changed", "player": event.player}]
    if isinstance(event, game.RollOffRolled):
        rolls = [{"player": r.player, "dice": list(r.faces), "total": r.total} for r in event.rolls]
        following = list(event.contenders_next) if len(event.contenders_next) > 1 else []
        return [{"type": "roll_off", "round": event.round, "rolls": rolls,
                 "contenders_next": following}]  # fmt: skip
    if isinstance(event, game.GameStarted):
        return [{"type": "game_started", "order": list(event.order),
                 "first_player": event.first_player_mode.value}]  # fmt: skip
    if isinstance(event, game.TurnChanged):
        # deadline_ms is filled in by the service, which owns the clock
        return [{"type": "turn_changed", "player": event.player, "round": event.round,
                 "deadline_ms": None}]  # fmt: skip
    if isinstance(event, game.Rolled):
        return [{
            "type": "rolled",
            "player": event.player,
            "dice": list(event.dice),
            "roll_number": event.roll_number,
            "rolls_left": event.rolls_left,
            "held": list(event.held),
            "preview": _preview(state),
            "yahtzee_bonus_pending": game.yahtzee_bonus_pending(state),
            "joker": game.joker_active(state),
        }]  # fmt: skip
    if isinstance(event, game.HoldChanged):
        return [{"type": "held", "player": event.player, "held": list(event.held)}]
    if isinstance(event, game.Scored):
        totals = game.totals(state, event.player)
        return [{
            "type": "scored",
            "player": event.player,
            "box": event.box.value,
            "points": event.points,
            "upper_bonus": totals.upper_bonus,
            "yahtzee_bonus": totals.yahtzee_bonus,
            "joker": event.joker,
            "automatic": event.automatic,
            "total": event.total,
        }]  # fmt: skip
    if isinstance(event, game.GameOver):
        names = {p.player_id: p.name for p in state.players}
        results = [
            {"player": s.player, "name": names.get(s.player, s.player), "total": s.total,
             "place": s.place, "forfeited": s.forfeited}
            for s in event.results
        ]  # fmt: skip
        return [{"type": "game_over", "results": results}]
    raise ValueError(f"no wire form for engine event {event.type!r}")  # pragma: no cover


def event_message(room_id: str, seq: int, entry: Mapping[str, Any]) -> pm.Event:
    """The protocol event for log entry ``entry`` at position ``seq``."""
    kind = entry["type"]
    cls = pm.SERVER_MESSAGE_TYPES[kind]
    fields = {k: v for k, v in entry.items() if k != "type"}
    msg = msgspec.convert({**fields, "room": room_id, "seq": seq}, cls)
    assert isinstance(msg, pm.Event)
    return msg


def wire_options(options: Mapping[str, Any]) -> pm.RoomOptions:
    return msgspec.convert(dict(options), pm.RoomOptions)


def engine_options(options: pm.RoomOptions) -> game.RuleOptions:
    return game.RuleOptions(
        rules=game.RuleSet(options.rules.value),
        extra_yahtzees=game.Toggle(options.extra_yahtzees.value),
        joker=game.JokerMode(options.joker.value),
        first_player=game.FirstPlayer(options.first_player.value),
    )


def summary(room_id: str, record: Mapping[str, Any]) -> dict[str, Any]:
    """The room as listed by ``list_rooms`` / ``GET /rooms`` (a :class:`pm.RoomSummary` dict)."""
    g = record["game"]
    players = [p["name"] for p in g["players"]]
    in_lobby = g["phase"] == game.Phase.LOBBY
    return {
        "room": room_id,
        "status": room_status(g["phase"]),
        "public": record["room"]["public"],
        "players": players,
        "seats": g["max_seats"],
        "open_seats": max(0, g["max_seats"] - len(players)) if in_lobby else 0,
        "spectators": record.get("spectators", 0),
        "options": dict(g["options"]),
        "turn_seconds": record["room"]["turn_seconds"],
    }


def room_summary(summary_dict: Mapping[str, Any]) -> pm.RoomSummary:
    return msgspec.convert(dict(summary_dict), pm.RoomSummary)


def room_state(room_id: str, record: Mapping[str, Any]) -> pm.RoomState:
    state = game.from_dict(record["game"])
    connected: Mapping[str, bool] = record.get("connected", {})
    players = []
    for seat, p in enumerate(state.players):
        card = p.card
        players.append(
            pm.PlayerView(
                player=p.player_id,
                name=p.name,
                seat=seat,
                connected=bool(connected.get(p.player_id, False)),
                forfeited=p.forfeited,
                scorecard={Box(b.value): card.get(b) for b in card.boxes},
                totals=msgspec.convert(_totals(card.totals()), pm.Totals),
            )
        )
    current = game.current_player(state)
    round_number = 0
    if current is not None:
        record_p = state.player(current)
        round_number = record_p.card.filled_count + 1 if record_p is not None else 0
    elif state.phase == game.Phase.FINISHED:
        round_number = len(game.boxes_for(state.options.rules))
    phase = state.phase.value if state.phase != game.Phase.ROLL_OFF else "lobby"
    rolled = state.phase == game.Phase.ROLLED
    preview: Sequence[dict[str, Any]] = _preview(state) if rolled else []
    return pm.RoomState(
        id=room_id,
        status=RoomStatus(room_status(state.phase)),
        public=record["room"]["public"],
        max_seats=state.max_seats,
        turn_seconds=record["room"]["turn_seconds"],
        options=wire_options(record["game"]["options"]),
        host=state.host,
        players=tuple(players),
        phase=Phase(phase),
        order=tuple(state.order),
        current_player=current,
        round=round_number,
        dice=tuple(state.dice),
        held=tuple(sorted(state.held)),
        roll_number=state.rolls_used if current is not None else 0,
        rolls_left=game.rolls_left(state),
        preview=tuple(msgspec.convert(p, pm.PreviewEntry) for p in preview),
        turn_deadline_ms=record.get("deadline_ms"),
        spectators=record.get("spectators", 0),
        joker=game.joker_active(state) if rolled else False,
    )


def snapshot(room_id: str, seq: int, record: Mapping[str, Any]) -> pm.Snapshot:
    return pm.Snapshot(room=room_id, seq=seq, state=room_state(room_id, record))

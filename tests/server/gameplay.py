"""Helpers to play whole games through real clients and check them against the engine."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from wsclient import Msg, WsClient

from server import game


def best_box(rolled: Msg) -> str:
    allowed = [p for p in rolled["preview"] if p["allowed"]]
    return str(max(allowed, key=lambda p: p["points"])["box"])


async def play_turn(client: WsClient, rolls: int = 2) -> Msg:
    """Roll ``rolls`` times (keeping the most common face), score the best box; returns the
    last event the score produced (``turn_changed`` or ``game_over``)."""
    player = client.player
    rolled: Msg | None = None
    for _ in range(rolls):
        keep: list[int] = []
        if rolled is not None:
            dice = rolled["dice"]
            common = max(set(dice), key=dice.count)
            keep = [i for i, d in enumerate(dice) if d == common]
            if len(keep) == 5:
                break
        ack = await client.ok("roll", keep=keep)
        rolled = await client.wait_event(lambda e, s=ack["seq"]: e["seq"] == s)
        assert rolled["type"] == "rolled"
        assert rolled["player"] == player
    assert rolled is not None
    ack = await client.ok("score", box=best_box(rolled))
    return await client.wait_event(lambda e, s=ack["seq"]: e["seq"] == s)


def next_player(events: Sequence[Msg]) -> str | None:
    for event in reversed(events):
        if event["type"] == "turn_changed":
            return str(event["player"])
        if event["type"] == "game_over":
            return None
    raise AssertionError("no turn yet")


async def play_game(players: Mapping[str, WsClient], observer: WsClient) -> Msg:
    """Play until game over; ``observer`` decides whose turn it is. Returns ``game_over``."""
    turns = 0
    while True:
        await observer.wait_for(
            lambda: any(e["type"] in ("turn_changed", "game_over") for e in observer.events)
        )
        current = next_player(observer.events)
        if current is None:
            return next(e for e in observer.events if e["type"] == "game_over")
        client = players[current]
        scored = await play_turn(client, rolls=1 + turns % 3)
        await observer.wait_event(lambda e, s=scored["seq"]: e["seq"] >= s)
        turns += 1


def assert_gap_free(events: Sequence[Msg], start: int) -> None:
    seqs = [e["seq"] for e in events]
    assert seqs == list(range(start + 1, start + 1 + len(seqs))), seqs


def replay(events: Sequence[Msg], options: game.RuleOptions, seats: int) -> game.GameState:
    """Rebuild the game from the wire events alone with the engine."""
    state = game.new_game(options, seats)
    started = False
    for e in events:
        kind = e["type"]
        if kind == "player_joined":
            join = game.Join(e["player"], e["name"], computer=e.get("computer"))
            state, _ = game.apply(state, join)
        elif kind == "player_left":
            state, _ = game.apply(state, game.Leave(e["player"]))
        elif kind in ("roll_off", "game_started") and not started:
            state, _ = game.apply(state, game.Start(state.host or "", random_choice=0))
            started = True
            if kind == "roll_off":
                state, _ = game.apply(state, _roll_off(e))
        elif kind == "roll_off":
            state, _ = game.apply(state, _roll_off(e))
        elif kind == "rolled":
            held = frozenset(e["held"])
            faces = tuple(d for i, d in enumerate(e["dice"]) if i not in held)
            state, _ = game.apply(state, game.Roll(e["player"], faces, held))
        elif kind == "held":
            current = state.held
            new = frozenset(e["held"])
            if new - current:
                state, _ = game.apply(state, game.Hold(e["player"], new - current))
            if current - new:
                state, _ = game.apply(state, game.Release(e["player"], current - new))
        elif kind == "scored":
            box = game.Box(e["box"])
            state, _ = game.apply(state, game.Score(e["player"], box, e["automatic"]))
        elif kind == "bonus_taken":
            state, _ = game.apply(state, game.TakeBonus(e["player"], e["automatic"]))
    return state


def _roll_off(event: Msg) -> game.RollOff:
    return game.RollOff({r["player"]: tuple(r["dice"]) for r in event["rolls"]})


def totals_of(game_over: Msg) -> dict[str, int]:
    return {r["player"]: r["total"] for r in game_over["results"]}


def token_free(frames: Sequence[Any], tokens: Sequence[str]) -> bool:
    for frame in frames:
        data = frame if isinstance(frame, bytes) else frame.encode()
        for token in tokens:
            if token.encode() in data:
                return False
    return True

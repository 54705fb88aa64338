"""Quick play under load: remembered players arriving at random against several server
processes, each queueing once; prints whether everyone was matched exactly once, the waits and
the rating spread of each room.

Run it against servers that share one Redis, with ratings drawn from the player ids
(``YAHTZEE_QUICK_PLAY_SIMULATED_RATINGS=1``; :func:`simulated_rating` is the same formula) and
guests allowed in bulk (``YAHTZEE_PLAYERS_PER_HOUR``)::

    python -m clients.bench.quickplay --url ws://127.0.0.1:8000/ws --url ws://127.0.0.1:8001/ws \\
        --players 1000 --seconds 60 --seats 2

Each player makes a guest on its server (``POST /players``), connects at its arrival time,
sends ``quick_play`` and, once matched, takes its seat (``rejoin``) and leaves at once, so the
rooms end instead of being played by the absent-player rule. Waits are measured by the client,
from the first ``quick_play`` sent to ``quick_play_matched`` received; a retryable refusal
(``unavailable``) of ``hello`` or ``quick_play`` is resent after a pause and counted.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import math
import random
import statistics
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import httpx
import websockets

__all__ = ["Outcome", "Summary", "main", "run", "simulated_rating", "summarize"]

TIMEOUT = 180.0


def simulated_rating(player_id: str) -> float:
    """The rating a server with simulated ratings gives ``player_id`` (normal, 1500 +- 200)."""
    digest = hashlib.sha256(player_id.encode()).digest()
    u1 = (int.from_bytes(digest[:8], "big") + 1) / 2**64
    u2 = int.from_bytes(digest[8:16], "big") / 2**64
    return round(1500 + 200 * math.sqrt(-2 * math.log(u1)) * math.cos(2 * math.pi * u2), 1)


@dataclass
class Outcome:
    """What one player saw."""

    player: str
    rating: float
    matches: list[dict[str, Any]] = field(default_factory=list)
    wait: float | None = None
    error: str | None = None
    retries: int = 0
    #: when its first ``quick_play`` was sent (monotonic)
    queued_at: float = 0.0


@dataclass(frozen=True)
class Summary:
    players: int
    matched_once: int
    matched_twice: int
    unmatched: int
    rooms: int
    rooms_full: int
    rooms_with_computers: int
    seat_collisions: int
    wait_p50: float
    wait_p90: float
    wait_max: float
    spread_p50: float
    spread_p90: float
    spread_max: float

    def lines(self) -> list[str]:
        return [
            f"players {self.players}: matched exactly once {self.matched_once}, "
            f"twice or more {self.matched_twice}, never {self.unmatched}",
            f"rooms {self.rooms}: every seat filled {self.rooms_full}, with computers "
            f"{self.rooms_with_computers}, seats given twice {self.seat_collisions}",
            f"wait (s): median {self.wait_p50:.2f}, p90 {self.wait_p90:.2f}, "
            f"max {self.wait_max:.2f}",
            f"rating spread per room (people): median {self.spread_p50:.0f}, "
            f"p90 {self.spread_p90:.0f}, max {self.spread_max:.0f}",
        ]


def _quantile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def summarize(outcomes: list[Outcome], seats: int) -> Summary:
    """The figures of a run (what :func:`run` returns, checked and counted)."""
    rooms: dict[str, list[tuple[Outcome, dict[str, Any]]]] = defaultdict(list)
    for o in outcomes:
        for m in o.matches:
            rooms[m["room"]].append((o, m))
    collisions = sum(
        len(members) - len({m["seat"] for _, m in members}) for members in rooms.values()
    )
    full = sum(
        1 for members in rooms.values()
        if len(members) + len(members[0][1]["computers"]) == seats
    )  # fmt: skip
    spreads = [
        max(o.rating for o, _ in members) - min(o.rating for o, _ in members)
        for members in rooms.values()
    ]
    waits = [o.wait for o in outcomes if o.wait is not None]
    return Summary(
        players=len(outcomes),
        matched_once=sum(len(o.matches) == 1 for o in outcomes),
        matched_twice=sum(len(o.matches) > 1 for o in outcomes),
        unmatched=sum(not o.matches for o in outcomes),
        rooms=len(rooms),
        rooms_full=full,
        rooms_with_computers=sum(bool(m[0][1]["computers"]) for m in rooms.values()),
        seat_collisions=collisions,
        wait_p50=statistics.median(waits) if waits else 0.0,
        wait_p90=_quantile(waits, 0.9),
        wait_max=max(waits, default=0.0),
        spread_p50=statistics.median(spreads) if spreads else 0.0,
        spread_p90=_quantile(spreads, 0.9),
        spread_max=max(spreads, default=0.0),
    )


def _http_of(ws_url: str) -> str:
    return (
        ws_url.replace("ws://", "http://", 1).replace("wss://", "https://", 1).rsplit("/ws", 1)[0]
    )


async def _guest(
    http: httpx.AsyncClient, base: str, name: str, gate: asyncio.Semaphore
) -> tuple[str, str]:
    async with gate:  # a few at a time: the guests are made before the clock starts
        reply = await http.post(f"{base}/players", json={"name": name})
    reply.raise_for_status()
    body = reply.json()
    return body["player"], body["token"]


async def _play(url: str, token: str, outcome: Outcome, at: float, start: float,
                seats: int, rules: str) -> None:  # fmt: skip
    await asyncio.sleep(max(0.0, start + at - time.monotonic()))  # its arrival time
    try:
        async with websockets.connect(url, subprotocols=["yahtzee.v1.json"]) as ws:  # type: ignore[list-item]
            async with asyncio.timeout(TIMEOUT):
                await _queue(ws, token, seats, rules, outcome)
                if outcome.error is not None:
                    return
                while not outcome.matches:
                    message = json.loads(await ws.recv())
                    if message["type"] == "quick_play_matched":
                        outcome.matches.append(message)
                outcome.wait = time.monotonic() - outcome.queued_at
                match = outcome.matches[0]
                await ws.send(json.dumps({"type": "rejoin", "id": "r", "room": match["room"],
                                          "token": match["token"]}))  # fmt: skip
                await ws.send(json.dumps({"type": "leave", "id": "l"}))
                async for frame in ws:  # a second match would show here before the leave's ack
                    message = json.loads(frame)
                    if message["type"] == "quick_play_matched":
                        outcome.matches.append(message)
                    if message.get("id") == "l":
                        break
    except (OSError, TimeoutError, websockets.ConnectionClosed) as exc:
        outcome.error = type(exc).__name__


async def _queue(ws: Any, token: str, seats: int, rules: str, outcome: Outcome) -> None:
    """``hello`` with the token, then ``quick_play``; a retryable refusal (``unavailable``: the
    identities' database busy) is resent after a pause, as a client should."""
    commands: list[dict[str, Any]] = [
        {"type": "hello", "id": "h", "player_token": token},
        {"type": "quick_play", "id": "q", "seats": seats, "rules": rules, "computers": True},
    ]
    for command in commands:
        for attempt in range(8):
            if command["type"] == "quick_play" and attempt == 0:
                outcome.queued_at = time.monotonic()
            await ws.send(json.dumps(command))
            reply = await _reply(ws, command["id"], outcome)
            if reply["type"] == "ack":
                break
            if not reply["retryable"] or attempt == 7:
                outcome.error = f"{command['type']}: {reply['code']}"
                return
            outcome.retries += 1
            await asyncio.sleep(0.2 * 2**attempt)


async def _reply(ws: Any, command_id: str, outcome: Outcome) -> dict[str, Any]:
    """The reply to ``command_id`` (a match that comes first is kept)."""
    async for frame in ws:
        message: dict[str, Any] = json.loads(frame)
        if message["type"] == "quick_play_matched":
            outcome.matches.append(message)
        elif message.get("id") == command_id:
            return message
    raise ConnectionError("closed before the reply")


async def run(urls: list[str], players: int, seconds: float, seats: int = 2,
              rules: str = "yahtzee", seed: int = 1) -> list[Outcome]:  # fmt: skip
    """Make ``players`` guests over ``urls`` (player i on url i mod n), let them arrive
    uniformly at random within ``seconds`` and quick-play; what each saw."""
    rng = random.Random(seed)
    tag = rng.randrange(10**6)
    gate = asyncio.Semaphore(8)
    async with httpx.AsyncClient(timeout=30) as http:
        made = await asyncio.gather(*(
            _guest(http, _http_of(urls[i % len(urls)]), f"Qb{tag} {i}", gate)
            for i in range(players)
        ))  # fmt: skip
    outcomes = [Outcome(player, simulated_rating(player)) for player, _ in made]
    start = time.monotonic()
    await asyncio.gather(*(
        _play(urls[i % len(urls)], token, outcomes[i], rng.uniform(0, seconds), start, seats,
              rules)
        for i, (_, token) in enumerate(made)
    ))  # fmt: skip
    return outcomes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", action="append", help="a server's WebSocket URL (repeat)")
    parser.add_argument("--players", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--seats", type=int, default=2)
    parser.add_argument("--rules", default="yahtzee")
    args = parser.parse_args(argv)
    urls = args.url or ["ws://127.0.0.1:8000/ws"]
    outcomes = asyncio.run(run(urls, args.players, args.seconds, args.seats, args.rules))
    summary = summarize(outcomes, args.seats)
    print(f"quick play: {args.players} players over {args.seconds:.0f} s on {len(urls)} "
          f"server(s), {args.seats} seats")  # fmt: skip
    for line in summary.lines():
        print(line)
    print(f"retried after a retryable refusal: {sum(o.retries for o in outcomes)} commands")
    errors = [o.error for o in outcomes if o.error]
    if errors:
        print(f"errors: {len(errors)} ({', '.join(sorted(set(errors)))})")
    ok = summary.matched_once == summary.players and summary.seat_collisions == 0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

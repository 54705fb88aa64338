"""A duplicate tournament of N simulated entrants against a running server, and its figures.

    python -m clients.bench.tournament --url http://127.0.0.1:8000 --admin-token T \\
        --entrants 1000 --concurrency 40 --seconds 600

The server needs a database, ``YAHTZEE_ADMIN_TOKEN=T`` and enough guests per address
(``YAHTZEE_PLAYERS_PER_HOUR``). The script creates a tournament ending ``--seconds`` from now,
makes N guests, and plays every entry over the WebSocket (:class:`clients.client.Client`,
``rejoin`` with the entry's token) with one of three client levels: ``careful``
(:func:`clients.strategy.decide`), ``hasty`` (scores after the first roll) and ``random``
(random holds); after every score it reads the standings until they show the entry's new total
(the time from the score's command to that is the *standings update time*). After the end time
it checks, and prints:

- every die of every entry is the face of its (turn, throw, slot): any two entries that rolled
  the same slot at the same point got the same face (read back from the rooms' logs);
- the final standings are the entries' own totals, in order;
- ``yahtzee verify`` (:func:`clients.tournaments.verify`) passes on every entry;
- the p50/p99/max standings update time, the optimal player's total and the best entry's.

It prints figures; ``tests/clients/test_tournament_bench.py`` runs it at a tiny size.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import random
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from clients import players, tournaments
from clients.client import Client
from clients.model import RoomModel
from clients.strategy import choose_box, decide
from clients.verify import fetch_events
from protocol import Phase, RoomStatus
from protocol.fairdice import Status

__all__ = ["LEVELS", "Figures", "main", "run"]

LEVELS = ("careful", "hasty", "random")


@dataclass
class Figures:
    """What a run found."""

    entrants: int = 0
    update_seconds: list[float] = field(default_factory=list)
    totals: dict[str, int] = field(default_factory=dict)  # room -> the entry's own total
    dice_checked: int = 0
    dice_conflicts: int = 0
    verified: int = 0
    standings_correct: bool = False
    optimal_score: int | None = None
    play_seconds: float = 0.0

    def lines(self) -> list[str]:
        ups = sorted(self.update_seconds)

        def pct(p: float) -> float:
            return ups[min(len(ups) - 1, int(p * len(ups)))] * 1000 if ups else float("nan")

        best = max(self.totals.values(), default=0)
        return [
            f"entrants: {self.entrants} in {self.play_seconds:.1f} s",
            f"dice compared across entries: {self.dice_checked}, "
            f"different faces for the same (turn, throw, slot): {self.dice_conflicts}",
            f"final standings equal the entries' totals, in order: {self.standings_correct}",
            f"yahtzee verify: {self.verified}/{self.entrants} verified",
            f"standings update after a score: {len(ups)} samples, p50 {pct(0.5):.1f} ms, "
            f"p99 {pct(0.99):.1f} ms, max {ups[-1] * 1000 if ups else float('nan'):.1f} ms",
            f"the dice allowed {self.optimal_score} (optimal player); best entry {best}; "
            f"mean {statistics.fmean(self.totals.values()) if self.totals else 0:.1f}",
        ]


def _ws_url(http: str) -> str:
    return http.replace("https://", "wss://").replace("http://", "ws://").rstrip("/") + "/ws"


def _choice(level: str, model: RoomModel, rng: random.Random) -> tuple[str | None, list[int]]:
    """The level's move: (box to score, None) or (None, dice to keep for a roll)."""
    if level == "hasty" or model.rolls_left <= 0:
        return choose_box(model.preview), []
    if level == "random":
        if rng.random() < 0.3:
            return choose_box(model.preview), []
        keep = [i for i in range(5) if rng.random() < 0.5]
        return (choose_box(model.preview), []) if len(keep) == 5 else (None, keep)
    decision = decide(model.dice, model.rolls_left, model.preview)
    return decision.score, list(decision.keep or ())


def _after(seq: int) -> Callable[[RoomModel], bool]:
    return lambda model: model.seq > seq


def _rolled_after(seq: int) -> Callable[[RoomModel], bool]:
    return lambda model: model.seq > seq and model.phase is not Phase.AWAITING_ROLL


async def _standing_of(http: str, tournament: str, name: str, limit: int) -> int | None:
    body = await asyncio.to_thread(tournaments.fetch_standings, http, tournament, limit=limit)
    for row in body["entries"]:
        if row["name"] == name:
            return int(row["score"])
    return None


async def _play(
    http: str, tournament: str, entry: tournaments.Entry, name: str, level: str, seed: int,
    figures: Figures, limit: int, sample_every: int,
) -> None:  # fmt: skip
    rng = random.Random(seed)
    async with Client(_ws_url(http), reconnect=True) as client:
        await client.rejoin(entry.room, entry.token)
        scores = 0
        while True:
            model = await client.wait_for(
                lambda m: (
                    m.status is RoomStatus.FINISHED
                    or (m.phase in (Phase.AWAITING_ROLL, Phase.ROLLED) and not m.turn_over)
                )
            )
            if model.status is RoomStatus.FINISHED:
                figures.totals[entry.room] = model.players[0].grand
                return
            if model.phase is Phase.AWAITING_ROLL:
                seq = model.seq
                await client.roll()
                await client.wait_for(_rolled_after(seq))
                continue
            box, keep = _choice(level, model, rng)
            seq = model.seq
            if box is None:
                await client.roll(keep=keep)
                await client.wait_for(_after(seq))
                continue
            started = time.perf_counter()
            await client.score(box)
            after = await client.wait_for(_after(seq))
            scores += 1
            if scores % sample_every == 0:  # read the board until it shows the new total
                total = after.players[0].grand
                # polling over HTTP is what a reader of the board does
                while await _standing_of(http, tournament, name, limit) != total:  # noqa: ASYNC110
                    await asyncio.sleep(0.005)
                figures.update_seconds.append(time.perf_counter() - started)


def _check_dice(logs: Mapping[str, Sequence[Mapping[str, Any]]], figures: Figures) -> None:
    """Every (turn, throw, slot) rolled in any entry has one face across all entries."""
    faces: dict[tuple[int, int, int], int] = {}
    for events in logs.values():
        turn, throw = 1, 0
        for event in events:
            if event.get("type") == "scored":
                turn, throw = turn + 1, 0
            elif event.get("type") == "rolled":
                throw += 1
                held = set(event["held"])
                for slot, face in enumerate(event["dice"]):
                    if slot in held:
                        continue
                    key = (turn, throw, slot)
                    if key in faces:
                        figures.dice_checked += 1
                        figures.dice_conflicts += faces[key] != face
                    else:
                        faces[key] = face


async def run(
    http: str, admin_token: str, entrants: int, *, concurrency: int = 40, seconds: float = 600,
    sample_every: int = 5, seed: int = 1,
) -> Figures:  # fmt: skip
    """Run the whole tournament (see the module docstring); returns its figures."""
    figures = Figures(entrants=entrants)
    # every entrant's HTTP reads run in threads (urllib): enough of them that none waits
    asyncio.get_running_loop().set_default_executor(
        concurrent.futures.ThreadPoolExecutor(max_workers=concurrency + 4)
    )
    ends = int(time.time() * 1000 + seconds * 1000)
    cup = await asyncio.to_thread(
        tournaments.create, http, admin_token, name="Bench cup", ends_ms=ends
    )
    tid = cup["tournament"]
    tag = f"{random.Random().randrange(36**4):04d}"
    gate = asyncio.Semaphore(concurrency)
    names: dict[str, str] = {}

    async def one(index: int) -> None:
        async with gate:
            name = f"Bench {tag} {index}"
            guest = await asyncio.to_thread(players.create_guest, http, name)
            entry = await asyncio.to_thread(tournaments.enter, http, tid, guest.token)
            names[entry.room] = guest.name
            level = LEVELS[index % len(LEVELS)]
            await _play(
                http, tid, entry, guest.name, level, seed * 100_003 + index, figures,
                min(1000, entrants + 10), sample_every,
            )  # fmt: skip

    started = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(entrants)))
    figures.play_seconds = time.perf_counter() - started

    # the seed is revealed at the end time, not before: wait for it (a clock, no event)
    while time.time() * 1000 < ends:  # noqa: ASYNC110
        await asyncio.sleep(min(1.0, ends / 1000 - time.time() + 0.05))
    final: dict[str, Any] = {}
    while not final.get("final"):
        final = await asyncio.to_thread(
            tournaments.fetch_standings, http, tid, limit=min(1000, entrants + 10)
        )
        if not final.get("final"):
            await asyncio.sleep(0.5)
    rows = final["entries"]
    figures.optimal_score = final["optimal_score"]
    ordered = [row["score"] for row in rows]
    figures.standings_correct = (
        ordered == sorted(ordered, reverse=True)
        and {row["room"]: row["score"] for row in rows} == figures.totals
    )
    logs: dict[str, list[Any]] = {}
    for row in rows:
        logs[row["room"]] = await asyncio.to_thread(
            fetch_events, http, row["room"], invite_code=row["invite_code"]
        )
        verdict = await asyncio.to_thread(
            tournaments.verify, http, tid, row["room"], row["invite_code"]
        )
        figures.verified += verdict.status is Status.VERIFIED
    _check_dice(logs, figures)
    return figures


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--url", default="http://127.0.0.1:8000")
    parser.add_argument("--admin-token", required=True)
    parser.add_argument("--entrants", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=40)
    parser.add_argument("--seconds", type=float, default=600.0, help="tournament length")
    parser.add_argument("--sample-every", type=int, default=5, help="measure every n-th score")
    args = parser.parse_args(argv)
    figures = asyncio.run(
        run(
            args.url,
            args.admin_token,
            args.entrants,
            concurrency=args.concurrency,
            seconds=args.seconds,
            sample_every=args.sample_every,
        )
    )
    print("\n".join(figures.lines()))
    ok = figures.dice_conflicts == 0 and figures.standings_correct
    return 0 if ok and figures.verified == figures.entrants else 1


if __name__ == "__main__":
    raise SystemExit(main())

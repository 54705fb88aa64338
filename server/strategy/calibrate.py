"""Calibrated computer levels and the rating simulation (README "Ratings").

``python -m server.strategy.calibrate [--rules yahtzee|yatzy] [--pool N] [--games N] [--seed S]
[--write]``

1. **Pool.** ``--pool`` games in which every simulated player sits once (through the real
   engine, :func:`server.solver.simulate.play_room`), each analysed by the solver
   (:func:`server.solver.analyse_game`): per player and game, the final score and the mean
   expected loss per decision.
2. **Calibration.** A level's decision rating is the mean of its games' decision performances
   (the value its decaying average settles around). ``--write`` writes them for the four
   computer levels into :mod:`server.strategy.calibration` (the decision leaderboard's
   reference rows).
3. **Simulation.** ``--games`` rated games of 2 to 4 players drawn among the simulated players,
   each player's game drawn from its pool (a bootstrap: Yahtzee players do not interact, so a
   game of several is several independent solitaire games). The result ratings move by
   :func:`server.domain.rating.rate_results`, the decision ratings by
   :meth:`~server.domain.rating.DecisionRating.after`, exactly as the archive does. Printed:
   after how many games each rating orders the players by their true strength with a
   Kendall tau >= 0.9 and keeps it to the end.

Players of known strength: the four levels, and a ``hard`` player with 1 % mistakes (instead of
4 %), 1.4 points a game below the optimal player: results barely tell them apart, decisions do.
(A ``hard`` player with 10 % or 25 % mistakes was left out: its mean score is within a point or
three of ``medium``'s or ``easy``'s, so no "true order" exists between them.)
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from server.domain.rating import DecisionRating, ResultRating, decision_performance, rate_results
from server.game import RuleOptions, RuleSet
from server.solver import (
    ComputerPlayer,
    Level,
    SolverRules,
    Table,
    analyse_game,
    computer_player,
    table_for,
)
from server.solver.simulate import play_games, play_room

__all__ = [
    "Outcome",
    "Simulated",
    "calibrate",
    "kendall_tau",
    "main",
    "pool_games",
    "settles_at",
    "simulate",
    "strengths",
    "true_order",
]

TAU_TARGET = 0.9
CALIBRATION_FILE = Path(__file__).with_name("calibration.py")


@dataclass(frozen=True, slots=True)
class Outcome:
    """One player's game: final score and mean expected loss per decision."""

    final: int
    mean_loss: float


@dataclass(frozen=True, slots=True)
class Simulated:
    """A simulated player: a name and its computer player, strongest last."""

    name: str
    player: ComputerPlayer


def strengths(table: Table) -> list[Simulated]:
    """The simulated players, weakest first: their true order by construction (``hard``'s
    mistakes each take the second-best option, so fewer of them are worth more; ``easy`` and
    ``medium`` trail ``hard`` by 10-30 points a game). :func:`true_order` measures it."""
    return [
        Simulated("easy", computer_player(Level.EASY, table)),
        Simulated("medium", computer_player(Level.MEDIUM, table)),
        Simulated("hard", computer_player(Level.HARD, table)),
        Simulated("hard-1%", ComputerPlayer(Level.HARD, table, 0.01)),
        Simulated("optimal", computer_player(Level.OPTIMAL, table)),
    ]


def true_order(
    players: Sequence[Simulated], games: int, rng: random.Random
) -> tuple[list[str], dict[str, float]]:
    """The players in their order by construction, and their mean score over ``games``
    solitaire games each (a check: neighbours within a point or two may come out swapped by
    chance, as ``hard-1%`` and ``optimal`` do at 1000 games)."""
    means = {p.name: sum(play_games(p.player, games, rng)) / games for p in players}
    return [p.name for p in players], means


def pool_games(
    table: Table,
    players: Sequence[Simulated],
    games: int,
    rng: random.Random,
    progress: Callable[[int], None] | None = None,
) -> dict[str, list[Outcome]]:
    """``games`` games in which every player sits once (seat order rotated), analysed."""
    pool: dict[str, list[Outcome]] = {p.name: [] for p in players}
    for n in range(games):
        shift = n % len(players)
        seated = list(players[shift:]) + list(players[:shift])
        events = play_room([p.player for p in seated], rng)
        review = analyse_game(table, events)
        finals = _finals(events)
        for review_of in review.players:
            name = seated[int(review_of.player.removeprefix("cpu"))].name
            pool[name].append(Outcome(finals[review_of.player], review_of.mean_loss))
        if progress is not None:
            progress(n + 1)
    return pool


def _finals(events: Sequence[object]) -> dict[str, int]:
    from server.game import GameOver

    over = next(e for e in reversed(events) if isinstance(e, GameOver))
    return {r.player: r.total for r in over.results}


def calibrate(pool: dict[str, list[Outcome]]) -> dict[str, int]:
    """Each player's decision rating: the mean performance of its pooled games."""
    return {
        name: round(sum(decision_performance(o.mean_loss) for o in games) / len(games))
        for name, games in pool.items()
    }


def kendall_tau(truth: Sequence[str], scores: dict[str, float]) -> float:
    """Kendall's tau-a between the true order ``truth`` (weakest first) and ``scores``."""
    concordant = discordant = 0
    for i in range(len(truth)):
        for j in range(i + 1, len(truth)):
            diff = scores[truth[j]] - scores[truth[i]]
            if diff > 0:
                concordant += 1
            elif diff < 0:
                discordant += 1
    pairs = len(truth) * (len(truth) - 1) // 2
    return (concordant - discordant) / pairs


def settles_at(taus: Sequence[float], target: float = TAU_TARGET) -> int | None:
    """The number of games after which tau stays >= ``target`` to the end (None: never)."""
    last_below = max((i for i, t in enumerate(taus) if t < target), default=-1)
    return None if last_below == len(taus) - 1 else last_below + 2


def simulate(
    pool: dict[str, list[Outcome]], truth: Sequence[str], games: int, rng: random.Random
) -> tuple[list[float], list[float]]:
    """Tau of the result ratings and of the decision ratings after each of ``games`` games."""
    results = {name: ResultRating() for name in truth}
    decisions = {name: DecisionRating() for name in truth}
    result_taus: list[float] = []
    decision_taus: list[float] = []
    for _ in range(games):
        seated = rng.sample(list(truth), rng.randint(2, min(4, len(truth))))
        played = {name: rng.choice(pool[name]) for name in seated}
        finals = sorted({o.final for o in played.values()}, reverse=True)
        places = [1 + finals.index(played[name].final) for name in seated]
        moved = rate_results([results[name] for name in seated], places)
        for name, after in zip(seated, moved, strict=True):
            results[name] = after
            decisions[name] = decisions[name].after(decision_performance(played[name].mean_loss))
        result_taus.append(kendall_tau(truth, {n: r.mu for n, r in results.items()}))
        decision_taus.append(kendall_tau(truth, {n: d.value or 0.0 for n, d in decisions.items()}))
    return result_taus, decision_taus


def write_calibration(ratings: dict[str, int], family: str, pool: int) -> None:
    """Write the four computer levels' decision ratings of ``family`` into :mod:`.calibration`,
    keeping the other families' (each measured by its own run)."""
    from server.strategy.calibration import DECISION_RATINGS

    families = {**DECISION_RATINGS, family: {level.value: ratings[level.value] for level in Level}}
    lines = [
        '"""Decision ratings of the computer levels: reference rows of the decision leaderboard.',
        "",
        "GENERATED by ``python -m server.strategy.calibrate --write``: do not edit by hand.",
        f"Measured from {pool} analysed games of each level (each family's official rules).",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "DECISION_RATINGS: dict[str, dict[str, int]] = {",
        *(
            f'    "{name}": {{' + ", ".join(f'"{k}": {v}' for k, v in levels.items()) + "},"
            for name, levels in sorted(families.items())
        ),
        "}",
        '"""Rule family -> computer level -> its decision rating (mean game performance)."""',
        "",
    ]
    CALIBRATION_FILE.write_text("\n".join(lines), encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m server.strategy.calibrate")
    parser.add_argument("--pool", type=int, default=200, help="analysed games per player")
    parser.add_argument("--games", type=int, default=10_000, help="simulated rated games")
    parser.add_argument("--truth-games", type=int, default=500, help="games to rank players")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--cache", type=Path, default=None, help="strategy table cache folder")
    parser.add_argument("--write", action="store_true", help="write server/strategy/calibration")
    parser.add_argument("--rules", choices=[r.value for r in RuleSet], default="yahtzee")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    table = table_for(SolverRules.of(RuleOptions(rules=RuleSet(args.rules))), args.cache)
    players = strengths(table)
    truth, means = true_order(players, args.truth_games, rng)
    print(
        f"true order, with mean scores over {args.truth_games} solitaire games each: "
        + " < ".join(f"{name} {means[name]:.1f}" for name in truth)
    )
    pool = pool_games(table, players, args.pool, rng)
    ratings = calibrate(pool)
    print(f"decision ratings of the simulated players ({args.pool} analysed games each):")
    for name in truth:
        mean_final = sum(o.final for o in pool[name]) / len(pool[name])
        mean_loss = sum(o.mean_loss for o in pool[name]) / len(pool[name])
        print(
            f"  {name:>9}: {ratings[name]:>5}  (mean loss {mean_loss:.3f} per decision,"
            f" mean score {mean_final:.1f})"
        )
    if args.write:
        write_calibration(ratings, args.rules, args.pool)
        print(f"wrote {CALIBRATION_FILE}")
    result_taus, decision_taus = simulate(pool, truth, args.games, rng)
    print(f"{args.games} rated games of 2-4 players among {len(truth)} of known strength:")
    for label, taus in (("result rating", result_taus), ("decision rating", decision_taus)):
        for target in (TAU_TARGET, 0.6):
            settled = settles_at(taus, target)
            where = "never" if settled is None else f"after {settled} games"
            first = next((i + 1 for i, t in enumerate(taus) if t >= target), None)
            since = ""
            if first is not None:
                after = taus[first - 1 :]
                held = 100 * sum(t >= target for t in after) / len(after)
                since = f"; first after {first} games, then in {held:.0f} % of the games"
            print(f"  {label:>15}: Kendall tau >= {target} for good {where}{since}")
        print(f"  {label:>15}: final tau {taus[-1]:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

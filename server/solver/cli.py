"""``yahtzee solve``: build or load the optimal-strategy tables, simulate, benchmark.

::

    yahtzee solve                         # official rules: expected score and standard deviation
    yahtzee solve --rules all             # every rule set rooms can have
    yahtzee solve --simulate 2000         # + 2,000 games through the engine, mean and 95 % CI
    yahtzee solve --levels 10000          # mean score of each computer level over 10,000 games
    yahtzee solve --bench                 # build, load, decision, hint and analysis times
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from .analysis import analyse_game
from .cache import cache_paths, default_cache_dir, load_table, table_for
from .players import Level, computer_player
from .policy import rank_options
from .rules import ALL_RULES, SolverRules
from .simulate import play_games, play_room, summarise
from .table import Table

__all__ = ["add_arguments", "register", "run"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``solve`` (the ``yahtzee.commands`` entry point)."""
    solve = sub.add_parser(
        "solve",
        help="optimal strategy: expected score, simulations, computer levels",
        description="Build (or load) the optimal-strategy table of a rule set and print the "
        "expected final score and its standard deviation.",
    )
    add_arguments(solve)
    solve.set_defaults(func=run)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``solve`` options to ``parser``."""
    names = ", ".join(r.name for r in ALL_RULES)
    parser.add_argument(
        "--rules",
        default="yahtzee",
        help=f"rule set, or 'all' (default yahtzee = official, forced Joker). Known: {names}",
    )
    parser.add_argument(
        "--simulate", type=int, default=0, metavar="N", help="play N games with the optimal policy"
    )
    parser.add_argument(
        "--levels", type=int, default=0, metavar="N", help="play N games per computer level"
    )
    parser.add_argument("--bench", action="store_true", help="print build and decision timings")
    parser.add_argument("--seed", type=int, default=1, help="dice seed of the simulations")
    parser.add_argument(
        "--cache-dir",
        type=Path,
        default=None,
        help=f"table directory (default {default_cache_dir()}; env YAHTZEE_SOLVER_CACHE)",
    )
    parser.add_argument("--rebuild", action="store_true", help="build the tables even when cached")
    parser.add_argument(
        "--workers",
        type=int,
        default=min(2, os.cpu_count() or 1),
        help="processes building a table (default: 2, or 1 on a single core)",
    )


def _progress(label: str) -> Callable[[int, int], None]:
    finished = False

    def show(done: int, total: int) -> None:
        nonlocal finished
        if finished:
            return
        width = 30
        filled = width * done // max(total, 1)
        bar = "#" * filled + "." * (width - filled)
        sys.stderr.write(f"\r{label} [{bar}] {100 * done // max(total, 1):3d}%")
        if done >= total:
            finished = True
            sys.stderr.write("\n")
        sys.stderr.flush()

    return show


def _table(rules: SolverRules, args: argparse.Namespace) -> tuple[Table, bool]:
    """The table with moments, and whether it came from the cache."""
    cache_dir: Path | None = args.cache_dir
    if args.rebuild:
        for path in cache_paths(rules, cache_dir or default_cache_dir()):
            path.unlink(missing_ok=True)
    cached = load_table(rules, cache_dir, with_moments=True)
    if cached is not None:
        return cached, True
    progress = _progress(f"building {rules.name}")
    table = table_for(rules, cache_dir, with_moments=True, workers=args.workers, progress=progress)
    return table, False


def _solve(rules: SolverRules, args: argparse.Namespace) -> Table:
    table, loaded = _table(rules, args)
    sd = table.standard_deviation
    built = f"built in {table.build_seconds:.1f} s"
    if loaded:
        built = f"loaded from cache; {built}" if table.build_seconds else "loaded from cache"
    print(
        f"{rules.name:<44} expected {table.expected:8.3f}  sd {sd or 0.0:7.3f}  ({built})",
        flush=True,
    )
    if args.simulate:
        scores = play_games(
            computer_player(Level.OPTIMAL, table),
            args.simulate,
            random.Random(args.seed),
            progress=_progress(f"simulating {rules.name}"),
        )
        summary = summarise(scores)
        verdict = "contains" if summary.contains(table.expected) else "MISSES"
        print(
            f"{'':<44} simulated {summary.mean:8.3f} +/- {summary.half_width:.3f} (95 % CI, "
            f"{summary.games} games, sd {summary.standard_deviation:.2f}): {verdict} the "
            "expected value",
            flush=True,
        )
    return table


def _levels(table: Table, args: argparse.Namespace) -> None:
    rules = table.rules
    print(f"\n| level ({rules.name}) | games | mean score | 95 % CI | sd |")
    print("|---|---|---|---|---|")
    for level in Level:
        scores = play_games(
            computer_player(level, table),
            args.levels,
            random.Random(args.seed),
            progress=_progress(f"level {level.value}"),
        )
        s = summarise(scores)
        print(
            f"| {level.value} | {s.games} | {s.mean:.1f} | +/- {s.half_width:.1f} | "
            f"{s.standard_deviation:.1f} |",
            flush=True,
        )


def _timed(action: Callable[[], object], repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        began = time.perf_counter()
        action()
        times.append(time.perf_counter() - began)
    return times


def _report(label: str, seconds: list[float]) -> None:
    ordered = sorted(seconds)
    p99 = ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]
    print(
        f"  {label:<34} median {1000 * statistics.median(seconds):8.3f} ms   "
        f"p99 {1000 * p99:8.3f} ms   ({len(seconds)} runs)"
    )


def _bench(table: Table, args: argparse.Namespace) -> None:
    rules = table.rules
    print(f"benchmark ({rules.name}); table build {table.build_seconds:.1f} s")
    _report("load table from cache", _timed(lambda: load_table(rules, args.cache_dir), 20))
    rng = random.Random(args.seed)
    events = play_room([computer_player(Level.OPTIMAL, table)] * 4, rng)
    analyse = _timed(lambda: analyse_game(table, events), 10)
    # Decisions and hints at the positions of that game, each on a cold memo.
    from server.game import Rolled, Scorecard

    from .players import choose

    player = computer_player(Level.OPTIMAL, table)
    rolled = [e for e in events if isinstance(e, Rolled)][:200]
    card = Scorecard.empty(rules.rules)

    def timed(action: Callable[[], object], cold: bool) -> float:
        if cold:
            table.memo.clear()
        began = time.perf_counter()
        action()
        return time.perf_counter() - began

    def decision(e: Rolled) -> Callable[[], object]:
        return lambda: choose(player, card, e.dice, e.rolls_left, 0.5)

    def hint(e: Rolled) -> Callable[[], object]:
        return lambda: rank_options(table, card, e.dice, e.rolls_left)

    _report("computer decision (cold turn)", [timed(decision(e), True) for e in rolled])
    _report("computer decision (same turn)", [timed(decision(e), False) for e in rolled])
    _report("hint, top 3 (cold turn)", [timed(hint(e), True) for e in rolled])
    _report("hint, top 3 (same turn)", [timed(hint(e), False) for e in rolled])
    _report("analysis of a 4-player game", analyse)


def run(args: argparse.Namespace) -> int:
    """Run ``yahtzee solve`` with parsed ``args``; the exit status."""
    try:
        chosen = list(ALL_RULES) if args.rules == "all" else [SolverRules.from_name(args.rules)]
    except ValueError as error:
        print(error, file=sys.stderr)
        return 2
    for rules in chosen:
        table = _solve(rules, args)
        if args.levels:
            _levels(table, args)
        if args.bench:
            _bench(table, args)
    return 0


def main(argv: list[str] | None = None) -> int:
    """Stand-alone entry point (``python -m server.solver.cli``)."""
    parser = argparse.ArgumentParser(prog="yahtzee solve", description=__doc__)
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())

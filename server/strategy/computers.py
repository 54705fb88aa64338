"""Computer players and the advisor: the solver's strategy tables inside a server process.

A table is loaded from the disk cache (a memory map: milliseconds) or, the first time a rule
set is needed, built in a child process at a lower priority (:mod:`server.strategy.tablebuild`;
10-60 s
on one core), never on a request's path and never holding this process's interpreter: until it
is ready a computer's move waits and a ``hint`` answers ``unavailable``.

Moves are pure functions of the game state and of ``luck``, a number in [0, 1) derived from the
room's secret seed and the decision's place in the game: the same decision point always gets
the same luck, so a move that is retried (a lost compare-and-set) or split into steps (hold,
then roll) never changes its mind.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from server import game
from server.solver import (
    Action,
    ComputerPlayer,
    GameAnalysis,
    Option,
    Reroll,
    ScoreBox,
    SolverRules,
    Table,
    analyse_game,
    choose,
    computer_player,
    load_table,
    rank_options,
)
from server.solver.table import position_of
from server.strategy.tablebuild import build_in_child

__all__ = [
    "Advisor", "Decisions", "Hint", "analyse", "command_for", "decide_move", "hint", "next_move",
    "pick_name",
]  # fmt: skip

log = logging.getLogger("yahtzee.computers")

NAMES = (
    "Ada", "Blaise", "Carl", "Dora", "Emmy", "Felix", "Grace", "Hugo", "Iris", "Jules",
    "Kurt", "Lise", "Max", "Noether", "Otto", "Pia",
)  # fmt: skip
"""Names given to computer players (the first one free in the room)."""


MOST_OPTIONS = 20_000
"""Rooms' options objects the advisor remembers its players by (all are forgotten at once
when there are more: they are worked out again, cheaply)."""


class Advisor:
    """The strategy tables of this process, by rule set, loaded or built in the background."""

    def __init__(self, cache_dir: Path | None = None) -> None:
        self.cache_dir = cache_dir
        self._tables: dict[str, Table] = {}
        self._loading: dict[str, asyncio.Future[Table]] = {}
        self._players: dict[tuple[str, str], ComputerPlayer] = {}
        self._by_options: dict[tuple[int, str], tuple[game.RuleOptions, ComputerPlayer]] = {}
        self._building = threading.Lock()

    def table(self, options: game.RuleOptions) -> Table | None:
        """The table of ``options``' rule set, or ``None`` while it loads (loading starts)."""
        rules = SolverRules.of(options)
        found = self._tables.get(rules.name)
        if found is None:
            self.prepare(options)
        return found

    def player(self, options: game.RuleOptions, level: str) -> ComputerPlayer | None:
        """The computer player of ``level`` for the rule set, or ``None`` while it loads."""
        # Asked at every computer's move with the room's own options object: remembered by
        # that object (held, so its id is not reused) before the rule set is worked out.
        seen = self._by_options.get((id(options), level))
        if seen is not None and seen[0] is options:
            return seen[1]
        table = self.table(options)
        if table is None:
            return None
        key = (table.rules.name, level)
        if key not in self._players:
            self._players[key] = computer_player(level, table)
        if len(self._by_options) >= MOST_OPTIONS:
            self._by_options.clear()
        self._by_options[(id(options), level)] = (options, self._players[key])
        return self._players[key]

    def prepare(self, options: game.RuleOptions) -> asyncio.Future[Table]:
        """Start loading (or building) the table of ``options``' rule set, once."""
        rules = SolverRules.of(options)
        pending = self._loading.get(rules.name)
        if pending is None:
            loop = asyncio.get_running_loop()
            pending = self._loading[rules.name] = loop.create_future()
            # A daemon thread, not the default executor: a build must not hold up shutdown.
            threading.Thread(
                target=self._load, args=(rules, loop, pending), name=f"table-{rules.name}",
                daemon=True,
            ).start()  # fmt: skip
        return pending

    async def ready(self, options: game.RuleOptions, within: float) -> Table | None:
        """The table of ``options``' rule set, waiting at most ``within`` seconds for it (a
        table on disk loads in milliseconds; a build takes longer: then ``None``)."""
        found = self.table(options)
        if found is not None:
            return found
        try:
            async with asyncio.timeout(within):
                return await asyncio.shield(self.prepare(options))
        except TimeoutError:
            return None

    def _load(
        self, rules: SolverRules, loop: asyncio.AbstractEventLoop, done: asyncio.Future[Table]
    ) -> None:
        try:
            table = load_table(rules, self.cache_dir)
            if table is None:
                # one build at a time: a build takes a core for 10-60 s, and requests for many
                # rule sets must not take every core from the games
                with self._building:
                    table = load_table(rules, self.cache_dir)  # built while this one waited?
                    if table is None:
                        log.info("building the %s strategy table in a child process", rules.name)
                        build_in_child(rules, self.cache_dir)
                        table = load_table(rules, self.cache_dir)
                if table is None:
                    raise RuntimeError(
                        f"the {rules.name} table is not in the cache after its build"
                    )
        except Exception as exc:  # a failed build is logged; the next request starts another
            log.exception("the %s strategy table could not be loaded", rules.name)
            self._tell(loop, self._failed, rules.name, done, exc)
            return
        self._tell(loop, self._loaded, rules.name, table, done)

    @staticmethod
    def _tell(loop: asyncio.AbstractEventLoop, callback: Any, *args: Any) -> None:
        """Run ``callback`` on the loop, unless the loop is gone (the process shut down while
        the table loaded: nobody is waiting any more)."""
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(callback, *args)

    def _loaded(self, name: str, table: Table, done: asyncio.Future[Table]) -> None:
        self._tables[name] = table
        if not done.done():
            done.set_result(table)

    def _failed(self, name: str, done: asyncio.Future[Table], exc: Exception) -> None:
        self._loading.pop(name, None)
        if not done.done():
            done.set_exception(exc)
            done.exception()  # retrieved: nobody may be waiting


# -- moves ----------------------------------------------------------------------------------------


def luck(seed: str, state: game.GameState, player: str) -> float:
    """A number in [0, 1) fixed for this decision point (see the module docstring)."""
    card = game.scorecard(state, player)
    key = f"{seed}:{player}:{card.filled_count}:{card.yahtzee_bonuses}:{state.rolls_used}"
    digest = hashlib.sha256(key.encode()).digest()
    return int.from_bytes(digest[:7], "big") / 2**56


def next_move(
    computer: ComputerPlayer, state: game.GameState, player: str, seed: str, show_holds: bool
) -> game.Command:
    """The computer's next command on its turn (its mistakes drawn from the room's ``seed``,
    see :func:`luck`). With ``show_holds`` the dice it keeps are first held (one command), so
    that people see the choice before the roll."""
    if state.phase is game.Phase.AWAITING_ROLL:
        return game.Roll(player, ())  # no decision: no luck drawn (a hash a move saved)
    return command_for(decide_move(computer, state, player, seed), state, player, show_holds)


def decide_move(computer: ComputerPlayer, state: game.GameState, player: str, seed: str) -> Action:
    """The computer's decision after a roll (phase rolled): a pure function of the card, the
    dice, the rolls left and :func:`luck`."""
    card = game.scorecard(state, player)
    return choose(computer, card, state.dice, game.rolls_left(state), luck(seed, state, player))


def command_for(
    action: Action, state: game.GameState, player: str, show_holds: bool
) -> game.Command:
    """The command that carries out ``action`` from ``state``; with ``show_holds`` a re-roll
    takes up to three commands, one at a time: release, hold, then roll."""
    if isinstance(action, Reroll):
        if show_holds and state.held - action.hold:
            return game.Release(player, frozenset(state.held - action.hold))
        if show_holds and action.hold - state.held:
            return game.Hold(player, frozenset(action.hold - state.held))
        return game.Roll(player, (), action.hold)
    if isinstance(action, ScoreBox):
        return game.Score(player, action.box)
    return game.TakeBonus(player)


DecisionPoint = tuple[str, str, str, tuple[int, ...], int, tuple[int | None, ...], int]
"""What a decision depends on: player, level, seed, dice, rolls used, card and bonus checks."""


class Decisions:
    """The decision each room's computer is carrying out, so that the steps of one re-roll
    (release, hold, then roll: :func:`command_for`) decide once, not once a step.

    A decision is a pure function of its point (:func:`decide_move`), so a remembered one is the
    one a new evaluation would make: a retried step or a lost entry changes nothing. At most
    ``most`` rooms are remembered (a room whose game ended mid-decision is dropped first).
    """

    def __init__(self, most: int = 10_000) -> None:
        self.most = most
        self._carrying_out: dict[str, tuple[DecisionPoint, Action]] = {}

    def pending(self, room_id: str) -> bool:
        """Whether the room's computer is in the middle of carrying out a decision."""
        return room_id in self._carrying_out

    def next_move(
        self,
        room_id: str,
        computer: ComputerPlayer,
        state: game.GameState,
        player: str,
        seed: str,
        show_holds: bool,
    ) -> game.Command:
        """:func:`next_move`, deciding only at a new decision point of the room."""
        if state.phase is game.Phase.AWAITING_ROLL:
            return game.Roll(player, ())
        card = game.scorecard(state, player)
        point = (
            player, computer.level, seed, state.dice, state.rolls_used, card.scores,
            card.yahtzee_bonuses,
        )  # fmt: skip
        last = self._carrying_out.pop(room_id, None)
        if last is not None and last[0] == point:
            action = last[1]
        else:
            action = decide_move(computer, state, player, seed)
        command = command_for(action, state, player, show_holds)
        if isinstance(command, game.Hold | game.Release):  # the roll (or a hold) follows
            if len(self._carrying_out) >= self.most:
                del self._carrying_out[next(iter(self._carrying_out))]
            self._carrying_out[room_id] = (point, action)
        return command


def pick_name(state: game.GameState, wanted: str | None) -> str:
    """``wanted``, else the first computer name not taken in the room."""
    if wanted:
        return wanted
    taken = {p.name.casefold() for p in state.players}
    for name in NAMES:
        if name.casefold() not in taken:
            return name
    return f"Computer {len(state.players) + 1}"


# -- the advisor ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Hint:
    """The best options of the player on turn (best first), as solver options."""

    player: str
    rolls_left: int
    options: tuple[Option, ...]


def hint(table: Table, state: game.GameState, top: int = 3) -> Hint | None:
    """The ``top`` options of the player on turn; ``None`` outside a turn."""
    player = game.current_player(state)
    if player is None:
        return None
    card = game.scorecard(state, player)
    left = game.rolls_left(state)
    if state.phase is game.Phase.AWAITING_ROLL:
        at = position_of(table.rules, card)
        expected = at.banked + float(table.values[at.group, at.upper])
        return Hint(player, left, (Option(Reroll((), frozenset()), expected),))
    return Hint(player, left, tuple(rank_options(table, card, state.dice, left, top=top)))


def analyse(table: Table, events: Iterable[game.Event]) -> GameAnalysis:
    """The review of a game's decisions (see :mod:`server.solver.analysis`)."""
    return analyse_game(table, events)


def computers_of(state: game.GameState) -> Sequence[game.PlayerState]:
    """The computer seats still playing."""
    return [p for p in state.players if p.computer is not None and not p.forfeited]

"""A hypothesis state machine: random mixes of legal and illegal commands never break the rules.

Invariants checked after every step: at most 3 rolls per turn; dice and phase agree; no box is
written twice and every remaining player's card is full when the game ends; totals equal the
sum of their parts and of the scored events; a refused command raises ``GameError`` with a known
code and leaves the state equal to before; the state survives a JSON round trip.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from hypothesis import HealthCheck, settings
from hypothesis import event as note_event
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from server.game import (
    ERROR_CODES,
    BonusTaken,
    Box,
    Command,
    GameError,
    GameOver,
    Hold,
    Join,
    Leave,
    Phase,
    Release,
    Roll,
    Rolled,
    RollOff,
    RuleOptions,
    Score,
    Scored,
    Start,
    TakeBonus,
    apply,
    boxes_for,
    from_dict,
    new_game,
    to_dict,
)

from ._support import OPTION_CHOICES, PLAYER_POOL, arbitrary_command, legal_command

PLAYERS = st.sampled_from([*PLAYER_POOL[:4], "stranger", ""])
INDEXES = st.frozensets(st.integers(-1, 5), max_size=6)


@dataclass
class DataChooser:
    """Choices drawn from hypothesis, so failures shrink."""

    data: st.DataObject

    def integer(self, low: int, high: int) -> int:
        return self.data.draw(st.integers(low, high))


class GameMachine(RuleBasedStateMachine):
    """Drives one room with legal progress and arbitrary commands."""

    def __init__(self) -> None:
        super().__init__()
        self.state = new_game(RuleOptions(), 1)
        self.written: dict[str, list[Box]] = {}
        self.scored_total: dict[str, int] = {}
        self.refused = 0

    @initialize(options=st.sampled_from(OPTION_CHOICES), seats=st.integers(1, 4))
    def create(self, options: RuleOptions, seats: int) -> None:
        self.state = new_game(options, seats)

    def _apply(self, command: Command) -> None:
        before = self.state
        snapshot = to_dict(before)
        try:
            after, events = apply(before, command)
        except GameError as error:
            code = error.code
            assert code in ERROR_CODES
            assert self.state is before
            assert to_dict(before) == snapshot
            self.refused += 1
            return
        for event in events:
            if isinstance(event, Scored):
                boxes = self.written.setdefault(event.player, [])
                assert event.box not in boxes, "a box was written twice"
                boxes.append(event.box)
                self.scored_total[event.player] = self.scored_total.get(event.player, 0) + (
                    event.points + event.upper_bonus + event.yahtzee_bonus
                )
                assert event.total == self.scored_total[event.player]
            if isinstance(event, BonusTaken):
                assert self.state.options.bonus_turn_rule
                self.scored_total[event.player] = (
                    self.scored_total.get(event.player, 0) + event.yahtzee_bonus
                )
                assert event.total == self.scored_total[event.player]
            if isinstance(event, Rolled):
                assert 1 <= event.roll_number <= 3
                assert event.rolls_left == 3 - event.roll_number
            if isinstance(event, GameOver):
                assert after.phase is Phase.FINISHED
        self.state = after

    @precondition(lambda self: self.state.phase is not Phase.FINISHED)
    @rule(data=st.data(), steps=st.integers(1, 30))
    def legal_moves(self, data: st.DataObject, steps: int) -> None:
        chooser = DataChooser(data)
        for _ in range(steps):
            if self.state.phase is Phase.FINISHED:
                return
            command = legal_command(self.state, chooser, leave_per_mille=10)
            before = self.state
            self._apply(command)
            assert self.state is not before, f"a legal command was refused: {command}"

    @rule(data=st.data())
    def arbitrary(self, data: st.DataObject) -> None:
        self._apply(arbitrary_command(self.state, DataChooser(data)))

    @rule(player=PLAYERS, name=st.sampled_from(["Ann", "ann", "", "x" * 30, "Bo"]))
    def join(self, player: str, name: str) -> None:
        self._apply(Join(player, name))

    @rule(player=PLAYERS)
    def leave(self, player: str) -> None:
        self._apply(Leave(player))

    @rule(player=PLAYERS, choice=st.integers(-3, 10))
    def start(self, player: str, choice: int) -> None:
        self._apply(Start(player, choice))

    @rule(data=st.data())
    def roll_off(self, data: st.DataObject) -> None:
        names = data.draw(st.lists(PLAYERS, max_size=4, unique=True))
        dice = st.tuples(*[st.integers(0, 7)] * 5)
        self._apply(RollOff({n: data.draw(dice) for n in names}))

    @rule(
        player=PLAYERS,
        faces=st.lists(st.integers(0, 7), max_size=6).map(tuple),
        keep=st.none() | INDEXES,
    )
    def roll(self, player: str, faces: tuple[int, ...], keep: frozenset[int] | None) -> None:
        self._apply(Roll(player, faces, keep=keep))

    @rule(player=PLAYERS, dice=INDEXES, hold=st.booleans())
    def hold_or_release(self, player: str, dice: frozenset[int], hold: bool) -> None:
        self._apply(Hold(player, dice) if hold else Release(player, dice))

    @rule(player=PLAYERS)
    def take_bonus(self, player: str) -> None:
        self._apply(TakeBonus(player))

    @rule(player=PLAYERS, box=st.sampled_from(list(Box)))
    def score(self, player: str, box: Box) -> None:
        self._apply(Score(player, box))

    @invariant()
    def turn_bookkeeping(self) -> None:
        state = self.state
        assert 0 <= state.rolls_used <= 3
        assert state.held <= frozenset(range(5))
        in_turn = state.phase in (Phase.AWAITING_ROLL, Phase.ROLLED)
        assert (state.phase is Phase.ROLLED) == (state.rolls_used > 0)
        assert (len(state.dice) == 5) == (state.phase is Phase.ROLLED)
        if in_turn:
            on_turn = state.player(state.order[state.turn])
            assert on_turn is not None
            assert not on_turn.forfeited
            assert not on_turn.card.is_complete
        if state.phase is Phase.ROLL_OFF:
            assert len(state.contenders) >= 2
        if state.phase in (Phase.AWAITING_ROLL, Phase.ROLLED, Phase.FINISHED):
            assert sorted(state.order) == sorted(p.player_id for p in state.players)

    @invariant()
    def cards_and_totals(self) -> None:
        state = self.state
        playing = [p for p in state.players if not p.forfeited]
        counts = {p.card.filled_count for p in playing}
        if not state.options.bonus_turn_rule:  # a taken bonus fills no box: cards drift apart
            assert not counts or max(counts) - min(counts) <= 1
        for p in state.players:
            parts = p.card.totals()
            assert (
                parts.grand == parts.upper + parts.upper_bonus + parts.lower + parts.yahtzee_bonus
            )
            assert parts.grand == self.scored_total.get(p.player_id, 0)
            assert p.card.filled_count == len(self.written.get(p.player_id, []))
        if state.phase is Phase.FINISHED:
            for p in playing:
                assert sorted(self.written[p.player_id]) == sorted(boxes_for(state.options.rules))

    def teardown(self) -> None:
        note_event(f"ended in phase {self.state.phase.value}")

    @invariant()
    def survives_json(self) -> None:
        assert from_dict(json.loads(json.dumps(to_dict(self.state)))) == self.state


TestGameMachine = GameMachine.TestCase
TestGameMachine.settings = settings(
    max_examples=200,
    stateful_step_count=40,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)

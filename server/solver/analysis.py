"""Post-game analysis in the style of Verhoeff's proficiency test.

From a game's engine events alone (as the room's log records them), every decision of every
player is compared with the optimal one. Two kinds of decision per roll:

- after a roll with rolls left, *which dice to keep* (keeping all five = stop and score);
- after the last roll of the turn, *which box* (or, under ``bonus_turn``, taking the bonus).

Each decision's options are worth an expected final score (points on the card plus the table's
expectation from then on, under optimal play). The loss of a decision is the best option's value
minus the chosen one's; a player who plays optimally loses 0. The losses of a turn add up to
how much that turn cost in expectation. All turns are evaluated in one batch.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from server.game import (
    BonusTaken,
    Box,
    Event,
    PlayerJoined,
    PlayerLeft,
    Rolled,
    Scorecard,
    Scored,
    TurnChanged,
)

from .dice import INDEX
from .policy import ScoreBox, TakeBonusAction, box_options, plan_turns
from .table import Table

__all__ = ["Choice", "DecisionReview", "GameAnalysis", "PlayerReview", "analyse_game"]

Choice = tuple[int, ...] | Box | None
"""A keep (sorted faces; all five means "score now"), a box, or ``None`` for the bonus take."""


@dataclass(frozen=True)
class DecisionReview:
    """One decision: after roll ``roll`` (1..3) of the player's turn ``turn`` (1-based)."""

    player: str
    turn: int
    roll: int
    kind: Literal["keep", "box"]
    chosen: Choice
    best: Choice
    chosen_expected: float
    best_expected: float

    @property
    def loss(self) -> float:
        """Expected points lost by this decision (0 for an optimal one)."""
        return max(0.0, self.best_expected - self.chosen_expected)


@dataclass(frozen=True)
class PlayerReview:
    """All decisions of one player, with the total and mean expected loss."""

    player: str
    decisions: tuple[DecisionReview, ...]

    @property
    def total_loss(self) -> float:
        """Expected points lost over the game."""
        return sum(d.loss for d in self.decisions)

    @property
    def mean_loss(self) -> float:
        """Expected points lost per decision."""
        return self.total_loss / len(self.decisions) if self.decisions else 0.0


@dataclass(frozen=True)
class GameAnalysis:
    """The reviews of every player, in seat order."""

    players: tuple[PlayerReview, ...]


@dataclass
class _Turn:
    player: str
    number: int
    card: Scorecard
    rolls: list[Rolled] = field(default_factory=list)
    ending: Scored | BonusTaken | None = None


def _turns(table: Table, events: Iterable[Event]) -> tuple[list[str], list[_Turn]]:
    cards: dict[str, Scorecard] = {}
    counts: dict[str, int] = {}
    seats: list[str] = []
    turns: list[_Turn] = []
    current: _Turn | None = None
    for event in events:
        if isinstance(event, PlayerJoined):
            cards[event.player] = Scorecard.empty(table.rules.rules)
            if event.player not in seats:
                seats.append(event.player)
        elif isinstance(event, PlayerLeft) and not event.forfeited and event.player in seats:
            seats.remove(event.player)
        elif isinstance(event, TurnChanged):
            counts[event.player] = counts.get(event.player, 0) + 1
            current = _Turn(event.player, counts[event.player], cards[event.player])
            turns.append(current)
        elif isinstance(event, Rolled) and current is not None:
            current.rolls.append(event)
        elif isinstance(event, Scored | BonusTaken) and current is not None:
            current.ending = event
            card = cards[event.player]
            if isinstance(event, Scored):
                cards[event.player] = card.with_score(
                    event.box, event.points, event.yahtzee_bonus > 0
                )
            else:
                cards[event.player] = Scorecard(card.rules, card.scores, card.yahtzee_bonuses + 1)
    return seats, [t for t in turns if t.rolls]


def analyse_game(table: Table, events: Iterable[Event]) -> GameAnalysis:
    """Review every decision of a game's events under ``table`` (the room's rule set)."""
    seats, turns = _turns(table, events)
    plans = plan_turns(table, [t.card for t in turns])
    reviews: dict[str, list[DecisionReview]] = {p: [] for p in seats}
    for turn, plan in zip(turns, plans, strict=True):
        out = reviews.setdefault(turn.player, [])
        for index, roll in enumerate(turn.rolls):
            dice = roll.dice
            following = turn.rolls[index + 1] if index + 1 < len(turn.rolls) else None
            if roll.rolls_left > 0 and (following is not None or turn.ending is not None):
                values = plan.keep_values(roll.rolls_left)
                if following is not None:
                    chosen = tuple(sorted(dice[i] for i in following.held))
                else:
                    chosen = tuple(sorted(dice))
                best, _ = plan.best_keep(dice, roll.rolls_left)
                banked = plan.position.banked
                out.append(
                    DecisionReview(
                        turn.player,
                        turn.number,
                        roll.roll_number,
                        "keep",
                        chosen,
                        best,
                        banked + float(values[INDEX[chosen]]),
                        banked + float(values[INDEX[best]]),
                    )
                )
            if following is None and turn.ending is not None:
                options = box_options(table, turn.card, dice, plan.position)
                top = max(options, key=lambda o: o.expected)
                wanted = (
                    ScoreBox(turn.ending.box)
                    if isinstance(turn.ending, Scored)
                    else TakeBonusAction()
                )
                taken = next(o for o in options if o.action == wanted)
                out.append(
                    DecisionReview(
                        turn.player,
                        turn.number,
                        roll.roll_number,
                        "box",
                        _choice(taken.action),
                        _choice(top.action),
                        taken.expected,
                        top.expected,
                    )
                )
    return GameAnalysis(tuple(PlayerReview(p, tuple(r)) for p, r in reviews.items()))


def _choice(action: object) -> Choice:
    return action.box if isinstance(action, ScoreBox) else None

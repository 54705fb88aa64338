"""What each open box would score now: the Joker and extra-Yahtzee rules (RULES.md section 4).

:func:`box_previews` is the single ruling used both by the Score command and by the per-box
preview the server sends after each roll, so the two can never disagree.

Joker (Yahtzee with ``extra_yahtzees=on``, five of a kind, YAHTZEE box already filled with 50 or 0):

- forced: the matching upper box if open is the only legal box; else any open lower box at full
  value (Full House 25, Small Straight 30, Large Straight 40, 3K/4K/Chance the sum); else any open
  upper box, scoring zero.
- free: any open box; Full House and the straights get their Joker values only if the matching
  upper box is already filled, otherwise they score as usual (0).

The +100 bonus is due whenever the Joker is in force and the YAHTZEE box holds 50, wherever the
dice are scored, in both Joker modes.

House variants (RULES.md section 5): under ``upper_first`` only the open upper boxes are allowed
while any is open (the forced Joker: the matching upper box if open, else any open upper box);
under ``bonus_turn`` the player may take a due +100 and fill no box (:func:`bonus_take_allowed`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import NamedTuple

from .boxes import Box, is_upper, upper_box_for_face
from .errors import MustRollFirstError
from .guards import check_table
from .options import JokerMode, RuleOptions
from .scorecard import Scorecard
from .scoring import (
    YAHTZEE_POINTS,
    Dice,
    box_scores,
    check_dice,
    is_five_of_a_kind,
    joker_points,
)
from .state import GameState, current_player
from .transitions import Guard

__all__ = [
    "BoxPreview",
    "RollView",
    "best_auto_score",
    "bonus_take_allowed",
    "bonus_turn_available",
    "box_previews",
    "joker_active",
    "joker_in_force",
    "preview",
    "roll_view",
    "yahtzee_bonus_due",
    "yahtzee_bonus_pending",
]

_JOKER_FIXED = (Box.FULL_HOUSE, Box.SMALL_STRAIGHT, Box.LARGE_STRAIGHT)


class BoxPreview(NamedTuple):
    """One open box: whether it may be scored now and the points it would get (a named
    tuple: a roll makes thirteen, and a tuple is built at half a frozen dataclass's cost).

    A box that is not ``allowed`` (the forced Joker requires another) has ``points`` 0 and
    ``allowed`` false; an allowed box scoring 0 has ``allowed`` true. ``points`` excludes the
    +100 bonus (see :func:`yahtzee_bonus_pending`), which is the same for every box.
    """

    box: Box
    allowed: bool
    points: int


def joker_in_force(options: RuleOptions, card: Scorecard, dice: Dice) -> bool:
    """Whether ``dice`` are an extra Yahtzee under the Joker rule for this card."""
    return (
        options.extra_yahtzee_rules
        and is_five_of_a_kind(check_dice(dice))
        and not card.is_open(Box.YAHTZEE)
    )


def yahtzee_bonus_due(options: RuleOptions, card: Scorecard, dice: Dice) -> bool:
    """Whether scoring ``dice`` now pays the +100 bonus (YAHTZEE box holds 50)."""
    return joker_in_force(options, card, dice) and card.get(Box.YAHTZEE) == YAHTZEE_POINTS


def bonus_take_allowed(options: RuleOptions, card: Scorecard, dice: Dice) -> bool:
    """Whether the player may take the +100 and fill no box (room option ``bonus_turn``)."""
    return options.bonus_turn_rule and yahtzee_bonus_due(options, card, dice)


def _upper_first_limit(options: RuleOptions, open_boxes: tuple[Box, ...]) -> set[Box] | None:
    """Under ``upper_first``, the open upper boxes while any is open; else ``None`` (no limit)."""
    if not options.upper_first_rule:
        return None
    open_upper = {b for b in open_boxes if is_upper(b)}
    return open_upper or None


def box_previews(options: RuleOptions, card: Scorecard, dice: Dice) -> tuple[BoxPreview, ...]:
    """Every open box of ``card`` in card order, with ``allowed`` and ``points`` for ``dice``."""
    scores = box_scores(options.rules, dice)  # checks the dice
    return _previews(options, card, dice, scores, joker_in_force(options, card, dice))


def _previews(
    options: RuleOptions, card: Scorecard, dice: Dice, scores: Mapping[Box, int], joker: bool
) -> tuple[BoxPreview, ...]:
    open_boxes = card.open_boxes()
    limit = _upper_first_limit(options, open_boxes)
    if not joker:
        allowed = set(open_boxes) if limit is None else limit
        return tuple(
            BoxPreview(b, True, scores[b]) if b in allowed else BoxPreview(b, False, 0)
            for b in open_boxes
        )
    matching = upper_box_for_face(options.rules, dice[0])
    matching_open = card.is_open(matching)
    if options.joker is JokerMode.FREE:
        allowed = set(open_boxes) if limit is None else limit
        return tuple(
            BoxPreview(b, False, 0)
            if b not in allowed
            else BoxPreview(
                b,
                True,
                joker_points(b, dice) if b in _JOKER_FIXED and not matching_open else scores[b],
            )
            for b in open_boxes
        )
    return _forced_joker_previews(options, card, dice, limit, scores)


def _forced_joker_previews(
    options: RuleOptions,
    card: Scorecard,
    dice: Dice,
    limit: set[Box] | None,
    scores: Mapping[Box, int],
) -> tuple[BoxPreview, ...]:
    # RULES.md section 4, with section 5's upper_first reading: the open upper boxes (the
    # limit) take the place of the lower boxes in step 2.
    rules = options.rules
    open_boxes = card.open_boxes()
    matching = upper_box_for_face(rules, dice[0])
    lower_open = {b for b in open_boxes if not is_upper(b)}
    if card.is_open(matching):
        allowed = {matching}
    elif limit is not None:
        allowed = limit
    elif lower_open:
        allowed = lower_open
    else:
        allowed = set(open_boxes)
    result = []
    for b in open_boxes:
        if b not in allowed:
            result.append(BoxPreview(b, False, 0))
        elif is_upper(b):
            result.append(BoxPreview(b, True, scores[b]))
        else:
            result.append(BoxPreview(b, True, joker_points(b, dice)))
    return tuple(result)


def _scoring_card(state: GameState) -> Scorecard:
    check_table(state, "score", Guard.PHASE)
    check_table(state, "score", Guard.ROLLS)
    on_turn = current_player(state)
    record = None if on_turn is None else state.player(on_turn)
    if record is None or not state.dice:  # pragma: no cover - excluded by the table
        raise MustRollFirstError()
    return record.card


def preview(state: GameState) -> tuple[BoxPreview, ...]:
    """The preview for the player on turn after a roll: every open box, in card order.

    Raises the phase errors a Score would (e.g. ``must_roll_first`` before the first roll).
    """
    return box_previews(state.options, _scoring_card(state), state.dice)


@dataclass(frozen=True, slots=True)
class RollView:
    """What a roll shows: :func:`preview`, :func:`yahtzee_bonus_pending` and
    :func:`joker_active` of one state, the player's card looked up once."""

    boxes: tuple[BoxPreview, ...]
    yahtzee_bonus_pending: bool
    joker: bool


def roll_view(state: GameState) -> RollView:
    """The preview, the +100 and the Joker after a roll (the phase errors a Score would)."""
    options, card, dice = state.options, _scoring_card(state), state.dice
    scores = box_scores(options.rules, dice)  # checks the dice
    joker = joker_in_force(options, card, dice)  # (once, for all three: a roll's every event)
    return RollView(
        _previews(options, card, dice, scores, joker),
        joker and card.get(Box.YAHTZEE) == YAHTZEE_POINTS,
        joker,
    )


def yahtzee_bonus_pending(state: GameState) -> bool:
    """Whether scoring the current dice (in any box) pays the +100 extra-Yahtzee bonus."""
    return yahtzee_bonus_due(state.options, _scoring_card(state), state.dice)


def bonus_turn_available(state: GameState) -> bool:
    """Whether the player on turn may take the +100 and fill no box now (``bonus_turn``)."""
    return bonus_take_allowed(state.options, _scoring_card(state), state.dice)


def joker_active(state: GameState) -> bool:
    """Whether the current dice are an extra Yahtzee with the Joker rule in force."""
    return joker_in_force(state.options, _scoring_card(state), state.dice)


def best_auto_score(state: GameState) -> Box:
    """The allowed open box with the most points (ties: first in card order), for the timer."""
    best: BoxPreview | None = None
    for option in preview(state):
        if option.allowed and (best is None or option.points > best.points):
            best = option
    if best is None:  # pragma: no cover - a turn always has an allowed open box
        raise MustRollFirstError("no box can be scored")
    return best.box

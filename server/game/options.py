"""Room options: the named rule variants of RULES.md section 5.

Every option is chosen when a room is created and is fixed for the whole game. The defaults are
the official Hasbro rules: Yahtzee, extra Yahtzees on, forced Joker, roll-off for first player.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

__all__ = ["FirstPlayer", "JokerMode", "RuleOptions", "RuleSet", "Toggle"]


class RuleSet(StrEnum):
    """Which game is played: Hasbro Yahtzee (13 boxes) or Scandinavian Yatzy (15 boxes)."""

    YAHTZEE = "yahtzee"
    YATZY = "yatzy"


class Toggle(StrEnum):
    """An on/off room option."""

    ON = "on"
    OFF = "off"


class JokerMode(StrEnum):
    """How the Joker rule of RULES.md section 4 / 5 works for an extra Yahtzee."""

    FORCED = "forced"
    FREE = "free"


class FirstPlayer(StrEnum):
    """How the first player is chosen when the game starts (RULES.md section 1)."""

    ROLL_OFF = "roll_off"
    SEAT_ORDER = "seat_order"
    RANDOM = "random"


@dataclass(frozen=True)
class RuleOptions:
    """The options of one room, fixed for the whole game.

    Plain strings are accepted and converted to the enums (``RuleOptions(rules="yatzy")``); an
    unknown value raises ``ValueError``. In Yatzy, ``extra_yahtzees``, ``joker`` and
    ``bonus_turn`` are recorded but have no effect (Yatzy has neither a bonus nor a Joker).

    The house variants of RULES.md section 5, both off by default:

    - ``upper_first``: while any upper box is open, only upper boxes may be filled.
    - ``bonus_turn``: when the +100 extra-Yahtzee bonus applies, the player may take it and fill
      no box (:class:`~server.game.commands.TakeBonus`); the game goes on until every card is full.
    """

    rules: RuleSet = RuleSet.YAHTZEE
    extra_yahtzees: Toggle = Toggle.ON
    joker: JokerMode = JokerMode.FORCED
    first_player: FirstPlayer = FirstPlayer.ROLL_OFF
    upper_first: Toggle = Toggle.OFF
    bonus_turn: Toggle = Toggle.OFF

    def __post_init__(self) -> None:
        object.__setattr__(self, "rules", RuleSet(self.rules))
        object.__setattr__(self, "extra_yahtzees", Toggle(self.extra_yahtzees))
        object.__setattr__(self, "joker", JokerMode(self.joker))
        object.__setattr__(self, "first_player", FirstPlayer(self.first_player))
        object.__setattr__(self, "upper_first", Toggle(self.upper_first))
        object.__setattr__(self, "bonus_turn", Toggle(self.bonus_turn))

    @property
    def extra_yahtzee_rules(self) -> bool:
        """Whether the extra-Yahtzee bonus and the Joker exist in this game."""
        return self.rules is RuleSet.YAHTZEE and self.extra_yahtzees is Toggle.ON

    @property
    def upper_first_rule(self) -> bool:
        """Whether the six upper boxes must be filled before any lower box."""
        return self.upper_first is Toggle.ON

    @property
    def bonus_turn_rule(self) -> bool:
        """Whether an extra Yahtzee's +100 may be taken without filling a box."""
        return self.extra_yahtzee_rules and self.bonus_turn is Toggle.ON

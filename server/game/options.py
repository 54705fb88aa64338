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
    unknown value raises ``ValueError``. In Yatzy, ``extra_yahtzees`` and ``joker`` are recorded
    but have no effect (Yatzy has neither a bonus nor a Joker).
    """

    rules: RuleSet = RuleSet.YAHTZEE
    extra_yahtzees: Toggle = Toggle.ON
    joker: JokerMode = JokerMode.FORCED
    first_player: FirstPlayer = FirstPlayer.ROLL_OFF

    def __post_init__(self) -> None:
        object.__setattr__(self, "rules", RuleSet(self.rules))
        object.__setattr__(self, "extra_yahtzees", Toggle(self.extra_yahtzees))
        object.__setattr__(self, "joker", JokerMode(self.joker))
        object.__setattr__(self, "first_player", FirstPlayer(self.first_player))

    @property
    def extra_yahtzee_rules(self) -> bool:
        """Whether the extra-Yahtzee bonus and the Joker exist in this game."""
        return self.rules is RuleSet.YAHTZEE and self.extra_yahtzees is Toggle.ON

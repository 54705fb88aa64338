"""Game state to and from JSON-compatible dicts (the service keeps them in Redis).

``from_dict(json.loads(json.dumps(to_dict(s)))) == s`` for every state ``s``. The dict carries a
``format`` number; a dict that is not a valid state raises ``ValueError``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .options import RuleOptions, Toggle
from .scorecard import Scorecard
from .state import DICE_COUNT, MAX_ROLLS, MAX_SEATS, GameState, Phase, PlayerState

__all__ = ["FORMAT", "from_dict", "to_dict"]

FORMAT = 1
"""Version of the state dict layout."""

JSON = dict[str, Any]

_HOUSE_VARIANTS = ("upper_first", "bonus_turn")


def to_dict(state: GameState) -> JSON:
    """The state as a dict of JSON types (str, int, bool, None, lists, dicts).

    The options and the phase are ``StrEnum`` members, which are strings (``json`` and
    ``msgspec`` write their values): reading ``.value`` costs a Python call each, at every
    commit."""
    options = state.options
    return {
        "format": FORMAT,
        "options": {
            "rules": options.rules,
            "extra_yahtzees": options.extra_yahtzees,
            "joker": options.joker,
            "first_player": options.first_player,
            # The house variants appear only when on, so existing states keep their exact form.
            **{name: Toggle.ON for name in _HOUSE_VARIANTS if getattr(options, name) is Toggle.ON},
        },
        "max_seats": state.max_seats,
        "phase": state.phase,
        "players": [
            {
                "id": p.player_id,
                "name": p.name,
                "forfeited": p.forfeited,
                "scores": list(p.card.scores),
                "yahtzee_bonuses": p.card.yahtzee_bonuses,
                # only for computer seats, so people's seats keep their exact stored form
                **({"computer": p.computer} if p.computer is not None else {}),
            }
            for p in state.players
        ],
        "order": list(state.order),
        "turn": state.turn,
        "dice": list(state.dice),
        "held": sorted(state.held),
        "rolls_used": state.rolls_used,
        "contenders": list(state.contenders),
        "roll_off_round": state.roll_off_round,
    }


def _get(data: Mapping[str, Any], key: str, kind: type) -> Any:
    if not isinstance(data, Mapping) or key not in data:
        raise ValueError(f"missing key {key!r}")
    value = data[key]
    if kind is int and type(value) is not int:
        raise ValueError(f"{key!r} must be an integer, not {value!r}")
    if not isinstance(value, kind):
        raise ValueError(f"{key!r} must be {kind.__name__}, not {value!r}")
    return value


def _strings(data: Mapping[str, Any], key: str) -> tuple[str, ...]:
    values = _get(data, key, list)
    if not all(isinstance(v, str) for v in values):
        raise ValueError(f"{key!r} must be a list of strings")
    return tuple(values)


def _ints(data: Mapping[str, Any], key: str, low: int, high: int) -> tuple[int, ...]:
    values = _get(data, key, list)
    if not all(type(v) is int and low <= v <= high for v in values):
        raise ValueError(f"{key!r} must be a list of integers {low}..{high}")
    return tuple(values)


def _player(data: Mapping[str, Any], options: RuleOptions) -> PlayerState:
    scores = _get(data, "scores", list)
    if not all(s is None or type(s) is int for s in scores):
        raise ValueError("'scores' must be integers or null")
    card = Scorecard(options.rules, tuple(scores), _get(data, "yahtzee_bonuses", int))
    computer = _get(data, "computer", str) if "computer" in data else None
    return PlayerState(
        _get(data, "id", str),
        _get(data, "name", str),
        card,
        _get(data, "forfeited", bool),
        computer,
    )


def from_dict(data: Mapping[str, Any]) -> GameState:
    """Rebuild a state from :func:`to_dict` output; ``ValueError`` if it is not one."""
    if _get(data, "format", int) != FORMAT:
        raise ValueError(f"unsupported state format {data['format']!r}")
    raw = _get(data, "options", Mapping)
    options = RuleOptions(
        rules=_get(raw, "rules", str),
        extra_yahtzees=_get(raw, "extra_yahtzees", str),
        joker=_get(raw, "joker", str),
        first_player=_get(raw, "first_player", str),
        **{name: _get(raw, name, str) for name in _HOUSE_VARIANTS if name in raw},
    )
    max_seats = _get(data, "max_seats", int)
    if not 1 <= max_seats <= MAX_SEATS:
        raise ValueError("'max_seats' out of range")
    players = tuple(_player(p, options) for p in _get(data, "players", list))
    state = GameState(
        options=options,
        max_seats=max_seats,
        phase=Phase(_get(data, "phase", str)),
        players=players,
        order=_strings(data, "order"),
        turn=_get(data, "turn", int),
        dice=_ints(data, "dice", 1, 6),
        held=frozenset(_ints(data, "held", 0, DICE_COUNT - 1)),
        rolls_used=_get(data, "rolls_used", int),
        contenders=_strings(data, "contenders"),
        roll_off_round=_get(data, "roll_off_round", int),
    )
    if not 0 <= state.rolls_used <= MAX_ROLLS or len(state.dice) not in (0, DICE_COUNT):
        raise ValueError("inconsistent dice or roll count")
    if state.order and not 0 <= state.turn < len(state.order):
        raise ValueError("'turn' out of range")
    return state

"""State and events survive a JSON round trip exactly; malformed dicts are refused."""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from server.game import (
    EVENT_TYPES,
    GameError,
    RuleOptions,
    from_dict,
    new_game,
    to_dict,
)

from ._support import RandomChooser, random_game, started


def _round_trip(data: dict[str, Any]) -> Any:
    return json.loads(json.dumps(data, allow_nan=False))


@settings(max_examples=40, derandomize=True, database=None, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), leave_per_mille=st.sampled_from([0, 20]))
def test_every_state_and_event_of_random_games_round_trips(seed: int, leave_per_mille: int) -> None:
    seen_types: set[str] = set()
    for before, _, after, events in random_game(
        RandomChooser(random.Random(seed)), leave_per_mille=leave_per_mille, noise_percent=5
    ):
        assert from_dict(_round_trip(to_dict(before))) == before
        if isinstance(after, GameError):
            continue
        seen_types.update(event.type for event in events)
    assert "game_over" in seen_types


def test_event_types_are_unique_and_listed() -> None:
    assert len(EVENT_TYPES) == 12
    assert all(cls.type == name for name, cls in EVENT_TYPES.items())


def test_state_dict_shape() -> None:
    data = to_dict(started(["a", "b"]))
    assert data["format"] == 1
    assert data["options"] == {
        "rules": "yahtzee",
        "extra_yahtzees": "on",
        "joker": "forced",
        "first_player": "seat_order",
    }
    assert data["players"][0] == {
        "id": "a",
        "name": "A",
        "forfeited": False,
        "scores": [None] * 13,
        "yahtzee_bonuses": 0,
    }
    assert data["phase"] == "awaiting_roll"
    assert data["order"] == ["a", "b"]


def test_house_variants_appear_only_when_on() -> None:
    plain = to_dict(started(["a"]))
    assert "upper_first" not in plain["options"]
    assert "bonus_turn" not in plain["options"]
    varied = started(["a"], RuleOptions(upper_first="on", bonus_turn="on"))
    data = _round_trip(to_dict(varied))
    assert data["options"]["upper_first"] == "on"
    assert data["options"]["bonus_turn"] == "on"
    assert from_dict(data) == varied
    assert from_dict(data).options.upper_first_rule


def _broken(change: str) -> dict[str, Any]:
    data = to_dict(started(["a", "b"]))
    broken = copy.deepcopy(data)
    if change == "format":
        broken["format"] = 2
    elif change == "missing":
        del broken["phase"]
    elif change == "phase":
        broken["phase"] = "napping"
    elif change == "rules":
        broken["options"]["rules"] = "kniffel"
    elif change == "scores":
        broken["players"][0]["scores"] = [None] * 15
    elif change == "score-type":
        broken["players"][0]["scores"][0] = "3"
    elif change == "dice":
        broken["dice"] = [1, 2, 3]
    elif change == "face":
        broken["dice"] = [1, 2, 3, 4, 9]
    elif change == "held":
        broken["held"] = [7]
    elif change == "bool-int":
        broken["turn"] = True
    elif change == "turn":
        broken["turn"] = 5
    elif change == "seats":
        broken["max_seats"] = 9
    elif change == "order":
        broken["order"] = [1, 2]
    return broken


@pytest.mark.parametrize(
    "change",
    [
        "format",
        "missing",
        "phase",
        "rules",
        "scores",
        "score-type",
        "dice",
        "face",
        "held",
        "bool-int",
        "turn",
        "seats",
        "order",
    ],
)
def test_from_dict_refuses_malformed_states(change: str) -> None:
    with pytest.raises(ValueError):  # noqa: PT011 - every malformation is a ValueError
        from_dict(_broken(change))


def test_lobby_round_trip() -> None:
    state = new_game(RuleOptions(rules="yatzy"), 8)  # type: ignore[arg-type]
    assert from_dict(_round_trip(to_dict(state))) == state

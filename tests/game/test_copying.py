"""`replaced`: copies of the game's frozen states, equal to what `dataclasses.replace` makes."""

from __future__ import annotations

import dataclasses
import functools

import pytest

from server.game import GameState, Join, PlayerState, Roll, RuleOptions, apply, new_game
from server.game.copying import copyable, replaced


def _state() -> GameState:
    state = new_game(RuleOptions(), max_seats=2)
    state, _ = apply(state, Join("a", "Ann"))
    state, _ = apply(state, Join("b", "Bob"))
    return state


def test_a_copy_equals_dataclasses_replace_and_leaves_the_original_alone() -> None:
    state = _state()
    copy = replaced(state, turn=1, dice=(1, 2, 3, 4, 5))
    assert copy == dataclasses.replace(state, turn=1, dice=(1, 2, 3, 4, 5))
    assert hash(copy) == hash(dataclasses.replace(state, turn=1, dice=(1, 2, 3, 4, 5)))
    assert (state.turn, state.dice) == (0, ())
    assert type(copy) is GameState

    seat = state.players[0]
    gone = replaced(seat, forfeited=True)
    assert gone == dataclasses.replace(seat, forfeited=True)
    assert not seat.forfeited


def test_a_copy_is_frozen_like_the_original() -> None:
    copy = replaced(_state(), turn=1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        copy.turn = 0  # type: ignore[misc]


def test_an_unknown_field_is_refused() -> None:
    state = _state()
    with pytest.raises(TypeError, match="no field colour"):
        replaced(state, colour="red")


def test_only_registered_classes_are_copied() -> None:
    with pytest.raises(TypeError, match="not registered"):
        replaced(Roll("a", ()), player="b")


def test_classes_a_dict_copy_would_get_wrong_are_refused_at_registration() -> None:
    @dataclasses.dataclass
    class Mutable:
        x: int

    @dataclasses.dataclass(frozen=True, slots=True)
    class Slotted:
        x: int

    @dataclasses.dataclass(frozen=True)
    class Checked:
        x: int

        def __post_init__(self) -> None:
            assert self.x >= 0

    @dataclasses.dataclass(frozen=True)
    class Derived:
        x: int
        y: int = dataclasses.field(init=False, default=0)

    @dataclasses.dataclass(frozen=True)
    class Cached:
        x: int

        @functools.cached_property
        def double(self) -> int:
            return 2 * self.x

    for cls in (Mutable, Slotted, Checked, Derived, Cached, PlayerStateLike):
        with pytest.raises(TypeError):
            copyable(cls)


class PlayerStateLike:
    """Not a dataclass at all."""


def test_the_registered_classes_have_what_a_copy_needs() -> None:
    for cls in (GameState, PlayerState):
        assert copyable(cls) is cls  # registering again is harmless and checks them again

"""Quick-play matching as pure functions: windows, acceptable groups, computers' levels."""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from server.domain.matching import (
    DEFAULT_RATING,
    Candidate,
    Policy,
    level_for_rating,
    plan,
    spread,
)

POLICY = Policy(computers_after_ms=30_000)


def player(ticket: str, rating: float | None, at: int = 0, computers: bool = True) -> Candidate:
    return Candidate(ticket, rating, at, computers)


def test_the_window_widens_with_the_wait_up_to_its_cap() -> None:
    rated, unrated = player("a", 1500), player("b", None)
    assert POLICY.window(rated, 0) == 100
    assert POLICY.window(rated, 10_000) == 300  # 100 + 20 * 10 s
    assert POLICY.window(unrated, 0) == 400
    assert POLICY.window(rated, 10_000_000) == 800


def test_players_of_close_ratings_are_matched_at_once() -> None:
    groups = plan([player("a", 1500), player("b", 1560)], 2, 0, POLICY)
    assert [[m.ticket for m in g.members] for g in groups] == [["a", "b"]]
    assert groups[0].computers == ()


def test_distant_ratings_wait_until_both_windows_cover_the_gap() -> None:
    far = [player("a", 1500, at=0), player("b", 1800, at=0)]
    assert plan(far, 2, 5_000, POLICY) == []  # windows 200 < 300
    assert len(plan(far, 2, 10_000, POLICY)) == 1  # windows 300


def test_a_newcomer_with_a_narrow_window_is_not_given_a_far_table() -> None:
    old = player("old", 1500, at=0, computers=False)
    new = player("new", 1900, at=60_000)
    assert plan([old, new], 2, 60_000, POLICY) == []  # old's window 800, new's 100


def test_the_longest_waiting_player_gets_the_nearest_ratings() -> None:
    queue = [player("a", 1500, 0), player("b", 1580, 1), player("c", 1510, 2), player("d", 1700, 3)]
    groups = plan(queue, 2, 10, POLICY)
    assert [m.ticket for m in groups[0].members] == ["a", "c"]


def test_computers_fill_after_the_wait_at_the_level_of_the_table() -> None:
    queue = [player("a", 1950, at=0)]
    assert plan(queue, 3, 29_999, POLICY) == []
    (group,) = plan(queue, 3, 30_000, POLICY)
    assert [m.ticket for m in group.members] == ["a"]
    assert group.computers == ("optimal", "optimal")


def test_a_player_who_refuses_computers_waits_and_is_not_put_at_their_table() -> None:
    queue = [player("a", 1500, at=0), player("b", 1510, at=1, computers=False)]
    (group,) = plan(queue, 3, 40_000, POLICY)
    assert [m.ticket for m in group.members] == ["a"]
    assert group.computers == ("medium", "medium")
    assert plan([player("b", 1510, computers=False)], 2, 10**9, POLICY) == []


def test_unrated_players_count_as_the_default_rating() -> None:
    assert player("a", None).strength == DEFAULT_RATING
    assert len(plan([player("a", None), player("b", 1700)], 2, 0, POLICY)) == 0
    assert len(plan([player("a", None), player("b", 1590)], 2, 0, POLICY)) == 1


def test_levels_rise_with_the_rating() -> None:
    assert [level_for_rating(r) for r in (900, 1299, 1300, 1599, 1600, 1899, 1900, 2500)] == [
        "easy", "easy", "medium", "medium", "hard", "hard", "optimal", "optimal",
    ]  # fmt: skip


@given(
    st.lists(
        st.tuples(st.floats(1000, 2200), st.booleans(), st.integers(0, 60_000), st.booleans()),
        max_size=40,
    ),
    st.integers(2, 4),
    st.integers(0, 120_000),
)
def test_every_group_is_full_acceptable_and_nobody_is_in_two(
    rows: list[tuple[float, bool, int, bool]], seats: int, now: int
) -> None:
    queue = [
        player(f"t{i}", rating if rated else None, at=min(at, now), computers=computers)
        for i, (rating, rated, at, computers) in enumerate(rows)
    ]
    groups = plan(queue, seats, now, POLICY)
    tickets = [m.ticket for g in groups for m in g.members]
    assert len(tickets) == len(set(tickets))
    for group in groups:
        assert len(group.members) + len(group.computers) == seats
        assert spread(group.members) <= min(POLICY.window(m, now) for m in group.members)
        if group.computers:
            assert all(m.computers for m in group.members)


def test_a_large_queue_of_similar_players_is_mostly_matched_at_once() -> None:
    rng = random.Random(7)
    queue = [player(f"t{i}", rng.gauss(1500, 200), at=rng.randrange(0, 1000)) for i in range(300)]
    groups = plan(queue, 4, 1000, POLICY)
    assert sum(len(g.members) for g in groups) > 250  # most are matched at once

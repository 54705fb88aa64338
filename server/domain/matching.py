"""Quick-play matching as pure functions: who may play whom, and which groups to make now.

A queued player has a rating (``None``: unrated, :data:`DEFAULT_RATING` assumed) and a rating
**window** that widens with its wait ``t`` (seconds)::

    window(t) = min(max_window, base + widen_per_second * t)    base: rated or unrated

A group is acceptable when the spread of its ratings is at most the smallest window among its
members: everyone accepts everyone, and the newest arrival's narrow window protects it from a
far weaker or stronger table until it has waited too. :func:`plan` takes the longest-waiting
player first and adds the queued players nearest to its rating while the group stays
acceptable. A player who accepts computers and waited ``computers_after_ms`` is matched with
whoever fits now (people who accept computers too) and computers in the other seats, of the
level nearest the group's mean rating (:func:`level_for_rating`).

No I/O and no clock: ``now_ms`` is an argument, the storage and the service do the rest.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = [
    "DEFAULT_RATING",
    "Candidate",
    "Group",
    "Policy",
    "level_for_rating",
    "plan",
    "spread",
]

DEFAULT_RATING = 1500.0
"""The rating assumed for an unrated player (the rating system's mean)."""

#: (upper bound of the rating, level): a computer's level for a table of this mean rating.
#: A first guess: the ratings helper calibrates the bounds against rated games.
LEVEL_BOUNDS: tuple[tuple[float, str], ...] = (
    (1300.0, "easy"),
    (1600.0, "medium"),
    (1900.0, "hard"),
)
TOP_LEVEL = "optimal"


@dataclass(frozen=True, slots=True)
class Policy:
    """How windows widen and when computers fill the seats (rating points, seconds, ms)."""

    base_window: float = 100.0
    unrated_window: float = 400.0
    widen_per_second: float = 20.0
    max_window: float = 800.0
    computers_after_ms: int = 30_000

    def window(self, candidate: Candidate, now_ms: int) -> float:
        """How far an opponent's rating may be from ``candidate``'s after its wait so far."""
        base = self.base_window if candidate.rating is not None else self.unrated_window
        waited = max(0, now_ms - candidate.enqueued_ms) / 1000
        return min(self.max_window, base + self.widen_per_second * waited)


@dataclass(frozen=True, slots=True)
class Candidate:
    """One queued player, as matching sees it."""

    ticket: str
    rating: float | None
    enqueued_ms: int
    computers: bool

    @property
    def strength(self) -> float:
        """The rating compared (an unrated player counts as :data:`DEFAULT_RATING`)."""
        return self.rating if self.rating is not None else DEFAULT_RATING


@dataclass(frozen=True, slots=True)
class Group:
    """A match to make: the people (longest waiting first) and the computers' levels."""

    members: tuple[Candidate, ...]
    computers: tuple[str, ...] = ()


def spread(members: Iterable[Candidate]) -> float:
    """Highest minus lowest rating of ``members`` (0 for one or none)."""
    ratings = [m.strength for m in members]
    return max(ratings) - min(ratings) if ratings else 0.0


def _acceptable(members: Sequence[Candidate], policy: Policy, now_ms: int) -> bool:
    return spread(members) <= min(policy.window(m, now_ms) for m in members)


def level_for_rating(rating: float) -> str:
    """The computer level nearest a table of mean ``rating``."""
    for bound, level in LEVEL_BOUNDS:
        if rating < bound:
            return level
    return TOP_LEVEL


def _grow(anchor: Candidate, pool: Sequence[Candidate], seats: int, policy: Policy,
          now_ms: int) -> list[Candidate]:  # fmt: skip
    """``anchor`` and the nearest players of ``pool`` that keep the group acceptable."""
    group = [anchor]
    for other in sorted(pool, key=lambda c: (abs(c.strength - anchor.strength), c.enqueued_ms)):
        if len(group) == seats:
            break
        if _acceptable([*group, other], policy, now_ms):
            group.append(other)
    return group


def plan(queued: Iterable[Candidate], seats: int, now_ms: int, policy: Policy) -> list[Group]:
    """The groups to make now from the players ``queued`` for ``seats``, none in two groups."""
    waiting = sorted(queued, key=lambda c: (c.enqueued_ms, c.ticket))
    taken: set[str] = set()
    groups: list[Group] = []
    for anchor in waiting:
        if anchor.ticket in taken:
            continue
        pool = [c for c in waiting if c.ticket not in taken and c.ticket != anchor.ticket]
        group = _grow(anchor, pool, seats, policy, now_ms)
        if len(group) < seats:
            if not anchor.computers or now_ms - anchor.enqueued_ms < policy.computers_after_ms:
                continue
            # people who refuse computers are left for a table of people
            group = [m for m in group if m.computers]
            mean = sum(m.strength for m in group) / len(group)
            computers = (level_for_rating(mean),) * (seats - len(group))
        else:
            computers = ()
        taken.update(m.ticket for m in group)
        groups.append(Group(tuple(group), computers))
    return groups

"""Duplicate dice (protocol v1.4): a tournament's entries roll the same dice for the same holds.

A tournament has one secret *tournament seed*; its commitment (SHA-256, as in
:mod:`protocol.fairdice`) is published when the tournament opens and the seed is revealed when it
closes. Every die of every entry is a pure function of (seed, turn, throw, slot)
(:func:`duplicate_face`): the ``throw``-th throw (1..3) of die slot ``slot`` (0..4) in the
entrant's turn ``turn`` (1 = the first turn). A slot rolled at throw ``k`` shows the face of
``(turn, k, slot)``; a held slot keeps its face. Two entrants who hold the same slots at the same
point therefore see the same faces, and the optimal player's game on the tournament's dice is
well defined (:func:`duplicate_roll` is the whole dice function).

The generator, byte for byte (``protocol/fairdice.md`` section 8 is the normative text)::

    block(t, k, i, j) = HMAC-SHA256(key=tournament_seed,
                                    msg=b"yahtzee-duplicate/1:" + f"{t}/{k}/{i}/{j}" (ASCII))

The face of ``(t, k, i)`` is ``b % 6 + 1`` for the first byte ``b < 252`` of
``block(t, k, i, 0) || block(t, k, i, 1) || ...`` (bytes ``>= 252`` are skipped).

An entry's room publishes the commitment like any room (``player_joined``/``game_started``
``dice_commitment``) but its ``game_over`` does not reveal the seed (other entries may still be
playing): :func:`verify_duplicate_log` checks the room's log against the seed the tournament
reveals at its close. Pure: no I/O, no randomness.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Final

from protocol.fairdice import DICE_COUNT, Mismatch, Status, Verdict, commitment, parse_server_seed

__all__ = [
    "DUPLICATE_DOMAIN",
    "MAX_THROWS",
    "duplicate_face",
    "duplicate_roll",
    "verify_duplicate_log",
]

DUPLICATE_DOMAIN: Final = b"yahtzee-duplicate/1:"
"""Domain-separation prefix of every HMAC message of the duplicate generator."""

MAX_THROWS: Final = 3
"""Throws in a turn (k is 1..3)."""

_ACCEPT_BELOW: Final = 252  # the largest multiple of 6 that fits a byte


def duplicate_face(seed: bytes, turn: int, throw: int, slot: int) -> int:
    """The face (1..6) die slot ``slot`` shows when it is rolled at throw ``throw`` of turn
    ``turn`` (both counted from 1) with the tournament seed ``seed``."""
    if turn < 1 or not 1 <= throw <= MAX_THROWS or not 0 <= slot < DICE_COUNT:
        raise ValueError(f"no die at turn {turn}, throw {throw}, slot {slot}")
    block = 0
    while True:
        message = DUPLICATE_DOMAIN + f"{turn}/{throw}/{slot}/{block}".encode("ascii")
        for byte in hmac.digest(seed, message, "sha256"):
            if byte < _ACCEPT_BELOW:  # rejection keeps every face at exactly 1/6
                return byte % 6 + 1
        block += 1  # 32 bytes all >= 252: about 1 in 10**43


def duplicate_roll(seed: bytes, turn: int, throw: int, slots: Iterable[int]) -> tuple[int, ...]:
    """The faces of the rolled ``slots`` (in the order given) at ``throw`` of ``turn``."""
    return tuple(duplicate_face(seed, turn, throw, slot) for slot in slots)


# --------------------------------------------------------------------------------------------
# The verifier
# --------------------------------------------------------------------------------------------


def _ints(value: object, low: int, high: int) -> tuple[int, ...] | None:
    if not isinstance(value, list | tuple) or not all(
        isinstance(x, int) and not isinstance(x, bool) and low <= x <= high for x in value
    ):
        return None
    return tuple(value)


class _DuplicateChecker:
    """One pass over an entry's log: turn ``t`` counts ``scored`` events, throw ``k`` the
    ``rolled`` events since the last one."""

    def __init__(self, seed: bytes) -> None:
        self.seed = seed
        self.mismatches: list[Mismatch] = []
        self.pending: list[str] = []
        self.commitments: set[str] = set()
        self.turn = 1
        self.throw = 0
        self.dice: tuple[int, ...] | None = None
        self.rolls = 0
        self.game_over = False
        self.handlers: dict[str, Callable[[int, Mapping[str, object]], None]] = {
            "rolled": self.on_rolled,
            "scored": self.on_scored,
            "game_over": self.on_game_over,
        }

    def mismatch(self, seq: int | None, what: str, expected: object, got: object) -> None:
        self.mismatches.append(Mismatch(seq, what, str(expected), str(got)))

    def on_rolled(self, seq: int, event: Mapping[str, object]) -> None:
        dice = _ints(event.get("dice"), 1, 6)
        held = _ints(event.get("held"), 0, DICE_COUNT - 1)
        if dice is None or held is None or len(dice) != DICE_COUNT:
            self.mismatch(seq, "a well-formed rolled event", "dice and held", dict(event))
            return
        self.throw += 1
        self.rolls += 1
        if self.throw > 3:
            self.mismatch(seq, f"throw of turn {self.turn}", "at most 3", self.throw)
            return
        for slot in range(DICE_COUNT):
            if slot in held:
                kept = self.dice[slot] if self.dice is not None else None
                if kept != dice[slot]:
                    self.mismatch(seq, f"held die {slot} (turn {self.turn})", kept, dice[slot])
                continue
            want = duplicate_face(self.seed, self.turn, self.throw, slot)
            if want != dice[slot]:
                label = f"die {slot} at turn {self.turn}, throw {self.throw}"
                self.mismatch(seq, label, want, dice[slot])
        self.dice = dice

    def on_scored(self, seq: int, event: Mapping[str, object]) -> None:
        self.turn += 1
        self.throw = 0
        self.dice = None

    def on_game_over(self, seq: int, event: Mapping[str, object]) -> None:
        self.game_over = True

    def walk(self, events: Sequence[Mapping[str, object]]) -> None:
        for expected_seq, event in enumerate(events, start=1):
            seq = event.get("seq")
            if seq != expected_seq:
                self.pending.append(f"the log is incomplete: expected seq {expected_seq}")
                return
            value = event.get("dice_commitment")
            if isinstance(value, str):
                self.commitments.add(value)
            handler = self.handlers.get(str(event.get("type")))
            if handler is not None:
                handler(expected_seq, event)


def verify_duplicate_log(
    events: Sequence[Mapping[str, object]], tournament_seed: str, tournament_commitment: str
) -> Verdict:
    """Check a tournament entry's room log against the tournament's revealed seed.

    ``mismatch`` when the seed's SHA-256 is not the tournament's commitment (a forged seed),
    the room published another commitment, or a die does not follow from the seed (a held die
    that changed, a rolled die that is not the face of its turn, throw and slot);
    ``unverifiable`` when the log is incomplete or the entry's game is not over; else
    ``verified``.
    """
    try:
        seed = parse_server_seed(tournament_seed)
    except ValueError as exc:
        return Verdict(Status.MISMATCH, (Mismatch(None, "revealed seed", "64 hex", str(exc)),))
    checker = _DuplicateChecker(seed)
    if commitment(seed) != tournament_commitment:
        checker.mismatch(
            None, "SHA-256 of the revealed tournament seed", tournament_commitment, commitment(seed)
        )
    checker.walk(events)
    for published in sorted(checker.commitments - {tournament_commitment}):
        checker.mismatch(None, "the room's dice_commitment", tournament_commitment, published)
    if not checker.commitments:
        checker.pending.append("the log publishes no dice_commitment")
    if not checker.game_over and not checker.pending:
        checker.pending.append("the entry's game is not over")
    status = Status.VERIFIED
    if checker.mismatches:
        status = Status.MISMATCH
    elif checker.pending:
        status = Status.UNVERIFIABLE
    return Verdict(
        status=status,
        mismatches=tuple(checker.mismatches),
        pending=tuple(checker.pending),
        commitment=tournament_commitment,
        draws_checked=checker.rolls if status is not Status.UNVERIFIABLE else 0,
        rolls=checker.rolls,
    )

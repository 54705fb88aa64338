"""Duplicate dice (protocol/fairdice.md section 8): the worked example, the indexing by
(turn, throw, slot), and the verifier on hand-made logs (verified, forged seed, a changed die, a
changed held die, another commitment, an unfinished entry)."""

from __future__ import annotations

from typing import Any

import pytest

from protocol.duplicate import duplicate_face, duplicate_roll, verify_duplicate_log
from protocol.fairdice import Status, commitment

SEED = bytes(range(32))
COMMITMENT = commitment(SEED)


def test_the_worked_example_of_fairdice_md() -> None:
    assert COMMITMENT == "630dcd2966c4336691125448bbb25b4ff412a49c732db2c8abc1b8581bd710dd"
    assert duplicate_roll(SEED, 1, 1, range(5)) == (6, 4, 1, 5, 2)
    assert duplicate_roll(SEED, 1, 2, range(5)) == (3, 5, 1, 2, 1)
    assert duplicate_roll(SEED, 13, 3, range(5)) == (2, 2, 2, 4, 6)


def test_a_slot_face_does_not_depend_on_the_other_slots_rolled() -> None:
    # holding slots 0 and 1 at throw 2 gives slots 2..4 the faces they get when all roll
    assert duplicate_roll(SEED, 5, 2, (2, 3, 4)) == duplicate_roll(SEED, 5, 2, range(5))[2:]


@pytest.mark.parametrize(("turn", "throw", "slot"), [(0, 1, 0), (1, 0, 0), (1, 4, 0), (1, 1, 5)])
def test_there_is_no_die_outside_the_turns_throws_and_slots(
    turn: int, throw: int, slot: int
) -> None:
    with pytest.raises(ValueError, match="no die"):
        duplicate_face(SEED, turn, throw, slot)


def test_faces_are_spread_over_one_to_six() -> None:
    faces = [
        duplicate_face(SEED, t, k, i) for t in range(1, 200) for k in (1, 2, 3) for i in range(5)
    ]
    counts = [faces.count(face) for face in range(1, 7)]
    assert set(faces) == {1, 2, 3, 4, 5, 6}
    assert max(counts) - min(counts) < len(faces) // 20  # 2985 faces, each near 1/6


def entry_log(seed: bytes = SEED, commitment_shown: str = COMMITMENT) -> list[dict[str, Any]]:
    """Two turns of an entry played on ``seed``: roll, hold 0 and 1, roll, score; roll, score;
    then game_over (as if the card were full)."""
    first = duplicate_roll(seed, 1, 1, range(5))
    second = first[:2] + duplicate_roll(seed, 1, 2, (2, 3, 4))
    turn2 = duplicate_roll(seed, 2, 1, range(5))
    events: list[dict[str, Any]] = [
        {"type": "player_joined", "player": "p1", "dice_commitment": commitment_shown},
        {"type": "game_started", "dice_commitment": commitment_shown, "seeds": [""]},
        {"type": "rolled", "player": "p1", "dice": list(first), "held": []},
        {"type": "rolled", "player": "p1", "dice": list(second), "held": [0, 1]},
        {"type": "scored", "player": "p1", "box": "chance"},
        {"type": "rolled", "player": "p1", "dice": list(turn2), "held": []},
        {"type": "scored", "player": "p1", "box": "aces"},
        {"type": "game_over", "server_seed": None},
    ]
    return [{**event, "seq": seq} for seq, event in enumerate(events, start=1)]


def test_an_entry_played_on_the_seed_verifies() -> None:
    verdict = verify_duplicate_log(entry_log(), SEED.hex(), COMMITMENT)
    assert verdict.status is Status.VERIFIED, verdict.describe()
    assert verdict.rolls == 3


def test_a_forged_seed_is_a_mismatch() -> None:
    forged = bytes(32)
    # the log follows the forged seed, but its SHA-256 is not the tournament's commitment
    verdict = verify_duplicate_log(entry_log(forged), forged.hex(), COMMITMENT)
    assert verdict.status is Status.MISMATCH
    assert "SHA-256 of the revealed tournament seed" in verdict.mismatches[0].what


def test_a_die_that_is_not_the_face_of_its_turn_throw_and_slot_is_a_mismatch() -> None:
    log = entry_log()
    log[5]["dice"] = [log[5]["dice"][0] % 6 + 1, *log[5]["dice"][1:]]
    verdict = verify_duplicate_log(log, SEED.hex(), COMMITMENT)
    assert verdict.status is Status.MISMATCH
    assert [m.seq for m in verdict.mismatches] == [6]
    assert "turn 2, throw 1" in verdict.mismatches[0].what


def test_a_held_die_that_changed_is_a_mismatch() -> None:
    log = entry_log()
    log[3]["dice"] = [log[3]["dice"][0] % 6 + 1, *log[3]["dice"][1:]]
    verdict = verify_duplicate_log(log, SEED.hex(), COMMITMENT)
    assert verdict.status is Status.MISMATCH
    assert "held die 0" in verdict.mismatches[0].what


def test_a_room_that_shows_another_commitment_is_a_mismatch() -> None:
    verdict = verify_duplicate_log(entry_log(commitment_shown="ab" * 32), SEED.hex(), COMMITMENT)
    assert verdict.status is Status.MISMATCH


def test_an_entry_not_over_cannot_be_verified_yet() -> None:
    verdict = verify_duplicate_log(entry_log()[:-1], SEED.hex(), COMMITMENT)
    assert verdict.status is Status.UNVERIFIABLE
    assert verdict.pending == ("the entry's game is not over",)

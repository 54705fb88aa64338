"""``verify_log`` on whole games played by the real engine with dice from the generator."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from fairlogs import Seat, fair_game_log, first, tampered

from protocol import Encoding, decode_server, fairdice
from protocol.fairdice import Status

SEED = bytes(range(32))
OTHER_SEED = bytes(range(1, 33))
ANN, BOB, CY = Seat("p-ann", "Ann", "ann's seed"), Seat("p-bob", "Bob"), Seat("p-cy", "Cy", "7")
# found by search: with these seeds and SEED, the first roll-off round is a tie
TIE_SEEDS = (Seat("p1", "A", "tie-a"), Seat("p2", "B", "tie-b"))


def find_tie_seed() -> bytes:
    for i in range(1000):
        seed = i.to_bytes(32, "big")
        log = fair_game_log(seed, TIE_SEEDS, finish=False, max_turns=0)
        if sum(e["type"] == "roll_off" for e in log) > 1:
            return seed
    raise AssertionError("no roll-off tie in 1000 seeds")


@pytest.fixture(scope="module")
def clean_log() -> list[dict[str, Any]]:
    return fair_game_log(SEED, [ANN, BOB, CY], lobby_leaver=Seat("p-x", "X", "gone"),
                         forfeit_after_turns=10)  # fmt: skip


def games() -> dict[str, list[dict[str, Any]]]:
    return {
        "three seats, lobby leaver, forfeit": fair_game_log(
            SEED, [ANN, BOB, CY], lobby_leaver=Seat("p-x", "X", "gone"), forfeit_after_turns=10
        ),
        "roll-off with a tie": fair_game_log(find_tie_seed(), TIE_SEEDS),
        "solo": fair_game_log(SEED, [ANN]),
        "seat order, nobody gives a seed": fair_game_log(
            OTHER_SEED, [BOB, Seat("p-dee", "Dee")], first_player="seat_order"
        ),
    }


@pytest.mark.parametrize(("name", "log"), games().items())
def test_clean_games_verify(name: str, log: list[dict[str, Any]]) -> None:
    verdict = fairdice.verify_log(log)
    assert verdict.status is Status.VERIFIED, verdict.describe()
    assert verdict.verified
    assert verdict.mismatches == ()
    assert verdict.pending == ()
    assert verdict.committed_before_seeds
    assert verdict.commitment_unchanged
    rolls = sum(len(e["rolls"]) for e in log if e["type"] == "roll_off")
    rolls += sum(e["type"] == "rolled" for e in log)
    assert verdict.rolls == verdict.draws_checked == rolls > 13


def test_an_eight_seat_game_verifies_and_the_time_is_printed() -> None:
    log = fair_game_log(SEED, [Seat(f"p{i}", f"N{i}", f"seed {i}") for i in range(8)])
    started = time.perf_counter()
    verdict = fairdice.verify_log(log)
    elapsed = time.perf_counter() - started
    print(f"verify_log: {len(log)} events, {verdict.rolls} draws in {elapsed * 1000:.1f} ms")
    assert verdict.status is Status.VERIFIED
    assert verdict.draws_checked == verdict.rolls >= 8 * 13


def test_synthetic_logs_are_valid_protocol_events(clean_log: list[dict[str, Any]]) -> None:
    kinds = set()
    for event in clean_log:
        decoded = decode_server(json.dumps(event), Encoding.JSON)
        kinds.add(event["type"])
        assert decoded.seq == event["seq"]  # type: ignore[union-attr]
    assert {"player_joined", "player_left", "roll_off", "game_started", "rolled"} <= kinds
    assert {"scored", "game_over"} <= kinds


def test_tie_game_has_two_roll_off_rounds() -> None:
    log = fair_game_log(find_tie_seed(), TIE_SEEDS)
    rounds = [e for e in log if e["type"] == "roll_off"]
    assert len(rounds) >= 2
    assert rounds[0]["contenders_next"]


def test_verdict_reports_seeds_and_commitment(clean_log: list[dict[str, Any]]) -> None:
    verdict = fairdice.verify_log(clean_log)
    assert verdict.seeds == ("ann's seed", "", "7")  # the lobby leaver's seed is not used
    assert verdict.commitment == fairdice.commitment(SEED)
    assert verdict.warnings == ()
    text = "\n".join(verdict.describe())
    assert "verdict: verified" in text
    assert fairdice.commitment(SEED) in text


def test_no_client_seed_warns_that_the_server_chose_alone() -> None:
    verdict = fairdice.verify_log(fair_game_log(OTHER_SEED, [BOB, Seat("p-dee", "Dee")]))
    assert verdict.status is Status.VERIFIED
    assert verdict.warnings == ("no player contributed a seed: the server alone chose every die",)


# -- tampering is caught -------------------------------------------------------------------------


def test_one_tampered_face_is_caught_with_seq_expected_and_got(
    clean_log: list[dict[str, Any]],
) -> None:
    target = [e for e in clean_log if e["type"] == "rolled" and e["held"]][3]
    index = next(i for i in range(5) if i not in target["held"])
    dice = list(target["dice"])
    dice[index] = dice[index] % 6 + 1
    verdict = fairdice.verify_log(tampered(clean_log, target["seq"], dice=dice))
    assert verdict.status is Status.MISMATCH
    mismatch = verdict.mismatches[0]
    assert mismatch.seq == target["seq"]
    rolled = [target["dice"][i] for i in range(5) if i not in target["held"]]
    assert mismatch.expected == "[" + ", ".join(map(str, rolled)) + "]"
    assert mismatch.got != mismatch.expected
    assert f"seq {target['seq']}" in "\n".join(verdict.describe())


def test_a_tampered_roll_off_die_is_caught(clean_log: list[dict[str, Any]]) -> None:
    roll_off = first(clean_log, "roll_off")
    rolls = json.loads(json.dumps(roll_off["rolls"]))
    rolls[-1]["dice"][0] = rolls[-1]["dice"][0] % 6 + 1
    verdict = fairdice.verify_log(tampered(clean_log, roll_off["seq"], rolls=rolls))
    assert verdict.status is Status.MISMATCH
    assert [m.seq for m in verdict.mismatches] == [roll_off["seq"]]
    assert "roll-off roll of" in verdict.mismatches[0].what


def test_a_held_die_that_changes_is_caught(clean_log: list[dict[str, Any]]) -> None:
    target = next(e for e in clean_log if e["type"] == "rolled" and e["held"])
    index = target["held"][0]
    dice = list(target["dice"])
    dice[index] = dice[index] % 6 + 1
    verdict = fairdice.verify_log(tampered(clean_log, target["seq"], dice=dice))
    assert verdict.status is Status.MISMATCH
    assert [m.seq for m in verdict.mismatches] == [target["seq"]]
    assert f"held die {index}" in verdict.mismatches[0].what


@pytest.mark.parametrize("where", ["player_joined", "game_started"])
def test_a_changed_commitment_is_caught(clean_log: list[dict[str, Any]], where: str) -> None:
    event = [e for e in clean_log if e["type"] == where][-1]
    log = tampered(clean_log, event["seq"], dice_commitment=fairdice.commitment(OTHER_SEED))
    verdict = fairdice.verify_log(log)
    assert verdict.status is Status.MISMATCH
    assert not verdict.commitment_unchanged
    assert verdict.mismatches[0].seq == event["seq"]
    assert verdict.mismatches[0].got == fairdice.commitment(OTHER_SEED)


def test_a_revealed_seed_that_does_not_match_is_caught(clean_log: list[dict[str, Any]]) -> None:
    over = first(clean_log, "game_over")
    verdict = fairdice.verify_log(tampered(clean_log, over["seq"], server_seed=OTHER_SEED.hex()))
    assert verdict.status is Status.MISMATCH
    assert verdict.mismatches[0].seq == over["seq"]
    assert verdict.mismatches[0].expected == fairdice.commitment(SEED)
    assert verdict.draws_checked == 0


def test_consistent_other_seed_and_commitment_still_fail_on_the_dice(
    clean_log: list[dict[str, Any]],
) -> None:
    # A server that swaps its commitment everywhere (and reveals the matching seed) after the
    # dice were drawn from another seed: the commitment holds, every die betrays it.
    log = [
        {**e, "dice_commitment": fairdice.commitment(OTHER_SEED)} if "dice_commitment" in e else e
        for e in clean_log
    ]
    over = first(log, "game_over")
    verdict = fairdice.verify_log(tampered(log, over["seq"], server_seed=OTHER_SEED.hex()))
    assert verdict.status is Status.MISMATCH
    assert verdict.commitment_unchanged
    assert len(verdict.mismatches) > verdict.rolls // 2


def test_a_commitment_published_after_a_client_seed_is_caught(
    clean_log: list[dict[str, Any]],
) -> None:
    joined = first(clean_log, "player_joined")
    assert joined["seed"] is not None
    verdict = fairdice.verify_log(tampered(clean_log, joined["seq"], dice_commitment=None))
    assert verdict.status is Status.MISMATCH
    assert not verdict.committed_before_seeds
    assert verdict.mismatches[0].seq == joined["seq"]
    assert "NO" in "\n".join(verdict.describe())


def test_a_commitment_only_in_game_started_is_caught(clean_log: list[dict[str, Any]]) -> None:
    log = [
        {k: v for k, v in e.items() if k != "dice_commitment"}
        if e["type"] == "player_joined"
        else e
        for e in clean_log
    ]
    verdict = fairdice.verify_log(log)
    assert verdict.status is Status.MISMATCH
    assert not verdict.committed_before_seeds


def test_seeds_in_game_started_must_be_those_given_at_join(
    clean_log: list[dict[str, Any]],
) -> None:
    started = first(clean_log, "game_started")
    verdict = fairdice.verify_log(tampered(clean_log, started["seq"], seeds=["", "", "7"]))
    assert verdict.status is Status.MISMATCH
    assert verdict.mismatches[0].seq == started["seq"]


def test_dice_that_ignore_the_client_seeds_are_caught() -> None:
    # Played with no client seeds, then seeds written into the log: the dice do not follow.
    log = fair_game_log(SEED, [Seat("p1", "A"), Seat("p2", "B")])
    for event in log:
        if event["type"] == "player_joined":
            event["seed"] = "mine-" + event["player"]
        elif event["type"] == "game_started":
            event["seeds"] = ["mine-p1", "mine-p2"]
    verdict = fairdice.verify_log(log)
    assert verdict.status is Status.MISMATCH
    assert all("draw" in m.what for m in verdict.mismatches)


def test_a_malformed_event_is_a_mismatch(clean_log: list[dict[str, Any]]) -> None:
    target = first(clean_log, "rolled")
    verdict = fairdice.verify_log(tampered(clean_log, target["seq"], dice=[1, 2, 3, 4, 7]))
    assert verdict.status is Status.MISMATCH
    assert verdict.mismatches[0].seq == target["seq"]
    assert "dice" in verdict.mismatches[0].got


# -- not verifiable (yet) ------------------------------------------------------------------------


def test_a_game_not_over_is_not_verifiable_yet() -> None:
    log = fair_game_log(SEED, [ANN, BOB], finish=False, max_turns=5)
    verdict = fairdice.verify_log(log)
    assert verdict.status is Status.UNVERIFIABLE
    assert verdict.pending == ("the game is not over: game_over reveals the server seed",)
    assert verdict.draws_checked == 0
    assert verdict.rolls > 0


def test_a_game_not_over_still_shows_a_changed_commitment() -> None:
    log = fair_game_log(SEED, [ANN, BOB], finish=False, max_turns=5)
    started = first(log, "game_started")
    log = tampered(log, started["seq"], dice_commitment=fairdice.commitment(OTHER_SEED))
    assert fairdice.verify_log(log).status is Status.MISMATCH


def test_game_over_without_the_seed_is_not_verifiable(clean_log: list[dict[str, Any]]) -> None:
    over = first(clean_log, "game_over")
    verdict = fairdice.verify_log(tampered(clean_log, over["seq"], server_seed=None))
    assert verdict.status is Status.UNVERIFIABLE
    assert verdict.pending == ("game_over does not reveal the server seed",)


def test_a_log_with_a_hole_is_not_verifiable(clean_log: list[dict[str, Any]]) -> None:
    log = clean_log[:20] + clean_log[21:]
    verdict = fairdice.verify_log(log)
    assert verdict.status is Status.UNVERIFIABLE
    assert verdict.pending == ("the log is incomplete: expected seq 21, found 22",)


def test_a_log_without_fair_dice_is_not_verifiable(clean_log: list[dict[str, Any]]) -> None:
    v11 = {"dice_commitment", "seed", "seeds", "server_seed"}
    log = [{k: v for k, v in e.items() if k not in v11} for e in clean_log]
    verdict = fairdice.verify_log(log)
    assert verdict.status is Status.UNVERIFIABLE
    assert verdict.commitment is None
    assert "no dice_commitment" in verdict.pending[0]


def test_an_empty_log_is_not_verifiable() -> None:
    assert fairdice.verify_log([]).status is Status.UNVERIFIABLE


def test_a_log_without_game_started_cannot_pass(clean_log: list[dict[str, Any]]) -> None:
    # game_started removed and the seqs renumbered: the dice would have no seeds to check with
    log = [dict(e) for e in clean_log if e["type"] != "game_started"]
    for seq, event in enumerate(log, start=1):
        event["seq"] = seq
    verdict = fairdice.verify_log(log)
    assert verdict.status is Status.MISMATCH
    assert verdict.mismatches[-1].expected == "a game_started earlier in the log"

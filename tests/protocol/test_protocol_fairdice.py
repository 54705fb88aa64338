"""The fair-dice generator: vectors, determinism, rejection sampling, uniformity."""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

import fairdice_reference as reference
import pytest

from protocol import fairdice

VECTORS: dict[str, Any] = json.loads(reference.VECTORS.read_text(encoding="utf-8"))

# Upper critical values of the chi-square distribution at significance 0.001 (standard tables):
# the seeded samples below are fixed, so each test either always passes or always fails.
CHI2_CRITICAL_0_001 = {5: 20.515, 35: 66.619}
SAMPLE_FACES = 600_000


# -- vectors -------------------------------------------------------------------------------------


def test_vector_file_is_what_the_independent_reference_computes() -> None:
    assert reference.build() == VECTORS


@pytest.mark.parametrize("row", VECTORS["commitments"], ids=lambda r: r["server_seed"][:8])
def test_commitment_vectors(row: dict[str, str]) -> None:
    assert fairdice.commitment(bytes.fromhex(row["server_seed"])) == row["commitment"]


@pytest.mark.parametrize("row", VECTORS["client_entropy"], ids=lambda r: repr(r["seeds"]))
def test_client_entropy_vectors(row: dict[str, Any]) -> None:
    assert fairdice.client_entropy(row["seeds"]).hex() == row["client_entropy"]


@pytest.mark.parametrize("row", VECTORS["faces"], ids=lambda r: r["name"])
def test_faces_vectors(row: dict[str, Any]) -> None:
    seed = bytes.fromhex(row["server_seed"])
    entropy = fairdice.client_entropy(row["seeds"])
    assert list(fairdice.faces(seed, entropy, row["n"], row["count"])) == row["faces"]
    # the first block as the vector file shows it, so an implementer can debug byte by byte
    message = b"yahtzee-dice/1" + entropy + row["n"].to_bytes(8, "big") + bytes(4)
    assert hmac.digest(seed, message, "sha256").hex() == row["block0"]


def test_vectors_cover_skipped_bytes_and_block_boundaries() -> None:
    rows = {row["name"]: row for row in VECTORS["faces"]}
    early = bytes.fromhex(rows["a skipped byte among the first five"]["block0"])
    assert any(b >= 252 for b in early[:5])
    boundary = rows["block boundary after two skipped bytes"]
    block0 = bytes.fromhex(boundary["block0"])
    assert sum(b >= 252 for b in block0) == 2
    assert boundary["count"] == 31  # 30 faces from block 0, the 31st from block 1
    assert boundary["faces"][:30] == [b % 6 + 1 for b in block0 if b < 252]


# -- the generator -------------------------------------------------------------------------------


def test_faces_are_deterministic_and_depend_on_every_input() -> None:
    seed, entropy = bytes(range(32)), fairdice.client_entropy(["a", "b"])
    once = fairdice.faces(seed, entropy, 4, 40)
    assert fairdice.faces(seed, entropy, 4, 40) == once
    assert all(1 <= f <= 6 for f in once)
    others = [
        fairdice.faces(bytes(32), entropy, 4, 40),
        fairdice.faces(seed, fairdice.client_entropy(["a", "c"]), 4, 40),
        fairdice.faces(seed, fairdice.client_entropy(["b", "a"]), 4, 40),  # seat order matters
        fairdice.faces(seed, entropy, 5, 40),
    ]
    assert all(other != once for other in others)


def test_a_shorter_draw_is_a_prefix_of_a_longer_one_across_blocks() -> None:
    seed, entropy = b"\x07" * 32, fairdice.client_entropy([""])
    long = fairdice.faces(seed, entropy, 11, 100)
    assert all(fairdice.faces(seed, entropy, 11, k) == long[:k] for k in range(101))


def test_every_byte_value_maps_by_rejection() -> None:
    # Search draws until block 0 shows the edge bytes 251 (face 6, the last kept) and 252..255
    # (skipped), then compare the faces with the raw bytes of that block.
    seed, entropy = b"edge".ljust(32, b"\x00"), fairdice.client_entropy(["edge"])
    seen: set[int] = set()
    for n in range(5000):
        raw = hmac.digest(
            seed, b"yahtzee-dice/1" + entropy + n.to_bytes(8, "big") + bytes(4), "sha256"
        )
        kept = [b for b in raw if b < 252]
        assert fairdice.faces(seed, entropy, n, len(kept)) == tuple(b % 6 + 1 for b in kept)
        seen |= set(raw) & {251, 252, 253, 254, 255}
        if seen == {251, 252, 253, 254, 255}:
            break
    assert seen == {251, 252, 253, 254, 255}


def test_client_entropy_separates_seeds_with_a_zero_byte() -> None:
    assert fairdice.client_entropy(["ab", ""]) != fairdice.client_entropy(["a", "b"])
    assert fairdice.client_entropy(["a", "b"]) == hashlib.sha256(b"a\x00b").digest()


@pytest.mark.parametrize(("n", "count"), [(-1, 5), (2**64, 5), (0, -1)])
def test_out_of_range_arguments_are_refused(n: int, count: int) -> None:
    with pytest.raises(ValueError, match=r"must be|draw number"):
        fairdice.faces(bytes(32), bytes(32), n, count)


def test_server_seeds_are_fresh_and_commitments_lowercase_hex() -> None:
    seeds = {fairdice.new_server_seed() for _ in range(100)}
    assert len(seeds) == 100
    assert all(len(s) == fairdice.SERVER_SEED_BYTES for s in seeds)
    seed = seeds.pop()
    text = fairdice.commitment(seed)
    assert text == hashlib.sha256(seed).hexdigest()
    assert text == text.lower()
    assert len(text) == 64
    assert fairdice.parse_server_seed(seed.hex()) == seed


@pytest.mark.parametrize("text", ["", "00" * 31, "00" * 33, "AB" * 32, "g" * 64, " " + "0" * 63])
def test_parse_server_seed_refuses_anything_but_64_lowercase_hex(text: str) -> None:
    with pytest.raises(ValueError, match="64 lowercase hex"):
        fairdice.parse_server_seed(text)


@pytest.mark.parametrize(
    ("seed", "valid"),
    [("a", True), (" ", True), ("~", True), ("x" * 64, True), ("", False), ("x" * 65, False),
     ("a\n", False), ("\x7f", False), ("é", False), (None, False), (5, False)],
)  # fmt: skip
def test_client_seed_is_1_to_64_printable_ascii(seed: object, valid: bool) -> None:
    assert fairdice.is_valid_client_seed(seed) is valid


# -- uniformity ----------------------------------------------------------------------------------


def chi_square(counts: Counter[Any], cells: Iterable[Any]) -> float:
    keys = list(cells)
    expected = sum(counts.values()) / len(keys)
    return sum((counts[k] - expected) ** 2 / expected for k in keys)


def five_dice_draws(draw: Callable[[bytes, bytes, int], tuple[int, ...]]) -> list[tuple[int, ...]]:
    """SAMPLE_FACES faces as five-dice draws over a seeded set of games (20 games x 6,000)."""
    rolls = []
    for game in range(20):
        seed = hashlib.sha256(f"chi-square game {game}".encode()).digest()
        entropy = fairdice.client_entropy([f"player {game}", "", "x"])
        rolls += [draw(seed, entropy, n) for n in range(SAMPLE_FACES // 5 // 20)]
    return rolls


FACES = range(1, 7)


def test_faces_are_uniform_overall_per_position_and_in_pairs() -> None:
    rolls = five_dice_draws(lambda seed, entropy, n: fairdice.faces(seed, entropy, n, 5))
    overall = Counter(f for roll in rolls for f in roll)
    assert sum(overall.values()) == SAMPLE_FACES
    statistic = chi_square(overall, FACES)
    print(f"chi-square over {SAMPLE_FACES} faces: {statistic:.2f} (df 5)")
    assert statistic < CHI2_CRITICAL_0_001[5]
    for position in range(5):
        per_position = chi_square(Counter(roll[position] for roll in rolls), FACES)
        print(f"position {position}: chi-square {per_position:.2f}")
        assert per_position < CHI2_CRITICAL_0_001[5]
    pairs = Counter((roll[0], roll[1]) for roll in rolls)
    statistic = chi_square(pairs, [(a, b) for a in FACES for b in FACES])
    print(f"pairs of dice 0 and 1: chi-square {statistic:.2f} (df 35)")
    assert statistic < CHI2_CRITICAL_0_001[35]


def test_the_chi_square_test_catches_the_bias_rejection_removes() -> None:
    # The same bytes mapped without rejection (b % 6 + 1 for all 256 values) favour faces 1..4
    # by 43/256 against 42/256; this sample size must see it, or the test above proves little.
    def biased(seed: bytes, entropy: bytes, n: int) -> tuple[int, ...]:
        raw = hmac.digest(
            seed, b"yahtzee-dice/1" + entropy + n.to_bytes(8, "big") + bytes(4), "sha256"
        )
        return tuple(b % 6 + 1 for b in raw[:5])

    statistic = chi_square(Counter(f for roll in five_dice_draws(biased) for f in roll), FACES)
    print(f"without rejection: chi-square {statistic:.2f}")
    assert statistic > CHI2_CRITICAL_0_001[5]


def test_random_server_seeds_give_unseen_sequences() -> None:
    entropy = fairdice.client_entropy(["s"])
    sequences = {fairdice.faces(secrets.token_bytes(32), entropy, 0, 20) for _ in range(200)}
    assert len(sequences) == 200


def test_the_worked_example_in_fairdice_md_is_right() -> None:
    text = (reference.VECTORS.parents[1] / "fairdice.md").read_text(encoding="utf-8")
    example = text.split("One worked example:")[1].split("```")[1]
    values = {line[:16].strip(): line[16:].strip() for line in example.splitlines() if line.strip()}
    seed = bytes.fromhex(values["server_seed"])
    seeds = json.loads(values["seeds"])
    entropy = fairdice.client_entropy(seeds)
    assert fairdice.commitment(seed) == values["commitment"]
    assert entropy.hex() == values["client_entropy"]
    message = b"yahtzee-dice/1" + entropy + bytes(8) + bytes(4)
    assert hmac.digest(seed, message, "sha256").hex() == values["block(0, 0)"]
    shown = [int(f) for f in values["faces of draw 0"].split()[-5:]]
    assert list(fairdice.faces(seed, entropy, 0, 5)) == shown


def test_faces_are_the_first_faces_of_the_stream_across_blocks() -> None:
    """``faces`` takes whole blocks at once; it must give exactly the stream's first faces,
    rejected bytes dropped, over block boundaries too (some blocks reject several bytes)."""
    entropy = fairdice.client_entropy(["a", ""])
    for n in range(300):
        seed = hashlib.sha256(n.to_bytes(2, "big")).digest()
        stream = fairdice.face_stream(seed, entropy, n)
        expected = tuple(next(stream) for _ in range(70))
        for count in (0, 1, 5, 31, 32, 33, 70):
            assert fairdice.faces(seed, entropy, n, count) == expected[:count]

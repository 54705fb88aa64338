"""A second, independent implementation of the fair-dice generator, and the vector writer.

It follows ``protocol/fairdice.md`` with nothing shared with ``protocol.fairdice``: HMAC is built
by hand from SHA-256 (RFC 2104), bytes are read one block at a time. The tests check that both
implementations agree with ``protocol/vectors/fairdice.json``, so the vectors are not just the
module's own output frozen.

    python tests/protocol/fairdice_reference.py   # rewrite protocol/vectors/fairdice.json
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

VECTORS = Path(__file__).resolve().parents[2] / "protocol" / "vectors" / "fairdice.json"
SHA256_BLOCK = 64


def hmac_sha256(key: bytes, message: bytes) -> bytes:
    """RFC 2104 HMAC with SHA-256, written out."""
    if len(key) > SHA256_BLOCK:
        key = hashlib.sha256(key).digest()
    key = key.ljust(SHA256_BLOCK, b"\x00")
    inner = hashlib.sha256(bytes(k ^ 0x36 for k in key) + message).digest()
    return hashlib.sha256(bytes(k ^ 0x5C for k in key) + inner).digest()


def entropy(seeds: list[str]) -> bytes:
    joined = b""
    for i, seed in enumerate(seeds):
        if i:
            joined += b"\x00"
        joined += seed.encode("utf-8")
    return hashlib.sha256(joined).digest()


def block(server_seed: bytes, seeds: list[str], n: int, index: int) -> bytes:
    message = b"yahtzee-dice/1" + entropy(seeds) + n.to_bytes(8, "big") + index.to_bytes(4, "big")
    return hmac_sha256(server_seed, message)


def faces(server_seed: bytes, seeds: list[str], n: int, count: int) -> list[int]:
    out: list[int] = []
    index = 0
    while len(out) < count:
        for byte in block(server_seed, seeds, n, index):
            if len(out) == count:
                break
            if byte < 252:
                out.append(byte % 6 + 1)
        index += 1
    return out


def _vector(name: str, seed: bytes, seeds: list[str], n: int, count: int) -> dict[str, Any]:
    return {
        "name": name,
        "server_seed": seed.hex(),
        "seeds": seeds,
        "n": n,
        "count": count,
        "block0": block(seed, seeds, n, 0).hex(),
        "faces": faces(seed, seeds, n, count),
    }


def _first_n(seed: bytes, seeds: list[str], wanted: Any) -> int:
    return next(n for n in range(10_000) if wanted(block(seed, seeds, n, 0)))


def build() -> dict[str, Any]:
    """The content of ``protocol/vectors/fairdice.json``."""
    seed_a = bytes(range(32))
    seed_b = hashlib.sha256(b"fairdice vector seed b").digest()
    table = ["ann-seed", "", "c"]
    # a draw whose first five bytes include a skipped byte (>= 252)
    early_skip = _first_n(seed_b, table, lambda b: any(x >= 252 for x in b[:5]))
    # a draw whose first block has two skipped bytes: its 31st face comes from block 1
    two_skips = _first_n(seed_b, table, lambda b: sum(x >= 252 for x in b) == 2)
    vectors = [
        _vector("solo player without a seed, draw 0, five dice", seed_a, [""], 0, 5),
        _vector("three seats, one without a seed, draw 0", seed_a, table, 0, 5),
        _vector("same seeds, draw 1, three dice", seed_a, table, 1, 3),
        _vector("same seeds, draw 2, one die", seed_a, table, 2, 1),
        _vector("zero dice", seed_a, table, 3, 0),
        # 2**53 - 1, not 2**64 - 1: the largest n a JSON reader in JavaScript holds exactly
        _vector("large draw number 2**53 - 1", seed_a, table, 2**53 - 1, 5),
        _vector("a skipped byte among the first five", seed_b, table, early_skip, 5),
        _vector("block boundary after two skipped bytes", seed_b, table, two_skips, 31),
        _vector("long draw over three blocks", seed_b, ["x" * 64, "~ !"], 9, 80),
    ]
    return {
        "description": (
            "Test vectors of the provably fair dice generator yahtzee-dice/1"
            " (protocol/fairdice.md). Hex strings are lowercase;"
            " block0 = HMAC-SHA256(server_seed, 'yahtzee-dice/1' +"
            " client_entropy + n (8 bytes, big-endian) + 0 (4 bytes, big-endian))."
        ),
        "commitments": [
            {"server_seed": s.hex(), "commitment": hashlib.sha256(s).hexdigest()}
            for s in (seed_a, seed_b, bytes(32))
        ],
        "client_entropy": [
            {"seeds": seeds, "client_entropy": entropy(seeds).hex()}
            for seeds in ([""], ["a"], ["a", ""], ["", "a"], table, ["x" * 64, "~ !"])
        ],
        "faces": vectors,
    }


if __name__ == "__main__":
    VECTORS.write_text(json.dumps(build(), indent=2) + "\n", encoding="utf-8")
    print(f"wrote {VECTORS}")

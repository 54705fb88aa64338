// The page's fair-dice module (clients/web/fairdice.js) against the protocol's test vectors
// (protocol/vectors/fairdice.json) and a small log checked end to end, without a server.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import {
  clientEntropy, commitment, faces, fromHex, sha256, toHex, verifyLog,
} from "../../../clients/web/fairdice.js";

const vectors = JSON.parse(readFileSync(new URL("../../../protocol/vectors/fairdice.json",
  import.meta.url), "utf8"));

test("sha256 of the empty string and of 'abc' (and of 1000 bytes: several blocks)", () => {
  assert.equal(toHex(sha256(new Uint8Array())),
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  assert.equal(toHex(sha256(new TextEncoder().encode("abc"))),
    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  assert.equal(toHex(sha256(new Uint8Array(1000).fill(97))),
    "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3");
});

test("the commitments, client entropies and faces of the vectors", () => {
  for (const v of vectors.commitments) assert.equal(commitment(v.server_seed), v.commitment);
  for (const v of vectors.client_entropy) {
    assert.equal(toHex(clientEntropy(v.seeds)), v.client_entropy, JSON.stringify(v.seeds));
  }
  for (const v of vectors.faces) {
    const got = faces(fromHex(v.server_seed), clientEntropy(v.seeds), v.n, v.count);
    assert.deepEqual(got, v.faces, v.name);
  }
});

function gameLog(serverSeed, seeds, tamper = false) {
  const entropy = clientEntropy(seeds);
  const c = commitment(serverSeed);
  const seed = fromHex(serverSeed);
  const first = faces(seed, entropy, 0, 5);
  const second = faces(seed, entropy, 1, 3);
  const dice = [first[0], first[1], ...second];
  if (tamper) dice[4] = (dice[4] % 6) + 1;
  return [
    { seq: 1, type: "player_joined", player: "p1", seat: 0, seed: seeds[0] || null,
      dice_commitment: c },
    { seq: 2, type: "game_started", order: ["p1"], seeds, dice_commitment: c },
    { seq: 3, type: "turn_changed", player: "p1", round: 1 },
    { seq: 4, type: "rolled", player: "p1", dice: first, held: [] },
    { seq: 5, type: "rolled", player: "p1", dice, held: [0, 1] },
    { seq: 6, type: "scored", player: "p1", box: "chance", points: 0 },
    { seq: 7, type: "game_over", results: [], server_seed: serverSeed },
  ];
}

test("a log verifies; a changed die is a mismatch; an unfinished game is unverifiable", () => {
  const seed = vectors.commitments[1].server_seed;
  const ok = verifyLog(gameLog(seed, ["my-seed"]));
  assert.equal(ok.status, "verified", JSON.stringify(ok));
  assert.equal(ok.draws, 2);
  assert.equal(ok.dice, 8);
  assert.deepEqual(ok.warnings, []);
  const bad = verifyLog(gameLog(seed, ["my-seed"], true));
  assert.equal(bad.status, "mismatch");
  assert.match(bad.mismatches[0], /draw 1/);
  const open = verifyLog(gameLog(seed, ["my-seed"]).slice(0, 5));
  assert.equal(open.status, "unverifiable");
  assert.equal(verifyLog(gameLog(seed, [""])).warnings.length, 1);
});

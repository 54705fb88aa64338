// fairdice.js: the provably fair dice of protocol v1.1 (protocol/fairdice.md) for the page and
// Node: the generator `yahtzee-dice/1` and the checks of fairdice.md section 6 over a room's
// event log, as `protocol/fairdice.py` does them (pure: no DOM, no network).
//
// SHA-256 and HMAC are written out here instead of using `crypto.subtle`, which browsers offer
// only in secure contexts (https or localhost): the page must verify a game on plain http too.

const K = new Uint32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);

/**
 * SHA-256 of some bytes.
 * @param {Uint8Array} data
 * @returns {Uint8Array} 32 bytes
 */
export function sha256(data) {
  const bitLength = data.length * 8;
  const padded = new Uint8Array(((data.length + 9 + 63) >> 6) << 6);
  padded.set(data);
  padded[data.length] = 0x80;
  const view = new DataView(padded.buffer);
  view.setUint32(padded.length - 8, Math.floor(bitLength / 2 ** 32));
  view.setUint32(padded.length - 4, bitLength >>> 0);
  const h = new Uint32Array([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f,
    0x9b05688c, 0x1f83d9ab, 0x5be0cd19]);
  const w = new Uint32Array(64);
  const rotr = (x, n) => (x >>> n) | (x << (32 - n));
  for (let offset = 0; offset < padded.length; offset += 64) {
    for (let i = 0; i < 16; i++) w[i] = view.getUint32(offset + 4 * i);
    for (let i = 16; i < 64; i++) {
      const s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >>> 3);
      const s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >>> 10);
      w[i] = (w[i - 16] + s0 + w[i - 7] + s1) >>> 0;
    }
    let [a, b, c, d, e, f, g, hh] = h;
    for (let i = 0; i < 64; i++) {
      const t1 = (hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[i]
        + w[i]) >>> 0;
      const t2 = ((rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) >>> 0;
      hh = g; g = f; f = e; e = (d + t1) >>> 0; d = c; c = b; b = a; a = (t1 + t2) >>> 0;
    }
    h[0] += a; h[1] += b; h[2] += c; h[3] += d; h[4] += e; h[5] += f; h[6] += g; h[7] += hh;
  }
  const out = new Uint8Array(32);
  const outView = new DataView(out.buffer);
  for (let i = 0; i < 8; i++) outView.setUint32(4 * i, h[i]);
  return out;
}

/**
 * HMAC-SHA256.
 * @param {Uint8Array} key
 * @param {Uint8Array} message
 * @returns {Uint8Array}
 */
export function hmacSha256(key, message) {
  const block = new Uint8Array(64);
  block.set(key.length > 64 ? sha256(key) : key);
  const inner = new Uint8Array(64 + message.length);
  const outer = new Uint8Array(64 + 32);
  for (let i = 0; i < 64; i++) {
    inner[i] = block[i] ^ 0x36;
    outer[i] = block[i] ^ 0x5c;
  }
  inner.set(message, 64);
  outer.set(sha256(inner), 64);
  return sha256(outer);
}

const DOMAIN = new TextEncoder().encode("yahtzee-dice/1");
const HEX64 = /^[0-9a-f]{64}$/;

/** @param {Uint8Array} bytes @returns {string} lowercase hex */
export function toHex(bytes) {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** @param {string} hex @returns {Uint8Array} */
export function fromHex(hex) {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

/** The commitment to a server seed: SHA-256 of its 32 bytes, lowercase hex. */
export function commitment(serverSeedHex) {
  return toHex(sha256(fromHex(serverSeedHex)));
}

/** SHA-256 of the client seeds (in seat order, "" for none) joined by single zero bytes. */
export function clientEntropy(seeds) {
  const parts = seeds.map((s) => new TextEncoder().encode(s));
  const total = parts.reduce((n, p) => n + p.length, 0) + Math.max(0, parts.length - 1);
  const joined = new Uint8Array(total);
  let at = 0;
  parts.forEach((part, i) => {
    if (i) at += 1;  // the zero byte between two seeds
    joined.set(part, at);
    at += part.length;
  });
  return sha256(joined);
}

/**
 * The first `count` faces of draw `n`.
 * @param {Uint8Array} serverSeed 32 bytes
 * @param {Uint8Array} entropy clientEntropy of the game's seeds
 * @param {number} n the draw number (0, 1, ...)
 * @param {number} count
 * @returns {number[]}
 */
export function faces(serverSeed, entropy, n, count) {
  const out = [];
  for (let index = 0; out.length < count; index++) {
    const message = new Uint8Array(DOMAIN.length + entropy.length + 12);
    message.set(DOMAIN);
    message.set(entropy, DOMAIN.length);
    const view = new DataView(message.buffer);
    view.setUint32(DOMAIN.length + entropy.length, Math.floor(n / 2 ** 32));
    view.setUint32(DOMAIN.length + entropy.length + 4, n >>> 0);
    view.setUint32(DOMAIN.length + entropy.length + 8, index);
    for (const byte of hmacSha256(serverSeed, message)) {
      if (byte < 252 && out.length < count) out.push((byte % 6) + 1);
    }
  }
  return out;
}

const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);

/**
 * Check a room's whole event log (fairdice.md section 6), as `protocol.fairdice.verify_log`.
 * @param {object[]} events from seq 1, in order
 * @returns {{status: "verified"|"mismatch"|"unverifiable", mismatches: string[],
 *   pending: string[], warnings: string[], commitment: string|null, seeds: string[]|null,
 *   rolls: number, draws: number, dice: number}}
 *   `draws`: dice draws recomputed; `dice`: dice recomputed.
 */
export function verifyLog(events) {
  const mismatches = [];
  const pending = [];
  let first = null;
  let bound = null;
  let lobby = [];
  let started = false;
  let seeds = null;
  const draws = [];
  let turnDice = null;
  let serverSeed = null;
  let over = false;
  let incomplete = false;
  const see = (ev) => {
    const value = ev.dice_commitment;
    if (value === undefined || value === null) return null;
    if (typeof value !== "string" || !HEX64.test(value)) throw new Error("bad dice_commitment");
    if (first === null) first = value;
    else if (value !== first) mismatches.push(`seq ${ev.seq}: the dice commitment changed`);
    return value;
  };
  const handlers = {
    player_joined(ev) {
      see(ev);
      const seed = typeof ev.seed === "string" ? ev.seed : "";
      if (seed && first === null) {
        mismatches.push(`seq ${ev.seq}: a seed was given before the commitment was published`);
      }
      if (!started) lobby.push([ev.player, seed]);
    },
    player_left(ev) {
      if (ev.forfeited === false) lobby = lobby.filter(([p]) => p !== ev.player);
    },
    game_started(ev) {
      started = true;
      bound = see(ev);
      if (bound === null && first !== null) {
        mismatches.push(`seq ${ev.seq}: game_started has no commitment`);
      }
      if (ev.seeds === undefined || ev.seeds === null) {
        if (first === null) { seeds = []; return; }
        throw new Error("game_started without seeds");
      }
      seeds = [...ev.seeds];
      if (!same(seeds, lobby.map(([, s]) => s))) {
        mismatches.push(`seq ${ev.seq}: the seeds of the game are not those the players gave`);
      }
    },
    roll_off(ev) {
      started = true;
      for (const roll of ev.rolls) draws.push({ seq: ev.seq, got: [...roll.dice] });
    },
    turn_changed() { turnDice = null; },
    scored() { turnDice = null; },
    rolled(ev) {
      for (const index of ev.held) {
        if (!turnDice || turnDice[index] !== ev.dice[index]) {
          mismatches.push(`seq ${ev.seq}: held die ${index + 1} changed`);
        }
      }
      const rolled = [0, 1, 2, 3, 4].filter((i) => !ev.held.includes(i));
      draws.push({ seq: ev.seq, got: rolled.map((i) => ev.dice[i]) });
      turnDice = [...ev.dice];
    },
    game_over(ev) {
      over = true;
      if (seeds === null) mismatches.push(`seq ${ev.seq}: game over without a game start`);
      const revealed = ev.server_seed;
      if (revealed === undefined || revealed === null) {
        if (first !== null) pending.push("the server did not reveal its seed");
        return;
      }
      if (typeof revealed !== "string" || !HEX64.test(revealed)) {
        throw new Error("bad server_seed");
      }
      const expected = bound || first;
      if (expected === null) return;
      if (commitment(revealed) !== expected) {
        mismatches.push(`seq ${ev.seq}: the revealed seed does not match the commitment`);
        return;
      }
      serverSeed = fromHex(revealed);
    },
  };
  let expectedSeq = 1;
  for (const ev of events) {
    if (ev.seq !== expectedSeq) {
      incomplete = true;
      pending.push(`the log is incomplete (seq ${expectedSeq} is missing)`);
      break;
    }
    expectedSeq += 1;
    const handler = handlers[ev.type];
    if (!handler) continue;
    try { handler(ev); } catch (err) {
      mismatches.push(`seq ${ev.seq}: a malformed ${ev.type} (${err.message})`);
    }
  }
  if (first === null) pending.push("the log has no dice commitment");
  else if (!over && !incomplete) pending.push("the game is not over yet");
  let checked = 0;
  let dice = 0;
  if (serverSeed && seeds) {
    const entropy = clientEntropy(seeds);
    draws.forEach((draw, n) => {
      const expected = faces(serverSeed, entropy, n, draw.got.length);
      if (!same(expected, draw.got)) {
        mismatches.push(`seq ${draw.seq}: draw ${n} shows ${draw.got.join(" ")}, ` +
          `the seed gives ${expected.join(" ")}`);
      }
      dice += draw.got.length;
    });
    checked = draws.length;
  }
  const warnings = seeds && first !== null && !seeds.some(Boolean)
    ? ["no player contributed a seed: the server alone chose every die"] : [];
  const status = mismatches.length ? "mismatch" : pending.length ? "unverifiable" : "verified";
  return { status, mismatches, pending, warnings, commitment: bound || first, seeds,
    rolls: draws.length, draws: checked, dice };
}

// A protocol 1.2 client, written as a third party would from the v1.2 SPEC with the `ws`
// package: it seats computer players, asks the server's advisor (`hint`) for every move and
// follows it, and takes the +100 of an extra Yahtzee under the `bonus_turn` house variant. It
// sends only v1.2 fields and reads only v1.2 fields. (The person's moves are advised in a room of
// the official rules, whose strategy table the test builds first.)
//
//   node v12-client.mjs SCENARIO WS_URL [ROOM TOKEN]
//
// Every frame it sends or receives is printed on stdout as one JSON line
// ({"dir": "in"|"out", "who": ..., "msg": ...}); the Python test (tests/compat) checks them
// against the v1.2 schema. A failed expectation exits with status 1 and says why.
// SCENARIO: computers, bonus, errors; takebonus (ROOM and TOKEN: a seat of a room prepared by
// the test, where the player on turn has just rolled an extra Yahtzee under bonus_turn).

import { once } from 'node:events';
import { createRequire } from 'node:module';
import { setTimeout as wait } from 'node:timers/promises';

// `ws` is a test dependency of tests/clients/web (installed by `python3 .ci/dev.py setup`)
const require = createRequire(new URL('../../clients/web/package.json', import.meta.url));
const WebSocket = require('ws');

const [scenario, url, givenRoom, givenToken] = process.argv.slice(2);
const TIMEOUT_MS = 60000; // the strategy table may still be loading when the first game starts
let counter = 0;

function check(condition, why) {
  if (!condition) throw new Error(why);
}

function print(record) {
  process.stdout.write(`${JSON.stringify(record)}\n`);
}

class Player {
  static async connect(who) {
    const ws = new WebSocket(url, 'yahtzee.v1.json');
    await once(ws, 'open');
    const player = new Player(ws, who);
    const welcome = await player.next((m) => m.type === 'welcome', 'welcome');
    check(welcome.protocol_version === 1 && welcome.protocol_minor >= 2, `${who}: not a 1.2 server`);
    player.limits = welcome.limits;
    await player.ok('hello', { client: 'compat-1.2' });
    return player;
  }

  constructor(ws, who) {
    this.ws = ws;
    this.who = who;
    this.inbox = [];
    this.read = 0; // messages before this index were consumed by next()
    this.waiting = null;
    this.closed = false;
    ws.on('message', (data) => {
      const msg = JSON.parse(data.toString());
      print({ dir: 'in', who, msg });
      this.inbox.push(msg);
      this.waiting?.();
    });
    ws.on('close', () => {
      this.closed = true;
      this.waiting?.();
    });
  }

  // The next message (in arrival order, skipping none before it is consumed) that `matches`.
  async next(matches, what) {
    const deadline = Date.now() + TIMEOUT_MS;
    for (;;) {
      while (this.read < this.inbox.length) {
        const msg = this.inbox[this.read];
        this.read += 1;
        if (matches(msg)) return msg;
      }
      check(!this.closed, `${this.who}: closed waiting for ${what}`);
      check(Date.now() < deadline, `${this.who}: no ${what}; last ${JSON.stringify(this.inbox.slice(-2))}`);
      await new Promise((resolve) => {
        this.waiting = resolve;
        setTimeout(resolve, deadline - Date.now());
      });
      this.waiting = null;
    }
  }

  // Send a command; its reply. Replies are looked up by id, without consuming other messages.
  // `rate_limited` (SPEC 11.3): wait 1 / max_messages_per_second per frame, then resend.
  async request(type, fields = {}) {
    for (;;) {
      const reply = await this.send(type, fields);
      if (reply.type !== 'error' || reply.code !== 'rate_limited') return reply;
      check(reply.retryable, 'rate_limited is retryable');
      await wait(1000 / this.limits.max_messages_per_second);
    }
  }

  async send(type, fields) {
    counter += 1;
    const id = `${this.who}-${counter}`;
    const msg = { type, id, ...fields };
    print({ dir: 'out', who: this.who, msg });
    this.ws.send(JSON.stringify(msg));
    const deadline = Date.now() + TIMEOUT_MS;
    for (;;) {
      const reply = this.inbox.find((m) => (m.type === 'ack' || m.type === 'error') && m.id === id);
      if (reply) return reply;
      check(!this.closed && Date.now() < deadline, `${this.who}: no reply to ${type}`);
      await new Promise((resolve) => {
        this.waiting = resolve;
        setTimeout(resolve, deadline - Date.now());
      });
      this.waiting = null;
    }
  }

  async ok(type, fields = {}) {
    const reply = await this.request(type, fields);
    check(reply.type === 'ack', `${this.who}: ${type} answered ${JSON.stringify(reply)}`);
    return reply;
  }

  async refused(type, fields, code) {
    const reply = await this.request(type, fields);
    check(reply.type === 'error' && reply.code === code, `${type}: expected ${code}, got ${JSON.stringify(reply)}`);
    return reply;
  }

  // SPEC 6.18: `unavailable` while the strategy table loads; resend after a short wait.
  async hint() {
    for (;;) {
      const reply = await this.request('hint');
      if (reply.type === 'ack') return reply;
      check(reply.code === 'unavailable' && reply.retryable, `hint: ${JSON.stringify(reply)}`);
      await wait(1000);
    }
  }

  close() {
    this.ws.close();
  }
}

const OPTIONS = { rules: 'yahtzee', extra_yahtzees: 'on', joker: 'forced', first_player: 'seat_order', upper_first: 'off', bonus_turn: 'off' };

function createRoom(seats, extra = {}) {
  return {
    seats,
    public: false,
    turn_seconds: 0,
    options: OPTIONS,
    computers: [],
    hints: true,
    computer_delay_ms: 0,
    ...extra,
  };
}

async function join(player, room, invite) {
  const joined = await player.ok('join', { room, name: player.who, invite_code: invite, join_key: null, seed: `${player.who}-seed` });
  player.id = joined.result.player;
  player.room = room;
  const snapshot = await player.next((m) => m.type === 'snapshot', 'snapshot');
  check(snapshot.seq === joined.seq, 'snapshot at the ack seq');
  return snapshot;
}

// One turn, every decision taken from the advisor: the first option of each hint.
// (`take_bonus` is advised only under bonus_turn; handled all the same.)
async function playAdvisedTurn(player, stats) {
  let rolls = 0;
  for (;;) {
    const { result, seq } = await player.hint();
    check(result.command === 'hint' && result.player === player.id, `hint for ${result.player}`);
    check(result.rolls_left === 3 - rolls, `hint rolls_left ${result.rolls_left} after ${rolls} rolls`);
    const expected = result.options.map((o) => o.expected);
    check(expected.every((e, i) => i === 0 || e <= expected[i - 1]), `options not best first: ${expected}`);
    const best = result.options[0];
    stats.hints += 1;
    if (best.kind === 'roll') {
      check(best.keep.length < 5 && (rolls > 0 || best.keep.length === 0), `roll keep ${best.keep}`);
      const rolled = await player.ok('roll', { keep: best.keep, expect_seq: seq });
      const event = await player.next((m) => m.type === 'rolled' && m.seq === rolled.seq, 'rolled');
      rolls += 1;
      check(event.rolls_left === 3 - rolls, 'rolled.rolls_left');
      if (event.yahtzee_bonus_pending) stats.pending += 1;
    } else if (best.kind === 'score') {
      const scored = await player.ok('score', { box: best.box, expect_seq: seq });
      await player.next((m) => m.type === 'scored' && m.seq <= scored.seq, 'scored');
      return;
    } else {
      check(best.kind === 'take_bonus', `unknown hint kind ${best.kind}`);
      const taken = await player.ok('take_bonus', { expect_seq: seq });
      const event = await player.next((m) => m.type === 'bonus_taken' && m.seq <= taken.seq, 'bonus_taken');
      check(!event.automatic && event.yahtzee_bonus >= 100, `bonus_taken ${JSON.stringify(event)}`);
      stats.bonuses += 1;
      return;
    }
  }
}

// Plays `player`'s turns until game_over; the computers play theirs on the server.
async function playToEnd(player) {
  const stats = { hints: 0, pending: 0, bonuses: 0, turns: 0 };
  for (;;) {
    const next = await player.next((m) => m.type === 'turn_changed' || m.type === 'game_over', 'turn or end');
    if (next.type === 'game_over') return { over: next, stats };
    if (next.player !== player.id) continue;
    stats.turns += 1;
    await playAdvisedTurn(player, stats);
  }
}

// A person and computers of every level: two seated by create_room, one added, one added and
// removed again; the game is played to its end, the person following the advisor.
async function computers() {
  const ann = await Player.connect('ann');
  const created = await ann.ok('create_room', createRoom(4, {
    computers: [{ level: 'easy', name: null }, { level: 'medium', name: 'Meddy' }],
  }));
  const { room, invite_code: invite } = created.result;
  const lobby = await join(ann, room, invite);
  const seated = lobby.state.players;
  check(seated.length === 3, `three players in the lobby: ${seated.length}`);
  check(seated[0].computer === 'easy' && seated[1].computer === 'medium' && seated[1].name === 'Meddy', 'computers first');
  check(seated[2].computer === null && seated[2].player === ann.id, 'a person: computer null');
  check(lobby.state.hints === true, 'RoomState.hints');
  check(lobby.state.host === ann.id, 'the host is the person');
  const gone = await ann.ok('add_computer', { level: 'optimal', name: null });
  check(gone.result.seat === 3, `add_computer seat ${gone.result.seat}`);
  await ann.refused('add_computer', { level: 'hard', name: null }, 'room_full');
  await ann.ok('remove_computer', { player: gone.result.player });
  const left = await ann.next((m) => m.type === 'player_left' && m.player === gone.result.player, 'player_left');
  check(left.forfeited === false, 'a removed computer is not forfeited');
  await ann.refused('remove_computer', { player: ann.id }, 'invalid_field');
  const hard = await ann.ok('add_computer', { level: 'hard', name: 'Hardy' });
  const joined = await ann.next((m) => m.type === 'player_joined' && m.player === hard.result.player, 'player_joined');
  check(joined.computer === 'hard' && joined.name === 'Hardy' && joined.seat === 3, `player_joined ${JSON.stringify(joined)}`);
  await ann.ok('start', { expect_seq: null });
  const started = await ann.next((m) => m.type === 'game_started', 'game_started');
  check(started.order.length === 4, 'four players in the order');
  started.order.forEach((id, i) => {
    const isAnn = id === ann.id;
    check((started.seeds[i] === '') !== isAnn, `seeds[${i}]: "" for a computer only`);
  });
  const { over, stats } = await playToEnd(ann);
  check(over.results.length === 4, 'results of all four');
  check(stats.turns >= 13 && stats.hints >= 13, `ann played ${stats.turns} turns`);
  const scores = over.results.map((r) => r.total);
  check(scores.every((s) => Number.isInteger(s) && s >= 0), `totals ${scores}`);
  ann.close();
}

// A solo game under the bonus_turn variant, without hints (each variant has its own strategy
// table): the client keeps the most frequent face for three rolls, takes the +100 whenever
// `rolled.yahtzee_bonus_pending` says it may, and else scores the allowed box worth most.
async function bonus() {
  const ann = await Player.connect('ann');
  const created = await ann.ok('create_room', createRoom(1, { hints: false, options: { ...OPTIONS, bonus_turn: 'on' } }));
  const lobby = await join(ann, created.result.room, created.result.invite_code);
  check(lobby.state.options.bonus_turn === 'on', 'RoomOptions.bonus_turn');
  await ann.ok('start', { expect_seq: null });
  let turns = 0;
  let taken = 0;
  for (;;) {
    const next = await ann.next((m) => m.type === 'turn_changed' || m.type === 'game_over', 'turn or end');
    if (next.type === 'game_over') break;
    turns += 1;
    let keep = [];
    let event;
    for (let roll = 0; roll < 3; roll += 1) {
      const rolled = await ann.ok('roll', { keep, expect_seq: null });
      event = await ann.next((m) => m.type === 'rolled' && m.seq === rolled.seq, 'rolled');
      if (event.yahtzee_bonus_pending) break;
      keep = mostFrequent(event.dice);
      if (keep.length === 5) break;
    }
    if (event.yahtzee_bonus_pending) {
      const done = await ann.ok('take_bonus', { expect_seq: event.seq });
      const bonusTaken = await ann.next((m) => m.type === 'bonus_taken' && m.seq <= done.seq, 'bonus_taken');
      check(!bonusTaken.automatic && bonusTaken.yahtzee_bonus >= 100, `bonus_taken ${JSON.stringify(bonusTaken)}`);
      taken += 1;
    } else {
      const allowed = event.preview.filter((entry) => entry.allowed);
      const best = allowed.reduce((a, b) => (b.score > a.score ? b : a));
      await ann.ok('score', { box: best.box, expect_seq: event.seq });
    }
  }
  check(turns === 13 + taken, `${turns} turns, ${taken} bonuses taken`);
  ann.close();
}

// The indexes of the dice showing the most frequent face (the highest face on a tie).
function mostFrequent(dice) {
  const counts = [0, 0, 0, 0, 0, 0, 0];
  for (const face of dice) counts[face] += 1;
  let face = 6;
  for (let f = 6; f >= 1; f -= 1) if (counts[f] > counts[face]) face = f;
  return dice.flatMap((d, i) => (d === face ? [i] : []));
}

// The v1.2 error codes a client meets, each where the SPEC says.
async function errors() {
  const ann = await Player.connect('ann');
  const bob = await Player.connect('bob');
  const created = await ann.ok('create_room', createRoom(3, { options: { ...OPTIONS, bonus_turn: 'on' } }));
  const { room, invite_code: invite } = created.result;
  await join(ann, room, invite);
  await join(bob, room, invite);
  await bob.refused('add_computer', { level: 'easy', name: null }, 'not_host');
  await ann.refused('hint', {}, 'wrong_phase');
  await ann.ok('add_computer', { level: 'easy', name: null });
  await ann.ok('start', { expect_seq: null });
  await ann.next((m) => m.type === 'turn_changed', 'turn_changed');
  await ann.refused('take_bonus', { expect_seq: null }, 'must_roll_first');
  const rolled = await ann.ok('roll', { keep: [], expect_seq: null });
  const event = await ann.next((m) => m.type === 'rolled' && m.seq === rolled.seq, 'rolled');
  // the first roll of the game: no 50 in the YAHTZEE box yet, so never a bonus to take
  check(!event.yahtzee_bonus_pending, 'a bonus pending on the first roll');
  await ann.refused('take_bonus', { expect_seq: null }, 'box_not_allowed');
  await ann.refused('add_computer', { level: 'easy', name: null }, 'game_already_started');
  const plain = await bob.ok('create_room', createRoom(1, { hints: false }));
  const carol = await Player.connect('carol');
  await join(carol, plain.result.room, plain.result.invite_code);
  await carol.ok('start', { expect_seq: null });
  await carol.next((m) => m.type === 'turn_changed', 'turn_changed');
  await carol.refused('hint', {}, 'hints_disabled');
  for (const p of [ann, bob, carol]) p.close();
}

// Takes the seat it was given (`rejoin`), sees the extra Yahtzee in the snapshot, takes the +100
// without filling a box (`take_bonus`), and plays the extra turn that follows with the same round.
async function takebonus() {
  const ann = await Player.connect('ann');
  const back = await ann.ok('rejoin', { room: givenRoom, token: givenToken, last_seq: null });
  check(back.result.resumed === false, 'rejoin without last_seq: a snapshot');
  const snapshot = await ann.next((m) => m.type === 'snapshot', 'snapshot');
  const { state } = snapshot;
  check(state.options.bonus_turn === 'on', 'a bonus_turn room');
  check(state.current_player === back.result.player, 'on turn');
  check(state.dice.every((d) => d === state.dice[0]) && state.dice.length === 5, `dice ${state.dice}`);
  const me = state.players.find((p) => p.player === back.result.player);
  check(me.scorecard.yahtzee === 50, 'YAHTZEE box 50');
  const taken = await ann.ok('take_bonus', { expect_seq: snapshot.seq });
  const event = await ann.next((m) => m.type === 'bonus_taken', 'bonus_taken');
  check(event.seq <= taken.seq && event.yahtzee_bonus === 100 && event.automatic === false, `bonus_taken ${JSON.stringify(event)}`);
  check(event.total === me.totals.grand + 100, `total ${event.total} after ${me.totals.grand}`);
  const next = await ann.next((m) => m.type === 'turn_changed', 'turn_changed');
  check(next.player === back.result.player && next.round === state.round, `extra turn: ${JSON.stringify(next)}`);
  const rolled = await ann.ok('roll', { keep: [], expect_seq: next.seq });
  const dice = await ann.next((m) => m.type === 'rolled' && m.seq === rolled.seq, 'rolled');
  check(dice.preview.every((entry) => entry.box !== 'yahtzee'), 'the YAHTZEE box is filled');
  ann.close();
}

const scenarios = { computers, bonus, errors, takebonus };

try {
  check(scenarios[scenario], `unknown scenario ${scenario}`);
  await scenarios[scenario]();
  print({ done: scenario });
  process.exit(0);
} catch (error) {
  process.stderr.write(`${error.stack || error}\n`);
  process.exit(1);
}

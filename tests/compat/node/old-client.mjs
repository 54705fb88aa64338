// An old client, as a client author writes one with the `ws` package: connect, `await` the
// 'open' event, and only then listen for messages. It speaks one earlier version of the
// protocol (the first argument: 1.0 or 1.1), sends only that version's fields and reads only
// that version's fields.
//
//   node old-client.mjs VERSION SCENARIO WS_URL
//
// Every frame it sends or receives is printed on stdout as one JSON line
// ({"dir": "in"|"out", "who": ..., "msg": ...}); the Python test (tests/compat) checks them
// against that version's schema. A failed expectation exits with status 1 and says why.
// SCENARIO: welcome, solo, table, resume, errors.

import { once } from 'node:events';
import { createRequire } from 'node:module';

// `ws` is a test dependency of tests/clients/web (installed by `python3 .ci/dev.py setup`)
const require = createRequire(new URL('../../clients/web/package.json', import.meta.url));
const WebSocket = require('ws');

const [version, scenario, url] = process.argv.slice(2);
const V11 = version === '1.1';
const TIMEOUT_MS = 15000;
let counter = 0;

function fail(why) {
  throw new Error(why);
}

function check(condition, why) {
  if (!condition) fail(why);
}

function print(record) {
  process.stdout.write(`${JSON.stringify(record)}\n`);
}

class Client {
  // The natural order: await 'open', then attach the message handler.
  static async connect(who) {
    const ws = new WebSocket(url, 'yahtzee.v1.json');
    await once(ws, 'open');
    const client = new Client(ws, who);
    client.welcome = await client.take((m) => m.type === 'welcome', 'welcome');
    check(client.messages[0].type === 'welcome', `${who}: the first message is not welcome`);
    check(client.welcome.protocol_version === 1, `${who}: protocol_version`);
    check(client.welcome.encoding === 'json', `${who}: encoding`);
    if (V11) check(client.welcome.protocol_minor >= 1, `${who}: protocol_minor`);
    return client;
  }

  constructor(ws, who) {
    this.ws = ws;
    this.who = who;
    this.messages = [];
    this.taken = new Set();
    this.wake = null;
    this.closeCode = null;
    ws.on('message', (data) => {
      const msg = JSON.parse(data.toString());
      print({ dir: 'in', who, msg });
      this.messages.push(msg);
      if (this.wake) this.wake();
    });
    ws.on('close', (code) => {
      this.closeCode = code;
      if (this.wake) this.wake();
    });
  }

  // The first message not taken yet that `matches`, waiting for it if need be.
  async take(matches, what) {
    const deadline = Date.now() + TIMEOUT_MS;
    for (;;) {
      const index = this.messages.findIndex((m, i) => !this.taken.has(i) && matches(m));
      if (index >= 0) {
        this.taken.add(index);
        return this.messages[index];
      }
      if (this.closeCode !== null) fail(`${this.who}: closed (${this.closeCode}) waiting for ${what}`);
      const left = deadline - Date.now();
      if (left <= 0) {
        const last = JSON.stringify(this.messages.slice(-3));
        fail(`${this.who}: no ${what} within ${TIMEOUT_MS} ms; last: ${last}`);
      }
      let timer;
      await new Promise((resolve) => {
        this.wake = resolve;
        timer = setTimeout(resolve, left);
      });
      clearTimeout(timer);
      this.wake = null;
    }
  }

  send(msg) {
    print({ dir: 'out', who: this.who, msg });
    this.ws.send(JSON.stringify(msg));
  }

  // Send a command; its reply (ack or error).
  async request(type, fields = {}) {
    counter += 1;
    const id = `${this.who}-${counter}`;
    this.send({ type, id, ...fields });
    return this.take((m) => (m.type === 'ack' || m.type === 'error') && m.id === id, `reply to ${type}`);
  }

  async ok(type, fields = {}) {
    const reply = await this.request(type, fields);
    check(reply.type === 'ack', `${this.who}: ${type} answered ${JSON.stringify(reply)}`);
    return reply;
  }

  async refused(type, fields, code) {
    const reply = await this.request(type, fields);
    check(
      reply.type === 'error' && reply.code === code,
      `${this.who}: ${type} should be refused with ${code}: ${JSON.stringify(reply)}`,
    );
    check(typeof reply.retryable === 'boolean', `${this.who}: error without retryable`);
    return reply;
  }

  // Room events (they have a seq) received so far, in order.
  events() {
    return this.messages.filter((m) => m.room !== undefined && typeof m.seq === 'number' && m.type !== 'snapshot');
  }

  close() {
    this.ws.close();
  }
}

// create_room as its version knows it: 1.0 has no create_key, computers, hints, variants.
function createRoom(seats) {
  return {
    seats,
    public: false,
    turn_seconds: 0,
    options: { rules: 'yahtzee', extra_yahtzees: 'on', joker: 'forced', first_player: 'seat_order' },
  };
}

function joinFields(room, invite, name) {
  const fields = { room, name, invite_code: invite, join_key: null };
  if (V11) fields.seed = `${name}-seed-${version}`;
  return fields;
}

async function host(name, seats) {
  const client = await Client.connect(name);
  await client.ok('hello', { client: `compat-${version}` });
  const created = await client.ok('create_room', createRoom(seats));
  const { room, invite_code: invite } = created.result;
  check(typeof room === 'string' && typeof invite === 'string', 'create_room result');
  await joinAs(client, room, invite, name);
  return { client, room, invite };
}

async function joinAs(client, room, invite, name) {
  const joined = await client.ok('join', joinFields(room, invite, name));
  check(typeof joined.result.token === 'string', `${name}: no token`);
  client.player = joined.result.player;
  client.token = joined.result.token;
  const snapshot = await client.take((m) => m.type === 'snapshot', 'snapshot');
  check(snapshot.seq === joined.seq, `${name}: snapshot at ${snapshot.seq}, ack at ${joined.seq}`);
  client.room = room;
  return joined;
}

// Checks that a client's room events follow one another without a gap from `after` on.
function gapFree(client, after) {
  let seq = after;
  for (const event of client.events()) {
    if (event.seq <= after) continue;
    check(event.seq === seq + 1, `${client.who}: seq ${event.seq} after ${seq}`);
    seq = event.seq;
  }
  return seq;
}

// Plays one turn of `client`: one roll, then the first box the preview allows.
async function playTurn(client) {
  const rolled = await client.ok('roll', { keep: [], expect_seq: null });
  const event = await client.take((m) => m.type === 'rolled' && m.seq === rolled.seq, 'rolled');
  check(event.dice.length === 5 && event.rolls_left === 2, `${client.who}: rolled ${JSON.stringify(event)}`);
  const box = event.preview.find((entry) => entry.allowed);
  check(box, `${client.who}: no box allowed`);
  await client.ok('score', { box: box.box, expect_seq: rolled.seq });
}

// Plays until game_over: each client plays when a turn_changed names its player.
async function playToEnd(players, watchers = []) {
  const everyone = [...players, ...watchers];
  const byPlayer = new Map(players.map((c) => [c.player, c]));
  const first = players[0];
  for (;;) {
    const next = await first.take((m) => m.type === 'turn_changed' || m.type === 'game_over', 'turn or end');
    if (next.type === 'game_over') {
      check(Array.isArray(next.results) && next.results.length === players.length, 'results');
      if (V11) check(typeof next.server_seed === 'string', 'game_over.server_seed (1.1)');
      for (const other of everyone.slice(1)) await other.take((m) => m.type === 'game_over', 'game_over');
      return next;
    }
    const mover = byPlayer.get(next.player);
    check(mover, `turn of unknown player ${next.player}`);
    if (mover !== first) await mover.take((m) => m.type === 'turn_changed' && m.seq === next.seq, 'turn');
    await playTurn(mover);
  }
}

async function solo() {
  const { client } = await host('ann', 1);
  const after = client.messages.find((m) => m.type === 'snapshot').seq;
  const started = await client.ok('start', { expect_seq: null });
  const game = await client.take((m) => m.type === 'game_started', 'game_started');
  check(game.order.length === 1 && game.order[0] === client.player, 'order');
  if (V11) check(typeof game.dice_commitment === 'string', 'game_started.dice_commitment (1.1)');
  check(started.seq >= game.seq, 'start ack covers its events');
  const over = await playToEnd([client]);
  check(over.results[0].player === client.player, 'results[0]');
  gapFree(client, after);
  client.close();
}

async function table() {
  const { client: ann, room, invite } = await host('ann', 2);
  const bob = await Client.connect('bob');
  await joinAs(bob, room, invite, 'bob');
  const carol = await Client.connect('carol');
  const watching = await carol.ok('spectate', { room, invite_code: invite, last_seq: null });
  const snapshot = await carol.take((m) => m.type === 'snapshot', 'snapshot');
  check(snapshot.seq === watching.seq, 'spectate: snapshot at the ack seq');
  check(snapshot.state.players.length === 2, 'spectator sees two players');
  await ann.ok('start', { expect_seq: null });
  await playToEnd([ann, bob], [carol]);
  const annAfter = ann.messages.find((m) => m.type === 'snapshot').seq;
  const bobAfter = bob.messages.find((m) => m.type === 'snapshot').seq;
  const last = gapFree(ann, annAfter);
  check(gapFree(bob, bobAfter) === last, 'bob saw the same last seq');
  check(gapFree(carol, snapshot.seq) === last, 'carol saw the same last seq');
  // everyone saw the same events (from the spectator's snapshot on), in the same order
  const from = (c) => JSON.stringify(c.events().filter((e) => e.seq > snapshot.seq));
  check(from(ann) === from(carol) && from(bob) === from(carol), 'players and spectator disagree');
  for (const c of [ann, bob, carol]) c.close();
}

async function resume() {
  const { client: ann, room, invite } = await host('ann', 2);
  let bob = await Client.connect('bob');
  await joinAs(bob, room, invite, 'bob');
  const { token } = bob;
  await ann.ok('start', { expect_seq: null });
  const turn = await ann.take((m) => m.type === 'turn_changed', 'turn_changed');
  check(turn.player === ann.player, 'seat_order: ann starts');
  await bob.take((m) => m.type === 'turn_changed' && m.seq === turn.seq, 'turn_changed');
  const lastSeq = gapFree(bob, bob.messages.find((m) => m.type === 'snapshot').seq);
  bob.ws.terminate(); // the network drops
  await ann.take((m) => m.type === 'player_disconnected', 'player_disconnected');
  await playTurn(ann); // bob misses it
  const player = bob.player;
  bob = await Client.connect('bob');
  const rejoined = await bob.ok('rejoin', { room, token, last_seq: lastSeq });
  // 1.0 allowed the ack before or after the events it covers: wait for the last one
  await bob.take((m) => m.type !== 'snapshot' && m.room === room && m.seq === rejoined.seq, 'missed events');
  check(!bob.messages.some((m) => m.type === 'snapshot'), 'a snapshot instead of the missed events');
  const missed = bob.events();
  check(missed.length > 0 && missed[0].seq === lastSeq + 1, `resume starts at ${missed[0]?.seq}`);
  check(missed.some((m) => m.type === 'scored'), 'the missed score');
  bob.player = player;
  bob.room = room;
  await playToEnd([ann, bob]);
  gapFree(bob, lastSeq);
  for (const c of [ann, bob]) c.close();
}

async function errors() {
  const { client: ann, room, invite } = await host('ann', 2);
  const bob = await Client.connect('bob');
  await bob.refused('join', joinFields('no-such-room', null, 'bob'), 'room_not_found');
  await joinAs(bob, room, invite, 'bob');
  await bob.refused('start', { expect_seq: null }, 'not_host');
  await ann.ok('start', { expect_seq: null });
  await bob.take((m) => m.type === 'turn_changed', 'turn_changed');
  await bob.refused('roll', { keep: [], expect_seq: null }, 'not_your_turn');
  await ann.refused('score', { box: 'chance', expect_seq: null }, 'must_roll_first');
  const stale = await ann.refused('roll', { keep: [], expect_seq: 1 }, 'stale_state');
  check(typeof stale.seq === 'number' && stale.seq > 1, 'stale_state tells the current seq');
  const unknown = await ann.request('no_such_command', {});
  check(unknown.type === 'error' && unknown.code === 'unknown_type', 'unknown type: unknown_type');
  const pong = await (async () => {
    counter += 1;
    ann.send({ type: 'ping', id: `ann-${counter}` });
    return ann.take((m) => m.type === 'pong' && m.id === `ann-${counter}`, 'pong');
  })();
  check(pong.type === 'pong', 'pong');
  for (const c of [ann, bob]) c.close();
}

const scenarios = { welcome: async () => (await Client.connect('ann')).close(), solo, table, resume, errors };

try {
  check(version === '1.0' || version === '1.1', `unknown version ${version}`);
  check(scenarios[scenario], `unknown scenario ${scenario}`);
  await scenarios[scenario]();
  print({ done: scenario });
  process.exit(0);
} catch (error) {
  process.stderr.write(`${error.stack || error}\n`);
  process.exit(1);
}

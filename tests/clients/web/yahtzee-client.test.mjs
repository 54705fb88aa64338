// clients/web/yahtzee-client.js and room-model.js against a real server, under Node's test
// runner. Started by tests/clients/test_clients_js.py with YAHTZEE_TEST_HTTP set to the
// server's base URL. Node 20 has no global WebSocket: the `ws` package stands in for it.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import WebSocket from "ws";

import {
  CommandError, SUBPROTOCOL, YahtzeeClient, fetchEventLog, fetchRoom, fetchRooms,
} from "../../../clients/web/yahtzee-client.js";
import {
  applyEvent, fromSnapshot, historyOf, initialModel, standings,
} from "../../../clients/web/room-model.js";

const HTTP = process.env.YAHTZEE_TEST_HTTP;
const WS = HTTP && HTTP.replace(/^http/, "ws") + "/ws";
const clients = [];

before(() => assert.ok(HTTP, "YAHTZEE_TEST_HTTP must name the server under test"));
after(() => { for (const c of clients) c.close(); });

async function connected() {
  const client = new YahtzeeClient(WS, { WebSocket });
  clients.push(client);
  await client.connect();
  return client;
}

// A client-side model kept by the events, as a page would.
function follow(client) {
  const seen = { model: null, seqs: [] };
  client.on("snapshot", (s) => { seen.model = fromSnapshot(s); });
  client.on("event", (ev) => {
    seen.seqs.push(ev.seq);
    if (seen.model) applyEvent(seen.model, ev);
  });
  return seen;
}

function until(predicate, what) {
  return new Promise((resolve, reject) => {
    const deadline = Date.now() + 15000;
    const check = () => {
      if (predicate()) return resolve();
      if (Date.now() > deadline) return reject(new Error(`timed out waiting for ${what}`));
      setImmediate(check);
    };
    check();
  });
}

// One turn: roll once, then score the best allowed box.
async function playTurn(client, seen) {
  await client.roll();
  assert.equal(seen.model.phase, "rolled", "the roll's events are in before roll() resolves");
  const best = seen.model.preview.filter((e) => e.allowed)
    .reduce((a, b) => (b.points > a.points ? b : a));
  await client.score(best.box);
  assert.equal(seen.model.players[0].scorecard[best.box], best.points);
}

test("the heartbeat pings only an idle connection and drops a silent one", (t) => {
  t.mock.timers.enable({ apis: ["setInterval", "Date"] });
  const client = new YahtzeeClient(WS, { WebSocket });
  const sent = [];
  let dropped = 0;
  client._send = (message) => sent.push(message.type);
  client.dropConnection = () => { dropped += 1; };
  const arrived = () => { client._lastMessageAt = Date.now(); };  // what a frame does
  try {
    client._startHeartbeat(1);  // looks every 500 ms (each tick below ends on a look or an arrival)
    t.mock.timers.tick(500);  // silent 500 ms: not idle
    t.mock.timers.tick(300); arrived();
    t.mock.timers.tick(200);  // at 1000: silent 200 ms
    t.mock.timers.tick(500);  // at 1500: silent 700 ms
    assert.deepEqual(sent, []);
    t.mock.timers.tick(500);  // at 2000: silent 1200 ms, idle
    assert.deepEqual(sent, ["ping"]);
    arrived();  // its pong
    for (let i = 0; i < 2; i++) { t.mock.timers.tick(400); arrived(); t.mock.timers.tick(100); }
    assert.deepEqual(sent, ["ping"]);  // frames keep arriving: no ping
    for (let i = 0; i < 3; i++) t.mock.timers.tick(500);  // at 3500, 4000, 4500: 600, 1100, 1600
    assert.deepEqual(sent, ["ping", "ping", "ping"]);
    assert.equal(dropped, 0);
    t.mock.timers.tick(500);  // 2.1 s of silence: dead
    assert.equal(dropped, 1);
  } finally {
    client._stopHeartbeat();
  }
});

test("negotiates the JSON subprotocol and says hello", async () => {
  const client = await connected();
  assert.equal(client.state, "connected");
  assert.equal(SUBPROTOCOL, "yahtzee.v1.json");
  assert.ok(client.welcome.protocol_version);
  assert.ok(client.welcome.heartbeat_seconds > 0);
});

test("a solo game: commands resolve after their events; the model matches the server", async () => {
  const client = await connected();
  const seen = follow(client);
  const created = await client.createRoom({ seats: 1, public: true,
    options: { first_player: "seat_order" } });
  const joined = await client.join(created.room, "Node Ann");
  assert.equal(client.session.player, joined.player);
  assert.ok(joined.token.length > 10);
  await client.start();
  for (let turn = 0; turn < 13; turn++) await playTurn(client, seen);
  await until(() => seen.model.status === "finished", "game over");

  // Every event once, in order, no gaps.
  const first = seen.seqs[0];
  assert.deepEqual(seen.seqs, seen.seqs.map((_, i) => first + i));
  // The folded model agrees with a fresh snapshot from the server.
  const fresh = fromSnapshot(await fetchRoom(HTTP, created.room));
  assert.deepEqual(seen.model.players.map((p) => [p.scorecard, p.totals]),
    fresh.players.map((p) => [p.scorecard, p.totals]));
  assert.equal(standings(seen.model)[0].total, fresh.players[0].totals.grand);

  // The whole log, fetched in small pages, replays to the same final state from nothing.
  const log = await fetchEventLog(HTTP, created.room, { limit: 7 });
  assert.deepEqual(log.map((e) => e.seq), log.map((_, i) => i + 1));
  const replayed = initialModel(await fetchRoom(HTTP, created.room));
  for (const ev of log) applyEvent(replayed, ev);
  assert.deepEqual(replayed.players.map((p) => p.totals), fresh.players.map((p) => p.totals));
  assert.equal(replayed.status, "finished");
  const lines = historyOf(initialModel(await fetchRoom(HTTP, created.room)), log);
  assert.equal(lines[0].text, "Node Ann sat down");
  assert.match(lines.at(-1).text, /^Game over: Node Ann won$/);
  assert.equal(lines.filter((l) => l.text.startsWith("Node Ann scored")).length, 13);
});

test("refusals reject with a typed CommandError", async () => {
  const client = await connected();
  const created = await client.createRoom({ seats: 2 });
  await client.join(created.room, "Node Bea");
  await assert.rejects(client.roll(), (err) => err instanceof CommandError &&
    err.code === "game_not_started" && typeof err.message === "string");
  const other = await connected();
  await assert.rejects(other.join("nosuchroom", "X"),
    (err) => err instanceof CommandError && err.code === "room_not_found");
});

test("play commands carry expect_seq: a stale view is refused, not applied", async () => {
  const client = await connected();
  const seen = follow(client);
  const created = await client.createRoom({ seats: 1, options: { first_player: "seat_order" } });
  await client.join(created.room, "Node Cy");
  await client.start();
  await client.roll();
  const before = seen.model.rollNumber;
  await assert.rejects(client.command("roll", { keep: [], expect_seq: client.seq - 1 }),
    (err) => err.code === "stale_state");
  assert.equal(seen.model.rollNumber, before, "the stale roll did nothing");
  await client.roll();  // with the current seq it goes through
  assert.equal(seen.model.rollNumber, before + 1);
});

test("a dropped connection resumes from the last seq; a spectator sees the same", async () => {
  const player = await connected();
  const seen = follow(player);
  const created = await player.createRoom({ seats: 1, public: false,
    options: { first_player: "seat_order" } });
  await player.join(created.room, "Node Dee", { inviteCode: created.invite_code });
  const watcher = await connected();
  const watched = follow(watcher);
  await watcher.spectate(created.room, { inviteCode: created.invite_code });
  // The spectator count is a room event too: start from the view that includes it.
  await until(() => seen.model.spectators === 1, "the player to see the spectator");
  await player.start();
  await playTurn(player, seen);

  const states = [];
  player.on("state", (s) => states.push(s));
  player.dropConnection();
  await playTurn(player, seen);  // queued until the resume, then sent
  assert.deepEqual(states.slice(0, 2), ["reconnecting", "connected"]);
  const first = seen.seqs[0];
  assert.deepEqual(seen.seqs, seen.seqs.map((_, i) => first + i), "no gap, no duplicate");
  await until(() => watcher.seq === player.seq, "the spectator to catch up");
  assert.deepEqual(watched.model.players, seen.model.players);

  // The private room's log needs its invite code (sent as a header).
  const log = await fetchEventLog(HTTP, created.room, { inviteCode: created.invite_code,
    limit: 3 });
  assert.deepEqual(log.map((e) => e.seq), log.map((_, i) => i + 1));
  assert.ok(log.length >= player.seq - 1);
  await assert.rejects(fetchEventLog(HTTP, created.room), (err) => err instanceof CommandError &&
    err.code === "invite_required");
});

test("a seat taken back with its token ends the old connection (close 1000)", async () => {
  const first = await connected();
  const created = await first.createRoom({ seats: 2 });
  const joined = await first.join(created.room, "Node Eve");
  const ended = new Promise((resolve) => first.on("ended", resolve));

  const second = await connected();  // a restarted browser with the token from storage
  const result = await second.rejoin(created.room, joined.token);
  assert.equal(result.player, joined.player);
  assert.equal((await ended).code, 1000);
  assert.equal(first.state, "closed");
  await assert.rejects(first.start(), (err) => err.code === "closed");
  const listed = await fetchRooms(HTTP);
  assert.ok(listed.some((r) => r.room === created.room));
});

test("fetchEventLog follows next_after pages and sends the invite code as a header", async () => {
  // The paginated answer of the HTTP API (GET /rooms/{id}/events?after=&limit=), served by a
  // stand-in fetch until the server pages its log; the unpaginated shape is covered above.
  const log = Array.from({ length: 5 }, (_, i) => ({ type: "held", room: "r", seq: i + 1 }));
  const asked = [];
  const pagedFetch = async (url, init) => {
    asked.push({ url, headers: init.headers });
    const params = new URL(url).searchParams;
    const after = Number(params.get("after"));
    const limit = Number(params.get("limit"));
    const events = log.filter((e) => e.seq > after).slice(0, limit);
    const last = events.at(-1);
    const nextAfter = last && last.seq < log.length ? last.seq : null;
    return new Response(JSON.stringify({ room: "r", events, next_after: nextAfter }));
  };
  const events = await fetchEventLog("http://yz.test/", "r",
    { limit: 2, inviteCode: "SECRET", fetch: pagedFetch });
  assert.deepEqual(events.map((e) => e.seq), [1, 2, 3, 4, 5]);
  assert.deepEqual(asked.map((a) => new URL(a.url).search),
    ["?after=0&limit=2", "?after=2&limit=2", "?after=4&limit=2"]);
  for (const { url, headers } of asked) {
    assert.equal(headers["X-Invite-Code"], "SECRET");
    assert.ok(!url.includes("SECRET"), "the invite code never goes into a URL");
  }
});

// Protocol 1.3 in clients/web/yahtzee-client.js: remembered players (createGuest, the player
// token presented in hello, profile, history, archived game) and the rematch. Started by
// tests/clients/test_clients_js.py: YAHTZEE_TEST_HTTP names a server without a database (the
// session's), YAHTZEE_TEST_DB_HTTP one with a real PostgreSQL (only for this file's run with
// it; without it those tests are skipped).
import assert from "node:assert/strict";
import { after, test } from "node:test";

import WebSocket from "ws";

import {
  CommandError, YahtzeeClient, createGuest, fetchGame, fetchMe, fetchPlayer, fetchPlayerGames,
  fetchTurns, watchTurns,
} from "../../../clients/web/yahtzee-client.js";
import { applyEvent, describeEvent, fromSnapshot } from "../../../clients/web/room-model.js";

const HTTP = process.env.YAHTZEE_TEST_HTTP;
const DB_HTTP = process.env.YAHTZEE_TEST_DB_HTTP;
const wsOf = (http) => http.replace(/^http/, "ws") + "/ws";
const clients = [];
after(() => { for (const c of clients) c.close(); });

function newClient(http, options = {}) {
  const client = new YahtzeeClient(wsOf(http), { WebSocket, ...options });
  clients.push(client);
  return client;
}

function follow(client) {
  const seen = { model: null };
  client.on("snapshot", (s) => { seen.model = fromSnapshot(s); });
  client.on("event", (ev) => { if (seen.model && seen.model.room === ev.room) applyEvent(seen.model, ev); });
  return seen;
}

async function playSolo(client, seen, name) {
  const created = await client.createRoom({ seats: 1, options: { first_player: "seat_order" } });
  await client.join(created.room, name);
  await client.start();
  for (let turn = 0; turn < 13; turn++) {
    await client.roll();
    const best = seen.model.preview.filter((e) => e.allowed)
      .reduce((a, b) => (b.points > a.points ? b : a));
    await client.score(best.box);
  }
  assert.equal(seen.model.status, "finished");
  return created.room;
}

const guestName = (prefix) => `${prefix} ${Math.floor(Math.random() * 1e6)}`;

async function archived(game, token) {
  const deadline = Date.now() + 30000;
  for (;;) {
    try {
      return await fetchGame(DB_HTTP, game, { token });
    } catch (err) {
      if (err.code !== "game_not_found" || Date.now() > deadline) throw err;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));  // polling a bounded wait
  }
}

const withDb = { skip: DB_HTTP ? false : "YAHTZEE_TEST_DB_HTTP not set (no server with a database)" };

test("a guest's token in hello links its seat; profile, history and archived game", withDb, async () => {
  const name = guestName("Node Guest");
  const guest = await createGuest(DB_HTTP, name);
  assert.equal(guest.name, name);
  assert.match(guest.token, /^ypt_/);
  assert.deepEqual(await fetchMe(DB_HTTP, guest.token), { player: guest.player, name,
    linked: false });

  const client = newClient(DB_HTTP, { playerToken: guest.token });
  const identities = [];
  client.on("identity", (who) => identities.push(who));
  const seen = follow(client);
  await client.connect();
  assert.deepEqual(client.remembered, { player: guest.player, name });
  assert.deepEqual(identities, [{ player: guest.player, name }]);
  const room = await playSolo(client, seen, "Seat Of Guest");

  const game = await archived(room, guest.token);
  assert.equal(game.game, `${room}.1`);
  assert.equal(game.players[0].identity, guest.player);
  const profile = await fetchPlayer(DB_HTTP, guest.player);
  assert.equal(profile.games, 1);
  assert.equal(profile.best_score, game.players[0].total);
  const history = await fetchPlayerGames(DB_HTTP, guest.player, { limit: 5 });
  assert.deepEqual(history.games.map((g) => g.room), [room]);
  assert.equal(history.next_before, null);
});

test("a token given after connecting is presented at once", withDb, async () => {
  const client = newClient(DB_HTTP);
  await client.connect();
  assert.equal(client.remembered, null);
  const guest = await createGuest(DB_HTTP, guestName("Late Token"));
  assert.deepEqual(await client.setPlayerToken(guest.token),
    { player: guest.player, name: guest.name });
  // ... and again on the next connection
  const again = new Promise((resolve) => client.on("identity", resolve));
  client.dropConnection();
  assert.deepEqual(await again, { player: guest.player, name: guest.name });
});

test("a refused token is dropped: the client goes on anonymously", withDb, async () => {
  const client = newClient(DB_HTTP, { playerToken: "ypt_" + "x".repeat(43) });
  const refused = new Promise((resolve) => client.on("identity-refused", resolve));
  await client.connect();
  const err = await refused;
  assert.ok(err instanceof CommandError);
  assert.equal(err.code, "bad_player_token");
  assert.equal(client.playerToken, null);
  const created = await client.createRoom({ seats: 2 });
  const joined = await client.join(created.room, "Anon After");
  assert.ok(joined.player);
  await assert.rejects(createGuest(DB_HTTP, "x"), (e) => e.code === "invalid_name");
});

test("without a database: no guest (503), a stored token is refused, play goes on", async () => {
  await assert.rejects(createGuest(HTTP, "Nobody Here"),
    (err) => err instanceof CommandError && err.code === "unavailable");
  const client = newClient(HTTP, { playerToken: "ypt_" + "y".repeat(43) });
  const refused = new Promise((resolve) => client.on("identity-refused", resolve));
  await client.connect();
  assert.equal((await refused).code, "unsupported");
  const created = await client.createRoom({ seats: 2 });
  assert.ok((await client.join(created.room, "Plays Anyway")).token);
});

test("rematch: the offer seats the player in the new room, which starts when full", async () => {
  const client = newClient(HTTP);
  const seen = follow(client);
  await client.connect();
  const room = await playSolo(client, seen, "Node Rematcher");
  const offer = await client.rematch();
  assert.notEqual(offer.room, room);
  assert.ok(offer.token);
  assert.equal(client.session.room, offer.room);
  assert.equal(client.session.player, offer.player);
  // one seat, taken by the offer: auto_start started the game
  assert.equal(seen.model.room, offer.room);
  assert.equal(seen.model.status, "playing");
});

test("the room model keeps the rematch: from the event, or the snapshot's rematch_room", () => {
  const state = { id: "r1", status: "finished", public: false, max_seats: 2, turn_seconds: 0,
    options: { rules: "yahtzee" }, host: "p1", players: [{ player: "p1", name: "Ann", seat: 0,
      connected: true, forfeited: false, scorecard: {}, totals: {} }], phase: "finished",
    order: ["p1"], current_player: null, round: 13, dice: [], held: [], roll_number: 0,
    rolls_left: 0, preview: [], turn_deadline_ms: null, spectators: 0, auto_start: true,
    computer_delay_ms: 250 };
  const model = fromSnapshot({ type: "snapshot", room: "r1", seq: 9, state });
  assert.deepEqual([model.rematchRoom, model.autoStart, model.computerDelayMs], [null, true, 250]);
  const ev = { type: "rematch_offered", room: "r1", seq: 10, player: "p1", rematch_room: "r2",
    invite_code: "c0de" };
  assert.equal(describeEvent(model, ev), "Ann offers a rematch");
  applyEvent(model, ev);
  assert.deepEqual([model.rematchRoom, model.rematchBy, model.rematchInvite], ["r2", "p1", "c0de"]);
  const late = fromSnapshot({ type: "snapshot", room: "r1", seq: 10,
    state: { ...state, rematch_room: "r2" } });
  assert.deepEqual([late.rematchRoom, late.rematchBy], ["r2", null]);
});

test("v1.4: a correspondence room and the player's own turn list", withDb, async () => {
  const ann = await createGuest(DB_HTTP, guestName("Node Ann"));
  const bob = await createGuest(DB_HTTP, guestName("Node Bob"));
  const a = newClient(DB_HTTP, { playerToken: ann.token });
  const b = newClient(DB_HTTP, { playerToken: bob.token });
  await a.connect();
  await b.connect();
  const created = await a.createRoom({ seats: 2, options: { first_player: "seat_order" },
    correspondence: { seconds_per_move: 7200 } });
  await a.join(created.room, "Ann");
  await b.join(created.room, "Bob");
  await a.start();
  let mine;
  const deadline = Date.now() + 30000;
  for (;;) {  // the list is written just after the start's commit
    mine = await fetchTurns(DB_HTTP, ann.player, ann.token);
    if (mine.turns.length || Date.now() > deadline) break;
    await new Promise((resolve) => setTimeout(resolve, 50));  // polling a bounded wait
  }
  assert.deepEqual(mine.turns.map((t) => [t.room, t.my_turn, t.on_turn]),
    [[created.room, true, "Ann"]]);
  assert.ok(mine.turns[0].deadline_ms - mine.server_time_ms <= 7200 * 1000);
  const theirs = await fetchTurns(DB_HTTP, bob.player, bob.token);
  assert.deepEqual(theirs.games.map((t) => t.room), [created.room]);
  await assert.rejects(fetchTurns(DB_HTTP, bob.player, ann.token),
    (err) => err.code === "player_not_found");
});

/** The lists `watchTurns` hands over, and a promise of the first one that satisfies a test. */
function turnLists() {
  const lists = [];
  const waiting = [];
  return {
    lists,
    onTurns(body) {
      lists.push(body);
      for (const w of waiting.splice(0)) if (!w.check(body)) waiting.push(w); else w.resolve(body);
    },
    next(check) {
      const found = lists.find(check);
      return found ? Promise.resolve(found) : new Promise((resolve) => waiting.push({ check, resolve }));
    },
  };
}

test("v1.4: watchTurns hears the turn list at once and when the turn becomes mine", withDb, async () => {
  const ann = await createGuest(DB_HTTP, guestName("Watch Ann"));
  const bob = await createGuest(DB_HTTP, guestName("Watch Bob"));
  const a = newClient(DB_HTTP, { playerToken: ann.token });
  const b = newClient(DB_HTTP, { playerToken: bob.token });
  const seen = follow(a);
  await a.connect();
  await b.connect();
  const created = await a.createRoom({ seats: 2, options: { first_player: "seat_order" },
    correspondence: { seconds_per_move: 7200 } });
  await a.join(created.room, "Ann");
  await b.join(created.room, "Bob");
  await a.start();
  const heard = turnLists();
  const errors = [];
  const watch = watchTurns(bob.token, heard.onTurns,
    { base: DB_HTTP, onError: (err) => errors.push(err) });
  try {
    const waiting = await heard.next((body) => body.games.length === 1);
    assert.deepEqual(waiting.games.map((g) => [g.room, g.on_turn]), [[created.room, "Ann"]]);
    assert.equal(waiting.player, bob.player);
    await a.roll();
    const best = seen.model.preview.filter((e) => e.allowed)
      .reduce((x, y) => (y.points > x.points ? y : x));
    await a.score(best.box);  // the turn becomes Bob's
    const mine = await heard.next((body) => body.turns.length === 1);
    assert.deepEqual(mine.turns.map((t) => [t.room, t.my_turn, t.on_turn]),
      [[created.room, true, "Bob"]]);
    const route = await fetchTurns(DB_HTTP, bob.player, bob.token);
    assert.deepEqual(mine.turns, route.turns);  // the same list as GET /players/{id}/turns
    assert.deepEqual(errors, []);
  } finally {
    watch.close();
    await watch.closed;
  }
});

test("v1.4: watchTurns stops for good on a refused token", withDb, async () => {
  const errors = [];
  const watch = watchTurns("ypt_not-a-real-token", () => assert.fail("no list for a bad token"),
    { base: DB_HTTP, onError: (err) => errors.push(err) });
  await watch.closed;  // settles by itself: no reconnection after a 401
  assert.deepEqual(errors.map((err) => err.code), ["bad_player_token"]);
});

test("v1.4: watchTurns parses an event stream split anywhere, with CRLF and comments", async () => {
  const text = "retry: 10\r\n\r\n: keep-alive\n\nevent: rooms\ndata: {\"rooms\":[]}\n\n" +
    "event: turns\r\ndata: {\"turns\":[],\"games\":[1]}\r\n\r\n";
  const bytes = new TextEncoder().encode(text);
  const requests = [];
  const fakeFetch = async (url, init) => {
    requests.push([url, init.headers.Authorization]);
    // One byte per chunk: every line, and a UTF-8 sequence, may arrive in pieces.
    const stream = new ReadableStream({
      start(controller) {
        for (const byte of bytes) controller.enqueue(new Uint8Array([byte]));
        controller.close();
      },
    });
    return new Response(stream, { status: 200, headers: { "Content-Type": "text/event-stream" } });
  };
  const heard = turnLists();
  const watch = watchTurns("ypt_secret", heard.onTurns, { base: "http://x/", fetch: fakeFetch });
  await heard.next(() => true);
  // The stream ended cleanly: it reconnects after the server's retry (10 ms) and hears it again.
  await heard.next(() => heard.lists.length === 2);
  watch.close();
  await watch.closed;
  assert.deepEqual(heard.lists[0], { turns: [], games: [1] });
  assert.deepEqual(requests.slice(0, 2), [["http://x/lobby", "Bearer ypt_secret"],
    ["http://x/lobby", "Bearer ypt_secret"]]);  // the token in the header, never the URL
});

test("quick play (v1.4): two guests are matched and seated; a cancel ends the wait", withDb, async () => {
  const [ann, bob] = [newClient(DB_HTTP), newClient(DB_HTTP)];
  for (const [client, prefix] of [[ann, "Js Quick Ann"], [bob, "Js Quick Bob"]]) {
    const guest = await createGuest(DB_HTTP, guestName(prefix));
    await client.connect();
    await client.setPlayerToken(guest.token);
  }
  const queued = new Promise((resolve) => ann.on("quick-play-queued", resolve));
  const [a, b] = await Promise.all([
    ann.quickPlay({ seats: 2, computers: false }), bob.quickPlay({ seats: 2, computers: false }),
  ]);
  assert.equal((await queued).computers_after_ms, null);
  assert.equal(a.room, b.room);
  assert.deepEqual(a.computers, []);
  assert.equal(ann.session.room, a.room);  // rejoined: at the table
  assert.equal(ann.session.player, a.player);

  const carl = newClient(DB_HTTP);
  await carl.connect();
  await carl.setPlayerToken((await createGuest(DB_HTTP, guestName("Js Quick Carl"))).token);
  const waiting = carl.quickPlay({ seats: 4, computers: false });
  await new Promise((resolve) => carl.on("quick-play-queued", resolve));
  await carl.cancelQuickPlay();
  await assert.rejects(waiting, (err) => err instanceof CommandError && err.code === "cancelled");

  const anonymous = newClient(DB_HTTP);
  await anonymous.connect();
  await assert.rejects(anonymous.quickPlay({ seats: 2 }), (err) => err.code === "identity_required");
});

// Protocol 1.2 in the web client, without a server: room-model.js folds computer seats, the
// hints flag and bonus_taken; yahtzee-client.js builds take_bonus, add_computer,
// remove_computer and hint (resent with its id while the server answers `unavailable`) and
// fetchAnalysis asks for the analysis with the invite code in a header. A scripted fake
// WebSocket stands in for the server.
import assert from "node:assert/strict";
import { test } from "node:test";

import { CommandError, YahtzeeClient, fetchAnalysis } from "../../../clients/web/yahtzee-client.js";
import {
  applyEvent, canTakeBonus, describeEvent, fromSnapshot,
} from "../../../clients/web/room-model.js";

const ROOM = "r-Bots7";
const TOTALS = { upper: 0, upper_bonus: 0, lower: 0, yahtzee_bonus: 0, grand: 0 };

function lobby(extra = {}) {
  return {
    type: "snapshot", room: ROOM, seq: 0,
    state: {
      id: ROOM, status: "lobby", public: true, max_seats: 3, turn_seconds: 0,
      options: { rules: "yahtzee", extra_yahtzees: "on", joker: "forced",
        first_player: "seat_order", upper_first: "off", bonus_turn: "on" },
      host: null, players: [], phase: "lobby", order: [], current_player: null, round: 0,
      dice: [], held: [], roll_number: 0, rolls_left: 0, preview: [], turn_deadline_ms: null,
      spectators: 0, joker: false, hints: true, ...extra,
    },
  };
}

function fiveFours(seq) {
  return { type: "rolled", room: ROOM, seq, player: "p-ann", dice: [4, 4, 4, 4, 4],
    roll_number: 1, rolls_left: 2, held: [], preview: [], yahtzee_bonus_pending: true,
    joker: true };
}

// The events of a bonus_turn game up to Ann's second five-of-a-kind (seq 1..10).
function gameUntilSecondYahtzee() {
  return [
    { type: "player_joined", room: ROOM, seq: 1, player: "c-ada", name: "Ada", seat: 0,
      computer: "medium" },
    { type: "player_joined", room: ROOM, seq: 2, player: "p-ann", name: "Ann", seat: 1 },
    { type: "host_changed", room: ROOM, seq: 3, player: "p-ann" },
    { type: "game_started", room: ROOM, seq: 4, order: ["p-ann", "c-ada"],
      first_player: "seat_order" },
    { type: "turn_changed", room: ROOM, seq: 5, player: "p-ann", round: 1, deadline_ms: null },
    fiveFours(6),
    { type: "scored", room: ROOM, seq: 7, player: "p-ann", box: "yahtzee", points: 50,
      upper_bonus: 0, yahtzee_bonus: 0, joker: false, automatic: false, total: 50 },
    { type: "turn_changed", room: ROOM, seq: 8, player: "c-ada", round: 1, deadline_ms: null },
    { type: "turn_changed", room: ROOM, seq: 9, player: "p-ann", round: 2, deadline_ms: null },
    fiveFours(10),
  ];
}

test("room model: computers keep their level; hints comes from the snapshot", () => {
  const model = fromSnapshot(lobby());
  assert.equal(model.hints, true);
  for (const ev of gameUntilSecondYahtzee().slice(0, 2)) applyEvent(model, ev);
  assert.deepEqual(model.players.map((p) => [p.name, p.computer]),
    [["Ada", "medium"], ["Ann", null]]);
  const older = fromSnapshot(lobby({ hints: undefined }));
  assert.equal(older.hints, null, "an older server sends no hints flag");
  const seated = fromSnapshot(lobby({ players: [{ player: "c-ada", name: "Ada", seat: 0,
    connected: true, forfeited: false, scorecard: {}, totals: TOTALS, computer: "hard" }] }));
  assert.equal(seated.players[0].computer, "hard");
  assert.equal(describeEvent(model, gameUntilSecondYahtzee()[0]), "Ada sat down (computer, medium)");
});

test("room model: bonus_taken updates the totals and ends the turn like scored", () => {
  const model = fromSnapshot(lobby());
  for (const ev of gameUntilSecondYahtzee()) applyEvent(model, ev);
  assert.equal(canTakeBonus(model), true);
  const taken = { type: "bonus_taken", room: ROOM, seq: 11, player: "p-ann", yahtzee_bonus: 100,
    automatic: false, total: 150 };
  assert.equal(describeEvent(model, taken), "Ann took the +100 bonus");
  applyEvent(model, taken);
  const ann = model.players.find((p) => p.player === "p-ann");
  assert.deepEqual(ann.totals, { upper: 0, upper_bonus: 0, lower: 50, yahtzee_bonus: 100,
    grand: 150 });
  assert.equal(Object.values(ann.scorecard).filter((v) => v !== null).length, 1, "no box filled");
  assert.equal(model.turnOver, true);
  assert.equal(model.bonusPending, false);
  assert.equal(canTakeBonus(model), false);
  assert.equal(model.seq, 11);
});

test("room model: no bonus take without the variant", () => {
  const model = fromSnapshot(lobby());
  model.options = { ...model.options, bonus_turn: "off" };
  for (const ev of gameUntilSecondYahtzee()) applyEvent(model, ev);
  assert.equal(model.bonusPending, true);
  assert.equal(canTakeBonus(model), false);
});

// A fake server: answers every command with `respond(command)` (a list of messages).
function fakeServer(respond) {
  const sent = [];
  class FakeSocket {
    constructor(url, protocols) {
      this.protocol = protocols[0];
      this.readyState = 1;
      setImmediate(() => {
        this.onopen?.();
        this.deliver({ type: "welcome", server_version: "test", protocol_version: 1,
          encoding: "json", heartbeat_seconds: 60, protocol_minor: 2, limits: {} });
      });
    }
    deliver(message) { this.onmessage?.({ data: JSON.stringify(message) }); }
    send(text) {
      const command = JSON.parse(text);
      sent.push(command);
      const replies = command.type === "hello"
        ? [{ type: "ack", id: command.id, seq: null, result: { command: "hello" } }]
        : respond(command);
      setImmediate(() => { for (const reply of replies) this.deliver(reply); });
    }
    close(code = 1000, reason = "") {
      this.readyState = 3;
      setImmediate(() => this.onclose?.({ code, reason }));
    }
  }
  return { sent, WebSocket: FakeSocket };
}

function ack(command, result, seq) {
  return { type: "ack", id: command.id, seq, result: { command: command.type, ...result } };
}

// Ann joins (snapshot at seq 0), then the server pushes the events of the game.
async function seatedClient(server, events = []) {
  const client = new YahtzeeClient("ws://fake/ws", { WebSocket: server.WebSocket,
    reconnect: false });
  await client.connect();
  await client.join(ROOM, "Ann");
  for (const ev of events) client._ws.deliver(ev);
  if (events.length) await client.waitForSeq(events.at(-1).seq);
  return client;
}

function joinReplies(command) {
  return [ack(command, { player: "p-ann", seat: 1, token: "t" }, 0), lobby()];
}

test("client: takeBonus carries expect_seq and resolves after bonus_taken", async () => {
  const server = fakeServer((command) => {
    if (command.type === "join") return joinReplies(command);
    if (command.type === "take_bonus") {
      return [
        { type: "bonus_taken", room: ROOM, seq: 11, player: "p-ann", yahtzee_bonus: 100,
          automatic: false, total: 150 },
        { type: "turn_changed", room: ROOM, seq: 12, player: "c-ada", round: 2,
          deadline_ms: null },
        ack(command, {}, 12),
      ];
    }
    return [];
  });
  const events = [];
  const client = await seatedClient(server, gameUntilSecondYahtzee());
  client.on("event", (ev) => events.push(ev.type));
  await client.takeBonus();
  const sent = server.sent.find((c) => c.type === "take_bonus");
  assert.equal(sent.expect_seq, 10);
  assert.deepEqual(events, ["bonus_taken", "turn_changed"], "resolved after its events");
  client.close();
});

test("client: addComputer and removeComputer send the level, name and player", async () => {
  const server = fakeServer((command) => {
    if (command.type === "join") return joinReplies(command);
    if (command.type === "add_computer") {
      return [{ type: "player_joined", room: ROOM, seq: 1, player: "c-max", name: "Max", seat: 1,
        computer: command.level }, ack(command, { player: "c-max", seat: 1 }, 1)];
    }
    if (command.type === "remove_computer") {
      return [{ type: "player_left", room: ROOM, seq: 2, player: command.player, seat: 1,
        forfeited: false }, ack(command, {}, 2)];
    }
    return [];
  });
  const client = await seatedClient(server);
  const added = await client.addComputer("optimal", "Max");
  assert.deepEqual(added, { command: "add_computer", player: "c-max", seat: 1 });
  const named = await client.addComputer("easy");
  assert.equal(named.player, "c-max");
  await client.removeComputer("c-max");
  const sent = server.sent.filter((c) => c.type.endsWith("_computer"));
  assert.deepEqual(sent.map(({ id, ...rest }) => rest), [
    { type: "add_computer", level: "optimal", name: "Max" },
    { type: "add_computer", level: "easy", name: null },
    { type: "remove_computer", player: "c-max" },
  ]);
  assert.ok(sent.every((c) => !("expect_seq" in c)), "not play commands");
  client.close();
});

test("client: hint is resent with its id while the server answers unavailable", async () => {
  let refusals = 2;
  const options = [{ kind: "roll", keep: [0, 1, 3], box: null, expected: 251.842 }];
  const server = fakeServer((command) => {
    if (command.type === "join") return joinReplies(command);
    if (command.type !== "hint") return [];
    if (refusals-- > 0) {
      return [{ type: "error", id: command.id, seq: 0, code: "unavailable",
        message: "loading", retryable: true }];
    }
    return [ack(command, { player: "p-ann", rolls_left: 2, options }, 0)];
  });
  const client = await seatedClient(server);
  const result = await client.hint({ pauseMs: 1 });
  assert.deepEqual(result.options, options);
  const hints = server.sent.filter((c) => c.type === "hint");
  assert.equal(hints.length, 3);
  assert.equal(new Set(hints.map((c) => c.id)).size, 1, "one command, resent with its id");
  client.close();
});

test("client: hints_disabled is not retried", async () => {
  const server = fakeServer((command) => {
    if (command.type === "join") return joinReplies(command);
    return [{ type: "error", id: command.id, seq: 0, code: "hints_disabled",
      message: "no hints", retryable: false }];
  });
  const client = await seatedClient(server);
  await assert.rejects(client.hint({ pauseMs: 1 }),
    (err) => err instanceof CommandError && err.code === "hints_disabled");
  assert.equal(server.sent.filter((c) => c.type === "hint").length, 1);
  client.close();
});

test("fetchAnalysis sends the invite code as a header, never in the URL", async () => {
  const calls = [];
  const body = { room: ROOM, seq: 17, options: {}, players: [] };
  const fetch = async (url, init) => {
    calls.push({ url, headers: init.headers });
    return { ok: true, status: 200, json: async () => body };
  };
  assert.deepEqual(await fetchAnalysis("http://h/", ROOM, { inviteCode: "q7m2xk", fetch }), body);
  assert.deepEqual(calls, [{ url: `http://h/rooms/${ROOM}/analysis`,
    headers: { "X-Invite-Code": "q7m2xk" } }]);
  const loading = async () => ({ ok: false, status: 503, statusText: "Service Unavailable",
    json: async () => ({ code: "unavailable", message: "loading" }) });
  await assert.rejects(fetchAnalysis("http://h", ROOM, { fetch: loading }),
    (err) => err instanceof CommandError && err.code === "unavailable");
});

// Protocol 1.4 in clients/web/yahtzee-client.js: the tournament functions send the documented
// requests (method, path, Bearer credential, X-Invite-Code header, never the invite in the URL)
// and turn refusals into CommandError with the server's code. A recording fetch stands in for
// the server (the routes themselves are tested end to end in tests/players/).
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  CommandError, createTournament, enterTournament, fetchEntryEvents, fetchStandings,
  fetchTournament, fetchTournaments,
} from "../../../clients/web/yahtzee-client.js";

function recorder(status, body) {
  const calls = [];
  const fetchImpl = async (url, init) => {
    calls.push({ url, ...init });
    return { ok: status < 400, status, statusText: "x", json: async () => body };
  };
  return { calls, fetchImpl };
}

test("fetchTournaments lists the tournaments of GET /tournaments", async () => {
  const { calls, fetchImpl } = recorder(200, { tournaments: [{ tournament: "t1" }] });
  const list = await fetchTournaments("http://h:1", { fetch: fetchImpl });
  assert.deepEqual(list, [{ tournament: "t1" }]);
  assert.equal(calls[0].url, "http://h:1/tournaments");
});

test("createTournament posts the spec with the operator's Bearer token", async () => {
  const { calls, fetchImpl } = recorder(201, { tournament: "t2" });
  await createTournament("http://h:1", "adm", { name: "Cup", ends_ms: 5 }, { fetch: fetchImpl });
  assert.equal(calls[0].method, "POST");
  assert.equal(calls[0].headers.Authorization, "Bearer adm");
  assert.deepEqual(JSON.parse(calls[0].body), { name: "Cup", ends_ms: 5 });
});

test("enterTournament sends the player token and the invite code as headers", async () => {
  const { calls, fetchImpl } = recorder(201, { room: "r", token: "s" });
  const entry = await enterTournament("http://h:1", "t/3", "ypt_x", { inviteCode: "inv", fetch: fetchImpl });
  assert.equal(entry.room, "r");
  assert.equal(calls[0].url, "http://h:1/tournaments/t%2F3/entries");
  assert.equal(calls[0].method, "POST");
  assert.equal(calls[0].headers.Authorization, "Bearer ypt_x");
  assert.equal(calls[0].headers["X-Invite-Code"], "inv");
  assert.ok(!calls[0].url.includes("inv"));
});

test("a refused entry rejects with the server's code", async () => {
  const { fetchImpl } = recorder(409, { code: "already_entered", message: "no" });
  await assert.rejects(enterTournament("http://h:1", "t", "ypt_x", { fetch: fetchImpl }),
    (error) => error instanceof CommandError && error.code === "already_entered");
});

test("fetchStandings and fetchTournament read the leaderboard and the tournament", async () => {
  const { calls, fetchImpl } = recorder(200, { entries: [] });
  await fetchStandings("http://h:1", "t4", { limit: 7, fetch: fetchImpl });
  await fetchTournament("http://h:1", "t4", { fetch: fetchImpl });
  assert.equal(calls[0].url, "http://h:1/tournaments/t4/standings?limit=7");
  assert.equal(calls[1].url, "http://h:1/tournaments/t4");
});

test("fetchEntryEvents follows next_after over every page of a watched entry", async () => {
  const pages = [
    { events: [{ seq: 1 }, { seq: 2 }], next_after: 2 },
    { events: [{ seq: 3 }], next_after: null },
  ];
  const calls = [];
  const fetchImpl = async (url, init) => {
    calls.push({ url, ...init });
    const body = pages[calls.length - 1];
    return { ok: true, status: 200, statusText: "OK", json: async () => body };
  };
  const events = await fetchEntryEvents("http://h:1", "t5", "r/1",
    { limit: 2, inviteCode: "inv", fetch: fetchImpl });
  assert.deepEqual(events.map((e) => e.seq), [1, 2, 3]);
  assert.equal(calls[0].url, "http://h:1/tournaments/t5/entries/r%2F1/events?after=0&limit=2");
  assert.equal(calls[1].url, "http://h:1/tournaments/t5/entries/r%2F1/events?after=2&limit=2");
  assert.equal(calls[0].headers["X-Invite-Code"], "inv");
  assert.ok(!calls[0].url.includes("inv"));
});

test("a watch refused while the tournament is open rejects with watch_not_allowed", async () => {
  const { fetchImpl } = recorder(409, { code: "watch_not_allowed", message: "after the end" });
  await assert.rejects(fetchEntryEvents("http://h:1", "t", "r", { fetch: fetchImpl }),
    (error) => error instanceof CommandError && error.code === "watch_not_allowed");
});

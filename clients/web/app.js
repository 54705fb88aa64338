// Yahtzee in the browser: lobby, table, spectator view and replays.
//
// The protocol lives in yahtzee-client.js (commands, acks, resume by seq, expect_seq, join and
// create keys); the room model in room-model.js. This file is the page: it keeps the seat in
// localStorage (a closed tab or a restarted browser offers "Resume game"; a reload resumes at
// once), draws the table from the model after every event, rebuilds the move history from the
// room's log, and keeps the lobby live (pushed by the server, GET /lobby).
//
// Text from other people (names) is only ever inserted with textContent, never as HTML.

import { YahtzeeClient, fetchEventLog, fetchRoom, fetchRooms } from "./yahtzee-client.js";
import {
  BOXES, LABELS, UPPER_BONUS_THRESHOLD, applyEvent, describeEvent, fromSnapshot, historyOf,
  initialModel, nameOf, standings,
} from "./room-model.js";

const SEAT_KEY = "yahtzee.session";     // localStorage: the seat (or watched room), kept
const ACTIVE_KEY = "yahtzee.active";    // sessionStorage: this tab is at that table
const LOBBY_POLL_MS = 3000;          // polling GET /rooms, when the lobby stream fails
const LOBBY_STREAM_FAILURES = 3;     // stream errors in a row (no list between) before polling
const REPLAY_SKIPS = new Set(["spectators", "player_disconnected", "player_reconnected"]);
const SPOKEN_FACES = ["", "one", "two", "three", "four", "five", "six"];
// Pip positions (1-9 in a 3 x 3 grid, row by row) for each face.
const PIPS = { 1: [5], 2: [3, 7], 3: [3, 5, 7], 4: [1, 3, 7, 9], 5: [1, 3, 5, 7, 9],
  6: [1, 3, 4, 6, 7, 9] };

const $ = (id) => document.getElementById(id);

/** Build an element; string children become text nodes (never parsed as HTML). */
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "dataset") Object.assign(node.dataset, value);
    else if (key === "style") node.style.cssText = value;
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

// ------------------------------------------------------------------ state

const client = new YahtzeeClient(wsUrl(), { clientName: "yahtzee-web" });
/** This tab's seat or watched room: {room, role, token?, player?, inviteCode?, name?, auto?} */
let session = null;
let model = null;             // the room as the page knows it
let moves = new Map();        // seq -> line of the move history
let rolling = new Set();      // dice indexes to animate on the next draw
let replay = null;            // {room, states, lines, at}
let lobbyFeed = null;         // stops the lobby feed while the lobby is shown
let lobbyMode = null;         // how the lobby list arrives: "stream", "polling" or null

function wsUrl() {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  return `${scheme}//${location.host}/ws`;
}

function storedSeat() {
  try { return JSON.parse(localStorage.getItem(SEAT_KEY)) || null; } catch { return null; }
}

function keepSession() {
  if (session) {
    localStorage.setItem(SEAT_KEY, JSON.stringify(session));
    sessionStorage.setItem(ACTIVE_KEY, session.room);
  } else {
    sessionStorage.removeItem(ACTIVE_KEY);
  }
}

function forgetSeat() {
  localStorage.removeItem(SEAT_KEY);
  sessionStorage.removeItem(ACTIVE_KEY);
}

// ------------------------------------------------------------------ feedback

function notify(text) {
  const box = $("notice");
  box.textContent = text;
  box.hidden = !text;
  if (text) setTimeout(() => { if (box.textContent === text) box.hidden = true; }, 6000);
}

function fail(err) {
  if (err && err.code === "stale_state") {
    notify("The table changed before your move arrived: look again and retry.");
    return;
  }
  notify((err && (err.message || err.code)) || String(err));
}

// Each announcement is its own line in the live region, so a score followed at once by the
// next turn is read out whole; only the last few lines are kept.
function announce(text) {
  if (!text) return;
  const region = $("announce");
  region.append(el("p", {}, text));
  while (region.childElementCount > 4) region.firstElementChild.remove();
}

let audio = null;
function beep(frequency, ms) {
  if (localStorage.getItem("yahtzee.sound") !== "on") return;
  try {
    audio = audio || new AudioContext();
    const osc = audio.createOscillator();
    const gain = audio.createGain();
    osc.frequency.value = frequency;
    gain.gain.value = 0.08;
    osc.connect(gain).connect(audio.destination);
    osc.start();
    osc.stop(audio.currentTime + ms / 1000);
  } catch { /* no audio: the game goes on silently */ }
}

function alertMyTurn() {
  beep(880, 180);
  if (document.hidden && "Notification" in window && Notification.permission === "granted") {
    new Notification("Yahtzee: your turn", { body: `Room ${session.room}`, tag: "yahtzee-turn" });
  }
}

/** A yes/no question in a modal; resolves true for yes. Cancel has the focus. */
function ask(text, yesLabel) {
  return new Promise((resolve) => {
    const returnFocus = document.activeElement;
    $("confirm-text").textContent = text;
    $("confirm-yes").textContent = yesLabel;
    $("confirm").hidden = false;
    const close = (answer) => {
      $("confirm").hidden = true;
      if (returnFocus && returnFocus.isConnected) returnFocus.focus();
      resolve(answer);
    };
    $("confirm-yes").onclick = () => close(true);
    $("confirm-no").onclick = () => close(false);
    // A second Enter (or key repeat) must not confirm by accident.
    $("confirm-no").focus();
  });
}

// ------------------------------------------------------------------ events from the client

// The client delivers the snapshot of the room it is entering, which may come before the page
// has its session (the join's ack follows the snapshot): keep it either way.
function onSnapshot(snapshot) {
  const newRoom = !model || model.room !== snapshot.room;
  model = fromSnapshot(snapshot);
  if (newRoom) moves = new Map();
  loadHistory(snapshot);
  render();
}

function onEvent(ev) {
  if (!model || ev.room !== model.room) return;
  const line = describeEvent(model, ev);
  const wasMyTurn = myTurn();
  applyEvent(model, ev);
  if (line) moves.set(ev.seq, line);
  if (ev.type === "rolled") {
    rolling = new Set([0, 1, 2, 3, 4].filter((i) => !ev.held.includes(i)));
    beep(320, 60);
  }
  announceEvent(ev, line);
  if (!wasMyTurn && myTurn()) alertMyTurn();
  render();
  maybeAutoStart();
}

function announceEvent(ev, line) {
  const me = session && session.player;
  if (ev.type === "turn_changed") {
    announce(ev.player === me ? `Your turn, round ${ev.round}` : line);
  } else if (ev.type === "rolled") {
    const who = ev.player === me ? "You rolled" : `${nameOf(model, ev.player)} rolled`;
    announce(`${who} ${ev.dice.map((f) => SPOKEN_FACES[f]).join(", ")}`);
  } else if (["scored", "game_over", "game_started", "player_joined"].includes(ev.type)) {
    announce(line);
  }
}

// The move history up to the snapshot comes from the room's log (so a reload or a late
// spectator sees it all); later lines come from the live events.
async function loadHistory(snapshot) {
  try {
    const events = await fetchEventLog("", snapshot.room, { inviteCode: inviteFor(snapshot.room) });
    if (!model || model.room !== snapshot.room) return;
    for (const { seq, text } of historyOf(initialModel(snapshot), events)) {
      if (!moves.has(seq)) moves.set(seq, text);
    }
    renderLog();
  } catch { /* no log (an older server, a private room): the live lines still come */ }
}

// The invite code of a room being entered or sat at (the snapshot can come before the session).
let entering = null;  // {room, inviteCode} while a join / spectate / rejoin is under way
function inviteFor(room) {
  if (session && session.room === room) return session.inviteCode || null;
  return entering && entering.room === room ? entering.inviteCode : null;
}

// Rooms created by quick play or a rematch start by themselves once every seat is taken.
function maybeAutoStart() {
  if (!session || !session.auto || !model || model.status !== "lobby") return;
  if (model.host !== session.player || model.players.length < model.maxSeats) return;
  session.auto = false;
  keepSession();
  client.start().catch(fail);
}

// ------------------------------------------------------------------ actions

function myName() {
  const name = $("name").value.trim();
  if (!name) {
    notify("Enter your name first.");
    $("name").focus();
    return null;
  }
  localStorage.setItem("yahtzee.name", name);
  return name;
}

function enterRoom(next) {
  session = next;
  if (model && model.room !== next.room) {
    model = null;
    moves = new Map();
  }
  keepSession();
  render();
}

async function joinRoom(room, inviteCode, extra = {}) {
  const name = myName();
  if (!name) return false;
  entering = { room, inviteCode: inviteCode || null };
  try {
    const result = await client.join(room, name, { inviteCode: inviteCode || null });
    enterRoom({ room, role: "player", token: result.token, player: result.player,
      inviteCode: inviteCode || null, name, ...extra });
    return true;
  } catch (err) {
    fail(err);
    return false;
  }
}

async function watchRoom(room, inviteCode) {
  entering = { room, inviteCode: inviteCode || null };
  try {
    await client.spectate(room, { inviteCode: inviteCode || null });
    enterRoom({ room, role: "spectator", inviteCode: inviteCode || null });
  } catch (err) { fail(err); }
}

async function resumeSeat() {
  const seat = storedSeat();
  if (!seat) return;
  entering = { room: seat.room, inviteCode: seat.inviteCode || null };
  try {
    if (seat.role === "player") await client.rejoin(seat.room, seat.token);
    else await client.spectate(seat.room, { inviteCode: seat.inviteCode || null });
    enterRoom(seat);
  } catch (err) {
    notify(`Could not return to room ${seat.room}: ${err.message || err.code}`);
    if (["bad_token", "room_not_found", "invite_required", "bad_invite"].includes(err.code)) {
      forgetSeat();
      renderLobby();
    }
  }
}

function roomFields() {
  return {
    seats: Number($("seats").value) || 1,
    public: $("public").checked,
    turn_seconds: Number($("turn-seconds").value) || 0,
    options: $("rules").value === "yatzy"
      ? { rules: "yatzy", first_player: $("first-player").value }
      : { rules: "yahtzee", extra_yahtzees: $("extra-yahtzees").value, joker: $("joker").value,
        first_player: $("first-player").value },
  };
}

async function createRoom(event) {
  event.preventDefault();
  if (!myName()) return;
  try {
    const created = await client.createRoom(roomFields());
    await joinRoom(created.room, created.invite_code);
  } catch (err) { fail(err); }
}

/** Quick play: a seat in an open public room, or a new 2-seat room that starts when full. */
async function quickPlay() {
  if (!myName()) return;
  let rooms = [];
  try { rooms = await fetchRooms(""); } catch { rooms = []; }
  const open = rooms.filter((r) => r.status === "lobby" && r.open_seats > 0)
    .sort((a, b) => a.open_seats - b.open_seats);
  for (const room of open) {
    if (await joinRoom(room.room, null, { auto: true })) return;
  }
  try {
    const created = await client.createRoom({ seats: 2, public: true,
      options: { first_player: "roll_off" } });
    await joinRoom(created.room, created.invite_code, { auto: true });
  } catch (err) { fail(err); }
}

/**
 * HOOK (computer seats): "play the computer in one click". Server-side computer players do not
 * exist yet; once the server offers them (e.g. a `create_room` option or an `add_computer`
 * command), create a room with the computer seated here and show #play-computer.
 */
async function playComputer() {
  notify("Computer players are not available on this server yet.");
}

/**
 * Rematch with the same players: a room with the same settings, created with a create_key that
 * every player of the old room derives alike, so (with a server that keeps create keys per
 * key, not per connection) everyone who clicks Rematch lands in the same new room. It starts
 * by itself once every seat is taken.
 */
async function rematch() {
  const key = `rematch-${model.room}-${session.inviteCode || "public"}`.slice(0, 64);
  try {
    const created = await client.createRoom({ seats: model.players.length,
      public: model.public, turn_seconds: model.turnSeconds, options: model.options,
      create_key: key.padEnd(16, "-") });
    const inviteCode = created.invite_code || null;
    await client.leave().catch(() => {});
    await joinRoom(created.room, inviteCode, { auto: true });
  } catch (err) { fail(err); }
}

function backToLobby() {
  session = null;
  model = null;
  forgetSeat();
  if (location.hash) window.history.replaceState(null, "", location.pathname);
  render();
}

async function leave() {
  const playing = model && model.status === "playing" && session.role === "player";
  if (playing && !await ask("Leave the game? You forfeit: your turns are skipped from now on.",
    "Leave and forfeit")) return;
  try { await client.leave(); } catch (err) { if (err.code !== "not_in_room") fail(err); }
  backToLobby();
}

async function startGame() {
  const empty = model.maxSeats - model.players.length;
  if (empty > 0 && !await ask(`${empty} of ${model.maxSeats} seats are still empty. Start ` +
    "now? Nobody can join once the game has started.", "Start anyway")) return;
  try { await client.start(); } catch (err) { fail(err); }
}

function myTurn() {
  return Boolean(model && session && session.role === "player" &&
    model.current === session.player && !model.turnOver && model.status === "playing");
}

async function toggleHold(index) {
  if (!myTurn() || model.phase !== "rolled" || model.rollsLeft === 0) return;
  const held = model.held.includes(index);
  try {
    if (held) await client.release([index]);
    else await client.hold([index]);
  } catch (err) { fail(err); }
}

async function roll() {
  if (!myTurn() || model.rollsLeft === 0) return;
  const keep = model.phase === "rolled" ? [...model.held] : [];
  try { await client.roll(keep); } catch (err) { fail(err); }
}

async function chooseBox(box) {
  if (!myTurn() || model.phase !== "rolled") return;
  const entry = model.preview.find((e) => e.box === box);
  if (!entry || !entry.allowed) return;
  const better = model.preview.filter((e) => e.allowed && e.points > entry.points);
  if (entry.points === 0 && better.length) {
    const best = better.reduce((a, b) => (b.points > a.points ? b : a));
    const ok = await ask(`${LABELS[box]} scores 0 now, while ${LABELS[best.box]} would ` +
      `score ${best.points}. Score 0 in ${LABELS[box]}?`, "Score it");
    if (!ok) return;
  }
  try { await client.score(box); } catch (err) { fail(err); }
}

async function share() {
  const link = shareLink();
  $("share-box").hidden = false;
  $("share-link").value = link;
  $("share-link").select();
  try {
    await navigator.clipboard.writeText(link);
    notify("Link copied.");
  } catch { /* no clipboard (plain http): the link is selected in the box */ }
}

/** The room's link: the invite code in the fragment, which never reaches a server's logs. */
function shareLink() {
  const params = new URLSearchParams({ room: session.room });
  if (session.inviteCode) params.set("invite", session.inviteCode);
  return `${location.origin}/#${params}`;
}

// ------------------------------------------------------------------ replays

async function openReplay(room) {
  try {
    const [snapshot, events] = await Promise.all([fetchRoom("", room), fetchEventLog("", room)]);
    const start = initialModel(snapshot);
    const states = [structuredClone(start)];
    const lines = ["Before the first move"];
    const running = structuredClone(start);
    for (const ev of events) {
      const line = describeEvent(running, ev) || ev.type.replace(/_/g, " ");
      applyEvent(running, ev);
      // Steps are moves: who watched or lost the connection is no step of the game.
      if (REPLAY_SKIPS.has(ev.type)) continue;
      lines.push(line);
      states.push(structuredClone(running));
    }
    replay = { room, states, lines, at: 0 };
    stopLobbyFeed();
    render();
    $("replay-next").focus();
  } catch (err) { fail(err); }
}

function stepReplay(to) {
  replay.at = Math.max(0, Math.min(replay.states.length - 1, to));
  renderReplay();
}

// ------------------------------------------------------------------ the live lobby

/**
 * The lobby's room list, kept current while the lobby is shown: pushed by the server
 * (`GET /lobby`, Server-Sent Events; every `rooms` event carries the whole list). EventSource
 * reconnects by itself (a server restart ends the stream); when the stream fails
 * LOBBY_STREAM_FAILURES times in a row without a list in between, or is refused (429, 503:
 * EventSource then gives up), the page polls `GET /rooms` instead until the lobby is left.
 * @param {(rooms: object[]) => void} onRooms
 * @returns {() => void} stop
 */
function watchLobby(onRooms) {
  let stopped = false;
  let timer = null;
  let source = null;
  const poll = async () => {
    if (stopped) return;
    try { onRooms(await fetchRooms("")); } catch { /* the next tick tries again */ }
    if (!stopped) timer = setTimeout(poll, LOBBY_POLL_MS);
  };
  const fallBack = () => {
    if (source) source.close();
    source = null;
    lobbyMode = "polling";
    poll();
  };
  if (typeof EventSource === "function") {
    let failures = 0;
    lobbyMode = "stream";
    source = new EventSource("/lobby");
    source.addEventListener("rooms", (event) => {
      failures = 0;
      let rooms;
      try { rooms = JSON.parse(event.data).rooms; } catch { return; }
      if (Array.isArray(rooms)) onRooms(rooms);
    });
    source.addEventListener("error", () => {
      failures += 1;
      if (source.readyState === EventSource.CLOSED || failures >= LOBBY_STREAM_FAILURES) {
        fallBack();
      }
    });
  } else {
    fallBack();
  }
  return () => {
    stopped = true;
    clearTimeout(timer);
    if (source) source.close();
    lobbyMode = null;
  };
}

function startLobbyFeed() {
  if (!lobbyFeed) lobbyFeed = watchLobby(renderRooms);
}

function stopLobbyFeed() {
  if (lobbyFeed) lobbyFeed();
  lobbyFeed = null;
}

// ------------------------------------------------------------------ rendering

function render() {
  const inRoom = Boolean(session);
  $("lobby").hidden = inRoom || Boolean(replay);
  $("table").hidden = !inRoom;
  $("replay").hidden = inRoom || !replay;
  if (inRoom) {
    stopLobbyFeed();
    renderTable();
  } else if (replay) {
    renderReplay();
  } else {
    renderLobby();
    startLobbyFeed();
  }
  document.title = myTurn() ? "▶ Your turn · Yahtzee" : "Yahtzee";
}

function renderLobby() {
  const seat = storedSeat();
  $("resume").hidden = !seat;
  if (seat) {
    $("resume-text").textContent = seat.role === "player"
      ? `You have a seat in room ${seat.room}${seat.name ? ` as ${seat.name}` : ""}.`
      : `You were watching room ${seat.room}.`;
    $("resume-button").textContent = seat.role === "player" ? "Resume game" : "Watch again";
  }
}

function roomLine(r) {
  const rules = r.options.rules === "yatzy" ? "Yatzy" : "Yahtzee";
  const players = r.players.length ? r.players.join(", ") : "nobody yet";
  const status = { lobby: "waiting", playing: "playing", finished: "finished" }[r.status];
  return `${r.room} · ${rules} · ${players} · ${r.players.length}/${r.seats} seated · ` +
    `${status}` + (r.spectators ? ` · ${r.spectators} watching` : "");
}

function renderRooms(rooms) {
  const live = rooms.filter((r) => r.status !== "finished");
  const done = rooms.filter((r) => r.status === "finished");
  $("rooms").replaceChildren(...live.map((r) => el("li", { dataset: { room: r.room } },
    el("span", { class: "room-what" }, roomLine(r)),
    el("span", { class: "room-buttons" },
      r.status === "lobby" && r.open_seats > 0
        ? el("button", { type: "button", class: "join", "aria-label": `Join room ${r.room}`,
          onclick: () => joinRoom(r.room, null) }, "Join") : null,
      el("button", { type: "button", class: "watch", "aria-label": `Watch room ${r.room}`,
        onclick: () => watchRoom(r.room, null) }, "Watch")))));
  $("no-rooms").hidden = live.length > 0;
  $("finished").replaceChildren(...done.map((r) => el("li", { dataset: { room: r.room } },
    el("span", { class: "room-what" }, roomLine(r)),
    el("span", { class: "room-buttons" },
      el("button", { type: "button", class: "replay", "aria-label": `Replay room ${r.room}`,
        onclick: () => openReplay(r.room) }, "Replay")))));
  $("no-finished").hidden = done.length > 0;
}

function optionsText(model) {
  const o = model.options;
  const first = { roll_off: "roll-off", seat_order: "seat order", random: "random" };
  const parts = o.rules === "yatzy"
    ? ["Yatzy (Scandinavian)"]
    : ["Yahtzee", `extra Yahtzees ${o.extra_yahtzees}`, `Joker ${o.joker}`];
  parts.push(`first player: ${first[o.first_player] || o.first_player}`);
  if (model.turnSeconds) parts.push(`${model.turnSeconds}s per turn`);
  return parts.join(" · ");
}

function renderTable() {
  $("room-id").textContent = session.room;
  $("invite").textContent = session.inviteCode ? `invite code ${session.inviteCode}` : "";
  const spectating = session.role !== "player";
  $("table").classList.toggle("spectating", spectating);
  const finished = model && model.status === "finished";
  $("leave").hidden = Boolean(finished);  // game over has its own "Back to the lobby"
  $("role").textContent = finished ? "game over" : spectating ? "spectating" : "playing";
  if (!model) {
    $("turn").textContent = "Loading…";
    return;
  }
  $("room-options").textContent = optionsText(model);
  $("spectators").textContent = String(model.spectators);
  const me = spectating ? null : session.player;
  const lobby = model.status === "lobby";
  $("lobby-wait").hidden = !lobby;
  if (lobby) {
    $("waiting").textContent = `Waiting for players: ${model.players.length}/${model.maxSeats}` +
      " seated" + (model.host ? `; ${nameOf(model, model.host)} starts the game.` : ".");
    $("start").hidden = !(me && model.host === me);
  }
  $("turn").textContent = turnText(me);
  $("turn-line").classList.toggle("mine", myTurn());

  // The dice and the boxes are built anew: keep the keyboard focus on the same one.
  const focused = focusedSelector();
  renderDeadline();
  renderDice($("dice"), model, myTurn(), true);
  renderRollButton();
  renderScorecard($("scorecard"), model, me, true);
  renderGameOver(me);
  if (focused) {
    const again = document.querySelector(focused);
    if (again) again.focus();
  }
  renderLog();
}

function turnText(me) {
  if (model.status === "finished") return "Game over";
  if (model.status === "lobby") return "In the lobby";
  if (!model.current) return "Starting…";
  if (model.current === me) return `Your turn (round ${model.round})`;
  return `${nameOf(model, model.current)}'s turn (round ${model.round})`;
}

function renderLog() {
  const lines = [...moves.entries()].sort((a, b) => b[0] - a[0]).slice(0, 200);
  $("log").replaceChildren(...lines.map(([, text]) => el("li", {}, text)));
}

function renderDeadline() {
  const left = model && model.deadline && model.status === "playing"
    ? Math.max(0, Math.ceil((model.deadline - Date.now()) / 1000)) : null;
  $("deadline").textContent = left === null ? "" : `${left}s left`;
}

function focusedSelector() {
  const node = document.activeElement;
  if (!node || !node.dataset) return null;
  if (node.closest("#dice") && node.dataset.index !== undefined) {
    return `#dice .die[data-index="${node.dataset.index}"]`;
  }
  if (node.closest("#scorecard") && node.dataset.box) {
    return `#scorecard td.mine[data-box="${node.dataset.box}"] button`;
  }
  return null;
}

function dieFace(face) {
  return (PIPS[face] || []).map((cell) => el("span", { class: "pip",
    style: `grid-area: ${Math.ceil(cell / 3)} / ${((cell - 1) % 3) + 1}` }));
}

function renderDice(container, m, mine, live) {
  const nodes = [];
  for (let i = 0; i < 5; i++) {
    const face = m.dice.length ? m.dice[i] : 0;
    const held = m.held.includes(i);
    const label = face ? `Die ${i + 1}: ${face}${held ? ", held" : ""}` : `Die ${i + 1}: not rolled`;
    nodes.push(el("button", {
      type: "button",
      class: "die" + (held ? " held" : "") + (face ? "" : " blank") +
        (live && rolling.has(i) ? " rolling" : ""),
      dataset: { index: i, face },
      "aria-pressed": held ? "true" : "false",
      "aria-label": label,
      title: label,
      disabled: !(mine && m.phase === "rolled" && m.rollsLeft > 0),
      onclick: live ? () => toggleHold(i) : null,
    }, ...dieFace(face)));
  }
  if (live) rolling = new Set();
  container.replaceChildren(...nodes);
}

function renderRollButton() {
  const mine = myTurn();
  const button = $("roll");
  button.hidden = session.role !== "player" || model.status !== "playing";
  button.disabled = !(mine && model.rollsLeft > 0);
  button.textContent = `Roll (${model.rollsLeft} left)`;
  let hint = "";
  if (mine && model.phase === "awaiting_roll") hint = "Roll the dice.";
  else if (mine && model.phase === "rolled") {
    hint = model.rollsLeft > 0
      ? "Click dice to hold them, roll again, or pick a box in your column."
      : "No rolls left: pick a box in your column.";
    if (model.bonusPending) hint += " Extra Yahtzee: +100 bonus!";
  }
  $("hint").textContent = hint;
  $("play-area").hidden = model.status !== "playing";
}

/** Players in column order: me first, then the others in seat order. */
function columns(m, me) {
  return [...m.players].sort((a, b) => (b.player === me) - (a.player === me) || a.seat - b.seat);
}

function renderScorecard(table, m, me, live) {
  const players = columns(m, me);
  table.tHead.replaceChildren(el("tr", {}, el("th", { scope: "col" }, "Box"),
    ...players.map((p) => el("th", {
      scope: "col",
      title: p.name,
      class: p.player === m.current ? "current" : "",
      dataset: { player: p.player },
      "aria-current": p.player === m.current ? "true" : null,
    }, p.player === m.current ? "▶ " : "", p.name,
    p.player === me ? el("span", { class: "you" }, " (you)") : null,
    p.connected || !live ? null : el("div", { class: "offline" },
      p.forfeited ? "left" : "offline")))));

  const previewByBox = new Map(m.preview.map((e) => [e.box, e]));
  const rows = [];
  BOXES[m.options.rules].forEach((box, index) => {
    rows.push(el("tr", {}, el("th", { scope: "row" }, LABELS[box]),
      ...players.map((p) => boxCell(m, p, box, previewByBox, me, live))));
    if (index === 5) rows.push(...upperRows(m, players));
  });
  table.tBodies[0].replaceChildren(...rows);
  const foot = [];
  const cls = (p) => "total" + (p.player === m.current ? " current" : "");
  if (m.options.rules === "yahtzee") {
    foot.push(el("tr", { class: "sum" }, el("th", { scope: "row" }, "Yahtzee bonus"),
      ...players.map((p) => el("td", { class: p.player === m.current ? "current" : "" },
        String(p.totals.yahtzee_bonus)))));
  }
  foot.push(el("tr", { class: "sum" }, el("th", { scope: "row" }, "Total"),
    ...players.map((p) => el("td", { class: cls(p), dataset: { player: p.player } },
      String(p.totals.grand)))));
  table.tFoot.replaceChildren(...foot);
}

// Upper total with the progress to 63, then the bonus.
function upperRows(m, players) {
  const current = (p) => (p.player === m.current ? "current" : "");
  return [
    el("tr", { class: "sum" }, el("th", { scope: "row" }, "Upper total",
      el("span", { class: "long" }, ` (bonus at ${UPPER_BONUS_THRESHOLD})`)),
      ...players.map((p) => {
        const share = Math.min(100, Math.round(100 * p.totals.upper / UPPER_BONUS_THRESHOLD));
        return el("td", { class: "upper " + current(p), dataset: { player: p.player },
          title: `${p.totals.upper} of ${UPPER_BONUS_THRESHOLD}` },
        `${p.totals.upper}/${UPPER_BONUS_THRESHOLD}`,
        el("span", { class: "progress", "aria-hidden": "true" },
          el("span", { style: `width: ${share}%` })));
      })),
    el("tr", { class: "sum" }, el("th", { scope: "row" }, "Upper bonus"),
      ...players.map((p) => el("td", { class: current(p) }, String(p.totals.upper_bonus)))),
  ];
}

function boxCell(m, p, box, previewByBox, me, live) {
  const current = p.player === m.current;
  const attrs = { class: current ? "current" : "", dataset: { box, player: p.player } };
  const value = p.scorecard[box];
  if (value !== null && value !== undefined) {
    attrs.class += " filled";
    return el("td", attrs, String(value));
  }
  const entry = current && m.phase === "rolled" && !m.turnOver ? previewByBox.get(box) : null;
  if (!entry) return el("td", attrs, "");
  if (!entry.allowed) {
    attrs.class += " not-allowed";
    attrs.title = "not allowed now (Joker rule)";
    return el("td", attrs, "–");
  }
  const clickable = live && p.player === me;
  attrs.class += " preview" + (entry.points === 0 ? " zero" : "") + (clickable ? " mine" : "");
  attrs.title = clickable ? `score ${entry.points} here` : `would score ${entry.points}`;
  if (!clickable) return el("td", attrs, String(entry.points));
  const points = entry.points === 1 ? "1 point" : `${entry.points} points`;
  return el("td", attrs, el("button", { type: "button", class: "score",
    dataset: { box }, "aria-label": `${LABELS[box]}: ${points}`,
    onclick: () => chooseBox(box) }, String(entry.points)));
}

function renderGameOver(me) {
  const done = model.status === "finished";
  $("game-over").hidden = !done;
  if (!done) return;
  const ranked = standings(model);
  const winners = ranked.filter((r) => r.place === 1);
  const iWon = winners.some((w) => w.player === me);
  const names = winners.map((w) => w.name).join(" and ");
  $("banner").textContent = !winners.length ? "Game over"
    : iWon && winners.length === 1 ? `You win with ${winners[0].total} points!`
      : winners.length > 1 ? `${names} share the win with ${winners[0].total} points`
        : `${names} wins with ${winners[0].total} points`;
  $("standings-list").replaceChildren(...ranked.map((r) => {
    const p = model.players.find((q) => q.player === r.player) || { totals: null };
    const t = p.totals;
    const detail = t ? ` (upper ${t.upper} + bonus ${t.upper_bonus}, lower ${t.lower}` +
      (t.yahtzee_bonus ? `, Yahtzee bonus ${t.yahtzee_bonus}` : "") + ")" : "";
    return el("li", {}, `${r.name}: ${r.total}`, el("span", { class: "muted" }, detail));
  }));
  $("rematch").hidden = !me;
}

function renderReplay() {
  const state = replay.states[replay.at];
  $("replay-room").textContent = replay.room;
  $("replay-pos").textContent = `${replay.at} / ${replay.states.length - 1}`;
  $("replay-event").textContent = replay.lines[replay.at];
  $("replay-first").disabled = $("replay-prev").disabled = replay.at === 0;
  $("replay-next").disabled = $("replay-last").disabled =
    replay.at === replay.states.length - 1;
  renderDice($("replay-dice"), state, false, false);
  renderScorecard($("replay-card"), state, null, false);
}

// ------------------------------------------------------------------ wiring

function readFragment() {
  // #room=ID&invite=CODE (a shared link) or #room=ID&watch=1: the invite code stays in the
  // fragment, which browsers never send to a server.
  const params = new URLSearchParams(location.hash.slice(1));
  const room = params.get("room");
  if (!room) return null;
  return { room, inviteCode: params.get("invite"), watch: params.get("watch") === "1" };
}

function showInvitation(link) {
  $("join-room").value = link.room;
  $("join-invite").value = link.inviteCode || "";
  $("invited").hidden = false;
  $("invited-text").textContent = `You are invited to room ${link.room}: enter your name and ` +
    "press Join (or Watch) below.";
}

function wireControls() {
  $("create").addEventListener("submit", createRoom);
  $("rules").addEventListener("change", () =>
    $("create").classList.toggle("yatzy-form", $("rules").value === "yatzy"));
  $("join-by-id").addEventListener("submit", (e) => {
    e.preventDefault();
    const room = $("join-room").value.trim();
    if (room) joinRoom(room, $("join-invite").value.trim());
  });
  $("watch-button").addEventListener("click", () => {
    const room = $("join-room").value.trim();
    if (room) watchRoom(room, $("join-invite").value.trim());
  });
  $("quick-play").addEventListener("click", quickPlay);
  $("play-computer").addEventListener("click", playComputer);
  $("resume-button").addEventListener("click", resumeSeat);
  $("forget-button").addEventListener("click", () => { forgetSeat(); renderLobby(); });
  $("leave").addEventListener("click", leave);
  $("share").addEventListener("click", share);
  $("roll").addEventListener("click", roll);
  $("start").addEventListener("click", startGame);
  $("rematch").addEventListener("click", rematch);
  $("back").addEventListener("click", async () => {
    await client.leave().catch(() => {});
    backToLobby();
  });
  $("replay-first").addEventListener("click", () => stepReplay(0));
  $("replay-prev").addEventListener("click", () => stepReplay(replay.at - 1));
  $("replay-next").addEventListener("click", () => stepReplay(replay.at + 1));
  $("replay-last").addEventListener("click", () => stepReplay(replay.states.length - 1));
  $("replay-close").addEventListener("click", () => { replay = null; render(); });
  wireSoundAndAlerts();
  document.addEventListener("keydown", onKey);
}

function wireSoundAndAlerts() {
  const sound = $("sound");
  const showSound = () => {
    const on = localStorage.getItem("yahtzee.sound") === "on";
    sound.setAttribute("aria-pressed", String(on));
    sound.textContent = on ? "Sound on" : "Sound off";
  };
  sound.addEventListener("click", () => {
    const on = localStorage.getItem("yahtzee.sound") === "on";
    localStorage.setItem("yahtzee.sound", on ? "off" : "on");
    showSound();
  });
  showSound();
  const alerts = $("notify");
  alerts.hidden = !("Notification" in window) || Notification.permission === "denied";
  alerts.addEventListener("click", async () => {
    const answer = await Notification.requestPermission();
    alerts.hidden = answer !== "default";
  });
}

function onKey(e) {
  if (e.key === "Escape") {
    if (!$("confirm").hidden) $("confirm-no").click();
    return;
  }
  if (!$("confirm").hidden || e.target.closest("input, select, textarea")) return;
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  if (replay && !session) {
    if (e.key === "ArrowRight") stepReplay(replay.at + 1);
    else if (e.key === "ArrowLeft") stepReplay(replay.at - 1);
    return;
  }
  // Keyboard play: r rolls, 1-5 hold or release a die.
  if (e.key === "r") roll();
  else if (e.key >= "1" && e.key <= "5") toggleHold(Number(e.key) - 1);
}

function setConnection(state) {
  const text = { connecting: "connecting…", connected: "connected",
    reconnecting: "reconnecting…", closed: "disconnected" }[state] || state;
  $("connection").dataset.state = state;
  $("connection").textContent = text;
}

function init() {
  $("name").value = localStorage.getItem("yahtzee.name") || "";
  wireControls();
  client.on("state", setConnection);
  client.on("snapshot", onSnapshot);
  client.on("event", onEvent);
  client.on("notice", notify);
  client.on("resume-failed", (err) => {
    notify(`Could not return to room ${err.room}: ${err.message || err.code}`);
    if (["bad_token", "room_not_found", "invite_required"].includes(err.code)) forgetSeat();
    session = null;
    model = null;
    render();
  });
  client.on("ended", () => notify("The server ended this connection (is the game open in " +
    "another window?). Reload the page to connect again."));

  // A reload of a tab that was at a table goes straight back to it; a new tab (or a restarted
  // browser) offers "Resume game" in the lobby instead.
  const seat = storedSeat();
  const link = readFragment();
  if (seat && sessionStorage.getItem(ACTIVE_KEY) === seat.room) {
    session = seat;
    client.restore(seat);
  } else if (link && link.watch) {
    session = { room: link.room, role: "spectator", inviteCode: link.inviteCode };
    keepSession();
    client.restore(session);
  } else if (link) {
    showInvitation(link);
  }
  render();
  client.connect().catch((err) => fail(err));
  setInterval(() => { if (session && model) renderDeadline(); }, 1000);
  // A hidden tab gives its lobby stream back (browsers allow few connections per server).
  document.addEventListener("visibilitychange", () => {
    if (document.hidden) stopLobbyFeed();
    else render();
  });
}

// Exposed for tests and the curious: the model, the session and a simulated network failure.
window.yahtzee = {
  get model() { return model; },
  get session() { return session; },
  get client() { return client; },
  get lobbyMode() { return lobbyMode; },
  dropConnection() { client.dropConnection(); },
};

init();

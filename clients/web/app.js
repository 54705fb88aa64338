// Yahtzee in the browser: lobby, table, spectator view and replays.
//
// The protocol lives in yahtzee-client.js (commands, acks, resume by seq, expect_seq, join and
// create keys); the room model in room-model.js. This file is the page: it keeps the seat in
// localStorage (a closed tab or a restarted browser offers "Resume game"; a reload resumes at
// once), draws the table from the model after every event, rebuilds the move history from the
// room's log, and keeps the lobby live (pushed by the server, GET /lobby). Protocol 1.2: play
// the server's computer players in one click, the advisor (Hint), the +100 take of `bonus_turn`
// rooms and the analysis of a finished game (GET /rooms/{id}/analysis).
//
// Text from other people (names) is only ever inserted with textContent, never as HTML.

import {
  YahtzeeClient, fetchAnalysis, fetchEventLog, fetchRoom, fetchRooms,
} from "./yahtzee-client.js";
import {
  BOXES, LABELS, UPPER_BONUS_THRESHOLD, applyEvent, canTakeBonus, describeEvent, fromSnapshot,
  historyOf, initialModel, nameOf, playerOf, standings,
} from "./room-model.js";

const SEAT_KEY = "yahtzee.session";     // localStorage: the seat (or watched room), kept
const ACTIVE_KEY = "yahtzee.active";    // sessionStorage: this tab is at that table
const LOBBY_POLL_MS = 3000;          // polling GET /rooms, when the lobby stream fails
const LOBBY_STREAM_FAILURES = 3;     // stream errors in a row (no list between) before polling
const REPLAY_SKIPS = new Set(["spectators", "player_disconnected", "player_reconnected"]);
// Events that leave the game as it was (presence only): they keep the advice shown.
const PRESENCE = REPLAY_SKIPS;
const LEVELS = ["easy", "medium", "hard", "optimal"];
const LEVEL_KEY = "yahtzee.computerLevel";  // localStorage: the level of "Play vs computer"
const HINT_RETRY_MS = 1500;          // the advisor is warming up: ask again after this
const HINT_ATTEMPTS = 20;
const ANALYSIS_SHOWN = 10;           // costly decisions listed per player
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
/** The advice shown: {seq, status: "asking"|"warming"|"shown"|"failed", result?, text?} */
let advice = null;
/** The analysis of the finished room shown at game over: {room, status, data?, text?} */
let analysis = null;

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
  advice = null;  // a snapshot (a new room, a resync) may show another table
  if (newRoom) moves = new Map();
  loadHistory(snapshot);
  render();
}

function onEvent(ev) {
  if (!model || ev.room !== model.room) return;
  const line = describeEvent(model, ev);
  const wasMyTurn = myTurn();
  applyEvent(model, ev);
  if (!PRESENCE.has(ev.type)) advice = null;  // the advice was for the table as it was
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
  // A computer's moves say so ("Ada, computer, rolled ..."): they come fast, one after another.
  const mover = ev.player && playerOf(model, ev.player);
  const cpu = mover && mover.computer ? ", computer," : "";
  if (ev.type === "turn_changed") {
    announce(ev.player === me ? `Your turn, round ${ev.round}` : line);
  } else if (ev.type === "rolled") {
    const who = ev.player === me ? "You rolled" : `${nameOf(model, ev.player)}${cpu} rolled`;
    announce(`${who} ${ev.dice.map((f) => SPOKEN_FACES[f]).join(", ")}`);
  } else if (cpu && ["scored", "bonus_taken"].includes(ev.type) && line) {
    announce(line.replace(mover.name, `${mover.name}${cpu}`));
  } else if (["scored", "bonus_taken", "game_over", "game_started", "player_joined",
    "player_left"].includes(ev.type)) {
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
    maybeAutoStart();  // a rematch with computers is full as soon as its person sits down
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
  const seats = Math.max(1, Math.min(8, Number($("seats").value) || 1));
  const computers = Math.max(0, Math.min(seats - 1, Number($("computers").value) || 0));
  const level = $("computers-level").value;
  const toggle = (id) => ($(id).checked ? "on" : "off");
  const options = $("rules").value === "yatzy"
    ? { rules: "yatzy", first_player: $("first-player").value, upper_first: toggle("upper-first") }
    : { rules: "yahtzee", extra_yahtzees: $("extra-yahtzees").value, joker: $("joker").value,
      first_player: $("first-player").value, upper_first: toggle("upper-first"),
      bonus_turn: toggle("bonus-turn") };
  return {
    seats,
    public: $("public").checked,
    turn_seconds: Number($("turn-seconds").value) || 0,
    options,
    computers: Array.from({ length: computers }, () => ({ level })),
    hints: $("hints").checked,
  };
}

/** The computer-players count of the form may go up to seats - 1 (a seat for a person). */
function limitComputers() {
  const seats = Math.max(1, Math.min(8, Number($("seats").value) || 1));
  $("computers").max = String(seats - 1);
  if (Number($("computers").value) > seats - 1) $("computers").value = String(seats - 1);
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
 * Play the computer in one click: a 2-seat public room with one server-side computer player at
 * the level picked next to the button (remembered), joined and started at once.
 */
async function playComputer() {
  if (!myName()) return;
  const level = LEVELS.includes($("play-level").value) ? $("play-level").value : "medium";
  localStorage.setItem(LEVEL_KEY, level);
  try {
    const created = await client.createRoom({ seats: 2, public: true,
      options: { first_player: "roll_off" }, computers: [{ level }], hints: true });
    if (await joinRoom(created.room, created.invite_code)) await client.start();
  } catch (err) { fail(err); }
}

/** The host seats a computer player in the lobby. */
async function addComputer() {
  try { await client.addComputer($("add-computer-level").value); } catch (err) { fail(err); }
}

async function removeComputer(player) {
  try {
    await client.removeComputer(player);
    $("add-computer").focus();  // the removed seat's button is gone
  } catch (err) { fail(err); }
}

/**
 * Rematch with the same players: a room with the same settings, created with a create_key that
 * every player of the old room derives alike, so (with a server that keeps create keys per
 * key, not per connection) everyone who clicks Rematch lands in the same new room. It starts
 * by itself once every seat is taken.
 */
async function rematch() {
  const key = `rematch-${model.room}-${session.inviteCode || "public"}`.slice(0, 64);
  // The computers come back with their names and levels (seated first, as in the old room).
  const computers = model.players.filter((p) => p.computer)
    .map((p) => ({ level: p.computer, name: p.name }));
  try {
    const created = await client.createRoom({ seats: model.players.length,
      public: model.public, turn_seconds: model.turnSeconds, options: model.options,
      computers, hints: model.hints !== false, create_key: key.padEnd(16, "-") });
    const inviteCode = created.invite_code || null;
    await client.leave().catch(() => {});
    await joinRoom(created.room, inviteCode, { auto: true });
  } catch (err) { fail(err); }
}

function backToLobby() {
  session = null;
  model = null;
  advice = null;
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

/** The room offers the advisor to the player on turn (a room created with hints). */
function canAskHint() {
  return myTurn() && model.hints === true;
}

/**
 * Ask the advisor for the best options now. While the server loads its strategy table it
 * answers `unavailable`: the page says "the advisor is warming up" and asks again after a
 * moment, as long as the table has not changed. Any change of the table clears the advice.
 */
async function askHint() {
  if (!canAskHint()) return;
  const seq = model.seq;
  if (advice && advice.seq === seq && advice.status !== "failed") return;  // asked already
  advice = { seq, status: "asking" };
  renderAdvice();
  for (let attempt = 1; ; attempt++) {
    try {
      const result = await client.hint({ attempts: 1 });
      if (!advice || advice.seq !== seq || !model || model.seq !== seq) return;  // moved on
      advice = { seq, status: "shown", result };
      announce("Hint: " + adviceLines(result)[0]);
      break;
    } catch (err) {
      if (!advice || advice.seq !== seq) return;
      if (err && err.code === "unavailable" && attempt < HINT_ATTEMPTS) {
        advice = { seq, status: "warming" };
        renderAdvice();
        await new Promise((resolve) => setTimeout(resolve, HINT_RETRY_MS));
        if (!advice || advice.seq !== seq) return;
        continue;
      }
      advice = { seq, status: "failed",
        text: err && err.code === "unavailable" ? "The advisor is still warming up: try again "
          + "in a moment." : `No hint: ${(err && (err.message || err.code)) || err}` };
      break;
    }
  }
  render();
}

/** One line per option of a hint, e.g. "Keep 5 5 5, roll again · 254.1". */
function adviceLines(result) {
  return result.options.map((o) => {
    const expected = o.expected.toFixed(1);
    if (o.kind === "score") return `Score ${LABELS[o.box] || o.box} · ${expected}`;
    if (o.kind === "take_bonus") return `Take the +100 bonus · ${expected}`;
    if (!model.dice.length || model.phase !== "rolled") return `Roll the dice · ${expected}`;
    if (!o.keep.length) return `Roll all five again · ${expected}`;
    const faces = [...o.keep].map((i) => model.dice[i]).sort((a, b) => a - b);
    return `Keep ${faces.join(" ")}, roll again · ${expected}`;
  });
}

/** What the best option of the advice shown points at: {dice: Set, box: string|null}. */
function advised() {
  const best = advice && advice.status === "shown" && advice.seq === model.seq
    ? advice.result.options[0] : null;
  return {
    dice: new Set(best && best.kind === "roll" ? best.keep : []),
    box: best && best.kind === "score" ? best.box : null,
  };
}

async function takeBonus() {
  if (!myTurn() || !canTakeBonus(model)) return;
  try { await client.takeBonus(); } catch (err) { fail(err); }
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
    replay = { room, states, lines, at: 0, analysis: null };
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
  if (o.upper_first === "on") parts.push("upper boxes first");
  if (o.bonus_turn === "on" && o.rules !== "yatzy") parts.push("bonus turn");
  parts.push(`first player: ${first[o.first_player] || o.first_player}`);
  if (model.turnSeconds) parts.push(`${model.turnSeconds}s per turn`);
  if (model.hints === true) parts.push("hints on");
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
    renderRoster(me);
  }
  $("turn").textContent = turnText(me);
  $("turn-line").classList.toggle("mine", myTurn());

  // The dice and the boxes are built anew: keep the keyboard focus on the same one.
  const focused = focusedSelector();
  renderDeadline();
  const pointed = advised();
  renderDice($("dice"), model, myTurn(), true, pointed.dice);
  renderRollButton();
  renderAdvice();
  $("bonus-row").hidden = !(myTurn() && canTakeBonus(model));
  renderScorecard($("scorecard"), model, me, true, pointed.box);
  renderGameOver(me);
  if (focused) {
    const again = document.querySelector(focused);
    if (again) again.focus();
  }
  renderLog();
}

/** A computer player's mark: "CPU · hard" (read out as "computer player, hard"). */
function cpuBadge(p) {
  if (!p.computer) return null;
  return el("span", { class: "cpu", title: `computer player, level ${p.computer}` },
    el("span", { "aria-hidden": "true" }, "CPU",
      el("span", { class: "level" }, ` · ${p.computer}`)),
    el("span", { class: "visually-hidden" }, `computer player, level ${p.computer}`));
}

/** The lobby's roster: who sits where; the host adds and removes computer players. */
function renderRoster(me) {
  const host = Boolean(me && model.host === me);
  $("roster").replaceChildren(...model.players.map((p) => el("li",
    { dataset: { player: p.player } },
    el("span", { class: "who" }, p.name), p.player === me ? " (you)" : null, " ", cpuBadge(p),
    host && p.computer ? el("button", { type: "button", class: "remove-computer",
      "aria-label": `Remove ${p.name}`, onclick: () => removeComputer(p.player) }, "Remove")
      : null)));
  $("add-computer-row").hidden = !(host && model.players.length < model.maxSeats);
}

/** The Hint button and the advice: the top options, best first, with expected final scores. */
function renderAdvice() {
  if (!model || !session) return;
  const canAsk = canAskHint();
  $("ask-hint").hidden = !canAsk;
  $("hint-key").hidden = model.hints !== true;
  const current = advice && advice.seq === model.seq ? advice : null;
  $("ask-hint").disabled = Boolean(current && current.status !== "failed");
  $("advice").hidden = !canAsk || !current;
  if (!canAsk || !current) return;
  const status = { asking: "Asking the advisor…",
    warming: "The advisor is warming up: asking again in a moment…",
    shown: "Best options (expected final score):", failed: current.text }[current.status];
  $("advice-status").textContent = status;
  $("advice-list").replaceChildren(...(current.status === "shown"
    ? adviceLines(current.result).map((text, i) => el("li", { class: i === 0 ? "best" : "" }, text))
    : []));
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

function renderDice(container, m, mine, live, keep = new Set()) {
  const nodes = [];
  for (let i = 0; i < 5; i++) {
    const face = m.dice.length ? m.dice[i] : 0;
    const held = m.held.includes(i);
    const label = face ? `Die ${i + 1}: ${face}${held ? ", held" : ""}` +
      (keep.has(i) ? ", advised to keep" : "") : `Die ${i + 1}: not rolled`;
    nodes.push(el("button", {
      type: "button",
      class: "die" + (held ? " held" : "") + (face ? "" : " blank") +
        (live && rolling.has(i) ? " rolling" : "") + (keep.has(i) ? " advised" : ""),
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

function renderScorecard(table, m, me, live, advisedBox = null) {
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
    p.computer ? el("div", {}, cpuBadge(p)) : null,
    p.connected || !live ? null : el("div", { class: "offline" },
      p.forfeited ? "left" : "offline")))));

  const previewByBox = new Map(m.preview.map((e) => [e.box, e]));
  const rows = [];
  BOXES[m.options.rules].forEach((box, index) => {
    rows.push(el("tr", {}, el("th", { scope: "row" }, LABELS[box]),
      ...players.map((p) => boxCell(m, p, box, previewByBox, me, live, advisedBox))));
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

function boxCell(m, p, box, previewByBox, me, live, advisedBox) {
  const current = p.player === m.current;
  const attrs = { class: current ? "current" : "", dataset: { box, player: p.player } };
  if (current && box === advisedBox) attrs.class += " advised";
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
  const note = box === advisedBox ? ", advised" : "";
  return el("td", attrs, el("button", { type: "button", class: "score",
    dataset: { box }, "aria-label": `${LABELS[box]}: ${points}${note}`,
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
  $("analysis").hidden = false;
  if (!analysis || analysis.room !== model.room) loadAnalysis(model.room);
  else renderAnalysis($("analysis-body"), analysis, () => loadAnalysis(model.room));
}

// ------------------------------------------------------------------ analysis

/**
 * Fetch a room's analysis (GET /rooms/{id}/analysis, with X-Invite-Code for a private room)
 * into `analysis`, or into the replay viewer's panel.
 */
async function loadAnalysis(room, { replayView = false } = {}) {
  const state = { room, status: "loading" };
  const body = replayView ? $("replay-analysis-body") : $("analysis-body");
  const retry = () => loadAnalysis(room, { replayView });
  if (replayView) replay.analysis = state;
  else analysis = state;
  renderAnalysis(body, state, retry);
  try {
    state.data = await fetchAnalysis("", room, { inviteCode: inviteFor(room) });
    state.status = "ready";
  } catch (err) {
    const notReady = err && (err.code === "unavailable" || err.code === "http_503");
    state.status = notReady ? "not-ready" : "failed";
    state.text = notReady ? "The analysis is not ready yet (the advisor is warming up)."
      : `No analysis: ${(err && (err.message || err.code)) || err}`;
  }
  const current = replayView ? replay && replay.analysis : analysis;
  if (current === state) renderAnalysis(body, state, retry);
}

/** A decision in words: "kept 5 5 after roll 1" / "scored Chance". */
function decisionText(d, which) {
  if (d.kind === "keep") {
    const keep = d[`${which}_keep`] || [];
    return keep.length === 5 ? "stop and score" : keep.length ? `keep ${keep.join(" ")}`
      : "reroll all five";
  }
  const box = d[`${which}_box`];
  return box ? `score ${LABELS[box] || box}` : "take the +100 bonus";
}

/** Per player: total and mean expected loss, and the decisions that cost points, worst first. */
function renderAnalysis(container, state, retry) {
  if (state.status === "loading") {
    container.replaceChildren(el("p", { class: "muted" }, "Analysing the game…"));
    return;
  }
  if (state.status !== "ready") {
    container.replaceChildren(el("p", { class: "analysis-error" }, state.text, " ",
      el("button", { type: "button", class: "analysis-retry", onclick: retry }, "Retry")));
    return;
  }
  container.replaceChildren(...state.data.players.map((p) => {
    const costly = p.decisions.filter((d) => d.loss >= 0.05)
      .sort((a, b) => b.loss - a.loss);
    const shown = costly.slice(0, ANALYSIS_SHOWN);
    return el("div", { class: "analysis-player", dataset: { player: p.player } },
      el("h4", {}, p.name, " ", cpuBadge(p)),
      el("p", { class: "analysis-summary" },
        `Expected points lost: ${p.total_loss.toFixed(1)} in all, ` +
        `${p.mean_loss.toFixed(2)} per decision (${p.decisions.length} decisions).`),
      costly.length ? el("ol", { class: "analysis-list" }, ...shown.map((d) => el("li", {},
        `Turn ${d.turn}, roll ${d.roll}: ${decisionText(d, "chosen")} ` +
        `(best: ${decisionText(d, "best")}) · −${d.loss.toFixed(1)}`)))
        : el("p", { class: "muted" }, "No costly decision: optimal play throughout."),
      costly.length > shown.length ? el("p", { class: "muted" },
        `and ${costly.length - shown.length} smaller ones`) : null);
  }));
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
  $("replay-analysis").hidden = !replay.analysis;
  $("replay-analysis-button").hidden = Boolean(replay.analysis);
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
  $("play-level").value = LEVELS.includes(localStorage.getItem(LEVEL_KEY))
    ? localStorage.getItem(LEVEL_KEY) : "medium";
  $("play-level").addEventListener("change", () =>
    localStorage.setItem(LEVEL_KEY, $("play-level").value));
  $("seats").addEventListener("input", limitComputers);
  limitComputers();
  $("add-computer").addEventListener("click", addComputer);
  $("ask-hint").addEventListener("click", askHint);
  $("take-bonus").addEventListener("click", takeBonus);
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
  $("replay-analysis-button").addEventListener("click", () => {
    loadAnalysis(replay.room, { replayView: true });
    renderReplay();
    $("replay-analysis-title").scrollIntoView({ block: "nearest" });
  });
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
  // Keyboard play: r rolls, 1-5 hold or release a die, h asks for a hint.
  if (e.key === "r") roll();
  else if (e.key === "h") askHint();
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

// Yahtzee in the browser: lobby, table, spectator view and replays.
//
// The protocol lives in yahtzee-client.js (commands, acks, resume by seq, expect_seq, join and
// create keys); the room model in room-model.js; the fair-dice check in fairdice.js. This file
// is the page: one click seats you against computer players (a default name, kept in
// localStorage), every view has an address (#/room/ID, #/watch/ID, #/replay/ID?turn=N: the
// server serves only /, so the routes live in the fragment, which no server ever sees), the seat
// is kept in localStorage (a closed tab or a restarted browser offers "Resume game"; a reload
// resumes at once), the table is drawn from the model after every event, and the lobby is live
// (pushed by the server, GET /lobby). Protocol 1.2: computer players, the advisor (Hint), the
// +100 take of `bonus_turn` rooms and the analysis of a finished game. Protocol 1.3: the page
// remembers the player (a guest made with POST /players the first time it takes a seat, its
// token kept in localStorage and presented in `hello` on every connection; never in a URL, never
// logged), shows the profile and history (#/player/ID), replays archived games (GET /games/{id})
// once their room left the server, and the rematch (offer_rematch; spectators follow). A server
// without a database (POST /players answers 503) leaves the page anonymous, silently.
// Protocol 1.4: leaderboards (#/leaderboards/BOARD) and duplicate tournaments (#/tournaments,
// #/tournaments/ID: enter with the remembered player, play the entry at the table, standings).
//
// Text from other people (names) is only ever inserted with textContent, never as HTML.

import {
  YahtzeeClient, createGuest, createTournament, enterTournament, fetchAnalysis, fetchEventLog,
  fetchGame, fetchLeaderboard, fetchPlayer, fetchPlayerGames, fetchRoom, fetchRooms,
  fetchStandings, fetchTournament, fetchTournamentListing, fetchTurns, randomKey,
} from "./yahtzee-client.js";
import {
  BOXES, LABELS, UPPER_BONUS_THRESHOLD, applyEvent, canTakeBonus, describeEvent, fromSnapshot,
  historyOf, initialModel, nameOf, playerOf, standings,
} from "./room-model.js";
import { verifyLog } from "./fairdice.js";

const SEAT_KEY = "yahtzee.session";     // localStorage: the seat (or watched room), kept
const ACTIVE_KEY = "yahtzee.active";    // sessionStorage: this tab is at that table
const NAME_KEY = "yahtzee.name";        // localStorage: the player's name (a default at first)
const SOUND_KEY = "yahtzee.sound";      // localStorage: "off" silences the page (on by default)
const LEVEL_KEY = "yahtzee.computerLevel";  // localStorage: the settings of "Play now"
const COUNT_KEY = "yahtzee.computerCount";
const SPEED_KEY = "yahtzee.computerSpeed";
const IDENTITY_KEY = "yahtzee.identity";  // localStorage: the remembered player {player, name, token}
const ENTRIES_KEY = "yahtzee.entries";    // localStorage: the player's tournament entries
const HISTORY_SHOWN = 20;            // games listed on a profile
const TOURNAMENT_POLL_MS = 10000;    // an open tournament's standings, while its view is shown
const ENTRIES_KEPT = 20;             // tournaments whose entries this browser remembers
const LOBBY_POLL_MS = 3000;          // polling GET /rooms, when the lobby stream fails
const LOBBY_STREAM_FAILURES = 3;     // stream errors in a row (no list between) before polling
const REPLAY_SKIPS = new Set(["spectators", "player_disconnected", "player_reconnected"]);
// Events that leave the game as it was (presence only): they keep the advice shown.
const PRESENCE = REPLAY_SKIPS;
const LEVELS = ["easy", "medium", "hard", "optimal"];
/** Computer speeds: the room's `computer_delay_ms` (null: the server's default). */
const SPEEDS = { instant: 0, fast: 150, normal: null };
const HINT_RETRY_MS = 1500;          // the advisor is warming up: ask again after this
const HINT_ATTEMPTS = 20;
const ANALYSIS_SHOWN = 10;           // costly decisions listed per player
const CELEBRATE_MS = 2400;
const SPOKEN_FACES = ["", "one", "two", "three", "four", "five", "six"];
// Pip positions (1-9 in a 3 x 3 grid, row by row) for each face.
const PIPS = { 1: [5], 2: [3, 7], 3: [3, 5, 7], 4: [1, 3, 7, 9], 5: [1, 3, 5, 7, 9],
  6: [1, 3, 4, 6, 7, 9] };

/**
 * Every error code of the protocol (SPEC section 9.1) and the page's own, as a sentence for
 * people: no code, no phase name. An unknown code (a newer server) shows the server's message.
 */
const FRIENDLY = {
  malformed: "The page sent something the server could not read. Reload the page and try again.",
  unknown_type: "This server does not understand that request: reload the page to update it.",
  missing_field: "That request was incomplete. Reload the page and try again.",
  invalid_field: "That value is not accepted. Check what you entered and try again.",
  out_of_range: "That number is out of range. Check what you entered and try again.",
  frame_too_large: "That request was too large for the server.",
  too_deep: "That request was too complicated for the server.",
  string_too_long: "That text is too long.",
  wrong_frame_type: "The connection got mixed up. Reload the page.",
  rate_limited: "Too many clicks in a short time: wait a moment, then try again.",
  room_not_found: "That room does not exist any more.",
  invite_required: "This room is private: you need the invitation link from its host.",
  room_full: "Every seat in this room is taken, but you can watch the game.",
  bad_token: "Your seat in that room is no longer valid.",
  not_in_room: "You are not at a table right now.",
  already_in_room: "You are already at a table: leave it first.",
  spectator_cannot_act: "You are watching this game: only the players can move.",
  conflict: "Someone changed the table at the same moment: try again.",
  stale_state: "The table changed before your move arrived: look again and retry.",
  internal_error: "Something went wrong on the server. Try again in a moment.",
  unavailable: "The server is busy right now. Try again in a moment.",
  unsupported: "This server does not offer that.",
  hints_disabled: "Hints are turned off in this game.",
  wrong_phase: "That move is not possible at this point of the turn.",
  game_not_started: "The game has not started yet.",
  game_already_started: "This game has already started, but you can watch it.",
  game_over: "This game is over.",
  already_joined: "You already have a seat in this room.",
  not_a_player: "Only the players of this game can do that.",
  not_host: "Only the host can do that.",
  not_your_turn: "It is not your turn.",
  must_roll_first: "Roll the dice first.",
  no_rolls_left: "No rolls left this turn: pick a box to score.",
  invalid_dice: "Those dice cannot be held or kept right now.",
  nothing_to_roll: "All five dice are held: release one to roll, or pick a box.",
  category_taken: "That box is already filled.",
  box_not_allowed: "The Joker rule does not allow that box with these dice.",
  unknown_box: "This game has no such box.",
  invalid_name: "That name cannot be used: pick another one.",
  // Remembered players (v1.3).
  bad_player_token: "This browser's player is not known here any more: you play as a guest.",
  player_token_revoked: "This browser's player was signed out: you play as a guest.",
  bad_jwt: "Your sign-in could not be checked. Sign in again.",
  jwt_expired: "Your sign-in has expired. Sign in again.",
  foreign_jwt: "That sign-in is not for this server.",
  name_taken: "Another player already has that name: pick another one.",
  identity_linked: "That player is already linked to an account.",
  player_not_found: "No player has this address.",
  game_not_found: "That game is not in the archive.",
  // Quick play (v1.4).
  identity_required: "Quick play and rated rooms need a remembered player, and this server keeps none.",
  rated_no_computers: "A rated room is for people only: set Computer players to 0.",
  unknown_board: "There is no such leaderboard.",
  unknown_period: "That leaderboard has no such period.",
  // Duplicate tournaments (v1.4).
  tournament_not_found: "No tournament has this address (or its invite code is wrong).",
  tournament_not_started: "This tournament has not started yet.",
  tournament_closed: "This tournament is over: no more entries or moves.",
  tournament_full: "This tournament has all the entries it takes.",
  already_entered: "You have used every entry this tournament allows.",
  not_allowed: "You may not do that here.",
  watch_not_allowed: "This tournament's games can be watched only after it ends.",
  already_queued: "You are already looking for a game (maybe in another window).",
  not_queued: "You were not waiting for a game any more.",
  // The page's own (the client library and the HTTP helpers).
  closed: "The connection to the server was closed. Reload the page.",
  connection_lost: "The connection dropped: reconnecting…",
  connection_failed: "The server cannot be reached. Check your connection and reload.",
  http_404: "That room does not exist any more.",
  http_403: "This room is private: you need the invitation link from its host.",
  http_503: "The server is busy right now. Try again in a moment.",
};

/** A sentence for a refusal (a CommandError or any error). */
function friendlyError(err) {
  const code = err && err.code;
  if (code && FRIENDLY[code]) return FRIENDLY[code];
  const message = (err && err.message) || "";
  // A newer server's code: its message, without identifiers written with underscores.
  if (message) return message.replace(/\b[a-z]+(?:_[a-z]+)+\b/g, (w) => w.replace(/_/g, " "));
  return "Something went wrong. Try again in a moment.";
}

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

/** The remembered player of this browser ({player, name, token}) or null (v1.3). */
let identity = storedIdentity();
/** Set once the server said it keeps no players (503, `unsupported`): anonymous, silently. */
let playersOff = false;
let identityMaking = null;    // the POST /players under way
const client = new YahtzeeClient(wsUrl(), { clientName: "yahtzee-web",
  playerToken: identity ? identity.token : null });
/** This tab's seat or watched room: {room, role, token?, player?, inviteCode?, name?, auto?,
 * seed?} */
let session = null;
let model = null;             // the room as the page knows it
let moves = new Map();        // seq -> line of the move history
let roomEvents = new Map();   // seq -> event of the room at the table (the log, then live)
let rolling = new Set();      // dice indexes to animate on the next draw
let replay = null;            // {room, inviteCode, states, lines, turns, at, analysis, events}
let lobbyFeed = null;         // stops the lobby feed while the lobby is shown
let lobbyMode = null;         // how the lobby list arrives: "stream", "polling" or null
let liveRooms = [];           // the lobby's last list
/** The advice shown: {seq, status: "asking"|"warming"|"shown"|"failed", result?, text?} */
let advice = null;
/** The analysis of the finished room shown at game over: {room, status, data?, text?} */
let analysis = null;
/** The leaderboard shown (#/leaderboards/BOARD, v1.4): {board, period, status, data?, text?} */
let boards = null;
/** The tournaments shown (v1.4): #/tournaments (id null: the list) or #/tournaments/ID:
 * {id, invite, status: "loading"|"ready"|"error", list?, data?, board?, text?} */
let tournamentView = null;
let tournamentPoll = null;    // refreshes an open tournament's standings while it is shown
/** May remembered players create tournaments here (`GET /tournaments`)? null: not known yet. */
let mayCreateTournaments = null;
/** A friend's link being shown: {room, invite, status: "loading"|"ready"|"error", snapshot?} */
let invitation = null;
/** The dice check of the finished room: {room, status, verdict?} */
let verification = null;
/** The profile shown (#/player/ID): {player, status: "loading"|"ready"|"error", data?, games?,
 * text?} */
let profile = null;
let scrolledFor = null;       // the turn whose column was last scrolled into view
let celebrateTimer = null;

function wsUrl() {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  return `${scheme}//${location.host}/ws`;
}

function storedIdentity() {
  try {
    const value = JSON.parse(localStorage.getItem(IDENTITY_KEY));
    return value && value.player && value.token ? value : null;
  } catch { return null; }
}

/** A guest name the server accepts (2..24 letters, digits, single spaces), or null. */
function guestNameFrom(name) {
  const cleaned = (name || "").normalize("NFC").replace(/[^\p{L}\p{M}\p{N} ]/gu, " ")
    .replace(/ +/g, " ").trim().slice(0, 24).trim();
  return cleaned.length >= 2 ? cleaned : null;
}

/**
 * The remembered player, made the first time it is needed (a seat): a guest under the name
 * being played (or "Player NNNNNN" when that one cannot be a guest's or is taken), its token
 * kept in localStorage and presented on the connection before the seat is taken. Without a
 * database (503), rate limited, or any other failure: null, and the page plays anonymously.
 * @returns {Promise<object|null>}
 */
function ensureIdentity() {
  if (identity || playersOff) return Promise.resolve(identity);
  if (!identityMaking) {
    identityMaking = makeIdentity().finally(() => { identityMaking = null; });
  }
  return identityMaking;
}

async function makeIdentity() {
  const wanted = guestNameFrom(storedName());
  const names = [wanted, wanted && `${wanted.slice(0, 17)} ${100 + Math.floor(Math.random() * 900)}`,
    `Player ${100000 + Math.floor(Math.random() * 900000)}`].filter(Boolean);
  for (const name of names) {
    try {
      const made = await createGuest("", name);
      identity = { player: made.player, name: made.name, token: made.token };
      localStorage.setItem(IDENTITY_KEY, JSON.stringify(identity));
      if (!await client.setPlayerToken(identity.token) && !client.playerToken) return null;
      renderIdentity();
      return identity;
    } catch (err) {
      if (err && ["name_taken", "invalid_name"].includes(err.code)) continue;
      if (err && ["unavailable", "http_503", "unsupported"].includes(err.code)) playersOff = true;
      return null;
    }
  }
  return null;
}

/** The server refused the stored token: a bad or revoked one is forgotten (a new guest is
 * made at the next seat); without a database the page stays anonymous. Silently. */
function onIdentityRefused(err) {
  if (["unsupported", "unavailable"].includes(err.code)) {
    playersOff = true;
  } else {
    identity = null;
    localStorage.removeItem(IDENTITY_KEY);
  }
  renderIdentity();
}

function renderIdentity() {
  const link = $("profile-link");
  link.hidden = !identity;
  if (identity) link.href = routeHash({ view: "player", room: identity.player });
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

// ------------------------------------------------------------------ addresses

const intOrNull = (text) => (text !== null && /^\d+$/.test(text) ? Number(text) : null);

/**
 * The view a fragment names: #/ (lobby), #/room/ID, #/watch/ID, #/replay/ID?turn=N&roll=R,
 * each with ?invite=CODE for a private room; the older #room=ID&invite=CODE&watch=1 too.
 */
function parseRoute(hash = location.hash) {
  const raw = hash.replace(/^#/, "");
  if (raw.startsWith("/")) {
    const [path, query = ""] = raw.split("?");
    const params = new URLSearchParams(query);
    let parts;
    try { parts = path.split("/").filter(Boolean).map(decodeURIComponent); } catch { parts = []; }
    const invite = params.get("invite") || null;
    if (parts[0] === "tournaments") {
      return parts[1] ? { view: "tournament", room: parts[1], invite } : { view: "tournaments" };
    }
    if (["room", "watch", "replay", "player", "leaderboards"].includes(parts[0]) && parts[1]) {
      return { view: parts[0], room: parts[1], invite, turn: intOrNull(params.get("turn")),
        roll: intOrNull(params.get("roll")) };
    }
    return { view: "lobby" };
  }
  const params = new URLSearchParams(raw);
  const room = params.get("room");
  if (!room) return { view: "lobby" };
  return { view: params.get("watch") === "1" ? "watch" : "room", room,
    invite: params.get("invite") || null, turn: null, roll: null };
}

/** The fragment of a view ("" for the lobby). */
function routeHash(route) {
  if (!route || route.view === "lobby") return "";
  if (route.view === "tournaments") return "#/tournaments";
  const query = new URLSearchParams();
  if (route.invite) query.set("invite", route.invite);
  if (route.turn !== null && route.turn !== undefined) query.set("turn", String(route.turn));
  if (route.roll !== null && route.roll !== undefined) query.set("roll", String(route.roll));
  const tail = query.toString() ? `?${query}` : "";
  const folder = route.view === "tournament" ? "tournaments" : route.view;
  return `#/${folder}/${encodeURIComponent(route.room)}${tail}`;
}

/** A link to a view, for sharing. */
function routeLink(route) {
  return `${location.origin}/${routeHash(route)}`;
}

let shownHash = location.hash;   // the fragment the page last showed or followed
let pending = null;               // the view being entered (its address stays meanwhile)

/** The address of what the page shows now. */
function currentRoute() {
  if (pending) return pending;
  if (session) {
    return { view: session.role === "player" ? "room" : "watch", room: session.room,
      invite: session.inviteCode || null };
  }
  if (profile) return { view: "player", room: profile.player };
  if (boards) return { view: "leaderboards", room: boards.board };
  if (tournamentView) {
    return tournamentView.id === null ? { view: "tournaments" }
      : { view: "tournament", room: tournamentView.id, invite: tournamentView.invite };
  }
  if (replay) {
    const turn = replay.turns[replay.at];
    return { view: "replay", room: replay.room, invite: replay.inviteCode || null,
      turn: turn ? turn : null, roll: null };
  }
  if (invitation) return { view: "room", room: invitation.room, invite: invitation.invite };
  return { view: "lobby" };
}

/** Put the address of the view shown in the location bar (a new history entry per view). */
function syncAddress() {
  const hash = routeHash(currentRoute());
  const now = location.hash === "#/" ? "" : location.hash;
  if (hash === now) return;
  const before = parseRoute(now);
  const after = parseRoute(hash);
  const sameView = before.view === after.view && before.room === after.room;
  history[sameView ? "replaceState" : "pushState"](null, "", hash || location.pathname);
  shownHash = location.hash;
}

/** Back, forward, an edited address or a clicked link: show that view. */
async function onNavigate() {
  if (location.hash === shownHash) return;
  shownHash = location.hash;
  await follow(parseRoute());
}

async function follow(route) {
  if (route.view !== "lobby") pending = route;
  try {
    await followRoute(route);
  } finally {
    if (pending === route) pending = null;
  }
  render();
}

async function followRoute(route) {
  if (route.view === "lobby") {
    invitation = null;
    replay = null;
    profile = null;
    boards = null;
    tournamentView = null;
    if (session && !await leave()) syncAddress();
    else render();
    return;
  }
  if (session && session.room === route.room && route.view !== "replay") return;
  if (session) {
    // Another room's address while at a table: a finished game is left quietly, a game in
    // progress only after the question.
    if (!await leave()) {
      pending = null;
      syncAddress();
      return;
    }
  }
  profile = null;
  boards = null;
  tournamentView = null;
  if (route.view === "tournaments" || route.view === "tournament") {
    invitation = null;
    replay = null;
    if (route.view === "tournaments") await openTournaments();
    else await openTournament(route.room, route.invite);
    return;
  }
  if (route.view === "leaderboards") {
    invitation = null;
    replay = null;
    await openBoards(route.room, "all");
    return;
  }
  if (route.view === "player") {
    invitation = null;
    replay = null;
    await openProfile(route.room);
    return;
  }
  if (route.view === "replay") {
    invitation = null;
    await openReplay(route.room, { turn: route.turn, roll: route.roll, inviteCode: route.invite });
    return;
  }
  if (route.view === "watch") {
    invitation = null;
    await watchRoom(route.room, route.invite);
    return;
  }
  const seat = storedSeat();
  if (seat && seat.room === route.room) {
    await resumeSeat();
    return;
  }
  replay = null;
  await showInvitation(route);
}

// ------------------------------------------------------------------ feedback

let noticeTimer = null;
/** A message at the bottom of the screen, optionally with one action button. */
function notify(text, action = null) {
  const box = $("notice");
  $("notice-text").textContent = text || "";
  box.hidden = !text;
  const button = $("notice-action");
  button.hidden = !action;
  if (action) {
    button.textContent = action.label;
    button.onclick = () => { box.hidden = true; action.run(); };
  }
  clearTimeout(noticeTimer);
  if (text) noticeTimer = setTimeout(() => { box.hidden = true; }, action ? 12000 : 6000);
}

function fail(err) {
  notify(friendlyError(err));
}

// Each announcement is its own line in the live region, so a score followed at once by the
// next turn is read out whole; only the last few lines are kept.
function announce(text) {
  if (!text) return;
  const region = $("announce");
  region.append(el("p", {}, text));
  while (region.childElementCount > 4) region.firstElementChild.remove();
}

const soundOn = () => localStorage.getItem(SOUND_KEY) !== "off";

let audio = null;
function beep(frequency, ms, delayMs = 0) {
  if (!soundOn()) return;
  try {
    audio = audio || new AudioContext();
    const osc = audio.createOscillator();
    const gain = audio.createGain();
    osc.frequency.value = frequency;
    gain.gain.value = 0.06;
    osc.connect(gain).connect(audio.destination);
    const at = audio.currentTime + delayMs / 1000;
    osc.start(at);
    osc.stop(at + ms / 1000);
  } catch { /* no audio: the game goes on silently */ }
}

function alertMyTurn() {
  beep(880, 180);
  if (document.hidden && "Notification" in window && Notification.permission === "granted") {
    new Notification("Yahtzee: your turn", { body: `Room ${session.room}`, tag: "yahtzee-turn" });
  }
}

/** A Yahtzee: a banner for a moment (still with reduced motion), a fanfare, an announcement. */
function celebrate(text) {
  $("celebrate-text").textContent = text;
  $("celebrate").hidden = false;
  announce(text);
  [523, 659, 784, 1047].forEach((f, i) => beep(f, 140, i * 120));
  clearTimeout(celebrateTimer);
  celebrateTimer = setTimeout(() => { $("celebrate").hidden = true; }, CELEBRATE_MS);
}

/** A yes/no question in a modal that holds the focus; resolves true for yes. */
function ask(text, yesLabel) {
  return new Promise((resolve) => {
    const returnFocus = document.activeElement;
    $("confirm-text").textContent = text;
    $("confirm-yes").textContent = yesLabel;
    $("confirm").hidden = false;
    // Everything behind the dialog is out of reach of the keyboard and screen readers.
    for (const id of ["lobby", "table", "replay"]) $(id).inert = true;
    document.querySelector("header.top").inert = true;
    const close = (answer) => {
      $("confirm").hidden = true;
      for (const id of ["lobby", "table", "replay"]) $(id).inert = false;
      document.querySelector("header.top").inert = false;
      if (returnFocus && returnFocus.isConnected) returnFocus.focus();
      resolve(answer);
    };
    $("confirm-yes").onclick = () => close(true);
    $("confirm-no").onclick = () => close(false);
    // A second Enter (or key repeat) must not confirm by accident.
    $("confirm-no").focus();
  });
}

/** Tab and Shift+Tab go round the dialog's buttons. */
function trapFocus(e) {
  const items = [$("confirm-yes"), $("confirm-no")];
  const at = items.indexOf(document.activeElement);
  e.preventDefault();
  const next = e.shiftKey ? (at <= 0 ? items.length - 1 : at - 1) : (at + 1) % items.length;
  items[next].focus();
}

// ------------------------------------------------------------------ events from the client

// The client delivers the snapshot of the room it is entering, which may come before the page
// has its session (the join's ack follows the snapshot): keep it either way.
function onSnapshot(snapshot) {
  const newRoom = !model || model.room !== snapshot.room;
  model = fromSnapshot(snapshot);
  advice = null;  // a snapshot (a new room, a resync) may show another table
  if (newRoom) {
    moves = new Map();
    roomEvents = new Map();
    scrolledFor = null;
  }
  loadHistory(snapshot);
  render();
}

function onEvent(ev) {
  if (!model || ev.room !== model.room) return;
  const line = describeEvent(model, ev);
  const wasMyTurn = myTurn();
  const cheer = cheerFor(ev);
  applyEvent(model, ev);
  roomEvents.set(ev.seq, ev);
  if (!PRESENCE.has(ev.type)) advice = null;  // the advice was for the table as it was
  if (line) moves.set(ev.seq, line);
  if (ev.type === "rolled") {
    rolling = new Set([0, 1, 2, 3, 4].filter((i) => !ev.held.includes(i)));
    beep(320, 60);
  }
  if (ev.type === "player_disconnected") awaySince.set(ev.player, Date.now());
  announceEvent(ev, line);
  if (!wasMyTurn && myTurn()) alertMyTurn();
  render();
  if (cheer) celebrate(cheer);
  if (ev.type === "rematch_offered") onRematchOffered(ev);
  maybeAutoStart();
}

/**
 * A rematch was offered (v1.3): a spectator follows to the new room; another player is asked
 * (Accept sends the same offer, which seats them in the same room).
 */
function onRematchOffered(ev) {
  if (!session || !model) return;
  if (session.role === "spectator") {
    notify("A rematch: following the players to the new table.");
    followRematch(ev.rematch_room, ev.invite_code ?? null);
  } else if (ev.player !== session.player) {
    notify(`${nameOf(model, ev.player)} offers a rematch`, { label: "Accept", run: rematch });
  }
}

/** A spectator watches the rematch room instead. */
async function followRematch(room, inviteCode) {
  await client.leave().catch(() => {});
  await watchRoom(room, inviteCode);
}

/** The words of a celebration for a Yahtzee scored (or an extra one), else null. */
function cheerFor(ev) {
  if (!["scored", "bonus_taken"].includes(ev.type)) return null;
  const p = playerOf(model, ev.player);
  if (!p) return null;
  const who = session && ev.player === session.player ? "You" : p.name;
  if (typeof ev.yahtzee_bonus === "number" && ev.yahtzee_bonus > p.totals.yahtzee_bonus) {
    return `${who}: another Yahtzee! +100`;
  }
  if (ev.type === "scored" && ["yahtzee", "yatzy"].includes(ev.box) && ev.points > 0) {
    return `YAHTZEE! ${who} scored ${ev.points}`;
  }
  return null;
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
    "player_left", "rematch_offered"].includes(ev.type)) {
    announce(line);
  }
}

// The move history up to the snapshot comes from the room's log (so a reload or a late
// spectator sees it all); later lines come from the live events.
async function loadHistory(snapshot) {
  try {
    const events = await fetchEventLog("", snapshot.room, { inviteCode: inviteFor(snapshot.room) });
    if (!model || model.room !== snapshot.room) return;
    for (const ev of events) if (!roomEvents.has(ev.seq)) roomEvents.set(ev.seq, ev);
    for (const { seq, text } of historyOf(initialModel(snapshot), events)) {
      if (!moves.has(seq)) moves.set(seq, text);
    }
    renderLog();
    if (model.status === "finished" && analysis && analysis.status === "ready") renderGameOver(
      session && session.role === "player" ? session.player : null);
  } catch { /* no log (an older server, a private room): the live lines still come */ }
}

// The invite code of a room being entered or sat at (the snapshot can come before the session).
let entering = null;  // {room, inviteCode} while a join / spectate / rejoin is under way
function inviteFor(room) {
  if (session && session.room === room) return session.inviteCode || null;
  if (replay && replay.room === room) return replay.inviteCode || null;
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

/** The stored name, or a new default one ("Player 417"), kept for next time. */
function storedName() {
  let name = (localStorage.getItem(NAME_KEY) || "").trim();
  if (!name) {
    name = `Player ${100 + Math.floor(Math.random() * 900)}`;
    localStorage.setItem(NAME_KEY, name);
  }
  return name;
}

/** The name to play under: what is typed, else the default; never asks. */
function myName(field = "name") {
  const typed = $(field).value.trim();
  const name = typed || storedName();
  localStorage.setItem(NAME_KEY, name);
  $("name").value = name;
  $("invite-name").value = name;
  return name;
}

function enterRoom(next) {
  session = next;
  invitation = null;
  replay = null;
  verification = null;
  if (model && model.room !== next.room) {
    model = null;
    moves = new Map();
    roomEvents = new Map();
  }
  keepSession();
  render();
}

/** A seat; the page adds a client seed of its own to the room's dice (protocol/fairdice.md). */
async function joinRoom(room, inviteCode, extra = {}, nameField = "name") {
  const name = myName(nameField);
  await ensureIdentity();  // the seat is linked to the remembered player (none: anonymous)
  entering = { room, inviteCode: inviteCode || null };
  const seed = `web-${randomKey(12)}`;
  try {
    const result = await client.join(room, name, { inviteCode: inviteCode || null, seed });
    enterRoom({ room, role: "player", token: result.token, player: result.player,
      inviteCode: inviteCode || null, name, seed, ...extra });
    maybeAutoStart();  // a rematch with computers is full as soon as its person sits down
    return true;
  } catch (err) {
    if (["game_already_started", "room_full", "game_over"].includes(err.code)) {
      notify(friendlyError(err), err.code === "game_over"
        ? { label: "See the replay", run: () => openReplay(room, { inviteCode }) }
        : { label: "Watch it", run: () => watchRoom(room, inviteCode) });
    } else {
      fail(err);
    }
    return false;
  }
}

async function watchRoom(room, inviteCode) {
  entering = { room, inviteCode: inviteCode || null };
  try {
    await client.spectate(room, { inviteCode: inviteCode || null });
    enterRoom({ room, role: "spectator", inviteCode: inviteCode || null });
  } catch (err) {
    fail(err);
    render();
  }
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
    notify(`Could not return to room ${seat.room}: ${friendlyError(err)}`);
    if (["bad_token", "room_not_found", "invite_required", "game_over"].includes(err.code)) {
      forgetSeat();
    }
    render();
  }
}

/** The room's computer delay for a speed name ({} for the server's default). */
function speedFields(speed) {
  const ms = SPEEDS[speed];
  return ms === null || ms === undefined ? {} : { computer_delay_ms: ms };
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
  const perMove = Number($("correspondence").value) || 0;
  return {
    seats,
    public: $("public").checked,
    // v1.4: a correspondence room has a long clock per move instead of the turn timer
    turn_seconds: perMove ? 0 : Number($("turn-seconds").value) || 0,
    ...(perMove ? { correspondence: { seconds_per_move: perMove } } : {}),
    options,
    computers: Array.from({ length: computers }, () => ({ level })),
    hints: $("hints").checked,
    // v1.4: a rated room (every person a remembered player, no computers)
    ...($("rated").checked ? { rated: true } : {}),
    ...speedFields($("computers-speed").value),
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
  try {
    const fields = roomFields();
    if (fields.rated) await ensureIdentity();  // a rated room is made by a remembered player
    const created = await client.createRoom(fields);
    await joinRoom(created.room, created.invite_code);
  } catch (err) { fail(err); }
}

/** The settings of "Play now" (More options), kept in localStorage. */
function playSettings() {
  const count = Math.max(1, Math.min(7, Number($("play-computers").value) || 2));
  const level = LEVELS.includes($("play-level").value) ? $("play-level").value : "medium";
  const speed = $("play-speed").value in SPEEDS ? $("play-speed").value : "fast";
  return { count, level, speed };
}

function keepPlaySettings() {
  const { count, level, speed } = playSettings();
  localStorage.setItem(COUNT_KEY, String(count));
  localStorage.setItem(LEVEL_KEY, level);
  localStorage.setItem(SPEED_KEY, speed);
  renderPlayNowWho();
}

/**
 * Play now: one click seats you against the server's computer players (named by the server)
 * in a new public room that starts at once, under the default name if none was typed.
 */
async function playNow() {
  const { count, level, speed } = playSettings();
  keepPlaySettings();
  const button = $("play-now");
  button.setAttribute("aria-busy", "true");
  try {
    // auto_start (v1.3): the seat this page takes is the last one, so the game starts with it.
    const created = await client.createRoom({ seats: count + 1, public: true,
      options: { first_player: "roll_off" }, computers: Array.from({ length: count },
        () => ({ level })), hints: true, auto_start: true, ...speedFields(speed) });
    await joinRoom(created.room, created.invite_code);
  } catch (err) {
    fail(err);
  } finally {
    button.removeAttribute("aria-busy");
  }
}

/**
 * Quick play (protocol 1.4): wait for people of a similar rating in a two-seat game; the
 * window of ratings widens while the player waits, and after the server's wait computers fill
 * the open seats. The page says which. Needs a remembered player (made here at once).
 */
async function quickPlayRated() {
  const status = $("rated-status");
  if (!await ensureIdentity()) {
    fail({ code: "identity_required" });
    return;
  }
  $("rated-play").hidden = true;
  $("rated-cancel").hidden = false;
  status.hidden = false;
  status.textContent = "Looking for players… (the range of ratings widens as you wait)";
  const onStatus = (s) => {
    status.textContent = `Looking for players… (widening: within ${s.window} rating points, ` +
      `${s.waiting} waiting, ${Math.round(s.waited_ms / 1000)} s)`;
  };
  const unsubscribe = client.on("quick-play-status", onStatus);
  try {
    const match = await client.quickPlay({ seats: 2, computers: true });
    enterRoom({ room: match.room, role: "player", token: match.token, player: match.player,
      inviteCode: match.invite_code || null, name: identity ? identity.name : myName("name") });
    notify(quickMatchText(match));
  } catch (err) {
    if (err.code !== "cancelled") fail(err);
  } finally {
    unsubscribe();
    status.hidden = true;
    $("rated-play").hidden = false;
    $("rated-cancel").hidden = true;
  }
}

/** What the player is told of a quick-play match: people, or computers that filled seats. */
function quickMatchText(match) {
  const people = match.opponents.length ? match.opponents.join(", ") : "";
  if (!match.computers.length) return `Matched with ${people}.`;
  const bots = match.computers.map((c) => `${c.name || "a computer"} (${c.level})`).join(", ");
  return (people ? `Matched with ${people}; n` : "N") +
    `o one else came in time, so computers filled the open seats: ${bots}.`;
}

/** Play a friend: a private two-seat room; the table shows the link to send. */
async function playFriend() {
  try {
    const created = await client.createRoom({ seats: 2, public: false,
      options: { first_player: "roll_off" }, hints: true, auto_start: true });
    await joinRoom(created.room, created.invite_code);
  } catch (err) { fail(err); }
}

/** Watch a live game: the public game in progress with the most people at it. */
async function watchLive() {
  let rooms = liveRooms;
  try { rooms = await fetchRooms(""); } catch { /* the lobby's list */ }
  const playing = rooms.filter((r) => r.status === "playing")
    .sort((a, b) => (b.spectators + b.players.length) - (a.spectators + a.players.length));
  if (!playing.length) {
    notify("No game is being played right now. Press Play now: others can watch yours.");
    return;
  }
  await watchRoom(playing[0].room, null);
}

/** Join an open room: a seat in an open public room, or a new 2-seat room that starts when full. */
async function quickPlay() {
  let rooms = [];
  try { rooms = await fetchRooms(""); } catch { rooms = []; }
  const open = rooms.filter((r) => r.status === "lobby" && r.open_seats > 0)
    .sort((a, b) => a.open_seats - b.open_seats);
  for (const room of open) {
    if (await joinRoom(room.room, null, room.auto_start ? {} : { auto: true })) return;
  }
  try {
    const created = await client.createRoom({ seats: 2, public: true,
      options: { first_player: "roll_off" }, auto_start: true });
    await joinRoom(created.room, created.invite_code);
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
 * Rematch (v1.3): `offer_rematch` creates the rematch room at the first offer (same seats,
 * options and computers; it starts by itself once every seat is taken) and seats this player
 * there; every other player's offer (Accept) lands in the same room. The page leaves the
 * finished room and takes the seat with its token. A full rematch can be watched.
 */
async function rematch() {
  if (!session || session.role !== "player" || !model || model.status !== "finished") return;
  const name = session.name;
  const button = $("rematch");
  button.setAttribute("aria-busy", "true");
  try {
    const offer = await client.offerRematch();
    const inviteCode = offer.invite_code || null;
    if (!offer.token) {
      notify("Every seat of the rematch is taken, but you can watch it.",
        { label: "Watch it", run: () => followRematch(offer.room, inviteCode) });
      return;
    }
    await client.leave().catch(() => {});
    entering = { room: offer.room, inviteCode };
    await client.rejoin(offer.room, offer.token);
    client.session.inviteCode = inviteCode;
    enterRoom({ room: offer.room, role: "player", token: offer.token, player: offer.player,
      inviteCode, name });
  } catch (err) {
    fail(err);
  } finally {
    button.removeAttribute("aria-busy");
  }
}

/** Away from the table: the seat is forgotten. */
function clearTable() {
  session = null;
  model = null;
  advice = null;
  verification = null;
  forgetSeat();
}

function backToLobby() {
  clearTable();
  render();
}

/** Leave the table (a forfeit during a game asks first); false when the player stays. */
async function leave() {
  if (!session) return true;
  const playing = model && model.status === "playing" && session.role === "player";
  const question = session.tournament
    ? "Leave your tournament entry? It ends here, with the points scored so far."
    : "Leave the game? You forfeit: your turns are skipped from now on.";
  if (playing && !await ask(question, "Leave and forfeit")) return false;
  try { await client.leave(); } catch (err) { if (err.code !== "not_in_room") fail(err); }
  backToLobby();
  return true;
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

/** After a score the keyboard focus goes back to the Roll button, never to the page's body. */
function focusPlay() {
  if ($("table").hidden || !model) return;
  if (model.status === "finished") {
    ($("rematch").hidden ? $("back") : $("rematch")).focus();
    return;
  }
  $("roll").focus();
}

async function chooseBox(box) {
  if (!myTurn() || model.phase !== "rolled") return;
  const entry = model.preview.find((e) => e.box === box);
  if (!entry || !entry.allowed) return;
  const better = model.preview.filter((e) => e.allowed && e.points > entry.points);
  if (entry.points === 0 && better.length) {
    const best = better.reduce((a, b) => (b.points > a.points ? b : a));
    const ok = await ask(`${LABELS[box]} scores 0 now, while ${LABELS[best.box]} would ` +
      `score ${best.points}. Put 0 in ${LABELS[box]}?`, "Put 0 there");
    if (!ok) return;
  }
  try { await client.score(box); } catch (err) { fail(err); }
  focusPlay();
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
          + "in a moment." : `No hint: ${friendlyError(err)}` };
      break;
    }
  }
  render();
}

/** One line per option of a hint, e.g. "Keep 5 5 5, roll again · 254.1". */
function adviceLines(result) {
  return result.options.map((o) => {
    const expected = o.expected.toFixed(1);
    if (o.kind === "score") {
      const entry = model.preview.find((e) => e.box === o.box);
      const zero = entry && entry.points === 0;
      return `${zero ? "Put 0 in" : "Score"} ${LABELS[o.box] || o.box} · ${expected}`;
    }
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
  focusPlay();
}

async function copyText(input, text) {
  input.value = text;
  input.select();
  try {
    await navigator.clipboard.writeText(text);
    notify("Link copied.");
  } catch { /* no clipboard (plain http): the link is selected in the box */ }
}

async function share() {
  $("share-box").hidden = false;
  await copyText($("share-link"), shareLink());
}

/** The room's link: the invite code in the fragment, which never reaches a server's logs. */
function shareLink() {
  return routeLink({ view: session.role === "player" ? "room" : "watch", room: session.room,
    invite: session.inviteCode || null });
}

// ------------------------------------------------------------------ a friend's link

/** Someone else's room from a link: what it is, who is in it, and one button. */
async function showInvitation(route) {
  invitation = { room: route.room, invite: route.invite || null, status: "loading" };
  render();
  try {
    const snapshot = await fetchRoom("", route.room, { inviteCode: route.invite || null });
    if (!invitation || invitation.room !== route.room) return;
    invitation = { ...invitation, status: "ready", snapshot };
  } catch (err) {
    if (!invitation || invitation.room !== route.room) return;
    invitation = { ...invitation, status: "error", error: err };
  }
  render();
}

function renderInvitation() {
  const shown = Boolean(invitation) && invitation.status !== "error";
  $("invited").hidden = !shown;
  $("hero").hidden = shown;
  if (!invitation) return;
  if (invitation.status === "error") {
    notify(`Room ${invitation.room}: ${friendlyError(invitation.error)}`);
    invitation = null;
    syncAddress();
    return;
  }
  const joinButton = $("invited-join");
  $("invite-name").value = $("invite-name").value || storedName();
  if (invitation.status === "loading") {
    $("invited-text").textContent = `Room ${invitation.room}: loading…`;
    $("invited-players").replaceChildren();
    joinButton.hidden = true;
    $("invited-watch").hidden = true;
    $("invited-replay").hidden = true;
    return;
  }
  const m = fromSnapshot(invitation.snapshot);
  const host = m.host ? nameOf(m, m.host) : null;
  const rules = m.options.rules === "yatzy" ? "Yatzy" : "Yahtzee";
  const seats = `${m.players.length} of ${m.maxSeats} seats taken`;
  const state = { lobby: host ? `${host} is waiting for players` : "waiting for players",
    playing: "the game has started", finished: "the game is over" }[m.status] || m.status;
  $("invited-title").textContent = m.status === "lobby"
    ? (host ? `${host} invites you to a game of ${rules}` : `A game of ${rules} is waiting for you`)
    : `A game of ${rules}`;
  $("invited-text").textContent = `Room ${m.room} · ${state} · ${seats}.`;
  $("invited-players").replaceChildren(...m.players.map((p) => el("li", {},
    el("span", { class: "who" }, p.name), p.player === m.host ? " (host)" : null, " ",
    cpuBadge(p))));
  const open = m.status === "lobby" && m.players.length < m.maxSeats;
  joinButton.hidden = !open;
  joinButton.textContent = host ? `Join ${host}'s game` : "Join the game";
  $("invited-watch").hidden = m.status !== "playing" && !(m.status === "lobby" && !open);
  $("invited-replay").hidden = m.status !== "finished";
  $("invite-name").hidden = !open;
  document.querySelector('label[for="invite-name"]').hidden = !open;
}

// ------------------------------------------------------------------ replays

/**
 * Open a finished game's replay; `turn` (1-based, every turn of the game in order) and `roll`
 * jump to a position: the start of that turn, or the table right after that roll of it.
 */
async function openReplay(room, { turn = null, roll = null, inviteCode = null } = {}) {
  try {
    const { snapshot, events, archived } = await gameLog(room, inviteCode);
    const start = initialModel(snapshot);
    const states = [structuredClone(start)];
    const lines = ["Before the first move"];
    const turns = [0];
    const rolls = [0];
    const running = structuredClone(start);
    let turnNo = 0;
    for (const ev of events) {
      const line = describeEvent(running, ev) || ev.type.replace(/_/g, " ");
      applyEvent(running, ev);
      // Steps are moves: who watched or lost the connection is no step of the game.
      if (REPLAY_SKIPS.has(ev.type)) continue;
      if (ev.type === "turn_changed") turnNo += 1;
      lines.push(line);
      states.push(structuredClone(running));
      turns.push(turnNo);
      rolls.push(ev.type === "rolled" ? ev.roll_number : 0);
    }
    if (session) {
      // A finished game's analysis links here: leave its table quietly first.
      await client.leave().catch(() => {});
      session = null;
      model = null;
      forgetSeat();
    }
    invitation = null;
    profile = null;
    replay = { room, inviteCode: inviteCode || null, states, lines, turns, rolls, at: 0,
      analysis: null, events, archived };
    if (turn !== null) replay.at = stepOf(turn, roll);
    stopLobbyFeed();
    render();
    $("replay-next").focus();
  } catch (err) {
    fail(err);
    render();
  }
}

/**
 * A finished game's first snapshot and whole log: from the room while the server keeps it,
 * else from the archive (`GET /games/{id}`, v1.3; a private game with this browser's player
 * token), whose answer holds the room's settings and every event.
 */
async function gameLog(room, inviteCode) {
  const options = { inviteCode: inviteCode || null };
  try {
    const [snapshot, events] = await Promise.all([fetchRoom("", room, options),
      fetchEventLog("", room, options)]);
    return { snapshot, events, archived: false };
  } catch (err) {
    if (!err || !["room_not_found", "http_404", "invite_required"].includes(err.code)) throw err;
    let game;
    try {
      game = await fetchGame("", room, { token: identity ? identity.token : null });
    } catch { throw err; }  // not archived either: the room's refusal says it best
    return { snapshot: archivedSnapshot(game), events: game.events, archived: true };
  }
}

/** A snapshot before the first move, from an archived game's settings. */
function archivedSnapshot(game) {
  return { type: "snapshot", room: game.room, seq: 0, state: {
    id: game.room, status: "lobby", public: game.public, max_seats: game.seats,
    turn_seconds: game.turn_seconds, options: game.options, host: null, players: [],
    phase: "lobby", order: [], current_player: null, round: 0, dice: [], held: [],
    roll_number: 0, rolls_left: 0, preview: [], turn_deadline_ms: null, spectators: 0,
    hints: game.hints ?? null } };
}

// ------------------------------------------------------------------ profile and history (v1.3)

/** A player's profile and last games (#/player/ID); the own one with the token (private
 * games count then). */
async function openProfile(player) {
  if (session && !await leave()) return;
  replay = null;
  profile = { player, status: "loading" };
  render();
  const token = identity && identity.player === player ? identity.token : null;
  try {
    // v1.4: the own correspondence games (a server without them answers an error: none shown)
    const turns = token ? fetchTurns("", player, token).catch(() => null) : null;
    const [data, games, running] = await Promise.all([fetchPlayer("", player, { token }),
      fetchPlayerGames("", player, { token, limit: HISTORY_SHOWN }), turns]);
    if (!profile || profile.player !== player) return;
    profile = { player, status: "ready", data, games: games.games, running };
  } catch (err) {
    if (!profile || profile.player !== player) return;
    const text = err && err.code === "player_not_found" ? "No player has this address."
      : err && ["unavailable", "http_503"].includes(err.code)
        ? "Player profiles are not available on this server right now."
        : friendlyError(err);
    profile = { player, status: "error", text };
  }
  render();
}

/** "2 d 3 h", "5 h 10 min", "12 min": the time left until `deadline` (server ms). */
function timeLeft(deadline, serverNow) {
  const minutes = Math.max(0, Math.floor((deadline - serverNow) / 60000));
  const days = Math.floor(minutes / 1440);
  const hours = Math.floor((minutes % 1440) / 60);
  if (days) return `${days} d ${hours} h`;
  if (hours) return `${hours} h ${minutes % 60} min`;
  return `${minutes} min`;
}

/** The own correspondence games (GET /players/{id}/turns): the player's turns first. */
function renderTurns(running) {
  const entries = [...running.turns, ...running.games];
  $("no-turns").hidden = entries.length > 0;
  $("turns-list").replaceChildren(...entries.map((g) => {
    const left = g.deadline_ms === null ? "" : ` · ${timeLeft(g.deadline_ms,
      running.server_time_ms)} left`;
    const state = g.my_turn ? "Your turn" : `Waiting for ${g.on_turn}`;
    return el("li", { dataset: { room: g.room, myTurn: String(g.my_turn) } },
      el("span", { class: "room-what" },
        el("strong", {}, state), `${left} · round ${g.round} · ${g.players.join(", ")}`),
      el("span", { class: "room-buttons" },
        el("a", { class: "watch-link", href: routeHash({ view: "watch", room: g.room }),
          "aria-label": `Watch the game with ${g.players.join(", ")}` }, "Watch")));
  }));
}

const percent = (rate) => (rate === null || rate === undefined ? "–"
  : `${Math.round(rate * 100)}%`);

function renderProfile() {
  const p = profile;
  const mine = Boolean(identity && identity.player === p.player);
  $("profile-name").textContent = p.status === "ready"
    ? `${p.data.name}${mine ? " (you)" : ""}` : "Player";
  $("profile-status").textContent = p.status === "loading" ? "Loading…"
    : p.status === "error" ? p.text : "";
  $("profile-stats").hidden = p.status !== "ready";
  $("profile-history").hidden = p.status !== "ready";
  $("profile-turns").hidden = p.status !== "ready" || !p.running;
  if (p.status !== "ready") return;
  if (p.running) renderTurns(p.running);
  const d = p.data;
  const stats = [
    ["games", "Games", String(d.games)],
    ["wins", "Wins", String(d.wins)],
    ["average", "Average score", d.average_score === null ? "–" : d.average_score.toFixed(1)],
    ["best", "Best score", d.best_score === null ? "–" : String(d.best_score)],
    ["yahtzee-rate", "Games with a Yahtzee", percent(d.yahtzee_rate)],
    ["bonus-rate", "Games with the upper bonus", percent(d.upper_bonus_rate)],
    ["accuracy", "Accuracy (optimal decisions)", percent(d.accuracy)],
    ...ratingStats(d.ratings || {}),
  ];
  $("profile-stats").replaceChildren(...stats.map(([key, label, value]) =>
    el("div", { class: "stat", dataset: { stat: key } }, el("dt", {}, label),
      el("dd", {}, value))));
  $("no-history").hidden = p.games.length > 0;
  $("profile-games").replaceChildren(...p.games.map((g) => {
    const when = new Date(g.finished_ms).toLocaleString();
    const rules = g.options && g.options.rules === "yatzy" ? "Yatzy" : "Yahtzee";
    const place = g.outcome === "abandoned" ? "abandoned" : g.forfeited ? "left"
      : `place ${g.place} of ${g.players}`;
    const accuracy = g.accuracy === null || g.accuracy === undefined ? ""
      : ` · accuracy ${percent(g.accuracy)}`;
    return el("li", { dataset: { room: g.room, game: g.game } },
      el("span", { class: "room-what" },
        `${when} · ${rules} · ${g.total} points · ${place}${accuracy}` +
        (g.public ? "" : " · private")),
      el("span", { class: "room-buttons" },
        el("a", { class: "replay-link", href: routeHash({ view: "replay", room: g.room }),
          "aria-label": `Replay the game of ${when}` }, "Replay")));
  }));
}

/** A rating as shown: "1658", "1658?" while provisional, "–" without one. */
const shownRating = (value, provisional) => (value === null || value === undefined ? "–"
  : `${value}${provisional ? "?" : ""}`);

/** The profile's rows of ratings, skill and luck per rule family (v1.4, SPEC 13.17). */
function ratingStats(ratings) {
  return Object.entries(ratings).flatMap(([family, r]) => {
    const rules = family === "yatzy" ? "Yatzy" : "Yahtzee";
    return [
      [`rating-${family}`, `Result rating (${rules})`,
        shownRating(r.rating, r.rating_provisional)],
      [`decision-${family}`, `Decision rating (${rules})`,
        shownRating(r.decision_rating, r.decision_provisional)],
      [`skill-${family}`, `Mean accuracy (${rules})`,
        r.accuracy === null ? "–" : `${r.accuracy.toFixed(1)} %`],
      [`luck-${family}`, `Mean luck (${rules})`,
        r.luck === null ? "–" : `${r.luck > 0 ? "+" : ""}${r.luck.toFixed(1)} points`],
    ];
  });
}

// ------------------------------------------------------------------ leaderboards (v1.4)

const BOARD_TITLES = { result: "Result rating", decision: "Decision rating",
  best_score: "Best score" };

/** Show a leaderboard (#/leaderboards/BOARD); the period is a choice on the page. */
async function openBoards(board, period) {
  if (session && !await leave()) return;
  if (!BOARD_TITLES[board]) board = "result";
  boards = { board, period, status: "loading" };
  render();
  try {
    const data = await fetchLeaderboard("", board, { period,
      around: identity ? identity.player : null });
    if (!boards || boards.board !== board || boards.period !== period) return;
    boards = { board, period, status: "ready", data };
  } catch (err) {
    if (!boards || boards.board !== board) return;
    boards = { board, period, status: "error", text: friendlyError(err) };
  }
  render();
}

function renderBoards() {
  const b = boards;
  for (const button of document.querySelectorAll("#board-choice button")) {
    button.setAttribute("aria-pressed", String(button.dataset.board === b.board));
  }
  for (const button of document.querySelectorAll("#period-choice button")) {
    button.setAttribute("aria-pressed", String(button.dataset.period === b.period));
  }
  $("boards-status").textContent = b.status === "loading" ? "Loading…"
    : b.status === "error" ? b.text
      : b.data.rows.length ? "" : "Nobody on this board yet.";
  const rows = b.status === "ready" ? b.data.rows : [];
  const refs = b.status === "ready" ? b.data.references : [];
  const me = identity ? identity.player : null;
  $("boards-rows").replaceChildren(
    ...rows.map((r) => el("tr", { dataset: { player: r.player }, class: r.player === me ? "me" : "" },
      el("td", {}, String(r.rank)),
      el("td", {}, el("a", { href: routeHash({ view: "player", room: r.player }) }, r.name)),
      el("td", {}, shownRating(r.value, r.provisional)))),
    ...refs.map((r) => el("tr", { class: "reference", dataset: { level: r.level } },
      el("td", {}, "–"), el("td", {}, `Computer (${r.level})`), el("td", {}, String(r.value)))));
}

// ------------------------------------------------------------------ tournaments (v1.4)

// A duplicate tournament (SPEC 13.18): every entrant plays a one-seat room on the same dice. The
// list (#/tournaments) and one tournament (#/tournaments/ID): its rules, times and dice
// commitment, Enter (the remembered player's token; the entry is played at the table like any
// room), and the standings, refreshed every 10 s while the view is shown and not final.

const STATUS_WORDS = { open: "open", upcoming: "upcoming", closed: "closed" };

/** Words for a refusal of the tournament routes (no database: no tournaments here). */
function tournamentError(err) {
  return err && ["unavailable", "http_503"].includes(err.code)
    ? "Tournaments are not available on this server right now." : friendlyError(err);
}

async function openTournaments() {
  if (session && !await leave()) return;
  tournamentView = { id: null, status: "loading" };
  render();
  try {
    const { tournaments: list, creationOpenTo } = await fetchTournamentListing("");
    mayCreateTournaments = creationOpenTo === "identities";
    if (!tournamentView || tournamentView.id !== null) return;
    tournamentView = { id: null, status: "ready", list };
  } catch (err) {
    if (!tournamentView || tournamentView.id !== null) return;
    tournamentView = { id: null, status: "error", text: tournamentError(err) };
  }
  render();
}

async function openTournament(id, invite = null) {
  if (session && !await leave()) return;
  tournamentView = { id, invite: invite || null, status: "loading" };
  render();
  await refreshTournament();
}

/** Read the shown tournament and its standings again; a passing fault keeps what is shown. */
async function refreshTournament() {
  const shown = tournamentView;
  if (!shown || shown.id === null) return;
  const options = { inviteCode: shown.invite };
  try {
    const [data, board] = await Promise.all([fetchTournament("", shown.id, options),
      fetchStandings("", shown.id, options)]);
    if (tournamentView !== shown) return;
    tournamentView = { ...shown, status: "ready", data, board };
  } catch (err) {
    if (tournamentView !== shown) return;
    const passing = ["unavailable", "http_503", "rate_limited", "connection_failed"];
    if (shown.status === "ready" && passing.includes(err && err.code)) return;
    tournamentView = { ...shown, status: "error",
      text: err && err.code === "tournament_not_found"
        ? "There is no tournament at this address (an invite-only one needs its link)."
        : tournamentError(err) };
  }
  render();
}

/** Poll politely: only while the tournament is shown, the tab visible and the results open. */
function startTournamentPoll() {
  if (tournamentPoll) return;
  tournamentPoll = setInterval(() => {
    if (!document.hidden) refreshTournament();
  }, TOURNAMENT_POLL_MS);
}

function stopTournamentPoll() {
  clearInterval(tournamentPoll);
  tournamentPoll = null;
}

// -- the entries this browser made (their seat tokens, to come back to an unfinished one)

function storedEntries() {
  try { return JSON.parse(localStorage.getItem(ENTRIES_KEY)) || {}; } catch { return {}; }
}

/** The remembered player's entries of a tournament: {player, used, entries: [{room, token,
 * player, attempt, done}]}. */
function entriesOf(tournament) {
  const kept = storedEntries()[tournament];
  const me = identity ? identity.player : null;
  return kept && kept.player === me ? kept : { player: me, used: 0, entries: [] };
}

function keepEntries(tournament, value) {
  const all = storedEntries();
  delete all[tournament];
  all[tournament] = value;  // the newest last: the oldest are dropped first
  const names = Object.keys(all);
  for (const old of names.slice(0, Math.max(0, names.length - ENTRIES_KEPT))) delete all[old];
  localStorage.setItem(ENTRIES_KEY, JSON.stringify(all));
}

function rememberEntry(tournament, entry) {
  const kept = entriesOf(tournament);
  kept.used = Math.max(kept.used, entry.attempt);
  kept.entries.push({ room: entry.room, token: entry.token, player: entry.player,
    attempt: entry.attempt, done: false });
  keepEntries(tournament, kept);
}

function markEntryDone(tournament, room) {
  const kept = entriesOf(tournament);
  const entry = kept.entries.find((e) => e.room === room);
  if (!entry || entry.done) return;
  entry.done = true;
  delete entry.token;  // a finished entry's seat is of no more use
  keepEntries(tournament, kept);
}

/** The attempts the remembered player has left (as far as this browser knows). */
function attemptsLeft(t) {
  return Math.max(0, t.attempts - entriesOf(t.tournament).used);
}

const unfinishedEntry = (t) => entriesOf(t.tournament).entries.find((e) => !e.done && e.token);

// -- entering and playing

async function enterShownTournament() {
  const shown = tournamentView;
  if (!shown || shown.status !== "ready") return;
  const me = await ensureIdentity();
  if (!me) {
    notify("Tournaments need a remembered player, and this server keeps none right now.");
    return;
  }
  const button = $("tournament-enter");
  button.setAttribute("aria-busy", "true");
  try {
    const entry = await enterTournament("", shown.id, me.token, { inviteCode: shown.invite });
    rememberEntry(shown.id, entry);
    await playEntry(shown, entry);
  } catch (err) {
    if (err && err.code === "already_entered") {
      keepEntries(shown.id, { ...entriesOf(shown.id), used: shown.data.attempts });
    }
    fail(err);
    render();
  } finally {
    button.removeAttribute("aria-busy");
  }
}

/** Take the entry's seat (a private one-seat room whose game started by itself). */
async function playEntry(shown, entry) {
  entering = { room: entry.room, inviteCode: null };
  const result = await client.rejoin(entry.room, entry.token);
  tournamentView = null;
  enterRoom({ room: entry.room, role: "player", token: entry.token, player: result.player,
    inviteCode: null, name: identity ? identity.name : null, tournament: shown.id,
    tournamentInvite: shown.invite || null });
}

async function resumeEntry() {
  const shown = tournamentView;
  const entry = shown && shown.status === "ready" ? unfinishedEntry(shown.data) : null;
  if (!entry) return;
  try {
    await playEntry(shown, entry);
  } catch (err) {
    markEntryDone(shown.id, entry.room);  // forfeited, expired or over: nothing to resume
    notify(`Your entry cannot be resumed: ${friendlyError(err)}`);
    render();
  }
}

/** Game over of an entry: back to its tournament, whose standings are read at once. */
async function backToTournament() {
  const { tournament, tournamentInvite } = session;
  await client.leave().catch(() => {});
  clearTable();
  await follow({ view: "tournament", room: tournament, invite: tournamentInvite || null });
}

// -- creating (v1.4: the operator always; remembered players where the server says so)

/** "YYYY-MM-DDTHH:MM" in local time, as a datetime-local input shows it. */
function localInputTime(ms) {
  const d = new Date(ms - new Date(ms).getTimezoneOffset() * 60000);
  return d.toISOString().slice(0, 16);
}

async function createFromForm(e) {
  e.preventDefault();
  if (!identity) return;
  const spec = { name: $("tournament-create-name").value.trim(),
    ends_ms: new Date($("tournament-create-ends").value).getTime(),
    attempts: Number($("tournament-create-attempts").value) || 1 };
  if (!Number.isFinite(spec.ends_ms)) {
    notify("Pick the end time of the tournament.");
    return;
  }
  try {
    const made = await createTournament("", identity.token, spec);
    await follow({ view: "tournament", room: made.tournament, invite: made.invite_code || null });
  } catch (err) {
    fail(err);
  }
}

// -- rendering

function renderTournamentView() {
  if (tournamentView.id === null) renderTournamentList();
  else renderTournament();
}

/** "ends in 5 h 10 min", "starts in 2 d 3 h", "ended 26/11/2026, 01:00:00". */
function tournamentTime(t) {
  if (t.status === "upcoming") return `starts in ${timeLeft(t.starts_ms, serverNow())}`;
  if (t.status === "open") return `ends in ${timeLeft(t.ends_ms, serverNow())}`;
  return `ended ${new Date(t.ends_ms).toLocaleString()}`;
}

const shortHash = (hex) => `${hex.slice(0, 12)}…`;

function tournamentLine(t) {
  const entries = `${t.entries} ${t.entries === 1 ? "entry" : "entries"}` +
    (t.entry_limit ? ` of ${t.entry_limit}` : "");
  return [STATUS_WORDS[t.status] || t.status, tournamentTime(t), entries,
    t.rated ? "rated" : "unrated", `dice ${shortHash(t.dice_commitment)}`].join(" · ");
}

function renderTournamentList() {
  const v = tournamentView;
  const list = v.status === "ready" ? v.list : [];
  $("tournaments-status").textContent = v.status === "loading" ? "Loading…"
    : v.status === "error" ? v.text : list.length ? "" : "No tournament right now.";
  $("tournament-list").hidden = !list.length;
  $("tournament-list").replaceChildren(...list.map((t) => el("li",
    { dataset: { tournament: t.tournament, status: t.status } },
    el("span", { class: "room-what" }, el("strong", {}, t.name), ` · ${tournamentLine(t)}`),
    el("span", { class: "room-buttons" },
      el("a", { class: "replay-link", href: routeHash({ view: "tournament", room: t.tournament }),
        "aria-label": `Open the tournament ${t.name}` }, "Open")))));
  renderCreateForm();
}

function renderCreateForm() {
  const form = $("tournament-create");
  form.hidden = !(identity && mayCreateTournaments);
  const ends = $("tournament-create-ends");
  if (!form.hidden && !ends.value) ends.value = localInputTime(Date.now() + 86_400_000);
}

function renderTournament() {
  const v = tournamentView;
  $("tournament-name").textContent = v.status === "ready" ? v.data.name : "Tournament";
  $("tournament-status").textContent = v.status === "loading" ? "Loading…"
    : v.status === "error" ? v.text : "";
  $("tournament-body").hidden = v.status !== "ready";
  if (v.status !== "ready") {
    stopTournamentPoll();
    return;
  }
  renderTournamentFacts(v.data);
  renderEntering(v.data);
  renderStandings(v.data, v.board);
  if (v.board.final) stopTournamentPoll();
  else startTournamentPoll();
}

/** The rules in words: the rule set, its options, and what a tournament entry is. */
function tournamentRules(t) {
  const o = t.options;
  const parts = o.rules === "yatzy" ? ["Yatzy (Scandinavian)"]
    : ["Yahtzee", `extra Yahtzees ${o.extra_yahtzees || "on"}`, `Joker ${o.joker || "forced"}`];
  if (o.upper_first === "on") parts.push("upper boxes first");
  parts.push("solitaire, no hints", t.rated ? "rated" : "unrated");
  return parts.join(" · ");
}

function renderTournamentFacts(t) {
  const facts = [
    ["rules", "Rules", tournamentRules(t)],
    ["status", "Status", `${STATUS_WORDS[t.status] || t.status}${t.daily ? " (daily)" : ""}`],
    ["starts", "Starts", new Date(t.starts_ms).toLocaleString() +
      (t.status === "upcoming" ? ` (${tournamentTime(t)})` : "")],
    ["ends", "Ends", new Date(t.ends_ms).toLocaleString() +
      (t.status === "open" ? ` (${tournamentTime(t)})` : "")],
    ["entries", "Entries", `${t.entries}${t.entry_limit ? ` of ${t.entry_limit}` : ""}`],
    ["attempts", "Attempts per player", String(t.attempts)],
    ["commitment", "Dice commitment (SHA-256 of the seed)", el("code", {}, t.dice_commitment)],
    ["seed", "Dice seed", t.seed ? el("code", {}, t.seed) : "revealed after the end"],
  ];
  $("tournament-facts").replaceChildren(...facts.map(([key, label, value]) =>
    el("div", { class: "fact", dataset: { fact: key } }, el("dt", {}, label),
      el("dd", {}, value))));
}

/** Enter / Resume and the attempts left (as this browser knows them). */
function renderEntering(t) {
  const open = t.status === "open";
  const left = identity ? attemptsLeft(t) : t.attempts;
  const resumable = open && identity ? unfinishedEntry(t) : null;
  const attempts = `${t.attempts} ${t.attempts === 1 ? "attempt" : "attempts"}`;
  $("tournament-attempts").textContent = t.status === "upcoming"
    ? `Entries open ${new Date(t.starts_ms).toLocaleString()}.`
    : !open ? "This tournament is over: see the results below."
      : identity ? `You have ${left} of ${attempts} left.`
        : `Each player has ${attempts}; entering remembers you in this browser.`;
  $("tournament-enter").hidden = !open || left === 0;
  $("tournament-enter").textContent = identity && left < t.attempts ? "Enter again" : "Enter";
  $("tournament-resume").hidden = !resumable;
}

/** A row of the standings is the player's own: by id once final, by name while live. */
function isMyRow(row) {
  if (!identity) return false;
  return row.player ? row.player === identity.player : row.name === identity.name;
}

function renderStandings(t, board) {
  const rows = board.entries;
  $("standings-note").textContent = board.final ? "(final)"
    : t.status === "closed" ? "(counting the results…)" : "(live, updates every 10 s)";
  $("no-standings").hidden = rows.length > 0;
  $("standings-table").hidden = !rows.length;
  const mine = rows.find(isMyRow);
  const reference = board.optimal_score !== null && board.optimal_score !== undefined;
  $("standings-reference").hidden = !reference;
  if (reference) {
    $("standings-reference").textContent = `The dice allowed ${board.optimal_score}` +
      (mine ? `; you scored ${mine.score}.` : ".");
  }
  $("standings-rows").replaceChildren(...rows.map((row) => el("tr",
    { class: isMyRow(row) ? "me" : "", dataset: { place: String(row.place) } },
    el("td", {}, String(row.place)),
    el("td", {}, row.name, board.final && row.room ? verifyHint(t, row) : null),
    el("td", {}, String(row.score)),
    el("td", {}, board.final ? percent(row.accuracy) : "–"))));
}

/** After the end: the entry's room (its replay) and the command that checks every die. */
function verifyHint(t, row) {
  const invite = row.invite_code || null;
  return el("span", { class: "verify-hint small" },
    el("a", { href: routeHash({ view: "replay", room: row.room, invite }),
      "aria-label": `Replay the entry of ${row.name}` }, "Replay"), " · verify: ",
    el("code", {}, `yahtzee verify ${row.room} --tournament ${t.tournament}` +
      (invite ? ` --invite-code=${invite}` : "")));
}

/** The step that shows turn `turn` (after its roll `roll`, when given). */
function stepOf(turn, roll) {
  const first = replay.turns.indexOf(turn);
  if (first === -1) return turn > 0 ? replay.states.length - 1 : 0;
  if (roll) {
    for (let i = first; i < replay.states.length && replay.turns[i] === turn; i++) {
      if (replay.rolls[i] === roll) return i;
    }
  }
  return first;
}

function stepReplay(to) {
  replay.at = Math.max(0, Math.min(replay.states.length - 1, to));
  renderReplay();
  syncAddress();
}

/** Jump a whole turn: to the start of the next one, or of this one (or the one before). */
function stepTurn(direction) {
  const turn = replay.turns[replay.at];
  if (direction > 0) {
    const next = replay.turns.indexOf(turn + 1);
    stepReplay(next === -1 ? replay.states.length - 1 : next);
  } else {
    const start = replay.turns.indexOf(turn);
    const target = start < replay.at ? turn : turn - 1;
    stepReplay(target <= 0 ? 0 : replay.turns.indexOf(target));
  }
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
  const onCups = !inRoom && Boolean(tournamentView);
  const onBoards = !inRoom && !onCups && Boolean(boards);
  const onProfile = !inRoom && !onCups && !onBoards && Boolean(profile);
  const elsewhere = onCups || onProfile || onBoards;
  $("lobby").hidden = inRoom || Boolean(replay) || elsewhere;
  $("table").hidden = !inRoom;
  $("replay").hidden = inRoom || elsewhere || !replay;
  $("profile").hidden = !onProfile;
  $("leaderboards").hidden = !onBoards;
  $("tournaments").hidden = !onCups || tournamentView.id !== null;
  $("tournament").hidden = !onCups || tournamentView.id === null;
  if (!onCups) stopTournamentPoll();
  if (inRoom) {
    stopLobbyFeed();
    renderTable();
  } else if (onCups) {
    stopLobbyFeed();
    renderTournamentView();
  } else if (onBoards) {
    stopLobbyFeed();
    renderBoards();
  } else if (onProfile) {
    stopLobbyFeed();
    renderProfile();
  } else if (replay) {
    renderReplay();
  } else {
    renderLobby();
    startLobbyFeed();
  }
  document.title = myTurn() ? "▶ Your turn · Yahtzee"
    : inRoom ? `Room ${session.room} · Yahtzee` : onProfile ? "Player profile · Yahtzee"
      : onBoards ? "Leaderboards · Yahtzee"
      : onCups ? "Tournaments · Yahtzee"
      : replay ? `Replay ${replay.room} · Yahtzee` : "Yahtzee: play online, free";
  syncAddress();
}

function renderPlayNowWho() {
  const { count, level, speed } = playSettings();
  $("play-now-who").textContent = `Play now: you against ${count} computer player` +
    `${count === 1 ? "" : "s"} (${level}, ${speed}). Change it under More options.`;
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
  renderInvitation();
}

function roomLine(r) {
  const rules = r.options.rules === "yatzy" ? "Yatzy" : "Yahtzee";
  const players = r.players.length ? r.players.join(", ") : "nobody yet";
  const status = { lobby: "waiting", playing: "playing", finished: "finished" }[r.status];
  return `${r.room} · ${rules} · ${players} · ${r.players.length}/${r.seats} seated · ` +
    `${status}` + (r.spectators ? ` · ${r.spectators} watching` : "");
}

function renderRooms(rooms) {
  liveRooms = rooms;
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
  if (model.rated) parts.push("rated");
  return parts.join(" · ");
}

function renderTable() {
  $("room-id").textContent = session.room;
  $("invite").textContent = session.inviteCode ? "private room" : "";
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
    const inviting = Boolean(me && session.inviteCode && model.players.length < model.maxSeats);
    $("invite-friend").hidden = !inviting;
    if (inviting) $("invite-link").value = shareLink();
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
  scrollCurrentIntoView();
  renderFairness(me);
  renderGameOver(me);
  if (focused) {
    const again = document.querySelector(focused);
    if (again) again.focus();
  }
  renderLog();
}

/** The player on turn's column is scrolled into the scorecard's box (phones, many players). */
function scrollCurrentIntoView() {
  const key = `${model.room}:${model.current}:${model.round}`;
  if (!model.current || scrolledFor === key) return;
  const box = $("card-scroll");
  const th = box.querySelector("thead th.current");
  if (!th || box.scrollWidth <= box.clientWidth) { scrolledFor = key; return; }
  scrolledFor = key;
  const pinned = box.querySelector("thead th").getBoundingClientRect().width;
  const area = box.getBoundingClientRect();
  const cell = th.getBoundingClientRect();
  if (cell.left < area.left + pinned) box.scrollLeft -= area.left + pinned - cell.left;
  else if (cell.right > area.right) box.scrollLeft += cell.right - area.right;
}

/** Fair dice: what the page added, and (at game over) the check. */
function renderFairness(me) {
  const line = $("fair");
  const mine = me ? playerOf(model, me) : null;
  const seed = session.seed || (mine && mine.seed) || null;
  line.hidden = model.status === "finished";
  line.replaceChildren("Fair dice: the server committed to its dice before the game",
    seed ? el("span", {}, "; this browser's seed ", el("code", {}, seed.slice(0, 12)),
      " is mixed into every roll") : null,
    ". Every die can be checked when the game is over.");
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
  const p = playerOf(model, model.current);
  const away = p && !p.connected && !p.computer ? ` · ${p.name} is away` : "";
  return `${nameOf(model, model.current)}'s turn (round ${model.round})${away}`;
}

function renderLog() {
  const all = [...moves.entries()].sort((a, b) => a[0] - b[0]);
  const lines = all.map(([, text], i) => [i + 1, text]).reverse().slice(0, 200);
  $("log").replaceChildren(...lines.map(([n, text]) => el("li", {},
    el("span", { class: "move-no" }, `${n}.`), el("span", {}, text))));
}

const awaySince = new Map();  // player -> when this page saw them go (local clock)
const serverNow = () => Date.now() + (client.clockOffsetMs || 0);

/** Seconds until a deadline in the server's clock (null without one). */
function secondsLeft(deadlineMs) {
  return deadlineMs ? Math.max(0, Math.ceil((deadlineMs - serverNow()) / 1000)) : null;
}

/** What an absent player's badge says: the countdown when one is known. */
function awayText(p) {
  if (p.forfeited) return "left";
  const deadline = p.player === model.current && model.deadline ? model.deadline
    : p.away_deadline_ms || null;
  const left = secondsLeft(deadline);
  if (left !== null) return `away · ${left}s`;
  const since = awaySince.get(p.player);
  if (!since) return "away";
  const gone = Math.floor((Date.now() - since) / 1000);
  return `away ${Math.floor(gone / 60)}:${String(gone % 60).padStart(2, "0")}`;
}

function renderDeadline() {
  const left = model && model.status === "playing" ? secondsLeft(model.deadline) : null;
  const node = $("deadline");
  node.textContent = left === null ? "" : `· ${left}s left`;
  node.classList.toggle("urgent", left !== null && left <= 10);
  if (!model) return;
  for (const badge of document.querySelectorAll("#scorecard .away[data-player]")) {
    const p = playerOf(model, badge.dataset.player);
    if (p) badge.textContent = awayText(p);
  }
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
  // aria-disabled, not disabled: the button keeps the keyboard focus between turns.
  button.setAttribute("aria-disabled", String(!(mine && model.rollsLeft > 0)));
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
    p.connected || p.computer || !live ? null : el("div", {},
      el("span", { class: "away", dataset: { player: p.player } }, awayText(p)))))));

  const previewByBox = new Map(m.preview.map((e) => [e.box, e]));
  const rows = [];
  BOXES[m.options.rules].forEach((box, index) => {
    rows.push(el("tr", { dataset: { row: box } }, el("th", { scope: "row" }, LABELS[box]),
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
  foot.push(el("tr", { class: "sum grand", dataset: { row: "total" } },
    el("th", { scope: "row" }, "Total"),
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
  attrs.title = clickable ? (entry.points ? `score ${entry.points} here` : "put 0 here")
    : `would score ${entry.points}`;
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
  $("back-to-tournament").hidden = !session.tournament;
  $("verify-dice").hidden = Boolean(session.tournament);
  if (session.tournament) {
    renderEntryOver(ranked);
    return;
  }
  renderRematch(me);
  renderSkill(me);
  renderVerification();
  $("analysis").hidden = false;
  const context = analysisContext(model, [...roomEvents.values()].sort((a, b) => a.seq - b.seq),
    me, session.inviteCode || null);
  if (!analysis || analysis.room !== model.room) loadAnalysis(model.room);
  else renderAnalysis($("analysis-body"), analysis, () => loadAnalysis(model.room), context);
}

/**
 * Game over of a tournament entry: the total, and the way back to the standings. No rematch,
 * no analysis and no dice check here: the entry's room and the tournament's seed are shown
 * only after the end (SPEC 13.18), in the final standings.
 */
function renderEntryOver(ranked) {
  const total = ranked.length ? ranked[0].total : 0;
  $("banner").textContent = `Your tournament entry: ${total} points`;
  for (const id of ["rematch", "watch-rematch", "rematch-offer", "skill-line", "verify-result",
    "analysis"]) $(id).hidden = true;
  markEntryDone(session.tournament, session.room);
}

/** My seat's skill in the archived game ({room, accuracy, luck} once known, v1.4). */
let archivedSkill = null;
// the archiver writes a game within a second or two; a busy server may take much longer
const SKILL_TRIES = 40;

/** A casual game's skill and luck come from its archive (GET /games/{id}), a few tries. */
async function loadSkill(room, me) {
  archivedSkill = { room, accuracy: null, luck: null };
  const token = identity ? identity.token : null;
  for (let attempt = 0; attempt < SKILL_TRIES; attempt++) {
    try {
      const game = await fetchGame("", room, { token });
      const seat = game.players.find((p) => p.player === me);
      if (archivedSkill && archivedSkill.room === room && seat && seat.skill) {
        archivedSkill = { room, accuracy: seat.skill.accuracy, luck: seat.skill.luck };
        if (model && model.room === room) render();
      }
      return;
    } catch (err) {
      // not archived yet, or a busy server: try again; anything else (no archive): no line
      const again = ["game_not_found", "unavailable", "rate_limited", "http_429", "http_503"];
      if (!err || !again.includes(err.code)) return;
    }
    await new Promise((resolve) => { setTimeout(resolve, 1000); });
  }
}

/** At game over: my accuracy and my luck (from the rated game's `ratings` event, or from the
 * archive of a casual game), and a rated game's rating move, in words (v1.4). */
function renderSkill(me) {
  if (me && identity && !model.rated && (!archivedSkill || archivedSkill.room !== model.room)) {
    loadSkill(model.room, me);
  }
  const casual = archivedSkill && archivedSkill.room === model.room
    && archivedSkill.accuracy !== null ? archivedSkill : null;
  const mine = (model.ratings || []).find((r) => r.player === me) || casual;
  $("skill-line").hidden = !mine;
  if (!mine) return;
  const parts = [];
  if (mine.accuracy !== null && mine.accuracy !== undefined) {
    parts.push(`You played ${mine.accuracy.toFixed(1)} % accurately`);
  }
  if (mine.luck !== null && mine.luck !== undefined) {
    const points = Math.abs(mine.luck).toFixed(0);
    parts.push(`the dice were ${points} points ${mine.luck >= 0 ? "kinder" : "less kind"} ` +
      "than average");
  }
  if (mine.before !== undefined) {
    parts.push(`your rating went from ${mine.before} to ` +
      `${shownRating(mine.after, mine.provisional)}`);
  }
  const text = parts.join("; ");
  $("skill-line").textContent = text.charAt(0).toUpperCase() + text.slice(1) + ".";
}

/** The rematch at game over: Rematch, or who offered it and Accept; spectators of a room
 * whose rematch they did not see offered may watch it. */
function renderRematch(me) {
  const offered = model.rematchRoom;
  const by = model.rematchBy;
  const mine = Boolean(me && by === me);
  $("rematch").hidden = !me || mine;
  $("rematch").textContent = offered ? "Accept" : "Rematch";
  $("rematch-offer").hidden = !offered;
  $("rematch-offer-text").textContent = !offered ? ""
    : mine ? "You offered a rematch."
      : by ? `${nameOf(model, by)} offers a rematch` : "A rematch was offered";
  $("watch-rematch").hidden = Boolean(me) || !offered;
}

// ------------------------------------------------------------------ fair dice

/** Read the finished room's whole log and recompute every die (fairdice.js). */
async function verifyDice() {
  const room = model.room;
  verification = { room, status: "checking" };
  renderVerification();
  try {
    const events = await fetchEventLog("", room, { inviteCode: inviteFor(room) });
    verification = { room, status: "done", verdict: verifyLog(events) };
  } catch (err) {
    verification = { room, status: "failed", text: friendlyError(err) };
  }
  if (model && model.room === room) renderVerification();
}

function renderVerification() {
  const box = $("verify-result");
  const current = verification && model && verification.room === model.room ? verification : null;
  box.hidden = !current;
  $("verify-dice").disabled = Boolean(current && current.status === "checking");
  if (!current) return;
  box.className = "verify-result";
  if (current.status === "checking") {
    box.textContent = "Checking every die…";
    return;
  }
  if (current.status === "failed") {
    box.textContent = `The dice could not be checked: ${current.text}`;
    return;
  }
  const v = current.verdict;
  const mySeed = session && session.seed && v.seeds && v.seeds.includes(session.seed);
  if (v.status === "verified") {
    box.classList.add("ok");
    box.textContent = `✓ Fair: all ${v.dice} dice of the ${v.draws} rolls follow from the ` +
      "server's seed, which matches the commitment it published before the game" +
      (mySeed ? ", mixed with this browser's seed." : ".") +
      (v.warnings.length ? " (No player added a seed to this game.)" : "");
  } else if (v.status === "mismatch") {
    box.classList.add("bad");
    box.textContent = `✗ These dice do not check out: ${v.mismatches[0]}.`;
  } else {
    box.textContent = `Not verifiable yet: ${v.pending[0]}.`;
  }
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
  renderAnalysis(body, state, retry, null);
  try {
    state.data = await fetchAnalysis("", room, { inviteCode: inviteFor(room) });
    state.status = "ready";
  } catch (err) {
    const notReady = err && (err.code === "unavailable" || err.code === "http_503");
    state.status = notReady ? "not-ready" : "failed";
    state.text = notReady ? "The analysis is not ready yet (the advisor is warming up)."
      : `No analysis: ${friendlyError(err)}`;
  }
  const current = replayView ? replay && replay.analysis : analysis;
  if (current !== state) return;
  if (replayView) renderReplay();
  else if (model && model.room === room) renderGameOver(
    session && session.role === "player" ? session.player : null);
}

/**
 * What the analysis needs from the game: the final scorecards (a 0 is "put 0 in"), the order
 * (mine first) and the replay position of a player's n-th turn (from the room's log).
 */
function analysisContext(m, events, me, inviteCode) {
  const turnOf = new Map();  // "player:n" -> the game's turn number
  const counts = new Map();
  let turnNo = 0;
  for (const ev of events) {
    if (ev.type !== "turn_changed") continue;
    turnNo += 1;
    const n = (counts.get(ev.player) || 0) + 1;
    counts.set(ev.player, n);
    turnOf.set(`${ev.player}:${n}`, turnNo);
  }
  const cards = new Map(m.players.map((p) => [p.player, p.scorecard]));
  const place = new Map(standings(m).map((r, i) => [r.player, i]));
  return { room: m.room, me, inviteCode, cards, place, turnOf };
}

/** A decision in words: "keep 5 5", "score Chance", "put 0 in YAHTZEE". */
function decisionText(d, which, card) {
  if (d.kind === "keep") {
    const keep = d[`${which}_keep`] || [];
    return keep.length === 5 ? "stop and score" : keep.length ? `keep ${keep.join(" ")}`
      : "reroll all five";
  }
  const box = d[`${which}_box`];
  if (!box) return "take the +100 bonus";
  const label = LABELS[box] || box;
  return which === "chosen" && card && card[box] === 0 ? `put 0 in ${label}` : `score ${label}`;
}

/**
 * Per player (mine first, then by final place): total and mean expected loss, and the
 * decisions that cost points, worst first, each a link to that position in the replay.
 */
function renderAnalysis(container, state, retry, context) {
  if (state.status === "loading") {
    container.replaceChildren(el("p", { class: "muted" }, "Analysing the game…"));
    return;
  }
  if (state.status !== "ready") {
    container.replaceChildren(el("p", { class: "analysis-error" }, state.text, " ",
      el("button", { type: "button", class: "analysis-retry", onclick: retry }, "Retry")));
    return;
  }
  const ctx = context || { me: null, cards: new Map(), place: new Map(), turnOf: new Map() };
  const order = (p) => (p.player === ctx.me ? -1 : ctx.place.has(p.player)
    ? ctx.place.get(p.player) : 99);
  const players = [...state.data.players].sort((a, b) => order(a) - order(b));
  container.replaceChildren(...players.map((p) => {
    const costly = p.decisions.filter((d) => d.loss >= 0.05)
      .sort((a, b) => b.loss - a.loss);
    const shown = costly.slice(0, ANALYSIS_SHOWN);
    const more = costly.length - shown.length;
    const card = ctx.cards.get(p.player);
    const where = (d) => {
      const text = `Turn ${d.turn}, roll ${d.roll}`;
      const turn = ctx.turnOf.get(`${p.player}:${d.turn}`);
      if (!turn || !ctx.room) return text;
      const href = routeHash({ view: "replay", room: ctx.room, invite: ctx.inviteCode,
        turn, roll: d.roll });
      return el("a", { href, class: "analysis-link" }, text);
    };
    return el("div", { class: "analysis-player", dataset: { player: p.player } },
      el("h4", {}, p.player === ctx.me ? `${p.name} (you)` : p.name, " ", cpuBadge(p)),
      el("p", { class: "analysis-summary" },
        `Expected points lost: ${p.total_loss.toFixed(1)} in all, ` +
        `${p.mean_loss.toFixed(2)} per decision (${p.decisions.length} decisions).`),
      costly.length ? el("ol", { class: "analysis-list" }, ...shown.map((d) => el("li", {},
        where(d), `: ${decisionText(d, "chosen", card)} ` +
        `(best: ${decisionText(d, "best", null)}) · −${d.loss.toFixed(1)}`)))
        : el("p", { class: "muted" }, "No costly decision: optimal play throughout."),
      more > 0 ? el("p", { class: "muted" },
        `and ${more} smaller ${more === 1 ? "one" : "ones"}`) : null);
  }));
}

function renderReplay() {
  const state = replay.states[replay.at];
  $("replay-room").textContent = replay.room + (replay.archived ? " (archived)" : "");
  $("replay-pos").textContent = `${replay.at} / ${replay.states.length - 1}`;
  $("replay-event").textContent = replay.lines[replay.at];
  $("replay-first").disabled = $("replay-prev").disabled = replay.at === 0;
  $("replay-prev-turn").disabled = replay.at === 0;
  $("replay-next").disabled = $("replay-last").disabled = $("replay-next-turn").disabled =
    replay.at === replay.states.length - 1;
  const last = replay.turns[replay.turns.length - 1];
  const select = $("replay-turn");
  if (select.options.length !== last + 1) {
    const final = replay.states[replay.states.length - 1];
    const labels = [el("option", { value: "0" }, "Before the game")];
    for (let t = 1; t <= last; t++) {
      const s = replay.states[replay.turns.indexOf(t)];
      labels.push(el("option", { value: String(t) },
        `Turn ${t} · round ${s.round} · ${nameOf(final, s.current)}`));
    }
    select.replaceChildren(...labels);
  }
  select.value = String(replay.turns[replay.at]);
  renderDice($("replay-dice"), state, false, false);
  renderScorecard($("replay-card"), state, null, false);
  $("replay-analysis").hidden = !replay.analysis;
  $("replay-analysis-button").hidden = Boolean(replay.analysis);
  if (replay.analysis) {
    const final = replay.states[replay.states.length - 1];
    renderAnalysis($("replay-analysis-body"), replay.analysis,
      () => loadAnalysis(replay.room, { replayView: true }),
      analysisContext(final, replay.events, null, replay.inviteCode));
  }
}

// ------------------------------------------------------------------ wiring

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
  $("play-now").addEventListener("click", playNow);
  $("play-friend").addEventListener("click", playFriend);
  $("rated-play").addEventListener("click", quickPlayRated);
  $("rated-cancel").addEventListener("click", () => client.cancelQuickPlay().catch(fail));
  $("watch-live").addEventListener("click", watchLive);
  $("quick-play").addEventListener("click", quickPlay);
  $("play-level").value = LEVELS.includes(localStorage.getItem(LEVEL_KEY))
    ? localStorage.getItem(LEVEL_KEY) : "medium";
  $("play-speed").value = localStorage.getItem(SPEED_KEY) in SPEEDS
    ? localStorage.getItem(SPEED_KEY) : "fast";
  $("computers-speed").value = $("play-speed").value;
  $("play-computers").value = String(Math.max(1, Math.min(7,
    Number(localStorage.getItem(COUNT_KEY)) || 2)));
  for (const id of ["play-level", "play-speed", "play-computers"]) {
    $(id).addEventListener("change", keepPlaySettings);
  }
  $("name").addEventListener("change", () => myName());
  $("invited-join").addEventListener("click", () => {
    if (invitation) joinRoom(invitation.room, invitation.invite, {}, "invite-name");
  });
  $("invited-watch").addEventListener("click", () => {
    if (invitation) watchRoom(invitation.room, invitation.invite);
  });
  $("invited-replay").addEventListener("click", () => {
    if (invitation) openReplay(invitation.room, { inviteCode: invitation.invite });
  });
  $("seats").addEventListener("input", limitComputers);
  limitComputers();
  $("add-computer").addEventListener("click", addComputer);
  $("ask-hint").addEventListener("click", askHint);
  $("take-bonus").addEventListener("click", takeBonus);
  $("resume-button").addEventListener("click", resumeSeat);
  $("forget-button").addEventListener("click", () => { forgetSeat(); renderLobby(); });
  $("leave").addEventListener("click", leave);
  $("share").addEventListener("click", share);
  $("copy-invite").addEventListener("click", () => copyText($("invite-link"), shareLink()));
  $("roll").addEventListener("click", roll);
  $("start").addEventListener("click", startGame);
  $("rematch").addEventListener("click", rematch);
  $("watch-rematch").addEventListener("click", () => {
    if (model && model.rematchRoom) followRematch(model.rematchRoom, model.rematchInvite);
  });
  $("verify-dice").addEventListener("click", verifyDice);
  $("back").addEventListener("click", async () => {
    await client.leave().catch(() => {});
    backToLobby();
  });
  $("replay-first").addEventListener("click", () => stepReplay(0));
  $("replay-prev").addEventListener("click", () => stepReplay(replay.at - 1));
  $("replay-next").addEventListener("click", () => stepReplay(replay.at + 1));
  $("replay-last").addEventListener("click", () => stepReplay(replay.states.length - 1));
  $("replay-prev-turn").addEventListener("click", () => stepTurn(-1));
  $("replay-next-turn").addEventListener("click", () => stepTurn(1));
  $("replay-turn").addEventListener("change", () =>
    stepReplay(stepOf(Number($("replay-turn").value), null)));
  $("replay-close").addEventListener("click", () => { replay = null; render(); });
  $("profile-close").addEventListener("click", () => { profile = null; render(); });
  $("boards-close").addEventListener("click", () => { boards = null; render(); });
  $("tournaments-close").addEventListener("click", () => { tournamentView = null; render(); });
  $("tournament-all").addEventListener("click", () => follow({ view: "tournaments" }));
  $("tournament-enter").addEventListener("click", enterShownTournament);
  $("tournament-resume").addEventListener("click", resumeEntry);
  $("tournament-create").addEventListener("submit", createFromForm);
  $("back-to-tournament").addEventListener("click", backToTournament);
  for (const button of document.querySelectorAll("#board-choice button")) {
    button.addEventListener("click", () => openBoards(button.dataset.board, boards.period));
  }
  for (const button of document.querySelectorAll("#period-choice button")) {
    button.addEventListener("click", () => openBoards(boards.board, button.dataset.period));
  }
  $("replay-analysis-button").addEventListener("click", () => {
    loadAnalysis(replay.room, { replayView: true });
    renderReplay();
    $("replay-analysis-title").scrollIntoView({ block: "nearest" });
  });
  wireSoundAndAlerts();
  document.addEventListener("keydown", onKey);
  window.addEventListener("popstate", onNavigate);
  window.addEventListener("hashchange", onNavigate);
}

function wireSoundAndAlerts() {
  const sound = $("sound");
  const showSound = () => {
    const on = soundOn();
    sound.setAttribute("aria-pressed", String(on));
    sound.textContent = on ? "♪ Sound on" : "♪ Sound off";
  };
  sound.addEventListener("click", () => {
    localStorage.setItem(SOUND_KEY, soundOn() ? "off" : "on");
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
  if (!$("confirm").hidden) {
    if (e.key === "Escape") $("confirm-no").click();
    else if (e.key === "Tab") trapFocus(e);
    return;
  }
  if (e.target.closest("input, select, textarea")) return;
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  if (replay && !session) {
    if (e.key === "ArrowRight") stepReplay(replay.at + 1);
    else if (e.key === "ArrowLeft") stepReplay(replay.at - 1);
    else if (e.key === "PageDown") stepTurn(1);
    else if (e.key === "PageUp") stepTurn(-1);
    return;
  }
  // Keyboard play: r rolls, 1-5 hold or release a die, h asks for a hint, s goes to the
  // scorecard (the first open box that scores; Enter scores it): a whole turn in 5 keys.
  if (e.key === "r") roll();
  else if (e.key === "h") askHint();
  else if (e.key === "s") focusOpenBox();
  else if (e.key >= "1" && e.key <= "5") toggleHold(Number(e.key) - 1);
}

function focusOpenBox() {
  const open = [...document.querySelectorAll("#scorecard td.mine button")];
  const scoring = open.find((button) => !button.closest("td").classList.contains("zero"));
  (scoring || open[0])?.focus();
}

function setConnection(state) {
  const text = { connecting: "connecting…", connected: "connected",
    reconnecting: "reconnecting…", closed: "disconnected" }[state] || state;
  $("connection").dataset.state = state;
  $("connection").textContent = text;
}

function renderHeroDice() {
  $("hero-dice").replaceChildren(...[6, 6, 6, 6, 6].map((face) =>
    el("span", { class: "die" }, ...dieFace(face))));
}

function init() {
  $("name").value = storedName();
  $("invite-name").value = storedName();
  renderHeroDice();
  wireControls();
  renderPlayNowWho();
  client.on("state", setConnection);
  client.on("snapshot", onSnapshot);
  client.on("event", onEvent);
  client.on("notice", notify);
  client.on("identity-refused", onIdentityRefused);
  renderIdentity();
  client.on("resume-failed", (err) => {
    notify(`Could not return to room ${err.room}: ${friendlyError(err)}`);
    if (["bad_token", "room_not_found", "invite_required"].includes(err.code)) forgetSeat();
    session = null;
    model = null;
    render();
  });
  client.on("ended", () => notify("This game was opened in another window, which has the " +
    "seat now. Reload the page to take it back here."));

  // A reload of a tab that was at a table goes straight back to it (and so does the room's
  // own address); a new tab (or a restarted browser) offers "Resume game" in the lobby.
  const seat = storedSeat();
  const route = parseRoute();
  const active = seat && sessionStorage.getItem(ACTIVE_KEY) === seat.room;
  const ownRoom = seat && route.view !== "lobby" && route.view !== "replay" &&
    route.room === seat.room;
  if (seat && (ownRoom || (active && route.view === "lobby"))) {
    session = seat;
    client.restore(seat);
  } else if (route.view === "watch") {
    session = { room: route.room, role: "spectator", inviteCode: route.invite };
    keepSession();
    client.restore(session);
  } else if (route.view === "room") {
    showInvitation(route);
  } else if (["replay", "player", "tournaments", "tournament"].includes(route.view)) {
    follow(route);
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
  get identity() { return identity ? { player: identity.player, name: identity.name } : null; },
  get profile() { return profile; },
  get tournament() { return tournamentView; },
  get mayCreateTournaments() { return mayCreateTournaments; },
  get client() { return client; },
  get lobbyMode() { return lobbyMode; },
  dropConnection() { client.dropConnection(); },
  friendlyError(code, message = "") { return friendlyError({ code, message }); },
  parseRoute,
};

init();

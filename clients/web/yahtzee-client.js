// yahtzee-client.js: the Yahtzee protocol (protocol/SPEC.md) for browsers and Node, as one
// ES module with no dependencies.
//
//   import { YahtzeeClient } from "./yahtzee-client.js";
//   const client = new YahtzeeClient("ws://127.0.0.1:8000/ws");   // Node 20: { WebSocket } from "ws"
//   client.on("event", (ev) => console.log(ev.type, ev.seq));
//   await client.connect();
//   const { room, invite_code } = await client.createRoom({ seats: 1 });
//   await client.join(room, "Ann", { inviteCode: invite_code });
//   await client.start();
//   await client.roll();
//
// What it does for you:
// - connects with the JSON subprotocol `yahtzee.v1.json` and checks the server chose it;
// - gives every command an id; a command's promise resolves with the ack's `result` once the
//   client has seen every event up to the ack's `seq` (so state read after `await` includes the
//   command's effects, whichever order the server sends ack and events in), or rejects with a
//   `CommandError` carrying the server's `code`;
// - play commands (start, roll, hold, release, score, take_bonus) carry `expect_seq`: the last room seq
//   this client has seen, so a command decided on a stale view is refused (`stale_state`)
//   instead of applied; when the only events in between were presence (spectators,
//   disconnects, reconnects) the command is sent again with the new seq;
// - `join` carries a fresh `join_key` and `createRoom` a `create_key`: a retried command after a
//   lost ack returns the same seat or room instead of a second one;
// - room events are deduplicated by seq; a gap closes the connection to resync;
// - a dropped connection is reconnected with capped, jittered backoff; the client resumes with
//   `rejoin` (seat token) or `spectate` and the last seq it saw, then resends unanswered
//   commands with their original ids (the server answers those from its cache);
// - an application `ping` every `heartbeat_seconds` while idle (nothing arrived for three
//   quarters of it; in a room where others play, none); silence for two intervals means the
//   connection is dead and is replaced.
// It keeps no game model: listen to "snapshot" and "event" and fold them (room-model.js does).
//
// Protocol 1.2: `takeBonus`, `addComputer`, `removeComputer`, `hint` (retried while the server
// answers `unavailable`), the new `createRoom` fields (computers, hints, computer_delay_ms,
// options.upper_first / bonus_turn) pass through as they are.
//
// Plus HTTP helpers for the read-only API: `fetchRooms`, `fetchRoom`, `fetchEventLog`,
// `fetchAnalysis` (v1.2).
//
// Protocol 1.3, remembered players: `createGuest` (POST /players) makes a guest and returns its
// player token (a secret: keep it, e.g. in localStorage, never in a URL or a log); give it to
// the client (`playerToken` option or `setPlayerToken`) and it is presented in `hello` on every
// connection (browsers cannot set WebSocket headers), so every seat taken is linked to the
// player. A refused token (revoked, unknown, or a server without a database) is dropped: the
// client reconnects anonymously and emits "identity-refused". `fetchPlayer`, `fetchPlayerGames`,
// `fetchGame` and `fetchMe` read the profile, the history and an archived game. Rematch:
// `offerRematch` and `rematch` (offer, leave, rejoin the rematch room with the seat's token).

/** The WebSocket subprotocol this module speaks. */
export const SUBPROTOCOL = "yahtzee.v1.json";

const PLAY_COMMANDS = new Set(["start", "roll", "hold", "release", "score", "take_bonus"]);
// Events that change who is connected or watching, never the game itself.
const PRESENCE_EVENTS = new Set(["spectators", "player_disconnected", "player_reconnected"]);
// Commands whose ack seq is about another room (or none): never waited for.
const ROOMLESS_COMMANDS = new Set(["hello", "ping", "create_room", "list_rooms", "get_room"]);
/** Answers to `hello` that refuse the credential itself (v1.3): it is dropped. */
export const CREDENTIAL_REFUSALS = new Set(["bad_player_token", "player_token_revoked", "bad_jwt",
  "jwt_expired", "foreign_jwt", "unsupported", "unavailable"]);

/** A command refused by the server (an `error` answer), or failed locally. */
export class CommandError extends Error {
  /**
   * @param {string} code stable error code, e.g. "not_your_turn", "stale_state", "closed"
   * @param {string} message human text
   * @param {{retryable?: boolean, seq?: number|null}} [extra]
   */
  constructor(code, message, extra = {}) {
    super(message || code);
    this.name = "CommandError";
    /** @type {string} */ this.code = code;
    /** @type {boolean} */ this.retryable = Boolean(extra.retryable);
    /** @type {number|null} */ this.seq = extra.seq ?? null;
  }
}

/**
 * A random hex key of `bytes` bytes (join_key, create_key). crypto.getRandomValues works on
 * plain http too, where crypto.randomUUID does not.
 * @param {number} [bytes]
 * @returns {string}
 */
export function randomKey(bytes = 16) {
  const values = globalThis.crypto.getRandomValues(new Uint8Array(bytes));
  return Array.from(values, (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * Reconnect delay for attempt n (1, 2, ...): exponential from 300 ms, capped at 10 s, with
 * jitter; after a server restart (1012) almost at once, after a rate-limit close (1008) a pause.
 * @param {number} attempt
 * @param {number} [closeCode]
 * @returns {number} milliseconds
 */
export function reconnectDelay(attempt, closeCode) {
  if (closeCode === 1012) return Math.random() * 250;
  const base = Math.min(10000, 300 * 2 ** Math.min(attempt - 1, 6));
  return base * (0.5 + Math.random() / 2) + (closeCode === 1008 ? 5000 : 0);
}

/**
 * One connection to a Yahtzee server, kept alive and resumed across drops.
 *
 * Events (subscribe with `on(name, handler)`, which returns an unsubscribe function):
 * - "snapshot" (snapshot message): the room's whole state; replaces any model.
 * - "event" (room event message, e.g. `rolled`): the next event, in seq order, no duplicates.
 * - "state" ("connecting" | "connected" | "reconnecting" | "closed"): the connection.
 * - "resume-failed" (CommandError): rejoin/spectate was refused after a reconnect; the client
 *   forgot the room.
 * - "ended" ({code, reason}): the server closed with 1000 (e.g. the seat was taken back by
 *   another window); the client does not reconnect.
 * - "notice" (string): an `error` not tied to a command.
 * - "identity" ({player, name} | null): who the presented player token names (v1.3), after each
 *   connection's `hello`.
 * - "identity-refused" (CommandError): the server refused the player token (code
 *   `bad_player_token`, `player_token_revoked`, ..., `unsupported` without a database,
 *   `unavailable` while its database does not answer); the client forgot it and goes on
 *   anonymously on a new connection.
 */
export class YahtzeeClient {
  /**
   * @param {string} url ws:// or wss:// URL of the endpoint, e.g. "ws://127.0.0.1:8000/ws"
   * @param {{WebSocket?: any, clientName?: string, reconnect?: boolean,
   *   playerToken?: string|null}} [options]
   *   WebSocket: the constructor to use (default: globalThis.WebSocket; on Node 20 pass the
   *   `ws` package's); reconnect: false to give up on the first drop (default true);
   *   playerToken: a player token of `createGuest` (v1.3), presented on every connection.
   */
  constructor(url, options = {}) {
    this.url = url;
    this.WebSocket = options.WebSocket || globalThis.WebSocket;
    if (!this.WebSocket) throw new Error("no WebSocket: pass options.WebSocket (npm ws)");
    this.clientName = options.clientName || "yahtzee-client.js";
    this.reconnect = options.reconnect !== false;
    /** The player token presented in `hello` (v1.3), or null. A secret: never log it. */
    this.playerToken = options.playerToken || null;
    /** Who the token names ({player, name}) once a `hello` said so, else null. */
    this.remembered = null;
    /** The room this client is in, with how it is in it, or null. @type {null|{room: string,
     * role: "player"|"spectator", token?: string, player?: string, inviteCode?: string|null}} */
    this.session = null;
    /** Last room seq seen (from a snapshot or an event), or null. @type {number|null} */
    this.seq = null;
    /** Connection state. @type {"idle"|"connecting"|"connected"|"reconnecting"|"closed"} */
    this.state = "idle";
    /** From `welcome`. @type {null|{server_version: string, protocol_version: string,
     * heartbeat_seconds: number}} */
    this.welcome = null;
    /** The server's clock minus this one's, in ms, from `welcome.server_time_ms` (0 until then).
     * @type {number} */
    this.clockOffsetMs = 0;
    this._ws = null;
    this._ready = false;
    this._closing = false;
    this._attempt = 0;
    this._connection = 0;
    this._nextId = 1;
    this._prefix = "js" + randomKey(3) + "-";
    this._pending = new Map();
    this._seqWaiters = [];
    this._listeners = new Map();
    this._heartbeat = null;
    this._reconnectTimer = null;
    this._lastMessageAt = 0;
    this._firstReady = null;
    this._entering = null;
    this._snapshotRoom = null;
    this._recentTypes = new Map();  // seq -> event type, the last 256 events
  }

  /**
   * Resume a session kept from an earlier run (e.g. in localStorage): call before `connect()`;
   * the client rejoins (or spectates) on every connection from then on.
   * @param {{room: string, role: "player"|"spectator", token?: string, inviteCode?: string|null}}
   *   session
   */
  restore(session) {
    this._enter(session.room);
    this.session = { ...session };
  }

  /**
   * Subscribe to "snapshot", "event", "state", "resume-failed", "ended" or "notice"; (v1.4)
   * "quick-play-queued", "quick-play-status" and "quick-play-matched" (see `quickPlay`).
   * @param {string} name
   * @param {(value: any) => void} handler
   * @returns {() => void} unsubscribe
   */
  on(name, handler) {
    if (!this._listeners.has(name)) this._listeners.set(name, new Set());
    this._listeners.get(name).add(handler);
    return () => this._listeners.get(name).delete(handler);
  }

  _emit(name, value) {
    for (const handler of this._listeners.get(name) || []) {
      try { handler(value); } catch (err) { console.error(err); }
    }
  }

  /**
   * Open the connection; resolves once the server's `welcome` came (and a stored session was
   * resumed), rejects if the first connection fails.
   * @returns {Promise<void>}
   */
  connect() {
    if (!this._firstReady) {
      this._firstReady = new Promise((resolve, reject) => {
        this._resolveFirst = resolve;
        this._rejectFirst = reject;
      });
      this._open();
    }
    return this._firstReady;
  }

  /** Close for good: pending commands reject with code "closed"; no reconnect. */
  close() {
    this._closing = true;
    clearTimeout(this._reconnectTimer);
    this._stopHeartbeat();
    if (this._ws) this._ws.close(1000, "client closed");
    this._ws = null;
    this._ready = false;
    this._fail(new CommandError("closed", "the client was closed"));
    this._setState("closed");
  }

  /** Drop the connection as a network failure would (for tests and "resync now"). */
  dropConnection() {
    if (this._ws) this._ws.close(4999, "dropped by the client");
  }

  _setState(state) {
    if (this.state === state) return;
    this.state = state;
    this._emit("state", state);
  }

  _open() {
    this._connection += 1;
    const number = this._connection;
    this._setState(this._attempt ? "reconnecting" : "connecting");
    let ws;
    try {
      ws = new this.WebSocket(this.url, [SUBPROTOCOL]);
    } catch (err) {
      this._scheduleReconnect(undefined, err);
      return;
    }
    this._ws = ws;
    ws.onmessage = (msg) => {
      if (this._ws !== ws) return;
      this._lastMessageAt = Date.now();
      const text = typeof msg.data === "string" ? msg.data : new TextDecoder().decode(msg.data);
      let data;
      try { data = JSON.parse(text); } catch { return; }
      this._onMessage(data, number);
    };
    ws.onopen = () => {
      if (ws.protocol !== SUBPROTOCOL) ws.close(1002, "subprotocol not selected");
    };
    ws.onerror = () => {};  // onclose follows and decides
    ws.onclose = (ev) => this._onClose(ws, ev);
  }

  _onClose(ws, ev) {
    if (this._ws !== ws) return;
    this._ws = null;
    this._ready = false;
    this._stopHeartbeat();
    // The resume commands belong to the connection that sent them; the next one sends its own.
    for (const [id, entry] of this._pending) {
      if (entry.thisConnectionOnly) {
        this._pending.delete(id);
        entry.reject(new CommandError("connection_lost", "the connection was lost"));
      }
    }
    // The quick-play queue belongs to the connection too: the server dropped the player.
    const wait = this._quickPlayWait;
    this._quickPlayWait = null;
    if (wait) wait.reject(new CommandError("connection_lost", "the connection was lost"));
    if (this._closing) return;
    if (ev.code === 1000) {
      // The server ended the session (SPEC: close codes): do not fight over it.
      this._closing = true;
      this._fail(new CommandError("closed", ev.reason || "the server ended the session"));
      this._setState("closed");
      this._emit("ended", { code: ev.code, reason: ev.reason });
      return;
    }
    this._scheduleReconnect(ev.code);
  }

  _scheduleReconnect(code, err) {
    if (!this.reconnect || (this._attempt === 0 && this.welcome === null && err)) {
      this._closing = true;
      this._fail(new CommandError("connection_failed", String(err || "connection lost")));
      if (this._rejectFirst) this._rejectFirst(err || new Error("connection failed"));
      this._setState("closed");
      return;
    }
    this._attempt += 1;
    this._setState("reconnecting");
    this._reconnectTimer = setTimeout(() => this._open(), reconnectDelay(this._attempt, code));
  }

  _fail(error) {
    for (const entry of this._pending.values()) entry.reject(error);
    this._pending.clear();
    for (const waiter of this._seqWaiters) waiter.reject(error);
    this._seqWaiters = [];
  }

  _send(message) {
    const ws = this._ws;
    if (ws && ws.readyState === 1) ws.send(JSON.stringify(message));
  }

  async _onWelcome(number, welcome) {
    this.welcome = welcome;
    // The server's clock minus ours (turn deadlines are in the server's clock: SPEC 10.6).
    if (typeof welcome.server_time_ms === "number") {
      this.clockOffsetMs = welcome.server_time_ms - Date.now();
    }
    this._attempt = 0;
    this._startHeartbeat(welcome.heartbeat_seconds);
    if (this.playerToken) {
      // The credential first: the seats this connection takes are linked to it (v1.3).
      if (!await this._presentToken(number, this.playerToken, true)) return;
    } else {
      this._request("hello", { client: this.clientName }, { now: true }).catch(() => {});
    }
    if (this.session) {
      try {
        await this._resume();
      } catch (err) {
        if (number !== this._connection) return;
        if (err.code !== "connection_lost") {
          const lost = this.session;
          this.session = null;
          this.seq = null;
          this._releaseAllSeqWaiters();
          this._emit("resume-failed", Object.assign(err, { room: lost.room }));
        }
      }
    }
    if (number !== this._connection) return;
    this._ready = true;
    this._setState("connected");
    for (const entry of this._pending.values()) {
      if (entry.sentOn !== number) {
        entry.sentOn = number;
        this._send(entry.message);
      }
    }
    if (this._resolveFirst) {
      this._resolveFirst();
      this._resolveFirst = this._rejectFirst = null;
    }
  }

  // Send `hello` with the player token on this connection. Resolves true when it was accepted
  // (or the connection was lost meanwhile: the next one presents it again); false when it was
  // refused: the token is forgotten and the connection replaced by an anonymous one, since a
  // refused credential stays with its connection (SPEC 6.1).
  async _presentToken(number, token, now) {
    try {
      const { result } = await this._request("hello",
        { client: this.clientName, player_token: token }, { now });
      if (number !== this._connection) return false;
      this.remembered = result.player || null;
      this._emit("identity", this.remembered);
      return true;
    } catch (err) {
      if (number !== this._connection || !CREDENTIAL_REFUSALS.has(err.code)) return true;
      if (this.playerToken === token) this.playerToken = null;
      this.remembered = null;
      this._emit("identity-refused", err);
      this._ready = false;  // what is sent from now on waits for the new connection
      if (this._ws) this._ws.close(4000, "anonymous again");
      return false;
    }
  }

  /**
   * Present a player token from now on (v1.3): on the current connection at once (resolves
   * with the remembered player {player, name} or null when it was refused) and on every later
   * one. Call it before `join` so that the seat is linked to the player.
   * @param {string} token
   * @returns {Promise<{player: string, name: string}|null>}
   */
  async setPlayerToken(token) {
    this.playerToken = token;
    if (!this._ready) return null;  // the next welcome presents it
    const accepted = await this._presentToken(this._connection, token, false);
    return accepted ? this.remembered : null;
  }

  _resume() {
    const s = this.session;
    const lastSeq = this.seq;
    if (s.role === "player") {
      return this._request("rejoin", { room: s.room, token: s.token, last_seq: lastSeq },
        { now: true }).then((result) => { s.player = result.player; return result; });
    }
    return this._request("spectate",
      { room: s.room, invite_code: s.inviteCode || null, last_seq: lastSeq }, { now: true });
  }

  _startHeartbeat(seconds) {
    this._stopHeartbeat();
    const everyMs = (seconds || 20) * 1000;
    this._lastMessageAt = Date.now();
    // It looks every half interval and pings only when idle (SPEC 11.2: nothing for three
    // quarters of an interval; in a room where others play, events keep coming): an idle
    // connection pings once an interval, and a look may run late by 0.75 of one before a live
    // connection is taken for dead.
    this._heartbeat = setInterval(() => {
      const silentMs = Date.now() - this._lastMessageAt;
      if (silentMs > 2 * everyMs) {
        this.dropConnection();  // a dead connection: replace it
        return;
      }
      if (silentMs >= 0.75 * everyMs) this._send({ type: "ping", id: this._newId() });
    }, everyMs / 2);
  }

  _stopHeartbeat() {
    clearInterval(this._heartbeat);
    this._heartbeat = null;
  }

  _onMessage(msg, number) {
    switch (msg.type) {
      case "welcome": this._onWelcome(number, msg); return;
      case "pong": return;
      case "ack": case "error": this._onAnswer(msg); return;
      case "snapshot": this._onSnapshot(msg); return;
      case "quick_play_status": this._emit("quick-play-status", msg); return;
      case "quick_play_matched": this._onQuickPlayMatched(msg); return;
      default:
        if (typeof msg.seq === "number" && typeof msg.room === "string") this._onEvent(msg);
    }
  }

  _onAnswer(msg) {
    if (msg.id === null || msg.id === undefined) {
      this._emit("notice", msg.message || msg.code);
      return;
    }
    const entry = this._pending.get(msg.id);
    if (!entry) return;
    this._pending.delete(msg.id);
    if (msg.type === "error") {
      entry.reject(new CommandError(msg.code, msg.message,
        { retryable: msg.retryable, seq: msg.seq }));
      return;
    }
    entry.resolve({ result: msg.result || {}, seq: msg.seq ?? null });
  }

  _onSnapshot(msg) {
    const wanted = this._entering || (this.session && this.session.room);
    if (wanted && msg.room !== wanted) return;
    if (this.seq !== null && this._snapshotRoom === msg.room && msg.seq < this.seq) return;
    this._snapshotRoom = msg.room;
    this.seq = msg.seq;
    this._emit("snapshot", msg);
    this._releaseSeqWaiters();
  }

  _onEvent(ev) {
    if (this._snapshotRoom !== ev.room || this.seq === null) return;  // the snapshot has it
    if (ev.seq <= this.seq) return;                                     // a replayed duplicate
    if (ev.seq !== this.seq + 1) {                                      // a gap: resync
      this.dropConnection();
      return;
    }
    this.seq = ev.seq;
    this._recentTypes.set(ev.seq, ev.type);
    this._recentTypes.delete(ev.seq - 256);
    this._emit("event", ev);
    this._releaseSeqWaiters();
  }

  _releaseSeqWaiters() {
    this._seqWaiters = this._seqWaiters.filter((waiter) => {
      if (this.seq === null || this.seq < waiter.seq) return true;
      waiter.resolve();
      return false;
    });
  }

  /**
   * Resolves once this client has seen the room's events up to `seq`.
   * @param {number} seq
   * @returns {Promise<void>}
   */
  waitForSeq(seq) {
    if (this.seq !== null && this.seq >= seq) return Promise.resolve();
    return new Promise((resolve, reject) => this._seqWaiters.push({ seq, resolve, reject }));
  }

  // A command id never used before in this session.
  _newId() {
    return this._prefix + this._nextId++;
  }

  // Send one command; resolves with {result, seq} of its ack. `now`: on this connection only,
  // before it is ready (the resume itself); otherwise queued until ready and resent after a
  // reconnect with the same id. `fields.id`, if given, is the id (a resend of a command whose
  // retryable error came back); otherwise a new one.
  _request(type, fields, { now = false } = {}) {
    const { id: given, ...rest } = fields;
    const id = given || this._newId();
    const message = { type, id, ...rest };
    return new Promise((resolve, reject) => {
      const entry = { message, resolve, reject, sentOn: 0, thisConnectionOnly: now };
      this._pending.set(id, entry);
      if (this._ready || now) {
        entry.sentOn = this._connection;
        this._send(message);
      }
    });
  }

  /**
   * Send any command and resolve with its ack's result, after the client has seen the events
   * up to the ack's seq. Play commands get `expect_seq` unless `fields` sets it.
   * @param {string} type e.g. "roll"
   * @param {object} [fields] the command's fields, without `type` and `id`
   * @returns {Promise<object>} the ack's `result`
   */
  async command(type, fields = {}) {
    if (this._closing) throw new CommandError("closed", "the client was closed");
    for (let attempt = 0; ; attempt++) {
      const message = { ...fields };
      const expectSeq = PLAY_COMMANDS.has(type) && !("expect_seq" in fields) ? this.seq : null;
      if (expectSeq !== null) message.expect_seq = expectSeq;
      let answer;
      try {
        answer = await this._request(type, message);
      } catch (err) {
        if (attempt < 3 && expectSeq !== null && await this._onlyPresenceSince(expectSeq, err)) {
          continue;
        }
        throw err;
      }
      if (answer.seq !== null && this.session && !ROOMLESS_COMMANDS.has(type)) {
        await this.waitForSeq(answer.seq);
      }
      return answer.result;
    }
  }

  // After `stale_state`: true when every event since `expectSeq` was presence only (spectator
  // count, connection changes), which leaves the game as the caller saw it, so the command may
  // be sent again with the new seq. Anything else stays refused: the caller must look again.
  async _onlyPresenceSince(expectSeq, err) {
    if (!(err instanceof CommandError) || err.code !== "stale_state" || err.seq === null) {
      return false;
    }
    await this.waitForSeq(err.seq);
    for (let seq = expectSeq + 1; seq <= err.seq; seq++) {
      if (!PRESENCE_EVENTS.has(this._recentTypes.get(seq))) return false;
    }
    return true;
  }

  /**
   * Create a room. Resolves with {room, invite_code}. `create_key` (16..64 characters) makes a
   * retried create return the same room; a fresh random one is used unless given.
   * @param {{seats?: number, public?: boolean, turn_seconds?: number, options?: object,
   *   create_key?: string}} [fields]
   */
  createRoom(fields = {}) {
    return this.command("create_room", { public: true, create_key: randomKey(16), ...fields });
  }

  /** List the public rooms: resolves with {rooms: [...]}. */
  listRooms() { return this.command("list_rooms"); }

  /**
   * Take a seat. Resolves with {player, seat, token}; the token is kept in `session` for
   * resuming (store it yourself to survive a restart, then call `resumeAs`).
   * @param {string} room
   * @param {string} name
   * @param {{inviteCode?: string|null, joinKey?: string, seed?: string|null}} [options]
   *   seed: the player's client seed for the provably fair dice (v1.1, 1..64 printable ASCII
   *   characters; protocol/fairdice.md), or null for none.
   */
  async join(room, name, { inviteCode = null, joinKey = randomKey(16), seed = null } = {}) {
    const fields = { room, name, invite_code: inviteCode, join_key: joinKey };
    if (seed) fields.seed = seed;
    const result = await this._enterWith(room, "join", fields);
    this.session = { room, role: "player", token: result.token, player: result.player,
      inviteCode };
    return result;
  }

  /**
   * Take a seat back with its token (after a restart). Resolves with {player, seat}.
   * @param {string} room
   * @param {string} token
   */
  async rejoin(room, token) {
    const result = await this._enterWith(room, "rejoin", { room, token, last_seq: null });
    this.session = { room, role: "player", token, player: result.player, inviteCode: null };
    return result;
  }

  /**
   * Watch a room.
   * @param {string} room
   * @param {{inviteCode?: string|null}} [options]
   */
  async spectate(room, { inviteCode = null } = {}) {
    const result = await this._enterWith(room, "spectate",
      { room, invite_code: inviteCode, last_seq: null });
    this.session = { room, role: "spectator", inviteCode };
    return result;
  }

  // Send join / rejoin / spectate; resolve once the room's snapshot (up to the ack's seq) is in.
  async _enterWith(room, type, fields) {
    this._enter(room);
    try {
      const { result, seq } = await this._request(type, fields);
      if (seq !== null) await this.waitForSeq(seq);
      return result;
    } catch (err) {
      this._leaveLocally(room);
      throw err;
    }
  }

  // A new room: its snapshot is the next one wanted, whatever seq the last room was at.
  _enter(room) {
    this.seq = null;
    this._snapshotRoom = null;
    this._entering = room;
  }

  _leaveLocally(room) {
    if (this.session && this.session.room !== room) return;
    this.session = null;
    this.seq = null;
    this._snapshotRoom = null;
    this._entering = null;
    this._releaseAllSeqWaiters();
  }

  // Out of the room: nothing more will come, so nobody waits for it.
  _releaseAllSeqWaiters() {
    for (const waiter of this._seqWaiters) waiter.resolve();
    this._seqWaiters = [];
  }

  /** Leave the room (a forfeit during a game). The client forgets the room. */
  async leave() {
    const room = this.session && this.session.room;
    try {
      // Not `command`: after leaving, the room's events (and so the ack's seq) may never come.
      await this._request("leave", {});
    } finally {
      if (room) this._leaveLocally(room);
    }
  }

  /**
   * Offer a rematch of the finished game (v1.3; a player). Resolves with {room, invite_code,
   * player, seat, token}: the rematch room (the same for every offer) and this player's seat
   * there (null player/seat/token when no seat was free), not taken up yet: see `rematch`.
   */
  offerRematch() { return this.command("offer_rematch"); }

  /**
   * Offer a rematch and move there: leave the finished room, then rejoin the rematch room
   * with the seat's token. Without a seat (the rematch filled up) the client stays where it
   * is. Resolves with the offer's result.
   */
  async rematch() {
    const offer = await this.offerRematch();
    if (!offer.token) return offer;
    await this.leave().catch(() => {});
    await this.rejoin(offer.room, offer.token);
    this.session.inviteCode = offer.invite_code || null;
    return offer;
  }

  /**
   * Quick play (v1.4; needs a remembered player, see `playerToken`): wait for a game against
   * people of a similar rating. Emits "quick-play-queued" with the ack's result ({position,
   * window, rating, computers_after_ms}), "quick-play-status" ({position, waiting, window,
   * waited_ms}) while waiting, then takes the matched seat (`rejoin`) and resolves with the
   * `quick_play_matched` message ({room, seat, opponents, computers, waited_ms}; `computers`
   * lists the computers that filled open seats). Rejects with the command's error
   * (`identity_required`, `already_queued`, ...) or, after `cancelQuickPlay`, "cancelled".
   * The queue belongs to the connection: a lost connection ends the wait ("connection_lost").
   * @param {{seats?: number, rules?: string, computers?: boolean}} [options]
   */
  async quickPlay({ seats = 2, rules = "yahtzee", computers = true } = {}) {
    const matched = new Promise((resolve, reject) => {
      this._quickPlayWait = { resolve, reject };
    });
    matched.catch(() => {});  // a refused command rejects below, not here
    try {
      const queued = await this.command("quick_play", { seats, rules, computers });
      this._emit("quick-play-queued", queued);
    } catch (err) {
      this._quickPlayWait = null;
      throw err;
    }
    const match = await matched;
    await this.rejoin(match.room, match.token);
    this.session.inviteCode = match.invite_code || null;
    return match;
  }

  /** Leave the quick-play queue (v1.4); the pending `quickPlay` rejects with "cancelled". */
  async cancelQuickPlay() {
    const wait = this._quickPlayWait;
    await this.command("cancel_quick_play");
    this._quickPlayWait = null;
    if (wait) wait.reject(new CommandError("cancelled", "quick play was cancelled"));
  }

  _onQuickPlayMatched(msg) {
    this._emit("quick-play-matched", msg);
    const wait = this._quickPlayWait;
    this._quickPlayWait = null;
    if (wait) wait.resolve(msg);
  }

  /** Start the game (host only). */
  start() { return this.command("start"); }

  /**
   * Roll; `keep` lists the dice indexes (0-4) kept from the last roll.
   * @param {number[]} [keep]
   */
  roll(keep = []) { return this.command("roll", { keep }); }

  /** Hold dice by index. @param {number[]} dice */
  hold(dice) { return this.command("hold", { dice }); }

  /** Release held dice by index. @param {number[]} dice */
  release(dice) { return this.command("release", { dice }); }

  /** Score the dice in an open box, e.g. "fours". @param {string} box */
  score(box) { return this.command("score", { box }); }

  /**
   * Take the +100 of an extra Yahtzee and fill no box (v1.2, room option `bonus_turn`; see
   * `canTakeBonus` of room-model.js). Ends the turn like `score`.
   */
  takeBonus() { return this.command("take_bonus"); }

  /**
   * Seat a computer player (v1.2; the host, in the lobby). Resolves with {player, seat}.
   * @param {"easy"|"medium"|"hard"|"optimal"} level
   * @param {string|null} [name] null: the server picks one
   */
  addComputer(level, name = null) { return this.command("add_computer", { level, name }); }

  /** Free a computer player's seat (v1.2; the host, in the lobby). @param {string} player */
  removeComputer(player) { return this.command("remove_computer", { player }); }

  /**
   * The advisor's best options for the player on turn (v1.2; players and spectators of a room
   * created with hints). Resolves with {player, rolls_left, options: [{kind, keep, box,
   * expected}, ...]}, best first. While the server is still loading its strategy table it
   * answers `unavailable` (retryable): the same command is resent after a pause, a few times.
   * @param {{attempts?: number, pauseMs?: number}} [options]
   */
  async hint({ attempts = 4, pauseMs = 1000 } = {}) {
    const id = this._newId();
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.command("hint", { id });
      } catch (err) {
        const transient = err instanceof CommandError && err.retryable;
        if (!transient || attempt >= attempts || this._closing) throw err;
        await new Promise((resolve) => setTimeout(resolve, pauseMs * attempt));
      }
    }
  }
}

// ------------------------------------------------------------------------------ HTTP API

function httpBase(base) {
  return String(base).replace(/\/+$/, "");
}

function inviteHeaders(inviteCode) {
  // The invite code travels in a header, never in the URL (URLs end up in logs and history).
  return inviteCode ? { "X-Invite-Code": inviteCode } : {};
}

function bearer(token) {
  return token ? { Authorization: `Bearer ${token}` } : {};
}

async function getJson(url, headers, fetchImpl, init = {}) {
  const response = await (fetchImpl || globalThis.fetch)(url, { headers, ...init });
  let body = null;
  try { body = await response.json(); } catch { body = null; }
  if (!response.ok) {
    const code = (body && body.code) || `http_${response.status}`;
    throw new CommandError(code, (body && body.message) || response.statusText);
  }
  return body;
}

/**
 * The public rooms (`GET /rooms`).
 * @param {string} base e.g. "http://127.0.0.1:8000"
 * @param {{fetch?: typeof fetch}} [options]
 * @returns {Promise<object[]>} room summaries
 */
export async function fetchRooms(base, options = {}) {
  const body = await getJson(`${httpBase(base)}/rooms`, {}, options.fetch);
  return body.rooms;
}

/**
 * One room's snapshot (`GET /rooms/{id}`); a private room needs its invite code.
 * @param {string} base
 * @param {string} room
 * @param {{inviteCode?: string|null, fetch?: typeof fetch}} [options]
 * @returns {Promise<object>} a `snapshot` message
 */
export function fetchRoom(base, room, options = {}) {
  return getJson(`${httpBase(base)}/rooms/${encodeURIComponent(room)}`,
    inviteHeaders(options.inviteCode), options.fetch);
}

/**
 * The analysis of a room's game (`GET /rooms/{id}/analysis`, v1.2): every decision so far
 * against optimal play, as a `GameAnalysis` ({room, seq, options, players: [{player, name,
 * computer, decisions, total_loss, mean_loss}]}). A private room needs its invite code. While
 * the server loads its strategy table it answers 503: rejects with code "unavailable".
 * @param {string} base
 * @param {string} room
 * @param {{inviteCode?: string|null, fetch?: typeof fetch}} [options]
 * @returns {Promise<object>}
 */
export function fetchAnalysis(base, room, options = {}) {
  return getJson(`${httpBase(base)}/rooms/${encodeURIComponent(room)}/analysis`,
    inviteHeaders(options.inviteCode), options.fetch);
}

/**
 * A room's event log (`GET /rooms/{id}/events`), every page of it, in seq order. Handles both
 * the paginated answer ({events, next_after}: follows next_after until null) and an older
 * server's single answer with the whole log (no next_after).
 * @param {string} base
 * @param {string} room
 * @param {{inviteCode?: string|null, after?: number, limit?: number, fetch?: typeof fetch}}
 *   [options]
 * @returns {Promise<object[]>} event messages
 */
export async function fetchEventLog(base, room, options = {}) {
  const events = [];
  let after = options.after || 0;
  const limit = options.limit || 500;
  for (;;) {
    const url = `${httpBase(base)}/rooms/${encodeURIComponent(room)}/events` +
      `?after=${after}&limit=${limit}`;
    const page = await getJson(url, inviteHeaders(options.inviteCode), options.fetch);
    // An older server ignores after/limit and sends everything: keep only what is new.
    for (const ev of page.events) if (ev.seq > after) events.push(ev);
    if (!("next_after" in page) || page.next_after === null || page.events.length === 0) break;
    after = page.next_after;
  }
  events.sort((a, b) => a.seq - b.seq);
  return events;
}

// ------------------------------------------------------------------ remembered players (v1.3)

/**
 * Make a guest (`POST /players`). Resolves with {player, name, token}: keep the token (a
 * secret, shown this once) and present it (`playerToken`, `setPlayerToken`). Rejects with a
 * CommandError: `invalid_name`, `name_taken`, `rate_limited`, `unavailable` (a server without
 * a database answers 503), ...
 * @param {string} base e.g. "" (this page's server) or "http://127.0.0.1:8000"
 * @param {string} name 2..24 letters, digits and single spaces, unique
 * @param {{fetch?: typeof fetch}} [options]
 */
export function createGuest(base, name, options = {}) {
  return getJson(`${httpBase(base)}/players`, { "Content-Type": "application/json" },
    options.fetch, { method: "POST", body: JSON.stringify({ name }) });
}

/**
 * Who a player token names (`GET /players/me`): {player, name, linked}.
 * @param {string} base
 * @param {string} token
 * @param {{fetch?: typeof fetch}} [options]
 */
export function fetchMe(base, token, options = {}) {
  return getJson(`${httpBase(base)}/players/me`, bearer(token), options.fetch);
}

/**
 * A player's profile (`GET /players/{id}`): {player, name, since_ms, linked, games, wins,
 * average_score, best_score, yahtzees, yahtzee_rate, upper_bonus_rate, accuracy}. With the
 * player's own token private games count too.
 * @param {string} base
 * @param {string} player
 * @param {{token?: string|null, fetch?: typeof fetch}} [options]
 */
export function fetchPlayer(base, player, options = {}) {
  return getJson(`${httpBase(base)}/players/${encodeURIComponent(player)}`,
    bearer(options.token), options.fetch);
}

/**
 * A player's games, newest first (`GET /players/{id}/games`): {player, games: [{game, room,
 * outcome, public, options, finished_ms, players, seat, place, total, forfeited, accuracy}],
 * next_before}.
 * @param {string} base
 * @param {string} player
 * @param {{limit?: number, before?: string|null, token?: string|null, fetch?: typeof fetch}}
 *   [options]
 */
export function fetchPlayerGames(base, player, options = {}) {
  const query = new URLSearchParams({ limit: String(options.limit || 20) });
  if (options.before) query.set("before", options.before);
  return getJson(`${httpBase(base)}/players/${encodeURIComponent(player)}/games?${query}`,
    bearer(options.token), options.fetch);
}

/**
 * v1.4: a player's running correspondence games (`GET /players/{id}/turns`), only with the
 * player's own token: {player, server_time_ms, turns: [{room, my_turn, deadline_ms, round,
 * players, on_turn}], games: [...]}; `turns` wait for the player's move, soonest deadline
 * first. Another player's id rejects with `player_not_found`. A correspondence room is made
 * with `createRoom({correspondence: {seconds_per_move: 86400}})` (3600..1209600).
 * @param {string} base
 * @param {string} player
 * @param {string} token
 * @param {{fetch?: typeof fetch}} [options]
 */
export function fetchTurns(base, player, token, options = {}) {
  return getJson(`${httpBase(base)}/players/${encodeURIComponent(player)}/turns`,
    bearer(token), options.fetch);
}

/**
 * v1.4: the player's turn list, live (SPEC.md 13.6): `GET /lobby` sent with the player token,
 * read with fetch() and a streaming body reader, because EventSource cannot send the
 * Authorization header and the token must never go in the URL. Calls `onTurns(body)` with the
 * body `fetchTurns` resolves with, at once and again whenever it changes. After the stream ends
 * (a server restart, the network) it reconnects after the server's `retry` delay, longer after
 * each failure in a row; a refused token (401) stops it for good. `onError(err)` hears every
 * failure (a CommandError for an error answer). Only `turns` events are read: the lobby's
 * `rooms` events on the same stream are ignored here.
 * @param {string} token the player token (or JWT)
 * @param {(body: object) => void} onTurns
 * @param {{base?: string, fetch?: typeof fetch, onError?: (err: Error) => void}} [options]
 *   `base`: "" (this page's server, the default) or e.g. "http://127.0.0.1:8000"
 * @returns {{close: () => void, closed: Promise<void>}} `close()` ends it; `closed` settles
 *   once it has ended (closed, or a refused token)
 */
export function watchTurns(token, onTurns, options = {}) {
  const controller = new AbortController();
  const fetchImpl = options.fetch || globalThis.fetch;
  const report = options.onError || (() => {});
  const url = `${httpBase(options.base || "")}/lobby`;
  const init = { headers: { ...bearer(token), Accept: "text/event-stream" },
    signal: controller.signal, cache: "no-store" };
  let retryMs = 3000;
  const readOnce = async () => {
    const response = await fetchImpl(url, init);
    if (!response.ok) {
      let body = null;
      try { body = await response.json(); } catch { body = null; }
      throw new CommandError((body && body.code) || `http_${response.status}`,
        (body && body.message) || response.statusText);
    }
    for await (const event of serverSentEvents(response.body, (ms) => { retryMs = ms; })) {
      if (event.type === "turns") onTurns(JSON.parse(event.data));
    }
  };
  const run = async () => {
    for (let failures = 0; !controller.signal.aborted;) {
      try {
        await readOnce();
        failures = 0;  // the stream ended cleanly (the server shut down): reconnect
      } catch (err) {
        if (controller.signal.aborted) return;
        report(err);
        if (err instanceof CommandError && CREDENTIAL_REFUSALS.has(err.code)) return;
        failures += 1;
      }
      await abortablePause(retryMs * Math.min(1 + failures, 10), controller.signal);
    }
  };
  return { close: () => controller.abort(), closed: run() };
}

function abortablePause(ms, signal) {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => { clearTimeout(timer); resolve(); }, { once: true });
  });
}

/**
 * The events of a Server-Sent Events body (a ReadableStream of bytes), as EventSource parses
 * them: {type, data}; a `retry` field is handed to `onRetry` (ms); comments are skipped.
 */
async function* serverSentEvents(body, onRetry) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let type = "message";
  let data = [];
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let end;
      while ((end = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, end).replace(/\r$/, "");
        buffer = buffer.slice(end + 1);
        if (line === "") {
          if (data.length) yield { type, data: data.join("\n") };
          type = "message";
          data = [];
          continue;
        }
        if (line.startsWith(":")) continue;  // a keep-alive comment
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        const text = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (field === "event") type = text;
        else if (field === "data") data.push(text);
        else if (field === "retry" && /^\d+$/.test(text)) onRetry(Number(text));
      }
    }
  } finally {
    reader.cancel().catch(() => {});
  }
}

/**
 * An archived game with its whole event log (`GET /games/{id}`, `<room>.1` or a room id),
 * also after its room left the server; a private game only with a player's token.
 * @param {string} base
 * @param {string} game
 * @param {{token?: string|null, fetch?: typeof fetch}} [options]
 */
export function fetchGame(base, game, options = {}) {
  return getJson(`${httpBase(base)}/games/${encodeURIComponent(game)}`, bearer(options.token),
    options.fetch);
}

/**
 * A leaderboard (v1.4, `GET /leaderboards/{board}`): {board, family, period, players,
 * rows: [{rank, player, name, value, provisional}], references: [{level, value}]}.
 * @param {string} base
 * @param {"result"|"decision"|"best_score"} board
 * @param {{period?: "today"|"week"|"all", family?: "yahtzee"|"yatzy", around?: string|null,
 *   limit?: number, fetch?: typeof fetch}} [options]
 */
export function fetchLeaderboard(base, board, options = {}) {
  const query = new URLSearchParams({ period: options.period || "all",
    family: options.family || "yahtzee", limit: String(options.limit || 20) });
  if (options.around) query.set("around", options.around);
  return getJson(`${httpBase(base)}/leaderboards/${encodeURIComponent(board)}?${query}`,
    {}, options.fetch);
}

// ------------------------------------------------------------------ tournaments (v1.4)

function tournamentPath(base, tournament, rest = "") {
  return `${httpBase(base)}/tournaments/${encodeURIComponent(tournament)}${rest}`;
}

function withInvite(headers, inviteCode) {
  return inviteCode ? { ...headers, "X-Invite-Code": inviteCode } : headers;
}

/**
 * The public duplicate tournaments, soonest end first (`GET /tournaments`): [{tournament, name,
 * options, starts_ms, ends_ms, status, entries, dice_commitment, seed (null until closed), ...}].
 * @param {string} base
 * @param {{fetch?: typeof fetch}} [options]
 */
export async function fetchTournaments(base, options = {}) {
  return (await fetchTournamentListing(base, options)).tournaments;
}

/**
 * The public tournaments and who may create one on this server (`GET /tournaments`):
 * {tournaments, creationOpenTo}, `creationOpenTo` "admin" (the operator only), "identities"
 * (remembered players too) or null from a server that does not say.
 * @param {string} base
 * @param {{fetch?: typeof fetch}} [options]
 */
export async function fetchTournamentListing(base, options = {}) {
  const body = await getJson(`${httpBase(base)}/tournaments`, {}, options.fetch);
  return { tournaments: body.tournaments, creationOpenTo: body.creation_open_to ?? null };
}

/**
 * One tournament (`GET /tournaments/{id}`): its commitment, and its seed once it is over.
 * @param {string} base
 * @param {string} tournament
 * @param {{inviteCode?: string|null, fetch?: typeof fetch}} [options]
 */
export function fetchTournament(base, tournament, options = {}) {
  return getJson(tournamentPath(base, tournament), withInvite({}, options.inviteCode),
    options.fetch);
}

/**
 * Create a tournament (`POST /tournaments`) with the operator's admin token (or a player token
 * where players may): spec {name, ends_ms, options?, starts_ms?, entry_limit?, public?,
 * attempts?, rated?}.
 * @param {string} base
 * @param {string} credential
 * @param {object} spec
 * @param {{fetch?: typeof fetch}} [options]
 */
export function createTournament(base, credential, spec, options = {}) {
  return getJson(`${httpBase(base)}/tournaments`,
    { ...bearer(credential), "Content-Type": "application/json" }, options.fetch,
    { method: "POST", body: JSON.stringify(spec) });
}

/**
 * Enter as the player of `token` (`POST /tournaments/{id}/entries`): {tournament, room, player,
 * seat, token, attempt, dice_commitment, ends_ms}. Play it with `client.rejoin(room, token)`.
 * Rejects with `already_entered`, `tournament_closed`, `tournament_not_started`,
 * `tournament_full`, `tournament_not_found`.
 * @param {string} base
 * @param {string} tournament
 * @param {string} token a player token (or JWT)
 * @param {{inviteCode?: string|null, fetch?: typeof fetch}} [options]
 */
export function enterTournament(base, tournament, token, options = {}) {
  return getJson(tournamentPath(base, tournament, "/entries"),
    withInvite(bearer(token), options.inviteCode), options.fetch, { method: "POST" });
}

/**
 * The leaderboard (`GET /tournaments/{id}/standings`): {tournament, status, final,
 * optimal_score, entries: [{place, name, score, ...}]}; once final each entry also has
 * player, finished, accuracy, room and invite_code.
 * @param {string} base
 * @param {string} tournament
 * @param {{limit?: number, inviteCode?: string|null, fetch?: typeof fetch}} [options]
 */
export function fetchStandings(base, tournament, options = {}) {
  const query = new URLSearchParams({ limit: String(options.limit || 100) });
  return getJson(tournamentPath(base, tournament, `/standings?${query}`),
    withInvite({}, options.inviteCode), options.fetch);
}

/**
 * A live entry's events that may be shown now (`GET /tournaments/{id}/entries/{room}/events`,
 * SPEC.md 13.23), every page, in seq order: while the tournament is open only those committed
 * at least its `watch_delay_seconds` ago (rejects with `watch_not_allowed` when it sets none,
 * `room_not_found` for a room that is not one of its entries); after its end, every event.
 * To follow the entry, ask again later with `after` = the last seq seen. The invite code, if
 * any, is the tournament's (the entry's own stays secret).
 * @param {string} base
 * @param {string} tournament
 * @param {string} room the entry's room (a `room` of the open standings)
 * @param {{after?: number, limit?: number, inviteCode?: string|null, fetch?: typeof fetch}}
 *   [options]
 * @returns {Promise<object[]>} event messages
 */
export async function fetchEntryEvents(base, tournament, room, options = {}) {
  const events = [];
  let after = options.after || 0;
  const limit = options.limit || 500;
  const path = `/entries/${encodeURIComponent(room)}/events`;
  for (;;) {
    const query = new URLSearchParams({ after: String(after), limit: String(limit) });
    const page = await getJson(tournamentPath(base, tournament, `${path}?${query}`),
      withInvite({}, options.inviteCode), options.fetch);
    events.push(...page.events);
    if (page.next_after === null) return events;
    after = page.next_after;
  }
}

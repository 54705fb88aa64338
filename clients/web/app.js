// Yahtzee in the browser: lobby, table and spectator view over the JSON subprotocol.
//
// One WebSocket to ws(s)://<this host>/ws with subprotocol "yahtzee.v1.json". Every command has
// an id and is answered by exactly one ack or error; room events carry a gap-free seq. The page
// keeps a model of the room (built from `snapshot`, folded forward by events, deduplicated by
// seq). After a dropped connection it reconnects with backoff and resumes: `rejoin` with the
// seat token (kept in sessionStorage, so a reload keeps the game too) or `spectate`, both with
// `last_seq`, then resends commands that got no reply (same id: the server does not apply
// them twice; a `join` carries a `join_key` because before the seat is taken the server has no
// seat to remember the id by, SPEC.md 9.4).
//
// Text from other people (names) is only ever inserted with textContent, never as HTML.
"use strict";

(() => {
  const SUBPROTOCOL = "yahtzee.v1.json";
  const STORAGE_KEY = "yahtzee.session";

  const LABELS = {
    aces: "Aces", ones: "Ones", twos: "Twos", threes: "Threes", fours: "Fours", fives: "Fives",
    sixes: "Sixes", one_pair: "One Pair", two_pairs: "Two Pairs",
    three_of_a_kind: "3 of a Kind", four_of_a_kind: "4 of a Kind", full_house: "Full House",
    small_straight: "Small Straight", large_straight: "Large Straight", yahtzee: "YAHTZEE",
    yatzy: "Yatzy", chance: "Chance",
  };
  const BOXES = {
    yahtzee: ["aces", "twos", "threes", "fours", "fives", "sixes", "three_of_a_kind",
      "four_of_a_kind", "full_house", "small_straight", "large_straight", "yahtzee", "chance"],
    yatzy: ["ones", "twos", "threes", "fours", "fives", "sixes", "one_pair", "two_pairs",
      "three_of_a_kind", "four_of_a_kind", "small_straight", "large_straight", "full_house",
      "chance", "yatzy"],
  };
  const UPPER = new Set(["aces", "ones", "twos", "threes", "fours", "fives", "sixes"]);
  const PIPS = ["", "⚀", "⚁", "⚂", "⚃", "⚄", "⚅"];

  const $ = (id) => document.getElementById(id);

  // Build an element; string children become text nodes (never parsed as HTML).
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === undefined || value === null || value === false) continue;
      if (key === "class") node.className = value;
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else if (key === "dataset") Object.assign(node.dataset, value);
      else node.setAttribute(key, value === true ? "" : String(value));
    }
    for (const child of children) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  // ------------------------------------------------------------------ connection

  const conn = {
    ws: null,
    ready: false,          // connected and resumed: commands may be sent
    closing: false,
    attempt: 0,
    nextId: 1,
    prefix: "w" + Math.random().toString(36).slice(2, 8) + "-",
    pending: new Map(),    // id -> {message, resolve, reject, sentOn, thisConnectionOnly}
    connectionNo: 0,
    pingTimer: null,
    lastMessageAt: 0,
    selfClosed: false,
  };

  let session = loadSession();  // {room, token?, invite?, role, player?, name}
  let model = null;             // the room as the page knows it
  let rooms = [];

  function loadSession() {
    try { return JSON.parse(sessionStorage.getItem(STORAGE_KEY)) || null; } catch { return null; }
  }
  function saveSession() {
    if (session) sessionStorage.setItem(STORAGE_KEY, JSON.stringify(session));
    else sessionStorage.removeItem(STORAGE_KEY);
  }

  function wsUrl() {
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    return `${scheme}//${location.host}/ws`;
  }

  function setConnection(state, text) {
    const badge = $("connection");
    badge.dataset.state = state;
    badge.textContent = text || state;
  }

  function connect() {
    conn.connectionNo += 1;
    const number = conn.connectionNo;
    setConnection(conn.attempt ? "reconnecting" : "connecting",
      conn.attempt ? "reconnecting…" : "connecting…");
    let ws;
    try {
      ws = new WebSocket(wsUrl(), [SUBPROTOCOL]);
    } catch (err) {
      scheduleReconnect();
      return;
    }
    conn.ws = ws;
    ws.onmessage = (msg) => {
      conn.lastMessageAt = Date.now();
      let data;
      try { data = JSON.parse(msg.data); } catch { return; }
      onMessage(data, number);
    };
    ws.onclose = (ev) => {
      if (conn.ws !== ws) return;
      conn.ws = null;
      conn.ready = false;
      stopHeartbeat();
      // hello, rejoin and spectate of the resume belong to this connection: the next one sends
      // its own, so they are not resent (their callers see the connection number move on).
      for (const [id, entry] of conn.pending) {
        if (entry.thisConnectionOnly) conn.pending.delete(id);
      }
      const onPurpose = conn.selfClosed;
      conn.selfClosed = false;
      if (conn.closing || (ev.code === 1000 && !onPurpose)) {
        // 1000 from the server ends the session (e.g. the seat was taken back from another
        // window): do not fight over it (SPEC.md 8.1).
        setConnection("closed", "disconnected");
        notify("The server ended this connection (is the game open in another window?). " +
          "Reload the page to connect again.");
        return;
      }
      scheduleReconnect(ev.code);
    };
  }

  function scheduleReconnect(code) {
    conn.attempt += 1;
    const base = Math.min(10000, 300 * 2 ** Math.min(conn.attempt - 1, 6));
    let delay = base * (0.5 + Math.random() / 2);
    if (code === 1012) delay = Math.random() * 250;      // a restart: another server answers
    if (code === 1008) delay += 5000;                     // rate limit abuse: pause first
    setConnection("reconnecting", "reconnecting…");
    setTimeout(connect, delay);
  }

  // Close the socket to get a fresh one (resync, dead connection): the page reconnects.
  function closeOnPurpose(reason) {
    if (!conn.ws) return;
    conn.selfClosed = true;
    conn.ws.close(1000, reason);
  }

  function send(message) {
    if (conn.ws && conn.ws.readyState === WebSocket.OPEN) conn.ws.send(JSON.stringify(message));
  }

  // Send a command; resolves with the ack's result, rejects with {code, message}. Commands wait
  // until the connection is resumed and are resent after a reconnect; `now`: send at once on
  // this connection only (the resume itself).
  function command(type, fields, { now = false } = {}) {
    const id = conn.prefix + conn.nextId++;
    const message = { type, id, ...(fields || {}) };
    return new Promise((resolve, reject) => {
      const entry = { message, resolve, reject, sentOn: 0, thisConnectionOnly: now };
      conn.pending.set(id, entry);
      if (conn.ready || now) {
        entry.sentOn = conn.connectionNo;
        send(message);
      }
    });
  }

  async function onWelcome(number, heartbeatSeconds) {
    conn.attempt = 0;
    startHeartbeat(heartbeatSeconds);
    command("hello", { client: "yahtzee-web" }, { now: true }).catch(() => {});
    if (session) {
      const lastSeq = model && model.room === session.room ? model.seq : null;
      try {
        if (session.role === "player") {
          const result = await command("rejoin",
            { room: session.room, token: session.token, last_seq: lastSeq }, { now: true });
          session.player = result.player;
          saveSession();
        } else {
          await command("spectate",
            { room: session.room, invite_code: session.invite || null, last_seq: lastSeq },
            { now: true });
        }
      } catch (err) {
        if (number !== conn.connectionNo) return;
        notify(`Could not return to room ${session.room}: ${err.message || err.code}`);
        if (["bad_token", "room_not_found", "invite_required"].includes(err.code)) {
          leaveLocally();
        }
      }
    }
    if (number !== conn.connectionNo) return;
    conn.ready = true;
    setConnection("connected", "connected");
    for (const entry of conn.pending.values()) {
      if (entry.sentOn !== number) {
        entry.sentOn = number;
        send(entry.message);
      }
    }
    render();
    if (!session) refreshRooms();
  }

  // A browser cannot see the server's WebSocket pings (SPEC.md 8.2): send an application ping
  // every heartbeat_seconds, and treat two intervals without any message as a dead connection.
  function startHeartbeat(seconds) {
    stopHeartbeat();
    const everyMs = (seconds || 20) * 1000;
    conn.lastMessageAt = Date.now();
    conn.pingTimer = setInterval(() => {
      if (Date.now() - conn.lastMessageAt > 2 * everyMs) {
        closeOnPurpose("no message from the server");
        return;
      }
      send({ type: "ping", id: conn.prefix + conn.nextId++ });
    }, everyMs);
  }
  function stopHeartbeat() {
    clearInterval(conn.pingTimer);
  }

  function onMessage(msg, number) {
    switch (msg.type) {
      case "welcome": onWelcome(number, msg.heartbeat_seconds); return;
      case "pong": return;
      case "ack": case "error": {
        if (msg.id === null) { notify(msg.message); return; }
        const entry = conn.pending.get(msg.id);
        if (!entry) return;
        conn.pending.delete(msg.id);
        if (msg.type === "ack") entry.resolve(msg.result || {});
        else entry.reject({ code: msg.code, message: msg.message, retryable: msg.retryable });
        return;
      }
      case "snapshot": {
        if (model && model.room === msg.room && msg.seq < model.seq) return;
        model = fromSnapshot(msg);
        render();
        return;
      }
      default:
        if (typeof msg.seq === "number" && msg.room) onEvent(msg);
    }
  }

  // ------------------------------------------------------------------ the room model

  function fromSnapshot(snapshot) {
    const s = snapshot.state;
    return {
      room: snapshot.room, seq: snapshot.seq, status: s.status, public: s.public,
      maxSeats: s.max_seats, turnSeconds: s.turn_seconds, options: s.options, host: s.host,
      players: s.players.map((p) => ({ ...p, totals: { ...p.totals } })),
      phase: s.phase, order: s.order, current: s.current_player, round: s.round,
      dice: s.dice, held: s.held, rollNumber: s.roll_number, rollsLeft: s.rolls_left,
      preview: s.preview, deadline: s.turn_deadline_ms, spectators: s.spectators,
      bonusPending: false, turnOver: s.status === "finished", results: [], log: [],
    };
  }

  function player(id) { return model && model.players.find((p) => p.player === id); }
  function nameOf(id) { const p = player(id); return p ? p.name : id; }

  function onEvent(ev) {
    if (!model || model.room !== ev.room) return;   // no snapshot yet: it will include this
    if (ev.seq <= model.seq) return;                // a duplicate from a replay
    if (ev.seq !== model.seq + 1) {                 // a gap: resync through a reconnect
      closeOnPurpose("seq gap");
      return;
    }
    model.seq = ev.seq;
    applyEvent(ev);
    render();
  }

  function endTurnDice() {
    Object.assign(model, { dice: [], held: [], rollNumber: 0, rollsLeft: 0, preview: [],
      bonusPending: false });
  }

  function log(text) { model.log.push(text); }

  function applyEvent(ev) {
    switch (ev.type) {
      case "player_joined": {
        const card = {};
        for (const box of BOXES[model.options.rules]) card[box] = null;
        model.players.push({ player: ev.player, name: ev.name, seat: ev.seat, connected: true,
          forfeited: false, scorecard: card,
          totals: { upper: 0, upper_bonus: 0, lower: 0, yahtzee_bonus: 0, grand: 0 } });
        model.players.sort((a, b) => a.seat - b.seat);
        log(`${ev.name} sat down`);
        break;
      }
      case "player_left": {
        const p = player(ev.player);
        if (ev.forfeited) {
          if (p) { p.forfeited = true; p.connected = false; }
        } else {
          // Removed; in the lobby the seats above move down so they stay 0, 1, 2, ...
          model.players = model.players.filter((q) => q.player !== ev.player);
          if (model.status === "lobby") {
            for (const q of model.players) if (q.seat > ev.seat) q.seat -= 1;
          }
        }
        log(`${p ? p.name : ev.player} left${ev.forfeited ? " (forfeit)" : ""}`);
        break;
      }
      case "player_disconnected": {
        const p = player(ev.player); if (p) p.connected = false;
        log(`${nameOf(ev.player)} lost the connection`);
        break;
      }
      case "player_reconnected": {
        const p = player(ev.player); if (p) p.connected = true;
        log(`${nameOf(ev.player)} is back`);
        break;
      }
      case "host_changed": model.host = ev.player; break;
      case "game_started":
        model.status = "playing"; model.order = ev.order;
        log("The game started");
        break;
      case "roll_off":
        log("Roll-off: " + ev.rolls.map((r) => `${nameOf(r.player)} ${r.total}`).join(", "));
        break;
      case "turn_changed":
        model.status = "playing"; model.phase = "awaiting_roll"; model.current = ev.player;
        model.round = ev.round; model.deadline = ev.deadline_ms;
        endTurnDice(); model.rollsLeft = 3; model.turnOver = false;
        log(`Round ${ev.round}: ${nameOf(ev.player)}'s turn`);
        break;
      case "rolled":
        Object.assign(model, { phase: "rolled", dice: ev.dice, held: ev.held,
          rollNumber: ev.roll_number, rollsLeft: ev.rolls_left, preview: ev.preview,
          bonusPending: ev.yahtzee_bonus_pending, turnOver: false });
        log(`${nameOf(ev.player)} rolled ${ev.dice.join(" ")}`);
        break;
      case "held": model.held = ev.held; break;
      case "scored": {
        const p = player(ev.player);
        if (p) {
          p.scorecard[ev.box] = ev.points;
          if (UPPER.has(ev.box)) p.totals.upper += ev.points; else p.totals.lower += ev.points;
          p.totals.upper_bonus = ev.upper_bonus; p.totals.yahtzee_bonus = ev.yahtzee_bonus;
          p.totals.grand = ev.total;
        }
        // The dice stay on the table until the next event, but the turn is over.
        model.turnOver = true; model.bonusPending = false;
        log(`${nameOf(ev.player)} scored ${ev.points} in ${LABELS[ev.box]}` +
          (ev.joker ? " (Joker)" : "") + (ev.automatic ? " (time out)" : ""));
        break;
      }
      case "game_over":
        model.status = "finished"; model.phase = "finished"; model.current = null;
        model.deadline = null; endTurnDice(); model.results = ev.results;
        model.round = BOXES[model.options.rules].length; model.turnOver = true;
        log("Game over");
        break;
      case "spectators": model.spectators = ev.count; break;
      default: break;
    }
  }

  // ------------------------------------------------------------------ actions

  function notify(text) {
    const box = $("notice");
    box.textContent = text;
    box.hidden = !text;
    if (text) setTimeout(() => { if (box.textContent === text) box.hidden = true; }, 6000);
  }

  function fail(err) { notify(err && (err.message || err.code) || String(err)); }

  function myName() {
    const name = $("name").value.trim();
    if (!name) { notify("Enter your name first."); $("name").focus(); return null; }
    localStorage.setItem("yahtzee.name", name);
    return name;
  }

  async function refreshRooms() {
    try {
      const result = await command("list_rooms", {});
      rooms = result.rooms;
      renderRooms();
    } catch (err) { fail(err); }
  }

  // A random key per seat taken: resending the join after a lost ack returns the same seat.
  function newJoinKey() {
    const bytes = crypto.getRandomValues(new Uint8Array(16));  // randomUUID needs https
    return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  }

  async function joinRoom(room, invite) {
    const name = myName();
    if (!name) return;
    try {
      const result = await command("join",
        { room, name, invite_code: invite || null, join_key: newJoinKey() });
      session = { room, token: result.token, invite: invite || null, role: "player",
        player: result.player, name };
      saveSession();
      render();
    } catch (err) { fail(err); }
  }

  async function watchRoom(room, invite) {
    try {
      await command("spectate", { room, invite_code: invite || null });
      session = { room, invite: invite || null, role: "spectator" };
      saveSession();
      render();
    } catch (err) { fail(err); }
  }

  async function createRoom(event) {
    event.preventDefault();
    if (!myName()) return;
    const fields = {
      seats: Number($("seats").value) || 1,
      public: $("public").checked,
      turn_seconds: Number($("turn-seconds").value) || 0,
      options: { rules: $("rules").value, extra_yahtzees: $("extra-yahtzees").value,
        joker: $("joker").value, first_player: $("first-player").value },
    };
    try {
      const created = await command("create_room", fields);
      await joinRoom(created.room, created.invite_code);
    } catch (err) { fail(err); }
  }

  function leaveLocally() {
    session = null;
    model = null;
    saveSession();
    render();
    refreshRooms();
  }

  async function leave() {
    try { await command("leave", {}); } catch (err) { if (err.code !== "not_in_room") fail(err); }
    leaveLocally();
  }

  function myTurn() {
    return Boolean(model && session && session.role === "player" &&
      model.current === session.player && !model.turnOver);
  }

  async function toggleHold(index) {
    if (!myTurn() || model.phase !== "rolled" || model.rollsLeft === 0) return;
    const held = model.held.includes(index);
    try { await command(held ? "release" : "hold", { dice: [index] }); } catch (err) { fail(err); }
  }

  async function roll() {
    if (!myTurn()) return;
    const keep = model.phase === "rolled" ? [...model.held] : [];
    try { await command("roll", { keep }); } catch (err) { fail(err); }
  }

  function chooseBox(box) {
    if (!myTurn() || model.phase !== "rolled") return;
    const entry = model.preview.find((e) => e.box === box);
    if (!entry || !entry.allowed) return;
    const better = model.preview.filter((e) => e.allowed && e.points > entry.points);
    if (entry.points === 0 && better.length) {
      const best = better.reduce((a, b) => (b.points > a.points ? b : a));
      $("confirm-text").textContent =
        `${LABELS[box]} scores 0 now, while ${LABELS[best.box]} would score ${best.points}. ` +
        `Score 0 in ${LABELS[box]}?`;
      const returnFocus = document.activeElement;
      const close = () => {
        $("confirm").hidden = true;
        if (returnFocus && returnFocus.isConnected) returnFocus.focus();
      };
      $("confirm").hidden = false;
      $("confirm-yes").onclick = () => { close(); score(box); };
      $("confirm-no").onclick = close;
      // Cancel has the focus: a second Enter (or key repeat) must not score the 0 by accident.
      $("confirm-no").focus();
      return;
    }
    score(box);
  }

  async function score(box) {
    try { await command("score", { box }); } catch (err) { fail(err); }
  }

  async function start() {
    try { await command("start", {}); } catch (err) { fail(err); }
  }

  // ------------------------------------------------------------------ rendering

  function render() {
    const inRoom = Boolean(session);
    $("lobby").hidden = inRoom;
    $("table").hidden = !inRoom;
    if (inRoom) renderTable();
  }

  function renderRooms() {
    const body = $("rooms").querySelector("tbody");
    body.replaceChildren();
    for (const r of rooms) {
      const opts = `${r.options.rules}` + (r.options.rules === "yahtzee"
        ? `, extra ${r.options.extra_yahtzees}, joker ${r.options.joker}` : "");
      body.append(el("tr", { dataset: { room: r.room } },
        el("td", {}, r.room),
        el("td", {}, r.players.join(", ")),
        el("td", {}, `${r.seats - r.open_seats}/${r.seats}`),
        el("td", {}, r.status),
        el("td", {}, opts),
        el("td", {}, String(r.spectators)),
        el("td", {},
          el("button", { type: "button", class: "join", disabled: r.open_seats === 0 ||
            r.status !== "lobby", onclick: () => joinRoom(r.room, null) }, "Join"), " ",
          el("button", { type: "button", class: "watch", onclick: () => watchRoom(r.room, null) },
            "Watch"))));
    }
    $("no-rooms").hidden = rooms.length > 0;
  }

  function renderTable() {
    $("room-id").textContent = session.room;
    $("invite").textContent = session.invite ? `invite code ${session.invite}` : "";
    $("role").textContent = session.role === "player" ? "playing" : "spectating";
    if (!model) {
      $("turn").textContent = "Loading…";
      return;
    }
    const o = model.options;
    $("room-options").textContent = `${o.rules} · extra Yahtzees ${o.extra_yahtzees} · ` +
      `joker ${o.joker} · first player ${o.first_player}` +
      (model.turnSeconds ? ` · ${model.turnSeconds}s per turn` : "");
    $("spectators").textContent = String(model.spectators);

    const me = session.role === "player" ? session.player : null;
    const lobby = model.status === "lobby";
    $("lobby-wait").hidden = !lobby;
    if (lobby) {
      const seated = model.players.length;
      $("waiting").textContent = `Waiting for players: ${seated}/${model.maxSeats} seated` +
        (model.host ? `; ${nameOf(model.host)} starts the game.` : ".");
      $("start").hidden = !(me && model.host === me);
    }

    let turn;
    if (model.status === "finished") turn = "Game over";
    else if (lobby) turn = "In the lobby";
    else if (!model.current) turn = "Starting…";
    else if (model.current === me) turn = `Your turn (round ${model.round})`;
    else turn = `${nameOf(model.current)}'s turn (round ${model.round})`;
    $("turn").textContent = turn;

    // The dice and the boxes are built anew: keep the keyboard focus on the same one.
    const focused = focusedSelector();
    renderDeadline();
    renderDice();
    renderScorecard(me);
    renderStandings();
    if (focused) {
      const again = document.querySelector(focused);
      if (again) again.focus();
    }
    const list = $("log");
    list.replaceChildren(...model.log.slice(-80).reverse().map((t) => el("li", {}, t)));
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
      return `#scorecard td.mine[data-box="${node.dataset.box}"]`;
    }
    return null;
  }

  function renderDice() {
    const mine = myTurn();
    const dice = $("dice");
    dice.replaceChildren();
    for (let i = 0; i < 5; i++) {
      const face = model.dice.length ? model.dice[i] : 0;
      const held = model.held.includes(i);
      dice.append(el("button", {
        type: "button",
        class: "die" + (held ? " held" : "") + (face ? "" : " blank"),
        dataset: { index: i, face },
        "aria-pressed": held ? "true" : "false",
        title: face ? `${face}${held ? " (held)" : ""}` : "not rolled yet",
        disabled: !(mine && model.phase === "rolled" && model.rollsLeft > 0),
        onclick: () => toggleHold(i),
      }, face ? String(face) : "·"));
    }
    const rollButton = $("roll");
    rollButton.hidden = session.role !== "player" || model.status !== "playing";
    rollButton.disabled = !(mine && model.rollsLeft > 0);
    rollButton.textContent = `Roll (${model.rollsLeft} left)`;
    let hint = "";
    if (mine && model.phase === "awaiting_roll") hint = "Roll the dice.";
    else if (mine && model.phase === "rolled") {
      hint = model.rollsLeft > 0
        ? "Click dice to hold them, roll again, or pick a box in your column."
        : "No rolls left: pick a box in your column.";
      if (model.bonusPending) hint += " Extra Yahtzee: +100 bonus!";
    }
    $("hint").textContent = hint;
    $("play-area").hidden = model.status === "lobby";
  }

  function renderScorecard(me) {
    const table = $("scorecard");
    const players = model.players;
    const head = el("tr", {}, el("th", {}, "Box"),
      ...players.map((p) => el("th", {
        class: p.player === model.current ? "current" : "",
        dataset: { player: p.player },
      }, p.name, p.player === me ? " (you)" : "",
      p.connected ? null : el("div", { class: "offline" }, p.forfeited ? "left" : "offline"))));
    table.tHead.replaceChildren(head);

    const rows = [];
    const previewByBox = new Map(model.preview.map((e) => [e.box, e]));
    const boxes = BOXES[model.options.rules];
    boxes.forEach((box, index) => {
      const cells = players.map((p) => {
        const value = p.scorecard[box];
        const current = p.player === model.current;
        const attrs = { class: current ? "current" : "", dataset: { box, player: p.player } };
        if (value !== null && value !== undefined) {
          attrs.class += " filled";
          return el("td", attrs, String(value));
        }
        const showPreview = current && model.phase === "rolled" && !model.turnOver;
        const entry = showPreview ? previewByBox.get(box) : null;
        if (!entry) return el("td", attrs, "");
        if (!entry.allowed) {
          attrs.class += " not-allowed";
          attrs.title = "not allowed now (Joker rule)";
          return el("td", attrs, "–");
        }
        const clickable = p.player === me;
        attrs.class += " preview" + (entry.points === 0 ? " zero" : "") +
          (clickable ? " mine" : "");
        attrs.title = clickable ? `score ${entry.points} here` : `would score ${entry.points}`;
        if (clickable) {
          attrs.onclick = () => chooseBox(box);
          attrs.onkeydown = (e) => {
            if (e.key === "Enter" || e.key === " ") { e.preventDefault(); chooseBox(box); }
          };
          attrs.role = "button";
          attrs.tabindex = 0;
        }
        return el("td", attrs, String(entry.points));
      });
      rows.push(el("tr", {}, el("td", {}, LABELS[box]), ...cells));
      if (index === 5) {
        rows.push(el("tr", { class: "sum" }, el("td", {}, "Upper bonus"),
          ...players.map((p) => el("td", {}, String(p.totals.upper_bonus)))));
      }
    });
    table.tBodies[0].replaceChildren(...rows);
    const foot = [];
    if (model.options.rules === "yahtzee") {
      foot.push(el("tr", { class: "sum" }, el("td", {}, "Yahtzee bonus"),
        ...players.map((p) => el("td", {}, String(p.totals.yahtzee_bonus)))));
    }
    foot.push(el("tr", { class: "sum" }, el("td", {}, "Total"),
      ...players.map((p) => el("td", { class: "total", dataset: { player: p.player } },
        String(p.totals.grand)))));
    table.tFoot.replaceChildren(...foot);
  }

  function renderStandings() {
    const done = model.status === "finished";
    $("standings").hidden = !done;
    if (!done) return;
    let results = model.results;
    if (!results.length) {  // joined after the end: rank from the scorecards
      results = [...model.players].sort((a, b) => b.totals.grand - a.totals.grand)
        .map((p) => ({ name: p.name, total: p.totals.grand, place: 0 }));
    }
    $("standings-list").replaceChildren(...results.map((r) =>
      el("li", {}, `${r.name}: ${r.total}`)));
  }

  // ------------------------------------------------------------------ wiring

  function init() {
    $("name").value = localStorage.getItem("yahtzee.name") || "";
    $("refresh").addEventListener("click", refreshRooms);
    $("create").addEventListener("submit", createRoom);
    $("join-by-id").addEventListener("submit", (e) => {
      e.preventDefault();
      const room = $("join-room").value.trim();
      if (room) joinRoom(room, $("join-invite").value.trim());
    });
    $("watch-button").addEventListener("click", () => {
      const room = $("join-room").value.trim();
      if (room) watchRoom(room, $("join-invite").value.trim());
    });
    $("leave").addEventListener("click", leave);
    $("roll").addEventListener("click", roll);
    $("start").addEventListener("click", start);
    document.addEventListener("keydown", (e) => {
      if (e.key === "Escape") { if (!$("confirm").hidden) $("confirm-no").click(); return; }
      // Keyboard play: r rolls, 1-5 hold or release a die (not while typing in a field).
      if (!$("confirm").hidden || e.target.closest("input, select, textarea")) return;
      if (e.ctrlKey || e.metaKey || e.altKey) return;
      if (e.key === "r") roll();
      else if (e.key >= "1" && e.key <= "5") toggleHold(Number(e.key) - 1);
    });
    // The lobby's room list refreshes itself while it is shown.
    setInterval(() => {
      if (!session && conn.ready && !document.hidden) refreshRooms();
    }, 5000);
    // ?room=ID&invite=CODE&watch=1 opens a room directly (links to share).
    const params = new URLSearchParams(location.search);
    if (!session && params.get("room") && params.get("watch")) {
      session = { room: params.get("room"), invite: params.get("invite"), role: "spectator" };
      saveSession();
    } else if (!session && params.get("room")) {
      $("join-room").value = params.get("room");
      $("join-invite").value = params.get("invite") || "";
    }
    render();
    connect();
    setInterval(() => { if (session && model) renderDeadline(); }, 1000);
  }

  // Exposed for tests and the curious: the model and a way to simulate a network failure.
  window.yahtzee = {
    get model() { return model; },
    get session() { return session; },
    dropConnection() { closeOnPurpose("dropped by the page"); },
  };

  document.addEventListener("DOMContentLoaded", init);
})();

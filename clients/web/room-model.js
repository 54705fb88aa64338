// room-model.js: a room as a client sees it, built from a `snapshot` and folded forward by room
// events (pure: no DOM, no network), plus one line of text per event for the move history.
// The page, the replay viewer and Node tests share it. Protocol 1.2: players carry `computer`
// (a computer player's level, null for a person), the model carries `hints` (null from an
// older server), and `bonus_taken` ends a turn like `scored`.

/** Display names of the boxes. @type {Record<string, string>} */
export const LABELS = {
  aces: "Aces", ones: "Ones", twos: "Twos", threes: "Threes", fours: "Fours", fives: "Fives",
  sixes: "Sixes", one_pair: "One Pair", two_pairs: "Two Pairs",
  three_of_a_kind: "3 of a Kind", four_of_a_kind: "4 of a Kind", full_house: "Full House",
  small_straight: "Small Straight", large_straight: "Large Straight", yahtzee: "YAHTZEE",
  yatzy: "Yatzy", chance: "Chance",
};

/** The boxes of each rule set, in scorecard order. @type {Record<string, string[]>} */
export const BOXES = {
  yahtzee: ["aces", "twos", "threes", "fours", "fives", "sixes", "three_of_a_kind",
    "four_of_a_kind", "full_house", "small_straight", "large_straight", "yahtzee", "chance"],
  yatzy: ["ones", "twos", "threes", "fours", "fives", "sixes", "one_pair", "two_pairs",
    "three_of_a_kind", "four_of_a_kind", "small_straight", "large_straight", "full_house",
    "chance", "yatzy"],
};

/** Upper-section boxes. */
export const UPPER = new Set(["aces", "ones", "twos", "threes", "fours", "fives", "sixes"]);

/** The upper total that earns the upper bonus (both rule sets). */
export const UPPER_BONUS_THRESHOLD = 63;

/**
 * A model from a `snapshot` message.
 * @param {object} snapshot
 * @returns {object} the model (plain data)
 */
export function fromSnapshot(snapshot) {
  const s = snapshot.state;
  return {
    room: snapshot.room, seq: snapshot.seq, status: s.status, public: s.public,
    maxSeats: s.max_seats, turnSeconds: s.turn_seconds, options: s.options, host: s.host,
    players: s.players.map((p) => ({ ...p, computer: p.computer ?? null,
      scorecard: { ...p.scorecard }, totals: { ...p.totals } })),
    phase: s.phase, order: [...s.order], current: s.current_player, round: s.round,
    dice: [...s.dice], held: [...s.held], rollNumber: s.roll_number, rollsLeft: s.rolls_left,
    preview: [...s.preview], deadline: s.turn_deadline_ms, spectators: s.spectators,
    bonusPending: false, turnOver: s.status === "finished", results: [],
    hints: s.hints ?? null,
    // v1.3: the room starts by itself when full; the rematch offered after its game (the
    // room, who offered it first: only known from the event, its invite code if private).
    autoStart: s.auto_start ?? null, computerDelayMs: s.computer_delay_ms ?? null,
    rematchRoom: s.rematch_room ?? null, rematchBy: null, rematchInvite: null,
    // v1.4: a rated room; its ratings, told after the game is archived (only by the event)
    rated: s.rated ?? false, ratings: [],
  };
}

/**
 * The room as it was before its first event (for a replay from seq 1): the snapshot's
 * settings, no players, nothing played.
 * @param {object} snapshot any snapshot of the room (its settings never change)
 * @returns {object}
 */
export function initialModel(snapshot) {
  const model = fromSnapshot(snapshot);
  return Object.assign(model, {
    seq: 0, status: "lobby", host: null, players: [], phase: "lobby", order: [], current: null,
    round: 0, dice: [], held: [], rollNumber: 0, rollsLeft: 0, preview: [], deadline: null,
    spectators: 0, turnOver: false, results: [], rematchRoom: null, rematchBy: null,
    rematchInvite: null,
  });
}

/**
 * Whether the player on turn may take the +100 without filling a box now (v1.2, room option
 * `bonus_turn`): their last roll pays an extra-Yahtzee bonus and the turn is not over.
 * @param {object} model
 */
export function canTakeBonus(model) {
  return model.options.bonus_turn === "on" && model.phase === "rolled" && model.bonusPending &&
    !model.turnOver;
}

/** @param {object} model @param {string} id */
export function playerOf(model, id) {
  return model.players.find((p) => p.player === id);
}

/** @param {object} model @param {string} id */
export function nameOf(model, id) {
  const p = playerOf(model, id);
  return p ? p.name : id;
}

function endTurnDice(model) {
  Object.assign(model, { dice: [], held: [], rollNumber: 0, rollsLeft: 0, preview: [],
    bonusPending: false });
}

function emptyCard(model) {
  const card = {};
  for (const box of BOXES[model.options.rules]) card[box] = null;
  return card;
}

const APPLY = {
  player_joined(model, ev) {
    model.players.push({ player: ev.player, name: ev.name, seat: ev.seat, connected: true,
      forfeited: false, computer: ev.computer ?? null, scorecard: emptyCard(model),
      totals: { upper: 0, upper_bonus: 0, lower: 0, yahtzee_bonus: 0, grand: 0 } });
    model.players.sort((a, b) => a.seat - b.seat);
  },
  player_left(model, ev) {
    const p = playerOf(model, ev.player);
    if (ev.forfeited) {
      if (p) Object.assign(p, { forfeited: true, connected: false });
      return;
    }
    // Removed; in the lobby the seats above move down so they stay 0, 1, 2, ...
    model.players = model.players.filter((q) => q.player !== ev.player);
    if (model.status === "lobby") {
      for (const q of model.players) if (q.seat > ev.seat) q.seat -= 1;
    }
  },
  player_disconnected(model, ev) {
    const p = playerOf(model, ev.player);
    // away_deadline_ms: when the server starts playing for the absent player (not in protocol
    // 1.2 yet; null or absent: unknown).
    if (p) Object.assign(p, { connected: false, away_deadline_ms: ev.away_deadline_ms ?? null });
  },
  player_reconnected(model, ev) {
    const p = playerOf(model, ev.player);
    if (p) Object.assign(p, { connected: true, away_deadline_ms: null });
  },
  host_changed(model, ev) { model.host = ev.player; },
  game_started(model, ev) {
    model.status = "playing";
    model.order = [...ev.order];
  },
  turn_changed(model, ev) {
    Object.assign(model, { status: "playing", phase: "awaiting_roll", current: ev.player,
      round: ev.round, deadline: ev.deadline_ms ?? null, turnOver: false });
    endTurnDice(model);
    model.rollsLeft = 3;
  },
  rolled(model, ev) {
    Object.assign(model, { phase: "rolled", dice: [...ev.dice], held: [...ev.held],
      rollNumber: ev.roll_number, rollsLeft: ev.rolls_left, preview: [...ev.preview],
      bonusPending: Boolean(ev.yahtzee_bonus_pending), turnOver: false });
  },
  held(model, ev) { model.held = [...ev.held]; },
  scored(model, ev) {
    const p = playerOf(model, ev.player);
    if (p) {
      if (ev.box) {
        p.scorecard[ev.box] = ev.points;
        if (UPPER.has(ev.box)) p.totals.upper += ev.points;
        else p.totals.lower += ev.points;
      }
      p.totals.upper_bonus = ev.upper_bonus;
      p.totals.yahtzee_bonus = ev.yahtzee_bonus;
      p.totals.grand = ev.total;
    }
    // The dice stay on the table until the next event, but the turn is over.
    model.turnOver = true;
    model.bonusPending = false;
  },
  bonus_taken(model, ev) {
    // v1.2: the +100 of an extra Yahtzee, no box filled; the turn is over as after `scored`.
    const p = playerOf(model, ev.player);
    if (p) {
      p.totals.yahtzee_bonus = ev.yahtzee_bonus;
      p.totals.grand = ev.total;
    }
    model.turnOver = true;
    model.bonusPending = false;
  },
  game_over(model, ev) {
    Object.assign(model, { status: "finished", phase: "finished", current: null,
      deadline: null, results: ev.results, round: BOXES[model.options.rules].length,
      turnOver: true });
    endTurnDice(model);
  },
  spectators(model, ev) { model.spectators = ev.count; },
  rematch_offered(model, ev) {
    Object.assign(model, { rematchRoom: ev.rematch_room, rematchBy: ev.player,
      rematchInvite: ev.invite_code ?? null });
  },
  ratings(model, ev) { model.ratings = ev.players; },  // v1.4: a rated game's ratings moved
};

/**
 * Fold one room event into the model (in place). Events of unknown types only move the seq.
 * @param {object} model
 * @param {object} ev
 */
export function applyEvent(model, ev) {
  const apply = APPLY[ev.type];
  if (apply) apply(model, ev);
  model.seq = ev.seq;
}

/**
 * One line for the move history, or null for events not worth a line. Call it BEFORE
 * `applyEvent` (a player who leaves the lobby is still known by name then).
 * @param {object} model
 * @param {object} ev
 * @returns {string|null}
 */
export function describeEvent(model, ev) {
  const name = (id) => nameOf(model, id);
  switch (ev.type) {
    case "player_joined": return `${ev.name} sat down${ev.computer ? ` (computer, ${ev.computer})` : ""}`;
    case "player_left": return `${name(ev.player)} left${ev.forfeited ? " (forfeit)" : ""}`;
    case "player_disconnected": return `${name(ev.player)} lost the connection`;
    case "player_reconnected": return `${name(ev.player)} is back`;
    case "game_started": return "The game started";
    case "roll_off":
      return "Roll-off: " + ev.rolls.map((r) => `${name(r.player)} ${r.total}`).join(", ");
    case "turn_changed": return `Round ${ev.round}: ${name(ev.player)}'s turn`;
    case "rolled": return `${name(ev.player)} rolled ${ev.dice.join(" ")}`;
    case "bonus_taken":
      return `${name(ev.player)} took the +100 bonus` + (ev.automatic ? " (time out)" : "");
    case "scored":
      if (!ev.box) return `${name(ev.player)} took the +100 bonus`;
      return `${name(ev.player)} scored ${ev.points} in ${LABELS[ev.box] || ev.box}` +
        (ev.joker ? " (Joker)" : "") + (ev.automatic ? " (time out)" : "");
    case "rematch_offered": return `${name(ev.player)} offers a rematch`;
    case "ratings":
      return "Ratings: " + ev.players.map((r) =>
        `${name(r.player)} ${r.before} → ${r.after}${r.provisional ? "?" : ""}`).join(", ");
    case "game_over": {
      const winners = ev.results.filter((r) => r.place === 1).map((r) => r.name);
      return winners.length ? `Game over: ${winners.join(" and ")} won` : "Game over";
    }
    default: return null;
  }
}

/**
 * The move history of a log: one line per event worth one, oldest first.
 * @param {object} start the model before the first event (`initialModel`)
 * @param {object[]} events in seq order
 * @returns {{seq: number, text: string}[]}
 */
export function historyOf(start, events) {
  const model = structuredClone(start);
  const lines = [];
  for (const ev of events) {
    const text = describeEvent(model, ev);
    if (text) lines.push({ seq: ev.seq, text });
    applyEvent(model, ev);
  }
  return lines;
}

/**
 * The standings: the server's results once the game is over, else ranked from the totals
 * (equal totals share a place; forfeited players last).
 * @param {object} model
 * @returns {{player: string, name: string, total: number, place: number}[]}
 */
export function standings(model) {
  if (model.results && model.results.length) return model.results;
  const ranked = [...model.players].sort((a, b) =>
    (a.forfeited - b.forfeited) || (b.totals.grand - a.totals.grand));
  return ranked.map((p, index) => {
    const first = ranked.findIndex((q) => q.totals.grand === p.totals.grand &&
      q.forfeited === p.forfeited);
    return { player: p.player, name: p.name, total: p.totals.grand,
      place: (first === -1 ? index : first) + 1 };
  });
}

// The client's picture of a game: a seat's (or a spectator's) view, kept up to date by folding the
// events the server sends (protocol.md), the same way the rules' `evolve` folds them. Its shape is
// the server's `observation.view` plus a few client-side extras (lastRound, deadlines, ...).
//
// Two folds live here:
//   applyEvent(model, event)  – an *observed* event (redacted for the audience: units as
//                               {side, token, region, name|null}); used while playing/spectating.
//   RawGame                   – the unredacted log (game_over.log, GET /rooms/{room}/log once
//                               over): every name known; used for the final reveal and replays.

import { BASE, FACTIONS, PENDING_TEXT, sideOf, byOrder } from "./data.js";

const START_HONOR = 16;
const OPEN_COMBAT_HONOR = 10;
const START_ENERGY = 24;

export function decodeStep(text) {
  const [kind, side, region, to] = text.split(":");
  return { kind, side, region: Number(region), to: to === undefined ? null : Number(to) };
}

export function emptyModel() {
  return {
    seq: 0,
    phase: "setup",
    turn: "chthonians",
    turn_number: 0,
    options: { open_combat: false, random_setup: false, chthonian_honor: 0 },
    honor: { olympians: START_HONOR, chthonians: START_HONOR },
    energy: { olympians: START_ENERGY, chthonians: START_ENERGY },
    units: [],
    eliminated: [],
    result: null,
    reason: null,
    picked: [],
    setup: { submitted: { olympians: false, chthonians: false }, mine: null },
    combat: null,
    pending: null,
    pendingSteps: [],
    lastRound: null,
    lastCombat: null,
    deadlines: {},
  };
}

/** A model from a `view` message (the whole position as of `seq`). */
export function fromView(view, seq) {
  const m = emptyModel();
  Object.assign(m, structuredClone(view));
  m.seq = seq;
  m.pendingSteps = view.pending ? [`${view.pending.kind}:${view.pending.side}:${view.pending.region}`] : [];
  if (!m.setup) m.setup = null;
  if (!m.picked) m.picked = [];
  return m;
}

function sortUnits(m) {
  m.units.sort((a, b) => (a.side < b.side ? -1 : a.side > b.side ? 1 : a.region - b.region || a.token - b.token));
}

function findUnit(m, entry) {
  if (entry.name) {
    const named = m.units.find((u) => u.name === entry.name);
    if (named) return named;
  }
  return m.units.find((u) => u.side === entry.side && u.token === entry.token);
}

function mergeUnit(m, entry) {
  const unit = findUnit(m, entry);
  if (!unit) {
    m.units.push({ ...entry });
    return;
  }
  unit.token = entry.token;
  unit.region = entry.region;
  if (entry.name) unit.name = entry.name;
  if ("revealed" in entry) unit.revealed = entry.revealed;
}

function clearPending(m) {
  m.pending = null;
  m.pendingSteps = [];
}

/** Fold one observed event into the model (mutates it). */
export function applyEvent(m, e) {
  switch (e.t) {
    case "game_created": {
      const honor = e.open_combat ? OPEN_COMBAT_HONOR : START_HONOR;
      m.options = {
        open_combat: e.open_combat,
        random_setup: e.random_setup,
        chthonian_honor: e.chthonian_honor,
        move_seconds: e.move_seconds ?? null,
        commit_seconds: e.commit_seconds ?? null,
        forfeit_seconds: e.forfeit_seconds ?? null,
      };
      m.phase = "setup";
      m.honor = { olympians: honor, chthonians: honor + (e.chthonian_honor || 0) };
      m.energy = { olympians: START_ENERGY, chthonians: START_ENERGY };
      m.setup = { submitted: { olympians: false, chthonians: false }, mine: null };
      break;
    }
    case "setup_submitted":
      if (!m.setup) m.setup = { submitted: { olympians: false, chthonians: false }, mine: null };
      m.setup.submitted[e.faction] = true;
      if (e.placements) m.setup.mine = { ...e.placements };
      break;
    case "setup_revealed":
      m.units = e.units.map((u) => ({ ...u }));
      m.picked = m.units.filter((u) => u.name && "revealed" in u).map((u) => u.name).sort(byOrder);
      m.setup = null;
      break;
    case "turn_started":
      m.phase = "turn";
      m.turn = e.faction;
      m.turn_number = e.number;
      break;
    case "honor_changed":
      m.honor[e.faction] += e.delta;
      if (e.reason === "combat" && m.lastCombat && m.lastCombat.rounds.length) {
        // what the round's commitments cost, as the rules charged it (text.js explains it)
        const round = m.lastCombat.rounds[m.lastCombat.rounds.length - 1];
        round.honor = { ...(round.honor || {}), [e.faction]: ((round.honor || {})[e.faction] || 0) + e.delta };
      }
      break;
    case "energy_changed":
      m.energy[e.faction] += e.delta;
      break;
    case "units_revealed":
      for (const entry of e.units) mergeUnit(m, entry);
      break;
    case "units_hidden": {
      // every unit of that side in that region goes into hiding under fresh tokens (D2)
      const groups = new Set(e.units.map((u) => `${u.side}:${u.region}`));
      m.units = m.units.filter((u) => !groups.has(`${u.side}:${u.region}`));
      for (const entry of e.units) m.units.push({ ...entry });
      break;
    }
    case "units_moved":
      for (const entry of e.units) mergeUnit(m, entry);
      m.lastMove = { side: e.faction, origin: e.origin, destination: e.destination, flight: e.flight };
      break;
    case "units_retreated":
      for (const entry of e.units) mergeUnit(m, entry);
      clearPending(m);
      m.lastMove = { side: e.faction, origin: m.combat ? m.combat.region : null, destination: e.destination, retreat: true };
      break;
    case "unit_recalled":
      m.units.push({ side: e.faction, token: e.token, region: 0, name: e.unit, ...(ownEntries(m, e.faction) ? { revealed: true } : {}) });
      m.eliminated = m.eliminated.filter((u) => u !== e.unit);
      break;
    case "combat_started":
      m.phase = "combat";
      m.combat = {
        region: e.region,
        attacker: e.attacker,
        origin: e.origin,
        round: 1,
        committed: { olympians: false, chthonians: false },
        commitments: { olympians: null, chthonians: null },
      };
      m.lastRound = null;
      m.lastCombat = { region: e.region, attacker: e.attacker, origin: e.origin, rounds: [], ended: false, losses: [] };
      break;
    case "combat_committed":
      if (m.combat) {
        m.combat.committed[e.faction] = true;
        if ("maneuver" in e) m.combat.commitments[e.faction] = { maneuver: e.maneuver, energy: e.energy };
      }
      break;
    case "commitment_withdrawn":
      if (m.combat) {
        m.combat.committed[e.faction] = false;
        m.combat.commitments[e.faction] = null;
      }
      break;
    case "combat_round_resolved":
      m.lastRound = { ...e };
      if (m.lastCombat) m.lastCombat.rounds.push({ ...e });
      if (m.combat) {
        m.combat.committed = { olympians: false, chthonians: false };
        m.combat.commitments = { olympians: null, chthonians: null };
      }
      break;
    case "choice_pending":
      m.pendingSteps = [...e.steps];
      m.pending = e.steps.length ? decodeStep(e.steps[0]) : null;
      if (m.pending) m.pending = { kind: m.pending.kind, side: m.pending.side, region: m.pending.region };
      break;
    case "unit_eliminated": {
      const side = sideOf(e.unit);
      const before = m.units.length;
      m.units = m.units.filter((u) => !(u.name === e.unit || (u.side === side && u.token === e.token)));
      if (m.units.length === before) console.warn("eliminated unit not found", e);
      if (!m.eliminated.includes(e.unit)) m.eliminated.push(e.unit);
      clearPending(m);
      if (m.lastCombat && !m.lastCombat.ended) m.lastCombat.losses.push(e.unit);
      break;
    }
    case "stayed_in_combat":
      clearPending(m);
      break;
    case "combat_round_started":
      if (m.combat) {
        m.combat.round = e.round;
        m.combat.committed = { olympians: false, chthonians: false };
        m.combat.commitments = { olympians: null, chthonians: null };
      }
      clearPending(m);
      break;
    case "combat_ended":
      m.phase = "turn";
      m.combat = null;
      clearPending(m);
      if (m.lastCombat) m.lastCombat.ended = true;
      break;
    case "clock_set":
      m.deadlines = structuredClone(e.deadlines || {});
      break;
    case "game_ended":
      m.phase = "over";
      m.result = e.result;
      m.reason = e.reason;
      clearPending(m);
      break;
    default:
      // liturgy_performed, passed, thunderbolt_thrown, leader_succeeded, deadline_missed,
      // random_setup_drawn: nothing on the board changes
      break;
  }
  sortUnits(m);
  return m;
}

function ownEntries(m, side) {
  return m.units.some((u) => u.side === side && "revealed" in u);
}

// --- the unredacted log ----------------------------------------------------------------------

/** Folds the full log (names everywhere), like the rules' `evolve`. */
export class RawGame {
  constructor() {
    this.m = emptyModel();
    this.positions = new Map(); // name → region
    this.tokens = new Map();
    this.revealed = new Set();
    this.setups = {};
    this.nextToken = 1;
    this.count = 0;
  }

  apply(e) {
    const m = this.m;
    this.count += 1;
    switch (e.t) {
      case "setup_submitted":
        this.setups[e.faction] = { ...e.placements };
        m.setup = m.setup || { submitted: { olympians: false, chthonians: false }, mine: null };
        m.setup.submitted[e.faction] = true;
        break;
      case "setup_revealed": {
        for (const side of FACTIONS) {
          const entries = Object.entries(this.setups[side] || {}).sort((a, b) => a[1] - b[1]);
          for (const [unit, region] of entries) {
            this.positions.set(unit, region);
            this.tokens.set(unit, this.nextToken++);
          }
        }
        m.picked = [...this.positions.keys()].sort(byOrder);
        m.setup = null;
        break;
      }
      case "units_revealed":
        for (const u of e.units) this.revealed.add(u);
        break;
      case "units_hidden":
        for (const u of e.units) this.revealed.delete(u);
        for (const [u, t] of Object.entries(e.tokens)) {
          this.tokens.set(u, t);
          this.nextToken = Math.max(this.nextToken, t + 1);
        }
        break;
      case "units_moved":
      case "units_retreated":
        for (const u of e.units) this.positions.set(u, e.destination);
        if (e.t === "units_retreated") {
          m.pending = null;
          m.pendingSteps = [];
        }
        m.lastMove = { side: e.faction, origin: e.origin ?? (m.combat ? m.combat.region : null), destination: e.destination, flight: e.flight };
        break;
      case "unit_recalled":
        this.positions.set(e.unit, 0);
        this.tokens.set(e.unit, e.token);
        this.nextToken = Math.max(this.nextToken, e.token + 1);
        m.eliminated = m.eliminated.filter((u) => u !== e.unit);
        break;
      case "unit_eliminated":
        this.positions.delete(e.unit);
        this.tokens.delete(e.unit);
        this.revealed.add(e.unit);
        if (!m.eliminated.includes(e.unit)) m.eliminated.push(e.unit);
        m.pending = null;
        m.pendingSteps = [];
        if (m.lastCombat && !m.lastCombat.ended) m.lastCombat.losses.push(e.unit);
        break;
      case "combat_committed":
        if (m.combat) {
          m.combat.committed[e.faction] = true;
          m.combat.commitments[e.faction] = { maneuver: e.maneuver, energy: e.energy };
        }
        break;
      default:
        applyEvent(m, e);
    }
    return this;
  }

  /** The position with every unit named (the full reveal). */
  model() {
    const m = structuredClone(this.m);
    if (this.positions.size) {
      m.units = [...this.positions.entries()].map(([name, region]) => ({
        side: sideOf(name),
        token: this.tokens.get(name),
        region,
        name,
        revealed: this.revealed.has(name),
      }));
    } else {
      // before the setups are revealed: show the sealed placements as they were submitted
      m.units = [];
      for (const side of FACTIONS) {
        for (const [name, region] of Object.entries(this.setups[side] || {})) {
          m.units.push({ side, token: 0, region, name, revealed: false });
        }
      }
    }
    sortUnits(m);
    m.fullInfo = true;
    return m;
  }
}

/** Snapshots after every event of a full log (for replays). */
export function replayLog(events) {
  const game = new RawGame();
  const steps = [];
  for (const e of events) {
    game.apply(e);
    steps.push({ event: e, model: game.model() });
  }
  return steps;
}

// --- small queries used by the UI -----------------------------------------------------------

export function unitsIn(m, region, side = null) {
  return m.units.filter((u) => u.region === region && (side === null || u.side === side));
}

export function unitLabel(u) {
  if (typeof u === "string") return u;
  return u.name || `token #${u.token}`;
}

export function isMine(u, seat) {
  return seat !== null && u.side === seat;
}

/**
 * What a side is doing now, from public facts only (the same for every audience): both sides
 * choose during the setup and during sealed commitments; after a round only the side with a
 * choice to make is choosing; in a turn, the side whose turn it is plays.
 */
export function sideState(m, f) {
  if (m.phase === "over") return { key: "over", text: "", acting: false };
  if (m.phase === "setup") {
    return m.setup && m.setup.submitted[f] ? { key: "ready", text: "setup sealed", acting: false } : { key: "choosing", text: "placing…", acting: true };
  }
  if (m.pending) {
    return m.pending.side === f
      ? { key: "choosing", text: `choosing: ${PENDING_TEXT[m.pending.kind] || m.pending.kind}`, acting: true }
      : { key: "waiting", text: "waiting", acting: false };
  }
  if (m.combat) {
    return m.combat.committed[f] ? { key: "committed", text: "committed", acting: false } : { key: "choosing", text: "choosing…", acting: true };
  }
  return m.turn === f ? { key: "to-play", text: "to play", acting: true } : { key: "waiting", text: "waiting", acting: false };
}

export { BASE };

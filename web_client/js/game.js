// The game screen, for a seat or a spectator: it owns the connection, folds the messages into the
// model (model.js), keeps the resume token in localStorage, and renders board, panels, the turn's
// actions and the dialogs from (model, legal, ui). Protocol → UI mapping: docs/client.md.

import { h, replace, focusKey, restoreFocus, signed } from "./dom.js";
import { Connection } from "./connection.js";
import { applyEvent, emptyModel, fromView, RawGame, unitsIn, sideState } from "./model.js";
import { describe, duration } from "./text.js";
import { renderBoard } from "./board.js";
import { api, loadSnapshot, saveSnapshot, prefs, savePrefs, saveSeat, seatFor } from "./api.js";
import {
  BY_NAME, CHARACTERS, END_REASON, FACTION_NAME, FACTIONS, HONOR_NOTE, HONOR_TABLE, LEADER, MANEUVER_NAME, enemyOf, byOrder,
  resultText,
} from "./data.js";
import {
  TURN_TYPES, movesOf, stepMovesOf, movableUnits, hasFlights, destinations, describeVariant, costLine,
  sortNames, isPlain,
} from "./actions.js";
import { showYourMove, mayAskNotifications, askNotifications } from "./attention.js";
import { enemyWinWarnings } from "./danger.js";
import { toast, confirmDialog, chooseDialog, showConnection, setWhere, closeDialogs } from "./ui.js";
import { renderSetupPanel, setupBoardOptions, SetupDraft } from "./setup.js";
import { renderCombatPanel } from "./combat.js";
import { BoardZoom } from "./zoom.js";
import { icon } from "./icons.js";
import { commandLabel } from "./coach.js";
import { guideOn, setGuide, renderGuide, markGuideTarget } from "./guide.js";
import { playerLink } from "./account.js";
import { watchingText } from "./featured.js";

const SLOW_READER = 4413; // the close code of a socket that fell too far behind

let commandCounter = 0;
// Errors after which a command is sent again under its id (docs/protocol.md): it was not decided.
const RESENT = new Set(["rate_limited", "busy", "unavailable"]);
const RESEND_MS = 500;

/**
 * A decision's cost in words: each quantity before → after ("Honor 5 → 3", "Energy 10 → 8"; an
 * Energy gain too, "Energy 10 → 13", as the action's figures say), and whether it loses the game
 * (the side's Honor at 0 or below, R4). `body` is "" when it costs nothing.
 */
export function costWords(m, seat, honor, energy) {
  const lines = [];
  const after = m.honor[seat] + honor;
  if (honor < 0) lines.push(`Honor ${m.honor[seat]} → ${after}`);
  if (energy) lines.push(`Energy ${m.energy[seat]} → ${m.energy[seat] - energy}`);
  const loses = honor < 0 && after <= 0;
  const body = lines.length ? `${lines.join(", ")}.${loses ? ` Your Honor falls to ${after}: you will lose the game.` : ""}` : "";
  return { body, loses };
}

/**
 * Ask before an action of the turn: `text` says what it is and costs, then come the dangers it
 * leaves open (danger.js). The title and the button say the worst first: losing the game, then
 * a danger ("… anyway"), else the dialog's own `title` and `ok`. True to go on.
 */
function confirmWarned(text, dangers, { loses = false, title, ok, anyway = "Do it anyway", cancel }) {
  const words = loses
    ? { title: "You will lose the game", ok: "Lose the game" }
    : dangers.length
      ? { title: "The enemy may win", ok: anyway }
      : { title, ok };
  const body = h(
    "div",
    {},
    h("p", {}, text),
    dangers.length ? h("ul", { class: "dangers" }, dangers.map((d) => h("li", { class: "danger" }, d))) : null,
  );
  return confirmDialog({ ...words, body, cancel });
}


export class GameScreen {
  constructor(root, { board, room, seat = null, token = null }) {
    this.root = root;
    this.board = board;
    this.room = room;
    this.seat = seat; // "olympians" | "chthonians" | null (spectator)
    this.token = token;
    this.model = null;
    this.epoch = null;
    this.log = [];
    this.turnEnds = {}; // turn number → the position as this screen saw it at that turn's end
    this.legal = [];
    this.options = null; // the newest `legal` message about the position shown
    this.inflight = null;
    this.final = null;
    this.summary = null;
    this.status = { state: "connecting" };
    const p = prefs();
    this.ui = {
      selected: new Set(),
      fly: false,
      flyFor: null,
      showNumbers: p.numbers !== false, // the log names regions by number: shown by default
      enemyKnows: false,
      combatMinimized: false,
      hermes: null,
      targeting: null,
      tab: "log",
      logStick: true, // the log shows its newest line (the page opens there)
      logTop: null,
      gameOverClosed: false,
      commit: { maneuver: null, energy: 0, reveal: false, key: null },
      hint: null, // the coach's hint: {seq, text} for the options of legal message `seq`
    };
    this.setupDraft = seat ? new SetupDraft(room, seat, board) : null;
    this.renderQueued = false;
    this.saveQueued = false;
    this.clockTimer = null;
    this.summaryTimer = null;
  }

  get audience() {
    return this.seat;
  }

  // --- lifecycle -----------------------------------------------------------------------------

  start() {
    const snap = loadSnapshot(this.room, this.audience);
    if (snap && snap.model && snap.epoch) {
      this.model = snap.model;
      this.epoch = snap.epoch;
      this.log = snap.log || [];
      this.turnEnds = snap.turnEnds || {};
    }
    this.buildLayout();
    this.conn = new Connection({
      hello: () => this.hello(),
      onMessage: (msg) => this.onMessage(msg),
      onStatus: (status) => {
        this.status = status;
        showConnection(status, () => this.conn.reconnectNow());
        this.queueRender();
      },
    });
    this.conn.start();
    this.clockTimer = setInterval(() => this.renderClocks(), 1000);
    this.refreshSummary();
    this.summaryTimer = setInterval(() => this.refreshSummary(), 4000);
    window.olympus = this; // handy in the console and for tests
    this.queueRender();
  }

  stop() {
    if (this.conn) this.conn.stop();
    clearInterval(this.clockTimer);
    clearInterval(this.summaryTimer);
    closeDialogs();
    showConnection({ state: "idle" });
    showYourMove(false);
    if (window.olympus === this) window.olympus = null;
  }

  /** The hello of each (re)connection: from the last message folded (a resume), but for a
   * spectator closed for reading too slowly (4413, protocol.md "Slow readers"), who skips to
   * a fresh view of the game now instead of the messages it fell behind on. */
  hello() {
    const msg = this.token ? { type: "hello", token: this.token } : { type: "hello", spectate: this.room };
    const fellBehind = !this.token && this.conn && this.conn.lastClose === SLOW_READER;
    if (this.model && this.epoch && !fellBehind) {
      msg.last_seq = this.model.seq;
      msg.epoch = this.epoch;
    }
    return msg;
  }

  async refreshSummary() {
    try {
      const summary = await api.room(this.room);
      if (window.olympus !== this) return; // the page was left meanwhile
      const watching = document.getElementById("watching"); // how many watch: written in place
      if (watching) watching.textContent = watchingText(summary.spectators);
      // the setup (who joined) and the end (a rematch offered) are when the rest changes
      if (this.model && !["setup", "over"].includes(this.model.phase) && this.summary) {
        this.summary.spectators = summary.spectators;
        return;
      }
      // drawn again only when it changed: each drawing replaces the board under the pointer
      const changed = JSON.stringify(summary) !== JSON.stringify(this.summary);
      this.summary = summary;
      if (changed) {
        this.showWhere();
        this.queueRender();
      }
      if (this.model && this.model.phase === "over" && summary.options && summary.options.rated && !this.ratings) {
        const ratings = await api.ratings(this.room);
        if (Object.keys(ratings.changes).length) {
          this.ratings = ratings.changes;
          this.queueRender();
        }
      }
    } catch {
      // the room list is a convenience; the socket is the truth
    }
  }

  // --- messages ------------------------------------------------------------------------------

  onMessage(msg) {
    switch (msg.type) {
      case "welcome":
        if (this.epoch && msg.epoch !== this.epoch) {
          this.log = [];
          this.turnEnds = {};
        }
        this.epoch = msg.epoch;
        if (msg.seat !== this.seat && this.seat !== null) console.warn("seat mismatch", msg.seat, this.seat);
        if (!msg.resumed) {
          this.model = null; // a view follows
          this.legal = [];
        }
        if (this.inflight) this.conn.send({ type: "command", id: this.inflight.id, command: this.inflight.command });
        if (this.ui.hermes && this.ui.hermes.request) this.askSteps(); // its answer was lost with the socket
        break;
      case "view":
        this.model = fromView(msg.view, msg.seq);
        this.legal = [];
        if (!this.log.length && msg.seq > 3) this.loadPublicHistory(msg.seq);
        this.log.push({ seq: msg.seq, text: `Position loaded (message ${msg.seq}).`, t: "view" });
        break;
      case "event":
        this.onEvent(msg);
        break;
      case "legal":
        if (this.model && msg.seq === this.model.seq) {
          this.legal = msg.actions;
          this.legalSeq = msg.seq;
          this.options = msg; // with `setup` (what to place) or `waiting` (why nothing)
          // a walk planned on another position is dropped: its steps were priced there
          if (this.ui.hermes && this.ui.hermes.seq !== msg.seq) this.ui.hermes = null;
        }
        break;
      case "steps":
        this.onSteps(msg);
        break;
      case "ack":
        if (this.inflight && this.inflight.id === msg.id) this.inflight = null;
        break;
      case "error":
        if (this.inflight && msg.id === this.inflight.id) {
          if (RESENT.has(msg.code)) {
            // Refused before it was decided: the same command under the same id, a little later.
            const pending = this.inflight;
            setTimeout(() => {
              if (this.inflight === pending) this.conn.send({ type: "command", id: pending.id, command: pending.command });
            }, RESEND_MS);
            break;
          }
          this.inflight = null;
        }
        if (this.ui.hermes && msg.id && msg.id === this.ui.hermes.request) {
          const hm = this.ui.hermes;
          if (RESENT.has(msg.code)) {
            setTimeout(() => { if (this.ui.hermes === hm && hm.request === msg.id) this.askSteps(); }, RESEND_MS);
            break;
          }
          hm.request = null;
          hm.next = new Map();
          hm.refused = msg.sentence || msg.code;
        }
        if (msg.code !== "rate_limited") toast(msg.sentence || msg.code, "error");
        break;
      case "game_over":
        this.onGameOver(msg);
        break;
      default:
        break;
    }
    // After an event, the `legal` of the same batch usually follows at once: wait a moment for
    // it rather than draw a frame without the actions (no flicker of the buttons).
    this.queueRender(msg.type === "event" ? 60 : 0);
    this.queueSave();
  }

  onEvent(msg) {
    if (!this.model) return;
    if (msg.seq <= this.model.seq) return;
    const e = msg.event;
    const before = { turn: this.model.turn_number, round: this.model.combat && this.model.combat.round, combat: Boolean(this.model.combat) };
    // a turn ends where the next begins: its position is kept, to be looked at from the log
    if (e.t === "turn_started" && this.model.phase !== "setup" && this.model.turn_number) {
      this.turnEnds[this.model.turn_number] = structuredClone(this.model);
    }
    applyEvent(this.model, e);
    this.model.seq = msg.seq;
    this.legal = [];
    const text = describe(e, this.seat);
    if (text) this.log.push({ seq: msg.seq, text, t: e.t, ...(e.t === "turn_started" ? { turn: e.number } : {}) });
    if (e.t === "turn_started" || e.t === "combat_started" || e.t === "setup_revealed") {
      this.ui.selected.clear();
      this.ui.hermes = null;
      this.ui.targeting = null;
    }
    if (e.t === "combat_started") this.ui.combatMinimized = false;
    if (e.t === "combat_round_resolved" || e.t === "combat_round_started" || e.t === "combat_started" || e.t === "commitment_withdrawn") {
      this.ui.commit = { maneuver: null, energy: 0, reveal: false, key: null };
    }
    if (e.t === "game_ended") this.endPanels();
    void before;
  }

  /** The game is over: nothing may still offer a decision (a dialog, a selection, a target);
   * the combat panel closes with the phase (combat.js), the game-over panel opens. */
  endPanels() {
    closeDialogs();
    this.ui.selected.clear();
    this.ui.hermes = null;
    this.ui.targeting = null;
    this.ui.gameOverClosed = false;
  }

  onGameOver(msg) {
    if (!this.model || this.model.phase !== "over") this.endPanels();
    const game = new RawGame();
    let reason = null;
    for (const e of msg.log || []) {
      game.apply(e);
      if (e.t === "game_ended") reason = e.reason;
    }
    this.final = { model: game.model(), result: msg.result, reason, events: msg.log };
    if (this.model) {
      this.model.phase = "over";
      this.model.result = msg.result;
      this.model.reason = reason;
    }
  }

  /** A fresh browser has no log: show what a spectator saw so far (public facts only), or the
   * whole game once it is over. */
  async loadPublicHistory(upTo) {
    try {
      const data = await api.log(this.room);
      // over: everything, revealed; before: what a spectator saw (a spectator's numbering is ours)
      const events = data.over ? data.events : data.messages.filter((msg) => this.seat || msg.seq <= upTo).map((msg) => msg.event);
      const earlier = events.map((e) => ({ seq: 0, text: describe(e, null), t: e.t, public: true, ...(e.t === "turn_started" ? { turn: e.number } : {}) })).filter((l) => l.text);
      if (!earlier.length) return;
      const note = data.over ? "The game, everything revealed:" : "Earlier in this game (as a spectator saw it):";
      this.log = [{ seq: 0, text: note, t: "note" }, ...earlier, ...this.log];
      this.turnEnds = { ...publicTurnEnds(events, data.over), ...this.turnEnds };
      this.queueRender();
      this.queueSave();
    } catch {
      // the log panel is a convenience
    }
  }

  queueSave() {
    if (this.saveQueued) return;
    this.saveQueued = true;
    setTimeout(() => {
      this.saveQueued = false;
      if (this.model && this.epoch) saveSnapshot(this.room, this.audience, { epoch: this.epoch, seq: this.model.seq, model: this.model, log: this.log, turnEnds: this.turnEnds });
    }, 0);
  }

  // --- commands ------------------------------------------------------------------------------

  send(command) {
    if (this.inflight) {
      toast("Still waiting for the server to take your last command…", "info", 2500);
      return false;
    }
    commandCounter += 1;
    const id = `c${Date.now().toString(36)}-${commandCounter}`;
    this.inflight = { id, command };
    this.conn.send({ type: "command", id, command });
    this.ui.selected.clear();
    this.ui.hermes = null;
    this.ui.targeting = null;
    this.render(); // at once: nothing on screen may still offer the action just sent
    return true;
  }

  /**
   * Ask before a decision that costs Honor or Energy: each quantity before → after, and in
   * plain words when it loses the game (Honor 0 or below ends it, R4). An `action` of the turn
   * is also asked about when it may let the enemy win (danger.js), even if it costs nothing.
   * True to go on.
   */
  async confirmCost(what, honor, energy, action = null) {
    const dangers = action ? this.enemyWins(action) : [];
    const meeting = Boolean(action && action.outcome); // what it does at once, from the rules
    if (honor >= 0 && !(energy > 0) && !dangers.length && !meeting) return true;
    const { body, loses } = costWords(this.model, this.seat, honor, energy);
    const costs = honor < 0 && energy > 0 ? "This costs Honor and Energy" : honor < 0 ? "This costs Honor" : energy > 0 ? "This costs Energy" : "What this move does";
    const result = meeting && action.outcome.result;
    const lost = loses || Boolean(result && result !== "draw" && result !== this.seat);
    return confirmWarned(`${what}.${body ? ` ${body}` : ""}`, dangers, { loses: lost, title: costs, ok: "Yes, do it", cancel: "No" });
  }

  /** What `action` of this turn may let the enemy do to win, in plain words (danger.js). */
  enemyWins(action) {
    return enemyWinWarnings(this.board, this.model, this.seat, action);
  }

  async playMove(action) {
    const c = action.command;
    const d = describeVariant(action, this.model);
    const what = `${c.units.join(", ")} → region ${c.to}${c.steps && c.steps.length ? ` → ${c.steps.join(" → ")}` : ""} (${d.label})${d.outcome ? `. ${d.outcome.replace(/\.$/, "")}` : ""}`;
    if (!(await this.confirmCost(what, action.honor, action.energy, action))) return;
    this.send(c);
  }

  // --- what I may do now ---------------------------------------------------------------------

  /** Whether the seat is to act now: it has actions, or a setup to submit, and sent nothing yet. */
  get yourMove() {
    const o = this.options;
    return Boolean(this.seat && o && this.model && o.seq === this.model.seq && (o.actions.length || o.setup) && !this.inflight);
  }

  get myTurnActions() {
    return this.legal.filter((a) => TURN_TYPES.has(a.command.type));
  }

  get myCommits() {
    return this.legal.filter((a) => a.command.type === "commit");
  }

  get myChoices() {
    return this.legal.filter((a) => ["remove_unit", "retreat", "stay"].includes(a.command.type));
  }

  onUnit(u, event = null) {
    if (!this.model || this.model.phase === "setup") return;
    // from the keyboard, go on to the destinations (Shift+Tab returns to the units)
    this.ui.focusDest = Boolean(event && event.type === "keydown");
    if (!this.myTurnActions.length || this.inflight) return;
    if (u.side !== this.seat || !u.name) return;
    const movable = movableUnits(this.legal);
    if (!movable.has(u.name)) {
      toast(`${u.name} cannot move now.`, "info", 2500);
      return;
    }
    this.ui.hermes = null;
    this.ui.targeting = null;
    const sel = this.ui.selected;
    const selRegion = sel.size ? this.model.units.find((x) => x.name === [...sel][0]).region : null;
    if (sel.has(u.name)) sel.delete(u.name);
    else if (selRegion !== null && selRegion !== u.region) {
      sel.clear();
      sel.add(u.name);
    } else sel.add(u.name);
    // flight mode: on by default for a revealed flier
    if (sel.size === 1) {
      const only = [...sel][0];
      const unit = this.model.units.find((x) => x.name === only);
      if (this.ui.flyFor !== only) {
        this.ui.fly = Boolean(BY_NAME[only].flier && unit && unit.revealed);
        this.ui.flyFor = only;
      }
    }
    this.queueRender();
  }

  currentMoves() {
    if (!this.ui.selected.size) return [];
    return movesOf(this.legal, sortNames(this.ui.selected));
  }

  /** Map(region → {honor, energy, attack, kind, label, badge}) for the board. */
  boardDestinations() {
    const map = new Map();
    if (!this.model || this.inflight) return map;
    const m = this.model;
    // choices of a combat step: retreat regions
    for (const a of this.myChoices) {
      if (a.command.type === "retreat") {
        map.set(a.command.region, { honor: a.honor, energy: 0, kind: "retreat", label: `Retreat to region ${a.command.region} (${costLine(a.honor, 0)})`, action: a });
      }
    }
    if (map.size) return map;
    if (this.ui.targeting === "thunderbolt") {
      for (const a of this.myTurnActions.filter((x) => x.command.type === "thunderbolt")) {
        const r = a.command.region;
        map.set(r, { honor: a.honor, energy: a.energy, attack: true, kind: "thunderbolt", label: `Throw a thunderbolt at region ${r} (${costLine(a.honor, a.energy)})`, action: a });
      }
      return map;
    }
    if (this.ui.hermes) {
      for (const [r, d] of this.hermesNext()) map.set(r, d);
      return map;
    }
    const moves = this.currentMoves();
    const dests = destinations(moves, { fly: this.ui.fly });
    for (const [to, d] of dests) {
      const p = d.primary;
      const enemies = unitsIn(m, to).filter((u) => u.side !== this.seat).length;
      const many = d.variants.length > 1 || stepMovesOf(this.legal, sortNames(this.ui.selected)).some((x) => x.command.to === to);
      map.set(to, {
        honor: p.honor,
        energy: p.energy,
        attack: enemies > 0,
        kind: p.command.fly ? "fly" : "move",
        badge: `${costBadge(p.honor, p.energy)}${many ? " …" : ""}`,
        label: `${enemies ? "Attack" : "Move to"} region ${to}${enemies ? ` (${enemies} enem${enemies > 1 ? "ies" : "y"})` : ""}: ${costLine(p.honor, p.energy)}${many ? "; more options" : ""}`,
        variants: d.variants,
      });
    }
    return map;
  }

  /**
   * Hermes' next steps on the board: Map(region → {honor, energy, …}), each step's own figures
   * (what the walk costs with it, less what it costs so far), all the rules' own: the first
   * further step from `legal`, the later ones from the server's answer to a `steps` request
   * (docs/protocol.md, "Hermes' further steps"). Empty while that answer is awaited.
   */
  hermesNext() {
    const hm = this.ui.hermes;
    const out = new Map();
    if (!hm.next) return out;
    for (const [step, a] of hm.next) {
      const honor = a.honor - hm.honor;
      const energy = a.energy - hm.energy;
      const attack = unitsIn(this.model, step).some((u) => u.side !== this.seat);
      out.set(step, { honor, energy, attack, kind: "step", badge: costBadge(honor, energy), label: `Hermes steps on to region ${step}: ${costLine(honor, energy)}`, step, action: a });
    }
    return out;
  }

  /** Ask the server for Hermes' next steps after the walk so far (its answer: `onSteps`). */
  askSteps() {
    const hm = this.ui.hermes;
    commandCounter += 1;
    hm.request = `s${Date.now().toString(36)}-${commandCounter}`;
    hm.next = null;
    hm.refused = null;
    this.conn.send({ type: "steps", id: hm.request, command: { ...hm.base.command, steps: [...hm.steps] } });
  }

  /** The answer to the walk's `steps` request: its next steps, if about the position shown. */
  onSteps(msg) {
    const hm = this.ui.hermes;
    if (!hm || msg.id !== hm.request) return; // an answer about a walk given up since
    hm.request = null;
    if (!this.model || msg.seq !== this.model.seq) {
      hm.next = new Map();
      hm.refused = "The position changed: choose Hermes' path again.";
      return;
    }
    hm.next = new Map(msg.actions.map((a) => [a.command.steps.at(-1), a]));
  }

  /** Go on with Hermes' walk one step, to the rules' action `a` (its figures: the walk's). */
  stepHermes(region, a) {
    const hm = this.ui.hermes;
    hm.trail.push({ honor: hm.honor, energy: hm.energy, next: hm.next });
    hm.steps.push(region);
    hm.honor = a.honor;
    hm.energy = a.energy;
    this.askSteps();
  }

  /** Take back the walk's last step: its figures and next steps as they were. */
  undoHermesStep() {
    const hm = this.ui.hermes;
    const back = hm.trail.pop();
    if (!back) return;
    hm.steps.pop();
    hm.honor = back.honor;
    hm.energy = back.energy;
    hm.next = back.next;
    hm.request = null;
    hm.refused = null;
  }

  async onDestination(region) {
    const d = this.boardDestinations().get(region);
    if (!d) return;
    if (d.kind === "retreat") {
      if (!(await this.confirmCost(`Retreat to region ${region}`, d.honor, 0))) return;
      this.send(d.action.command);
      return;
    }
    if (d.kind === "thunderbolt") {
      if (!(await this.confirmCost(`Thunderbolt on region ${region}`, d.honor, d.energy, d.action))) return;
      this.send(d.action.command);
      return;
    }
    if (d.kind === "step") {
      this.stepHermes(region, d.action);
      this.queueRender();
      return;
    }
    // an ordinary move: one variant, or a choice among them
    const names = sortNames(this.ui.selected);
    const variants = d.variants;
    const steps = names.length === 1 && names[0] === "Hermes" ? stepMovesOf(this.legal, names).filter((a) => a.command.to === region) : [];
    if (variants.length === 1 && !steps.length) {
      await this.playMove(variants[0]);
      return;
    }
    const options = variants.map((a) => {
      const dv = describeVariant(a, this.model);
      return { label: dv.label, cost: dv.cost, detail: dv.outcome || null, value: { kind: "move", action: a } };
    });
    if (steps.length) {
      const base = variants.find((a) => isPlain(a.command)) || variants[0];
      options.push({ label: "Keep going: Hermes takes further steps (this reveals him)", cost: "each step is charged on its own", value: { kind: "hermes", base } });
    }
    const chosen = await chooseDialog({ title: `${names.join(", ")} → region ${region}`, intro: "Choose how:", options });
    if (!chosen) return;
    if (chosen.kind === "move") await this.playMove(chosen.action);
    else {
      const base = chosen.base;
      // the first further step is in `legal`; each later one the server prices (`askSteps`)
      const first = stepMovesOf(this.legal, ["Hermes"]).filter((a) => a.command.to === base.command.to && sameVariant(a.command, base.command));
      this.ui.hermes = {
        base, steps: [], honor: base.honor, energy: base.energy, seq: this.model.seq, trail: [],
        next: new Map(first.map((a) => [a.command.steps[0], a])), request: null, refused: null,
      };
      this.queueRender();
    }
  }

  async finishHermes() {
    const hm = this.ui.hermes;
    if (!hm) return;
    const command = { ...hm.base.command, steps: [...hm.steps] };
    // the walk's figures are the rules' for the whole command (`legal`, then `steps` answers)
    const what = `Hermes → ${[command.to, ...command.steps].join(" → ")}`;
    if (!(await this.confirmCost(what, hm.honor, hm.energy, { command, honor: hm.honor, energy: hm.energy }))) return;
    this.send(command);
  }

  async liturgy() {
    const a = this.myTurnActions.find((x) => x.command.type === "liturgy");
    if (!a) return;
    const { body, loses } = costWords(this.model, this.seat, a.honor, a.energy);
    const dangers = this.enemyWins(a);
    const ok = await confirmWarned(`It takes your whole turn. ${body}`, dangers, {
      loses,
      title: "Perform a Liturgy?",
      ok: "Perform the Liturgy",
      anyway: "Perform it anyway",
    });
    if (ok) this.send(a.command);
  }

  async pass() {
    const a = this.myTurnActions.find((x) => x.command.type === "pass");
    if (!a) return;
    const dangers = this.enemyWins(a);
    const ok = await confirmWarned("All your units are in Tartarus: you may do nothing this turn.", dangers, {
      title: "Pass?",
      ok: "Pass",
      anyway: "Pass anyway",
    });
    if (ok) this.send(a.command);
  }

  async recall() {
    const recalls = this.myTurnActions.filter((x) => x.command.type === "recall");
    const chosen = await chooseDialog({
      title: "Recall a fallen comrade to Tartarus",
      intro: `Instead of moving, your leader brings one eliminated unit back: ${costWords(this.model, this.seat, recalls[0].honor, recalls[0].energy).body}`,
      options: recalls.map((a) => ({ label: `${a.command.unit} (strength ${BY_NAME[a.command.unit].strength})`, cost: costLine(a.honor, a.energy), detail: BY_NAME[a.command.unit].power, value: a })),
    });
    if (!chosen) return;
    const dangers = this.enemyWins(chosen);
    if (dangers.length && !(await confirmWarned(`Recall ${chosen.command.unit}.`, dangers, { anyway: "Recall anyway", cancel: "No" }))) return;
    this.send(chosen.command);
  }

  async choose(action) {
    const c = action.command;
    if (c.type === "retreat" && !(await this.confirmCost(`Retreat to region ${c.region}`, action.honor, 0))) return;
    this.send(c);
  }

  async commit(action) {
    const c = action.command;
    const what = `Commit ${MANEUVER_NAME[c.maneuver] || c.maneuver} with ${c.energy} Energy`;
    if (!(await this.confirmCost(what, action.honor, action.energy))) return; // asks if it costs
    this.send(c);
  }

  // --- rendering -----------------------------------------------------------------------------

  buildLayout() {
    this.els = {
      status: h("section", { id: "status-panel", class: "panel", "aria-label": "Honor, Energy and turn" }),
      actions: h("section", { id: "action-panel", class: "panel", "aria-label": "Your actions", "aria-live": "polite" }),
      endGame: h("div", { id: "end-game-holder" }),
      tabs: h("div", { class: "tabs", role: "tablist" }),
      // focusable: a scrolling region must be reachable by keyboard (its keys scroll it)
      tab: h("section", { id: "tab-panel", class: "panel tab-panel", role: "tabpanel", tabindex: 0, onscroll: () => this.onLogScroll() }),
      boardHolder: h("div", { id: "board-holder" }),
      zoom: h("div", { class: "zoom-holder" }),
      tools: h("div", { class: "board-tools", role: "toolbar", "aria-label": "Board view" }),
      combat: h("div", { id: "combat-holder" }),
      guide: h("div", { id: "guide-holder" }),
      overlay: h("div", { id: "overlay-holder" }),
    };
    this.zoom = new BoardZoom(this.els.boardHolder);
    this.zoom.onChange = () => this.queueRender();
    replace(
      this.root,
      h(
        "div",
        { class: "game", id: "game" },
        h("section", { class: "board-wrap", "aria-label": "Board" }, this.els.zoom, this.els.boardHolder),
        h(
          "aside",
          { class: "side" },
          h(
            "div",
            { class: "side-columns" },
            // whose turn it is and both sides' stocks first: no panel pushes them out of view
            this.els.status,
            this.els.combat,
            h("div", { class: "side-main" }, this.els.guide, this.els.tools, this.els.actions, this.els.endGame),
            h("div", { class: "side-log" }, this.els.tabs, this.els.tab),
          ),
        ),
        this.els.overlay,
      ),
    );
    this.showWhere();
  }

  /** The top bar: the game, the seat, and against the computer its level. */
  showWhere() {
    const computer = this.seat ? this.computerLevel(enemyOf(this.seat)) : null;
    setWhere(`Game ${this.room} · ${this.seat ? `you play the ${FACTION_NAME[this.seat]}${computer ? ` against the computer (${computer})` : ""}` : "spectating"}`);
  }

  queueRender(delay = 0) {
    if (delay > 0) {
      if (this.renderQueued || this.renderTimer) return;
      this.renderTimer = setTimeout(() => {
        this.renderTimer = null;
        this.queueRender();
      }, delay);
      return;
    }
    clearTimeout(this.renderTimer);
    this.renderTimer = null;
    if (this.renderQueued) return;
    this.renderQueued = true;
    requestAnimationFrame(() => {
      this.renderQueued = false;
      this.render();
    });
  }

  render() {
    const key = focusKey();
    const m = this.model;
    const game = document.getElementById("game");
    if (!game) return;
    game.dataset.seat = this.seat || "spectator";
    game.dataset.phase = m ? m.phase : "loading";
    game.dataset.seq = m ? String(m.seq) : "0";
    game.dataset.turnNumber = m ? String(m.turn_number) : "0";
    game.dataset.turn = m ? m.turn : "";
    game.dataset.myTurn = this.myTurnActions.length ? "true" : "false";
    game.dataset.yourMove = this.yourMove ? "true" : "false";
    showYourMove(this.yourMove, m ? this.turnText() : "");
    game.dataset.inflight = this.inflight ? "true" : "false";
    game.dataset.combat = m && m.combat ? "true" : "false";
    game.dataset.selection = sortNames(this.ui.selected).join(",");
    game.dataset.connection = this.status.state;
    game.dataset.viewing = this.viewedTurn() ? String(this.viewedTurn()) : "";
    this.renderTools();
    this.renderBoardArea();
    this.renderStatus();
    this.renderActions();
    this.renderEndGame();
    this.renderTabs();
    replace(this.els.combat, m && m.phase !== "setup" ? renderCombatPanel(this) : "");
    this.renderOverlay();
    replace(this.els.guide, renderGuide(this, () => {
      setGuide(false);
      this.queueRender();
    }));
    markGuideTarget(game, this);
    // what scrolls into view (a focused field, a list's button) stops below the sticky status
    const side = game.querySelector("aside.side");
    if (side) side.style.scrollPaddingTop = `${this.els.status.offsetHeight + 8}px`;
    restoreFocus(key);
    if (this.ui.focusDest) {
      this.ui.focusDest = false;
      const first = this.els.boardHolder.querySelector("g.dest");
      if (first) first.focus();
    }
  }

  renderTools() {
    replace(this.els.zoom, this.zoom.controls());
    const toggle = (id, label, pressed, onclick, title) =>
      h("button", { type: "button", id, class: "toggle", "aria-pressed": pressed ? "true" : "false", title, onclick }, label);
    replace(
      this.els.tools,
      toggle("toggle-numbers", "# Region numbers", this.ui.showNumbers, () => {
        this.ui.showNumbers = !this.ui.showNumbers;
        savePrefs({ ...prefs(), numbers: this.ui.showNumbers });
        this.queueRender();
      }, "Show the region numbers used in the log"),
      this.seat
        ? toggle("toggle-enemy-knows", "◉ What the enemy knows", this.ui.enemyKnows, () => {
            this.ui.enemyKnows = !this.ui.enemyKnows;
            this.queueRender();
          }, "Mark which of your units the enemy can identify")
        : null,
      this.seat && mayAskNotifications()
        ? h("button", { type: "button", id: "btn-notify", class: "toggle", title: "A browser notification when your move comes while this tab is hidden", onclick: () => askNotifications().then(() => this.queueRender()) }, [icon("bell"), " Tell me when it's my move"])
        : null,
      this.seat
        ? toggle("toggle-guide", "Guide", guideOn(), () => {
            setGuide(!guideOn());
            this.queueRender();
          }, "The first-game guide: the next thing to do, during the setup and the first turns")
        : null,
      h("a", { class: "button toggle", id: "link-rules-game", href: "#/rules", target: "_blank", rel: "noopener" }, "Rules"),
      this.final ? h("span", { class: "tool-note" }, "Final position, everything revealed") : null,
    );
  }

  boardModel() {
    if (this.viewedTurn()) return this.turnEnds[this.ui.viewing];
    if (this.final && (this.model ? this.model.phase === "over" : true)) return this.final.model;
    return this.model;
  }

  /** The turn whose end the board shows instead of the live position (read-only), or null. */
  viewedTurn() {
    return this.ui.viewing && this.turnEnds[this.ui.viewing] ? this.ui.viewing : null;
  }

  /** Look at the position at the end of a past turn (from the log), or back at the live one. */
  viewTurn(turn) {
    this.ui.viewing = turn;
    this.ui.selected.clear();
    this.ui.hermes = null;
    this.ui.targeting = null;
    this.queueRender();
  }

  renderBoardArea() {
    const m = this.model;
    if (!m) {
      replace(this.els.boardHolder, h("p", { class: "loading" }, "Waiting for the position…"));
      return;
    }
    let opts;
    if (this.viewedTurn()) {
      // read-only: nothing to select, nowhere to go
      opts = { board: this.board, model: this.boardModel(), seat: this.seat, selected: new Set(), movable: new Set(), destinations: new Map(), onUnit: null, onDestination: () => {}, showNumbers: this.ui.showNumbers, enemyKnows: this.ui.enemyKnows, highlight: new Set() };
    } else if (m.phase === "setup") {
      opts = setupBoardOptions(this);
    } else {
      const fullInfo = Boolean(this.final && m.phase === "over");
      const highlight = new Set();
      for (const name of this.ui.selected) {
        const u = m.units.find((x) => x.name === name);
        if (u) highlight.add(u.region);
      }
      if (this.ui.hermes) highlight.add([this.ui.hermes.base.command.to, ...this.ui.hermes.steps].at(-1));
      opts = {
        board: this.board,
        model: this.boardModel(),
        seat: fullInfo ? this.seat || null : this.seat,
        selected: this.ui.selected,
        movable: this.inflight ? new Set() : movableUnits(this.legal),
        destinations: this.boardDestinations(),
        onUnit: this.seat && !fullInfo ? (u, event) => this.onUnit(u, event) : null,
        onDestination: (r) => this.onDestination(r),
        showNumbers: this.ui.showNumbers,
        enemyKnows: this.ui.enemyKnows,
        highlight,
      };
    }
    replace(this.els.boardHolder, renderBoard(opts));
  }

  renderStatus() {
    const m = this.model;
    if (!m) {
      replace(this.els.status, h("p", {}, "Connecting…"));
      return;
    }
    const rows = FACTIONS.map((f) => {
      const state = sideState(m, f);
      const computer = this.computerLevel(f);
      const text = computer && state.acting && m.phase !== "setup" ? "the computer is thinking…" : state.text;
      return h(
        "div",
        { class: ["score", `side-${f}`, state.acting ? "active" : null], dataset: { side: f, state: state.key } },
        h(
          "span",
          { class: "score-name" },
          `${FACTION_NAME[f]}${this.seat === f ? " (you)" : ""}`,
          computer
            ? [" · ", h("span", { class: "computer player-name", dataset: { computer: f, side: f } }, `Computer (${computer})`)]
            : this.playerName(f) ? h("span", { class: "player-name", dataset: { side: f } }, " · ", playerLink(this.playerName(f), Boolean(this.summary.players && this.summary.players[f]))) : null,
        ),
        text ? h("span", { class: "side-state", dataset: { state: state.key } }, text) : null,
        h("span", { class: "score-honor", title: "Honor", "aria-label": `Honor ${m.honor[f]}` }, icon("honor"), " Honor ", h("strong", { class: "honor-value" }, String(m.honor[f]))),
        h("span", { class: "score-energy", title: "Energy", "aria-label": `Energy ${m.energy[f]}` }, icon("energy"), " Energy ", h("strong", { class: "energy-value" }, String(m.energy[f]))),
        h("span", { class: "clock", dataset: { clockSide: f } }),
      );
    });
    replace(this.els.status, h("div", { id: "turn-indicator", class: "turn-indicator", dataset: { turn: m.turn, phase: m.phase } }, this.turnText()), ...rows, this.variantLine());
    this.renderClocks();
  }

  /** The display name of a side's player (api.md, "Names"), from the room's summary. */
  playerName(side) {
    return (this.summary && this.summary.names && this.summary.names[side]) || null;
  }

  /** The level of the computer playing side ``f`` (api.md: a room's ``computer``), or null. */
  computerLevel(f) {
    return (this.summary && this.summary.computer && this.summary.computer[f]) || null;
  }

  variantLine() {
    const o = this.model.options || {};
    const bits = [];
    if (o.open_combat) bits.push("Open Combat");
    if (o.random_setup) bits.push("Random Setup");
    if (o.chthonian_honor) bits.push(`Challenge: Chthonians ${signed(o.chthonian_honor)} Honor`);
    const clocks = (this.summary && this.summary.options) || o; // a view has no clocks: the room's summary has
    if (clocks.move_seconds) bits.push(`${duration(clocks.move_seconds)} per move`);
    if (clocks.commit_seconds) bits.push(`${duration(clocks.commit_seconds)} per commitment`);
    if (clocks.broadcast_delay_seconds) bits.push(`commentary ${duration(clocks.broadcast_delay_seconds)} delayed`);
    const watching = h("span", { id: "watching", class: "spectators" }, watchingText(this.summary && this.summary.spectators));
    return h("p", { class: "variants" }, bits.length ? [bits.join(" · "), " · "] : "", watching);
  }

  turnText() {
    const m = this.model;
    if (m.phase === "over") {
      const res = this.final ? this.final.result : m.result;
      const reason = (this.final && this.final.reason) || m.reason;
      if (res === "aborted") return resultText(res, reason);
      if (res === "draw") return "Game over: a draw";
      const resigned = reason === "resignation" ? `the ${FACTION_NAME[enemyOf(res)]} resigned, ` : "";
      return `Game over: ${resigned}the ${FACTION_NAME[res]} win${this.seat ? (res === this.seat ? " — you won!" : " — you lost") : ""}`;
    }
    if (m.phase === "setup") return "Setup";
    if (m.combat) return `Turn ${m.turn_number} · Combat in region ${m.combat.region}, round ${m.combat.round}`;
    if (this.seat && m.turn === this.seat) return `Turn ${m.turn_number} · Your turn`;
    return `Turn ${m.turn_number} · The ${FACTION_NAME[m.turn]} move`;
  }

  renderClocks() {
    const m = this.model;
    if (!m || !this.els) return;
    for (const el of this.els.status.querySelectorAll("[data-clock-side]")) {
      const d = m.deadlines && m.deadlines[el.dataset.clockSide];
      if (!d || !d.due || m.phase === "over") {
        replace(el, "");
        continue;
      }
      const left = Math.max(0, Math.round((d.due - Date.now()) / 1000));
      const clock = left >= 3600 ? duration(left) : `${Math.floor(left / 60)}:${String(left % 60).padStart(2, "0")}`;
      replace(el, icon("clock"), ` ${clock} to ${{ commit: "commit", move: "move", setup: "set up" }[d.kind] || "choose"}`);
      el.classList.toggle("urgent", left < 15);
    }
  }

  renderActions() {
    const m = this.model;
    const el = this.els.actions;
    if (!m) {
      replace(el, "");
      return;
    }
    if (this.viewedTurn()) {
      replace(
        el,
        h(
          "div",
          { id: "viewing", class: "viewing", role: "status" },
          h("p", {}, h("strong", {}, `The position after turn ${this.viewedTurn()}`), ` (read-only, ${this.turnEnds[this.viewedTurn()].seenBy === "everyone" ? "everything revealed" : this.turnEnds[this.viewedTurn()].seenBy === "spectator" ? "as a spectator saw it" : "as you saw it then"}). The game goes on meanwhile.`),
          h("button", { type: "button", id: "btn-live", class: "primary", onclick: () => this.viewTurn(null) }, "Back to the live position"),
        ),
      );
      return;
    }
    if (m.phase === "setup") {
      replace(el, renderSetupPanel(this));
      return;
    }
    if (!this.seat) {
      replace(el, h("p", { class: "hint" }, h("strong", {}, "Spectating. "), "You see what a neutral onlooker sees: positions, revealed units, no sealed choice."));
      return;
    }
    if (m.phase === "over") {
      replace(el, h("p", {}, "The game is over.", " ", h("a", { href: `#/replay/${this.room}` }, "Replay it step by step")));
      return;
    }
    if (this.inflight) {
      replace(el, h("p", { class: "hint", id: "sending" }, "Sending your command…"));
      return;
    }
    const turn = this.myTurnActions;
    if (!turn.length) {
      let text;
      if (m.combat) text = "Combat! See the combat panel.";
      else if (m.pending && m.pending.side === this.seat) text = "Make your choice in the panel.";
      else if (m.pending) text = `Waiting for the ${FACTION_NAME[m.pending.side]} to choose…`;
      else text = `Waiting for the ${FACTION_NAME[m.turn]} to move…`;
      const other = this.seat === "olympians" ? "chthonians" : "olympians";
      if (this.computerLevel(other) && sideState(m, other).acting && !sideState(m, this.seat).acting) text = "The computer is thinking…";
      // a commitment's or a choice's hint is in the combat panel while it is open (combat.js)
      replace(el, h("p", { class: "hint waiting", id: "waiting-text" }, text), this.legal.length && !this.combatPanelOpen() ? this.hintBox() : null);
      return;
    }
    const parts = [h("h2", { id: "your-turn" }, "Your turn")];
    if (this.ui.hermes) {
      const hm = this.ui.hermes;
      const path = [hm.base.command.to, ...hm.steps];
      parts.push(
        h("p", { id: "hermes-path" }, `Hermes' path: ${path.join(" → ")} (so far ${costLine(hm.honor, hm.energy)}). ${hm.next === null ? "Asking the rules for his next steps…" : hm.refused ? `No further step: ${hm.refused}` : hm.next.size ? "Choose the next step on the board, or stop." : "He can go no further: stop here."}`),
        h(
          "div",
          { class: "button-row" },
          h("button", { type: "button", id: "btn-hermes-finish", class: "primary", onclick: () => this.finishHermes() }, `Stop in region ${path.at(-1)} and end the move`),
          hm.steps.length ? h("button", { type: "button", class: "secondary", onclick: () => { this.undoHermesStep(); this.queueRender(); } }, "Undo last step") : null,
          h("button", { type: "button", class: "secondary", onclick: () => { this.ui.hermes = null; this.queueRender(); } }, "Cancel"),
        ),
      );
      replace(el, ...parts);
      return;
    }
    if (this.ui.targeting === "thunderbolt") {
      parts.push(
        h("p", {}, "Choose the region to strike (highlighted on the board)."),
        h("button", { type: "button", class: "secondary", onclick: () => { this.ui.targeting = null; this.queueRender(); } }, "Cancel the thunderbolt"),
      );
      replace(el, ...parts);
      return;
    }
    const sel = sortNames(this.ui.selected);
    if (sel.length) {
      const moves = this.currentMoves();
      parts.push(h("p", { id: "selection" }, `Selected: ${sel.join(", ")}. `, moves.length ? "Choose a highlighted destination (its Honor and Energy cost is shown)." : "These units cannot move together."));
      if (hasFlights(moves)) {
        const flier = sel[0];
        const unit = m.units.find((u) => u.name === flier);
        parts.push(
          h(
            "label",
            { class: "check" },
            h("input", { type: "checkbox", id: "fly-toggle", checked: this.ui.fly, onchange: (e) => { this.ui.fly = e.target.checked; this.queueRender(); } }),
            ` Fly (any region${unit && unit.revealed ? "" : `; reveals ${flier}`})`,
          ),
        );
      }
      parts.push(h("button", { type: "button", class: "secondary", id: "btn-clear", onclick: () => { this.ui.selected.clear(); this.queueRender(); } }, "Clear selection"));
    } else {
      parts.push(h("p", { class: "hint" }, "Select one of your units (click it, or Tab to it and press Enter). Select more units of the same region to move them as a group."));
    }
    const buttons = [];
    const lit = turn.find((a) => a.command.type === "liturgy");
    if (lit) buttons.push(h("button", { type: "button", id: "btn-liturgy", onclick: () => this.liturgy() }, `Liturgy (Energy ${signed(-lit.energy)}, Honor ${signed(lit.honor)})`));
    if (turn.some((a) => a.command.type === "pass")) buttons.push(h("button", { type: "button", id: "btn-pass", onclick: () => this.pass() }, "Pass"));
    const bolts = turn.filter((a) => a.command.type === "thunderbolt");
    if (bolts.length) buttons.push(h("button", { type: "button", id: "btn-thunderbolt", onclick: () => { this.ui.selected.clear(); this.ui.targeting = "thunderbolt"; this.queueRender(); } }, `Thunderbolt (Energy −${bolts[0].energy}, Honor ${signed(bolts[0].honor)})`));
    const recalls = turn.filter((a) => a.command.type === "recall");
    if (recalls.length) buttons.push(h("button", { type: "button", id: "btn-recall", onclick: () => this.recall() }, `Recall a fallen comrade (${costLine(recalls[0].honor, recalls[0].energy)})`));
    parts.push(h("div", { class: "button-row", role: "group", "aria-label": "Other actions" }, buttons));
    parts.push(this.hintBox());
    replace(el, ...parts);
  }

  /**
   * A seat's ways to end the game early, below its actions whatever the phase: Resign while its
   * newest `legal` says `can_resign`, Abort while it says `can_abort` (before both sides' first
   * move: docs/protocol.md). Neither is among the `actions`; each asks first (`confirmEnd`).
   */
  renderEndGame() {
    const m = this.model;
    const o = this.options;
    if (!this.seat || !m || m.phase === "over" || !o) {
      replace(this.els.endGame, "");
      return;
    }
    const buttons = [];
    if (o.can_abort) buttons.push(h("button", { type: "button", id: "btn-abort", class: "secondary", title: "End the game with no result (only before both sides have moved)", onclick: () => this.confirmEnd("abort") }, "Abort"));
    if (o.can_resign) buttons.push(h("button", { type: "button", id: "btn-resign", class: "secondary", title: "Give the game up: your opponent wins", onclick: () => this.confirmEnd("resign") }, "Resign"));
    replace(this.els.endGame, buttons.length ? h("div", { class: "button-row end-game", role: "group", "aria-label": "End the game" }, buttons) : "");
  }

  /** Resign or abort, once the player confirms it in the dialog (Cancel has the focus). */
  async confirmEnd(kind) {
    const enemy = enemyOf(this.seat);
    const winner = this.computerLevel(enemy) ? "The computer" : `The ${FACTION_NAME[enemy]}`;
    const words = kind === "resign"
      ? { title: "Resign the game?", body: `${winner} will win at once. This cannot be undone.`, ok: "Resign" }
      : { title: "Abort the game?", body: "The game ends at once with no result: nobody wins or loses. This cannot be undone.", ok: "Abort the game" };
    const ok = await confirmDialog({ ...words, cancel: "Keep playing", safe: true });
    const allowed = this.options && (kind === "resign" ? this.options.can_resign : this.options.can_abort);
    if (ok && allowed && this.model && this.model.phase !== "over") this.send({ type: kind });
  }

  /** Whether the combat panel is shown open (a combat or a choice under way, not minimised):
   * the hint box of a commitment or a choice is then in it, not in the actions panel. */
  combatPanelOpen() {
    const m = this.model;
    return Boolean(m && m.phase !== "setup" && m.phase !== "over" && (m.combat || m.pending) && !this.ui.combatMinimized);
  }

  /** Against the computer only (api.md, hints): a button that asks the coach for the move the
   * computer would play from this seat's view, and its answer; null elsewhere. Shown in one
   * place at a time: the actions panel, or the combat panel during a commitment or a choice. */
  hintBox() {
    const other = this.seat === "olympians" ? "chthonians" : "olympians";
    if (!this.seat || !this.computerLevel(other) || this.computerLevel(this.seat)) return null;
    const hint = this.ui.hint && this.ui.hint.seq === this.legalSeq ? this.ui.hint : null;
    return h(
      "div",
      { class: "hint-box", id: "hint-box" },
      h("button", { type: "button", id: "btn-hint", class: "secondary", "aria-describedby": "hint-text", onclick: () => this.askHint() }, "Hint"),
      h("p", { id: "hint-text", class: "hint", "aria-live": "polite" }, hint ? hint.text : "The computer's suggestion for this position, from what you can see (the game records that hints were used)."),
    );
  }

  async askHint() {
    const seq = this.legalSeq;
    this.ui.hint = { seq, text: "Thinking…" };
    this.queueRender();
    try {
      const found = await api.hint(this.room, this.token);
      const chance = found.chance === null || found.chance === undefined ? "" : ` (your chance with it: about ${Math.round(found.chance * 100)} %)`;
      this.ui.hint = { seq, text: `Hint: ${commandLabel(found.command)}${chance}.` };
    } catch (error) {
      this.ui.hint = { seq, text: error.message };
    }
    this.queueRender();
  }

  renderTabs() {
    const tabs = [
      ["log", "Log"],
      ["characters", "Characters"],
      ["honor", "Honor table"],
    ];
    const open = (id) => {
      this.ui.tab = id;
      if (id === "log") this.ui.logStick = true; // the log opens at its newest line
    };
    // a tab list: one stop for Tab (the chosen tab, then its panel), the arrows choose a tab
    const onkeydown = (event) => {
      const step = { ArrowRight: 1, ArrowLeft: -1 }[event.key];
      if (!step) return;
      event.preventDefault();
      const at = tabs.findIndex(([id]) => id === this.ui.tab);
      open(tabs[(at + step + tabs.length) % tabs.length][0]);
      this.render();
      document.getElementById(`tab-${this.ui.tab}`).focus();
    };
    replace(
      this.els.tabs,
      tabs.map(([id, label]) =>
        h("button", {
          type: "button",
          role: "tab",
          id: `tab-${id}`,
          tabindex: this.ui.tab === id ? 0 : -1,
          "aria-selected": this.ui.tab === id ? "true" : "false",
          "aria-controls": "tab-panel",
          class: "tab",
          onkeydown,
          onclick: () => {
            open(id);
            this.queueRender();
          },
        }, label),
      ),
    );
    const panel = this.els.tab;
    panel.setAttribute("aria-labelledby", `tab-${this.ui.tab}`);
    const kept = panel.scrollTop;
    const wasLog = panel.dataset.tab === "log";
    panel.dataset.tab = this.ui.tab;
    if (this.ui.tab === "log") {
      replace(panel, this.renderLog());
      // the newest line, unless the reader scrolled back in this log (then it stays put)
      if (this.ui.logStick || !wasLog) {
        this.ui.logStick = true;
        panel.scrollTop = panel.scrollHeight;
      } else panel.scrollTop = kept;
      this.ui.logTop = panel.scrollTop;
    } else if (this.ui.tab === "characters") {
      replace(panel, renderCharacters(this));
    } else {
      replace(panel, renderHonorTable());
    }
  }

  /** The log grouped by turn: each turn's heading is a button that shows the position at its
   * end on the board (when this screen saw it), the live turn's says so. */
  renderLog() {
    const groups = [];
    for (const l of this.log.slice(-400)) {
      if (l.t === "turn_started" || !groups.length) groups.push({ head: l.t === "turn_started" ? l : null, lines: [] });
      if (l.t !== "turn_started") groups[groups.length - 1].lines.push(l);
    }
    const line = (l) => h("li", { class: `log-${l.t}`, dataset: { seq: String(l.seq) } }, l.text);
    const live = this.model ? this.model.turn_number : 0;
    return h(
      "ol",
      { class: "log", id: "event-log", "aria-label": "Event log, by turn" },
      groups.map((g) => {
        const turn = g.head && g.head.turn;
        const viewable = turn && this.turnEnds[turn] && turn !== live;
        const viewing = turn && this.viewedTurn() === turn;
        const head = !g.head
          ? null
          : viewable
            ? h("button", { type: "button", class: ["log-turn", "link"], "aria-pressed": viewing ? "true" : "false", dataset: { turn: String(turn) }, title: "Show the position after this turn", onclick: () => this.viewTurn(viewing ? null : turn) }, g.head.text)
            : h("span", { class: "log-turn", dataset: { turn: String(turn || "") } }, g.head.text, turn && turn === live ? h("span", { class: "tag" }, " (now)") : null);
        return h("li", { class: ["log-group", viewing ? "viewing" : null], dataset: { turn: String(turn || "") } }, head, h("ol", { class: "log-lines" }, g.lines.map(line)));
      }),
    );
  }

  /** The reader scrolled the log: it follows the newest line again once scrolled to the end.
   * (A scroll to where the drawing put it is the drawing's own, not the reader's.) */
  onLogScroll() {
    const panel = this.els.tab;
    if (this.ui.tab !== "log" || panel.scrollTop === this.ui.logTop) return;
    this.ui.logTop = null;
    this.ui.logStick = panel.scrollTop + panel.clientHeight >= panel.scrollHeight - 4;
  }

  /** The game-over panel's rematch offer: same options, sides swapped (api.md, "Rematch"). */
  rematchButton() {
    if (!this.seat) return null;
    const offered = this.summary && this.summary.rematch;
    const mine = offered && seatFor(offered); // this browser asked for it already
    const side = FACTION_NAME[enemyOf(this.seat)];
    return h(
      "button",
      {
        type: "button",
        id: "btn-rematch",
        class: "primary",
        dataset: { offered: offered ? "true" : "false" },
        onclick: async () => {
          try {
            const seated = await api.rematch(this.room, this.token);
            saveSeat(seated.room, { seat: seated.seat, token: seated.token, epoch: seated.epoch });
            location.hash = `#/play/${seated.room}`;
          } catch (error) {
            toast(`Rematch: ${error.message}`, "error");
          }
        },
      },
      mine ? `Go to the rematch (you play the ${side})` : offered ? `Your opponent wants a rematch: play the ${side}` : `Rematch (you play the ${side})`,
    );
  }

  /** A rated game's rating changes, once the service made them (api.md: a room's ratings). */
  ratingChanges() {
    if (!this.ratings) return null;
    const lines = FACTIONS.filter((f) => this.ratings[f]).map((f) => {
      const c = this.ratings[f];
      const who = this.seat === f ? "Your rating" : `${this.playerName(f) || FACTION_NAME[f]}'s rating`;
      return `${who}: ${c.before} → ${c.after} (${c.delta >= 0 ? "+" : "−"}${Math.abs(c.delta)})`;
    });
    return h("p", { id: "rating-changes", class: "rating-change" }, lines.join(" · "));
  }

  renderOverlay() {
    const m = this.model;
    if (!m || m.phase !== "over" || this.ui.gameOverClosed) {
      replace(this.els.overlay, "");
      return;
    }
    const res = this.final ? this.final.result : m.result;
    const reason = (this.final && this.final.reason) || m.reason;
    const title = resultText(res, reason);
    const aborted = res === "aborted";
    const mine = aborted ? "Nobody wins or loses." : this.seat ? (res === "draw" ? "Nobody wins." : res === this.seat ? "You won!" : "You lost.") : reason === "resignation" ? `The ${FACTION_NAME[res]} win.` : "";
    const told = reason && reason !== "resignation" && !aborted ? `(${END_REASON[reason] || reason})` : "";
    const fm = this.final ? this.final.model : null;
    const rosters = FACTIONS.map((f) => {
      const picked = fm ? fm.picked.filter((n) => BY_NAME[n].side === f) : [];
      return h(
        "div",
        { class: ["roster", `side-${f}`] },
        h("h3", {}, FACTION_NAME[f]),
        h(
          "ul",
          {},
          CHARACTERS.filter((c) => c.side === f).map((c) => {
            const state = !fm ? "" : fm.eliminated.includes(c.name) ? "eliminated" : picked.includes(c.name) ? (fm.units.find((u) => u.name === c.name) ? `region ${fm.units.find((u) => u.name === c.name).region}` : "") : "not picked";
            return h("li", { class: state === "eliminated" ? "eliminated" : state === "not picked" ? "not-picked" : "" }, `${c.name} (${c.strength})`, state ? h("span", { class: "tag" }, ` — ${state}`) : "");
          }),
        ),
      );
    });
    replace(
      this.els.overlay,
      h(
        "div",
        { class: "overlay", role: "dialog", "aria-modal": "false", "aria-labelledby": "gameover-title", id: "game-over" },
        h("h2", { id: "gameover-title" }, aborted ? title : `Game over: ${title}`),
        h("p", { class: "big" }, mine, " ", told),
        this.ratingChanges(),
        fm ? h("p", {}, "Everything is revealed now: every unit is named on the board.") : h("p", {}, "Waiting for the full log…"),
        h("div", { class: "rosters" }, rosters),
        h(
          "div",
          { class: "button-row" },
          h("button", { type: "button", id: "btn-close-gameover", onclick: () => { this.ui.gameOverClosed = true; this.queueRender(); } }, "Look at the board"),
          this.rematchButton(),
          h("a", { class: "button", href: `#/replay/${this.room}`, id: "link-replay" }, "Replay step by step"),
          h("a", { class: "button secondary", href: "#/" }, "Back to the lobby"),
        ),
      ),
    );
  }
}

/**
 * The position at the end of each turn of a history this screen did not fold itself (a fresh
 * browser): the events a spectator saw (`seenBy: "spectator"`), or once the game is over its
 * whole log, everything revealed (`"everyone"`). Never more than the seat may know.
 */
function publicTurnEnds(events, over) {
  const ends = {};
  if (over) {
    const game = new RawGame();
    for (const e of events) {
      if (e.t === "turn_started" && game.m.phase !== "setup" && game.m.turn_number) ends[game.m.turn_number] = { ...game.model(), seenBy: "everyone" };
      game.apply(e);
    }
    return ends;
  }
  const m = emptyModel();
  for (const e of events) {
    if (e.t === "turn_started" && m.phase !== "setup" && m.turn_number) ends[m.turn_number] = { ...structuredClone(m), seenBy: "spectator" };
    applyEvent(m, e);
  }
  return ends;
}

function sameVariant(a, b) {
  return Boolean(a.fly) === Boolean(b.fly) && Boolean(a.use_power) === Boolean(b.use_power) && (a.reveal || []).join() === (b.reveal || []).join();
}

function costBadge(honor, energyPaid) {
  const parts = [];
  if (honor) parts.push(`H${signed(honor)}`);
  if (energyPaid) parts.push(`E${signed(-energyPaid)}`);
  return parts.length ? parts.join(" ") : "free";
}

function renderCharacters(screen) {
  const m = screen.final ? screen.final.model : screen.model;
  const seat = screen.seat;
  const order = seat ? [seat, enemyOf(seat)] : FACTIONS;
  const onBoard = new Map(m.units.filter((u) => u.name).map((u) => [u.name, u]));
  return h(
    "div",
    { class: "characters" },
    order.map((f) => {
      const mine = seat === f;
      return h(
        "section",
        { class: ["roster", `side-${f}`], "aria-label": `${FACTION_NAME[f]} characters` },
        h("h3", {}, `${mine ? "Your" : seat ? "Enemy" : "The"} ${FACTION_NAME[f]}`),
        h(
          "ul",
          { class: "character-list" },
          CHARACTERS.filter((c) => c.side === f).map((c) => {
            let tag = "";
            let cls = "";
            if (m.eliminated.includes(c.name)) {
              tag = "eliminated";
              cls = "eliminated";
            } else if ((mine || m.fullInfo) && m.picked && m.picked.length) {
              if (m.picked.includes(c.name)) tag = onBoard.has(c.name) ? `picked · region ${onBoard.get(c.name).region}` : "picked";
              else {
                tag = "not picked";
                cls = "not-picked";
              }
            } else if (onBoard.has(c.name)) {
              tag = `revealed · region ${onBoard.get(c.name).region}`;
            }
            const flags = [c.leader ? "leader" : "", c.flier ? "flies" : "", c.male ? "male" : ""].filter(Boolean).join(", ");
            return h(
              "li",
              { class: ["character", cls], dataset: { name: c.name, state: tag.split(" ")[0] || "unknown" } },
              h("div", { class: "character-head" }, h("strong", {}, c.name), ` ${c.strength}`, flags ? h("span", { class: "flags" }, ` (${flags})`) : "", tag ? h("span", { class: "tag" }, ` — ${tag}`) : ""),
              h("div", { class: "power" }, c.power),
            );
          }),
        ),
      );
    }),
  );
}

function renderHonorTable() {
  return h(
    "div",
    { class: "honor-table" },
    h("table", {}, h("caption", {}, "What costs or earns Honor"), h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Action"), h("th", { scope: "col" }, "Honor"))), h("tbody", {}, HONOR_TABLE.map(([a, b]) => h("tr", {}, h("td", {}, a), h("td", {}, b))))),
    h("p", { class: "hint" }, HONOR_NOTE),
    h("p", { class: "hint" }, "Energy: crossing the Styx costs 2 (free for a flight, or with Charon's help). Up to 6 Energy per unit in a combat round."),
  );
}

export { LEADER, byOrder };

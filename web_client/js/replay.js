// Replay of a finished game with full information, from GET /rooms/{room}/log: by move (a turn's
// action with its combat and choices is one step, `movesOf`), or event by event.

import { h, replace } from "./dom.js";
import { api } from "./api.js";
import { replayLog } from "./model.js";
import { describe } from "./text.js";
import { renderBoard } from "./board.js";
import { FACTION_NAME, FACTIONS, END_REASON, resultText } from "./data.js";
import { setWhere } from "./ui.js";
import { BoardZoom } from "./zoom.js";
import { icon } from "./icons.js";
import { commandLabel, fetchAnalysis, MARK_TEXT, moveWords, winChart } from "./coach.js";

export class ReplayScreen {
  constructor(root, { board, room }) {
    this.root = root;
    this.board = board;
    this.room = room;
    this.steps = [];
    this.moves = [];
    this.mode = "moves"; // or "events"
    this.index = 0; // the event step shown
    this.timer = null;
    this.showNumbers = true;
  }

  async start() {
    setWhere(`Replay of game ${this.room}`);
    replace(this.root, h("p", { class: "loading" }, "Loading the game's log…"));
    let log;
    try {
      log = await api.log(this.room);
    } catch (error) {
      replace(this.root, h("div", { class: "panel narrow" }, h("h2", {}, "No replay"), h("p", {}, error.message), h("a", { href: "#/" }, "Lobby")));
      return;
    }
    if (!log.over) {
      replace(this.root, h("div", { class: "panel narrow", id: "replay-not-over" }, h("h2", {}, "This game is not over yet"), h("p", {}, "Replays show everything, so they open only once the game has ended."), h("a", { class: "button", href: `#/watch/${this.room}` }, "Watch it live")));
      return;
    }
    this.result = log.result;
    // each step keeps its event's number in the log (from 1): the analysis names events so
    this.steps = replayLog(log.events).map((s, i) => ({ ...s, n: i + 1 })).filter((s) => s.event.t !== "clock_set");
    this.moves = movesOf(this.steps);
    this.index = this.moves[0].last;
    this.build();
    this.show();
    void this.loadAnalysis();
  }

  /** The coach's analysis (bots.md): the graph, the marks in the move list, the chosen point. */
  async loadAnalysis() {
    replace(this.els.coach, h("p", { class: "hint", id: "coach-status" }, "The coach is analysing the game…"));
    let analysis;
    try {
      analysis = await fetchAnalysis(this.room);
    } catch (error) {
      analysis = null;
      replace(this.els.coach, h("p", { class: "hint", id: "coach-status" }, `No analysis: ${error.message}`));
      return;
    }
    if (!analysis) {
      replace(this.els.coach, h("p", { class: "hint", id: "coach-status" }, "The analysis is not ready yet; open the replay again later."));
      return;
    }
    this.analysis = analysis;
    const marks = analysis.moves.filter((m) => m.mark);
    replace(
      this.els.coach,
      h("h3", {}, "The coach"),
      h("p", { class: "hint" }, `The Olympians' chance to win after each move, as the search judged it from the mover's view. Marked: a mistake lost ${Math.round(analysis.thresholds.mistake * 100)} points of chance or more, a blunder ${Math.round(analysis.thresholds.blunder * 100)}. Tab to a point and press Enter to see its position.`),
      winChart(analysis, (i) => this.pickAnalysed(i)),
      h("p", { class: "hint", id: "coach-marks" }, marks.length ? `${marks.length} marked move${marks.length > 1 ? "s" : ""}.` : "No move marked."),
      this.els.coachMove,
    );
    this.fillLog();
    this.show();
  }

  /** The step whose position the analysed command `mv` was chosen in (its first event's before). */
  stepBefore(mv) {
    let found = 0;
    for (const [i, s] of this.steps.entries()) if (s.n < mv.first) found = i;
    return found;
  }

  pickAnalysed(i) {
    const mv = this.analysis.moves[i];
    this.picked = i;
    if (this.mode !== "events") this.setMode("events");
    this.go(this.stepBefore(mv));
    replace(
      this.els.coachMove,
      h("p", { class: "coach-summary" }, moveWords(mv)),
      h("dl", { class: "coach-compare" }, h("dt", {}, "Played"), h("dd", { id: "coach-played" }, commandLabel(mv.played)), h("dt", {}, "Preferred"), h("dd", { id: "coach-preferred" }, commandLabel(mv.preferred))),
      h("p", {}, `The mover's chance: ${Math.round(mv.before * 100)} % with the preferred move, ${Math.round(mv.after * 100)} % with the one played.`),
    );
    this.els.coachMove.focus();
  }

  /** The marks of the analysed commands within event steps first..last (a move of the list). */
  marksIn(first, last) {
    if (!this.analysis) return [];
    const lo = this.steps[first].n, hi = this.steps[last].n;
    return this.analysis.moves.filter((m) => m.mark && m.first >= lo && m.first <= hi);
  }

  stop() {
    clearInterval(this.timer);
    document.removeEventListener("keydown", this.keys);
  }

  build() {
    this.els = {
      board: h("div", { id: "board-holder" }),
      zoom: h("div", { class: "zoom-holder" }),
      text: h("p", { id: "replay-text", class: "replay-text", "aria-live": "polite" }),
      counter: h("span", { id: "replay-counter" }),
      slider: h("input", { type: "range", id: "replay-slider", min: 0, max: this.moves.length - 1, value: 0, "aria-label": "Step" }),
      modes: h("div", { class: "button-row", role: "group", "aria-label": "Step by" }),
      status: h("div", { class: "panel", id: "status-panel" }),
      log: h("ol", { class: "log replay-log", id: "replay-log" }),
      play: h("button", { type: "button", id: "btn-replay-play", onclick: () => this.toggle() }, "Play ", icon("play")),
      coach: h("section", { class: "panel coach", id: "coach", "aria-label": "The coach" }),
      coachMove: h("div", { id: "coach-move", tabindex: -1, "aria-live": "polite" }),
    };
    this.zoom = new BoardZoom(this.els.board);
    this.zoom.onChange = () => replace(this.els.zoom, this.zoom.controls());
    replace(this.els.zoom, this.zoom.controls());
    this.els.slider.addEventListener("input", () => this.goStep(Number(this.els.slider.value)));
    const btn = (id, label, aria, fn) => h("button", { type: "button", id, "aria-label": aria, onclick: fn }, label);
    this.fillLog();
    replace(
      this.root,
      h(
        "div",
        { class: "game replay", id: "replay" },
        h("section", { class: "board-wrap", "aria-label": "Board" }, this.els.zoom, this.els.board),
        h(
          "aside",
          { class: "side" },
          h(
            "div",
            { class: "side-columns" },
            h(
              "div",
              { class: "side-main" },
              h("div", { class: "panel" }, h("h2", {}, "Replay — full information"), h("p", {}, `Result: ${this.result === "aborted" ? "aborted, no result" : this.result === "draw" ? "a draw" : `the ${FACTION_NAME[this.result]} won`}. Keys: ← → to step, Home/End.`), h("div", { class: "board-tools", role: "toolbar", "aria-label": "Replay" }, btn("btn-replay-first", "« First", "First step", () => this.goStep(0)), btn("btn-replay-prev", "‹ Back", "Previous step", () => this.goStep(this.stepIndex() - 1)), this.els.play, btn("btn-replay-next", "Next ›", "Next step", () => this.goStep(this.stepIndex() + 1)), btn("btn-replay-last", "Last »", "Last step", () => this.goStep(this.stepCount() - 1)), this.els.slider, this.els.counter), this.els.modes, this.els.text),
              this.els.status,
              this.els.coach,
            ),
            h("div", { class: "side-log" }, h("section", { class: "panel tab-panel", "aria-label": "Moves" }, this.els.log)),
          ),
        ),
      ),
    );
    this.keys = (e) => {
      if (e.target && (e.target.tagName === "INPUT" || e.target.tagName === "TEXTAREA")) return;
      if (e.key === "ArrowRight") this.goStep(this.stepIndex() + 1);
      else if (e.key === "ArrowLeft") this.goStep(this.stepIndex() - 1);
      else if (e.key === "Home") this.goStep(0);
      else if (e.key === "End") this.goStep(this.stepCount() - 1);
      else return;
      e.preventDefault();
    };
    document.addEventListener("keydown", this.keys);
  }

  toggle() {
    if (this.timer) {
      clearInterval(this.timer);
      this.timer = null;
      replace(this.els.play, "Play ", icon("play"));
      return;
    }
    replace(this.els.play, "Pause ", icon("pause"));
    this.timer = setInterval(() => {
      if (this.stepIndex() >= this.stepCount() - 1) this.toggle();
      else this.goStep(this.stepIndex() + 1);
    }, 700);
  }

  go(i) {
    this.index = Math.max(0, Math.min(this.steps.length - 1, i));
    this.show();
  }

  /** The move holding event step `i`. */
  moveAt(i) {
    return this.moves.findIndex((mv) => mv.first <= i && i <= mv.last);
  }

  /** The current step in the current mode: a move's number, or an event's. */
  stepIndex() {
    return this.mode === "moves" ? this.moveAt(this.index) : this.index;
  }

  stepCount() {
    return this.mode === "moves" ? this.moves.length : this.steps.length;
  }

  /** Go to step `i` of the current mode: a move shows the position once it is complete. */
  goStep(i) {
    if (this.mode === "events") return this.go(i);
    const mv = this.moves[Math.max(0, Math.min(this.moves.length - 1, i))];
    return this.go(mv.last);
  }

  setMode(mode) {
    this.mode = mode;
    if (mode === "moves") this.index = this.moves[this.moveAt(this.index)].last;
    this.fillLog();
    this.show();
  }

  /** The list beside the board: the moves (a turn each, with what happened in it), or every event. */
  fillLog() {
    const badge = (marks) => marks.map((m) => h("span", { class: ["mark", `mark-${m.mark}`], title: MARK_TEXT[m.mark] }, ` ${MARK_TEXT[m.mark]}`));
    const items = this.mode === "moves"
      ? this.moves.map((mv, i) => h("li", { dataset: { move: String(i), index: String(mv.last) } }, h("button", { type: "button", class: "link", onclick: () => this.goStep(i) }, mv.label, ...badge(this.marksIn(mv.first, mv.last)))))
      : this.steps.map((s, i) => h("li", { dataset: { index: String(i) } }, h("button", { type: "button", class: "link", onclick: () => this.go(i) }, describe(s.event, null) || s.event.t, ...badge(this.marksIn(i, i)))));
    replace(this.els.log, items);
    this.els.slider.max = String(this.stepCount() - 1);
    replace(
      this.els.modes,
      [["moves", "By move", "replay-by-move"], ["events", "By event", "replay-by-event"]].map(([mode, label, id]) =>
        h("button", { type: "button", id, class: "toggle", "aria-pressed": this.mode === mode ? "true" : "false", onclick: () => this.setMode(mode) }, label),
      ),
    );
  }

  show() {
    const step = this.steps[this.index];
    const m = step.model;
    replace(this.els.board, renderBoard({ board: this.board, model: m, seat: null, showNumbers: this.showNumbers, selected: new Set() }));
    const move = this.moves[this.moveAt(this.index)];
    const said = this.mode === "moves"
      ? this.steps.slice(move.first, move.last + 1).map((s) => describe(s.event, null)).filter(Boolean).join(" ")
      : describe(step.event, null) || step.event.t;
    this.els.text.textContent = said;
    this.els.counter.textContent = this.mode === "moves" ? `Move ${this.stepIndex() + 1} / ${this.moves.length}` : `Step ${this.index + 1} / ${this.steps.length}`;
    this.els.slider.value = String(this.stepIndex());
    const root = document.getElementById("replay");
    root.dataset.index = String(this.index);
    root.dataset.move = String(this.moveAt(this.index));
    root.dataset.mode = this.mode;
    replace(
      this.els.status,
      h("p", { class: "turn-indicator" }, m.phase === "over" ? `Over: ${resultText(m.result, m.reason)} (${END_REASON[m.reason] || m.reason || ""})` : m.phase === "setup" ? "Setup" : `Turn ${m.turn_number}: ${FACTION_NAME[m.turn]}${m.combat ? ` · combat in region ${m.combat.region}` : ""}`),
      FACTIONS.map((f) => h("div", { class: ["score", `side-${f}`] }, h("span", { class: "score-name" }, FACTION_NAME[f]), h("span", {}, `Honor ${m.honor[f]}`), h("span", {}, `Energy ${m.energy[f]}`))),
      m.eliminated.length ? h("p", {}, `Eliminated: ${m.eliminated.join(", ")}`) : null,
    );
    const at = this.stepIndex();
    for (const [i, li] of [...this.els.log.children].entries()) li.classList.toggle("current", i === at);
    const cur = this.els.log.children[at];
    if (cur) cur.scrollIntoView({ block: "nearest" });
  }
}

/** The moves of a game's steps: the setup, then each turn from its `turn_started` to the next,
 * its action with its combat and choices, each `{first, last, label}` (indices of `steps`). */
export function movesOf(steps) {
  const moves = [];
  for (const [i, s] of steps.entries()) {
    if (!moves.length || s.event.t === "turn_started") moves.push({ first: i, last: i, events: [] });
    const mv = moves[moves.length - 1];
    mv.last = i;
    mv.events.push(s.event);
  }
  for (const mv of moves) mv.label = moveLabel(mv.events);
  return moves;
}

const ACTIONS = new Set(["units_moved", "liturgy_performed", "thunderbolt_thrown", "unit_recalled", "passed", "deadline_missed"]);

function moveLabel(events) {
  const start = events[0];
  if (start.t !== "turn_started") return "Setup";
  const action = events.find((e) => ACTIONS.has(e.t));
  const combat = events.find((e) => e.t === "combat_started");
  const end = events.find((e) => e.t === "game_ended");
  const words = [`Turn ${start.number}: ${action ? describe(action, null) || action.t : `the ${FACTION_NAME[start.faction]}`}`];
  if (combat) words.push(`Combat in region ${combat.region}.`);
  if (end) words.push(describe(end, null) || "The game ends.");
  return words.join(" ");
}

// Replay of a finished game, step by step with full information, from GET /rooms/{room}/log.

import { h, replace } from "./dom.js";
import { api } from "./api.js";
import { replayLog } from "./model.js";
import { describe } from "./text.js";
import { renderBoard } from "./board.js";
import { FACTION_NAME, FACTIONS, END_REASON } from "./data.js";
import { setWhere } from "./ui.js";
import { BoardZoom } from "./zoom.js";
import { icon } from "./icons.js";

export class ReplayScreen {
  constructor(root, { board, room }) {
    this.root = root;
    this.board = board;
    this.room = room;
    this.steps = [];
    this.index = 0;
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
    this.steps = replayLog(log.events).filter((s) => s.event.t !== "clock_set");
    this.index = 0;
    this.build();
    this.show();
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
      slider: h("input", { type: "range", id: "replay-slider", min: 0, max: this.steps.length - 1, value: 0, "aria-label": "Step" }),
      status: h("div", { class: "panel", id: "status-panel" }),
      log: h("ol", { class: "log replay-log", id: "replay-log" }),
      play: h("button", { type: "button", id: "btn-replay-play", onclick: () => this.toggle() }, "Play ", icon("play")),
    };
    this.zoom = new BoardZoom(this.els.board);
    this.zoom.onChange = () => replace(this.els.zoom, this.zoom.controls());
    replace(this.els.zoom, this.zoom.controls());
    this.els.slider.addEventListener("input", () => this.go(Number(this.els.slider.value)));
    const btn = (id, label, aria, fn) => h("button", { type: "button", id, "aria-label": aria, onclick: fn }, label);
    this.els.log.append(
      ...this.steps.map((s, i) => h("li", { dataset: { index: String(i) } }, h("button", { type: "button", class: "link", onclick: () => this.go(i) }, describe(s.event, null) || s.event.t))),
    );
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
              h("div", { class: "panel" }, h("h2", {}, "Replay — full information"), h("p", {}, `Result: ${this.result === "draw" ? "a draw" : `the ${FACTION_NAME[this.result]} won`}. Keys: ← → to step, Home/End.`), h("div", { class: "board-tools", role: "toolbar", "aria-label": "Replay" }, btn("btn-replay-first", "« First", "First step", () => this.go(0)), btn("btn-replay-prev", "‹ Back", "Previous step", () => this.go(this.index - 1)), this.els.play, btn("btn-replay-next", "Next ›", "Next step", () => this.go(this.index + 1)), btn("btn-replay-last", "Last »", "Last step", () => this.go(this.steps.length - 1)), this.els.slider, this.els.counter), this.els.text),
              this.els.status,
            ),
            h("div", { class: "side-log" }, h("section", { class: "panel tab-panel", "aria-label": "Moves" }, this.els.log)),
          ),
        ),
      ),
    );
    this.keys = (e) => {
      if (e.target && (e.target.tagName === "INPUT" || e.target.tagName === "TEXTAREA")) return;
      if (e.key === "ArrowRight") this.go(this.index + 1);
      else if (e.key === "ArrowLeft") this.go(this.index - 1);
      else if (e.key === "Home") this.go(0);
      else if (e.key === "End") this.go(this.steps.length - 1);
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
      if (this.index >= this.steps.length - 1) this.toggle();
      else this.go(this.index + 1);
    }, 700);
  }

  go(i) {
    this.index = Math.max(0, Math.min(this.steps.length - 1, i));
    this.show();
  }

  show() {
    const step = this.steps[this.index];
    const m = step.model;
    replace(this.els.board, renderBoard({ board: this.board, model: m, seat: null, showNumbers: this.showNumbers, selected: new Set() }));
    this.els.text.textContent = describe(step.event, null) || step.event.t;
    this.els.counter.textContent = `Step ${this.index + 1} / ${this.steps.length}`;
    this.els.slider.value = String(this.index);
    document.getElementById("replay").dataset.index = String(this.index);
    replace(
      this.els.status,
      h("p", { class: "turn-indicator" }, m.phase === "over" ? `Over: ${m.result === "draw" ? "draw" : `${FACTION_NAME[m.result]} win`} (${END_REASON[m.reason] || m.reason || ""})` : m.phase === "setup" ? "Setup" : `Turn ${m.turn_number}: ${FACTION_NAME[m.turn]}${m.combat ? ` · combat in region ${m.combat.region}` : ""}`),
      FACTIONS.map((f) => h("div", { class: ["score", `side-${f}`] }, h("span", { class: "score-name" }, FACTION_NAME[f]), h("span", {}, `Honor ${m.honor[f]}`), h("span", {}, `Energy ${m.energy[f]}`))),
      m.eliminated.length ? h("p", {}, `Eliminated: ${m.eliminated.join(", ")}`) : null,
    );
    for (const li of this.els.log.children) li.classList.toggle("current", Number(li.dataset.index) === this.index);
    const cur = this.els.log.children[this.index];
    if (cur) cur.scrollIntoView({ block: "nearest" });
  }
}

// The lobby's featured game (api.md, GET /rooms/featured): the most watched live game, drawn
// read-only on a small board from its spectators' view (GET /rooms/{room}/view), which is read
// every 2 s, so that a move made shows on it; the featured choice itself is read every 6 s.

import { h, replace } from "./dom.js";
import { api } from "./api.js";
import { FACTION_NAME, loadBoard } from "./data.js";
import { fromView } from "./model.js";
import { renderBoard } from "./board.js";

const VIEW_MS = 2000;
const CHOICE_EVERY = 3; // views read per featured choice read

/** "3 watching" (a room summary's `spectators`). */
export function watchingText(count) {
  return `${count || 0} watching`;
}

export class Featured {
  constructor() {
    this.el = h("section", { class: "panel featured", id: "featured-game", "aria-live": "polite" }, h("h2", {}, "Featured game"), h("p", { class: "hint" }, "Loading…"));
    this.summary = null;
    this.drawn = null; // "room:seq" of the board drawn
    this.reads = 0;
    this.timer = null;
  }

  render() {
    return this.el;
  }

  start() {
    this.poll();
    this.timer = setInterval(() => this.poll(), VIEW_MS);
  }

  stop() {
    clearInterval(this.timer);
  }

  async poll() {
    try {
      if (this.reads++ % CHOICE_EVERY === 0 || !this.summary) this.summary = (await api.featured()).room;
      const s = this.summary;
      if (!s) {
        this.drawn = null;
        replace(this.el, h("h2", {}, "Featured game"), h("p", { class: "hint" }, "No game is being played now."));
        return;
      }
      const v = await api.view(s.room);
      const key = `${s.room}:${v.seq}`;
      const count = this.el.querySelector("#featured-spectators");
      if (key === this.drawn && count) {
        count.textContent = watchingText(s.spectators);
        return;
      }
      const board = await loadBoard();
      const model = fromView(v.view, v.seq);
      const names = s.names || {};
      const players = ["olympians", "chthonians"].map((f) => `${names[f] || (s.computer && s.computer[f] ? "Computer" : "?")} (${FACTION_NAME[f]})`).join(" vs ");
      const turn = model.phase === "setup" ? "Setup" : `Turn ${model.turn_number} · the ${FACTION_NAME[model.turn]} move`;
      replace(
        this.el,
        h("h2", {}, "Featured game"),
        h("p", { class: "featured-players" }, players),
        h("p", { class: "featured-turn" }, turn, " · ", h("span", { id: "featured-spectators", class: "spectators" }, watchingText(s.spectators))),
        h("div", { class: "featured-board", dataset: { room: s.room, seq: String(v.seq) } }, renderBoard({ board, model, seat: null, showNumbers: false, selected: new Set() })),
        h("a", { class: "button secondary", href: `#/watch/${s.room}`, id: "featured-watch" }, "Watch this game"),
      );
      this.drawn = key;
    } catch {
      // a convenience: the next poll tries again
    }
  }
}

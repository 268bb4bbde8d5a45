// The lobby's first panel: the three things people come for. "Play now" (quick pairing by
// rating, api.md: a seek waited for by long polls until paired), "Play the computer" and
// "Invite a friend" (a room with an invite link). The full form is the custom game's.

import { h, replace } from "./dom.js";
import { api, call, saveSeat } from "./api.js";
import { account } from "./account.js";
import { toast } from "./ui.js";

const CLOCKS = [
  ["live", "Live: 2 min per move"],
  ["day", "Over days: 1 day per move"],
  ["none", "No clock"],
];

export class QuickPlay {
  constructor() {
    this.seek = null; // the id of the seek being waited for
    this.el = null;
  }

  stop() {
    this.cancel();
  }

  /** The computer's levels with their ratings on the players' scale (api.md, "GET /lobby"). */
  rateLevels(ratings) {
    if (!ratings || !this.el) return;
    for (const option of this.el.querySelectorAll("#quick-level option")) {
      if (ratings[option.value]) option.textContent = `${option.value} (≈ ${ratings[option.value]})`;
    }
  }

  render() {
    this.el = h("section", { class: "panel quick", id: "quick-play", "aria-labelledby": "quick-title" });
    this.draw();
    return this.el;
  }

  draw() {
    if (!this.el) return;
    const signedIn = Boolean(account.player);
    const clock = h("select", { id: "quick-clock", "aria-label": "Clock" }, CLOCKS.map(([v, label]) => h("option", { value: v }, label)));
    const rated = h("input", { type: "checkbox", id: "quick-rated", checked: true, disabled: !signedIn });
    const openCombat = h("input", { type: "checkbox", id: "quick-open-combat" });
    const randomSetup = h("input", { type: "checkbox", id: "quick-random-setup" });
    const level = h("select", { id: "quick-level", "aria-label": "The computer's level" }, ["easy", "normal", "hard"].map((l) => h("option", { value: l, selected: l === "normal" }, l)));
    replace(
      this.el,
      h("h2", { id: "quick-title" }, "Play"),
      h(
        "div",
        { class: "quick-cards" },
        h(
          "div",
          { class: "quick-card", id: "card-play-now" },
          h("h3", {}, "Play now"),
          h("p", { class: "hint" }, "An opponent of about your rating, paired in seconds."),
          clock,
          h("label", { class: "check" }, rated, " Rated"),
          h("label", { class: "check" }, openCombat, " Open Combat"),
          h("label", { class: "check" }, randomSetup, " Random Setup"),
          this.seek
            ? [h("p", { class: "waiting", role: "status", id: "seek-status" }, "Looking for an opponent…"), h("button", { type: "button", id: "btn-cancel-seek", onclick: () => this.cancel() }, "Cancel")]
            : signedIn
              ? h("button", { type: "button", class: "primary", id: "btn-play-now", onclick: () => this.playNow({ clock: clock.value, rated: rated.checked, open_combat: openCombat.checked, random_setup: randomSetup.checked }) }, "Play now")
              : h("p", {}, h("a", { href: "#/account", class: "button primary", id: "btn-sign-in-to-play" }, "Sign in to play now")),
        ),
        h(
          "div",
          { class: "quick-card", id: "card-computer" },
          h("h3", {}, "Play the computer"),
          h("p", { class: "hint" }, "A casual game; it never sees your hidden units."),
          level,
          h("button", { type: "button", class: "primary", id: "btn-play-computer", onclick: () => this.playComputer(level.value) }, "Play the computer"),
        ),
        h(
          "div",
          { class: "quick-card", id: "card-invite" },
          h("h3", {}, "Invite a friend"),
          h("p", { class: "hint" }, "A game with a link to send; sides drawn at random."),
          h("button", { type: "button", class: "primary", id: "btn-invite", onclick: () => this.invite() }, "Invite a friend"),
        ),
      ),
    );
  }

  /** Seek in the pool of `choice` (a clock, rated or not, the variants), then wait. */
  async playNow(choice) {
    try {
      const made = await call("POST", "/seeks", choice);
      this.seek = made.seek;
      this.draw();
      while (this.seek === made.seek) {
        const answer = await call("POST", `/seeks/${encodeURIComponent(made.seek)}/wait`);
        if (this.seek !== made.seek) return;
        if (answer.status === "paired") {
          this.seek = null;
          saveSeat(answer.room, { seat: answer.seat, token: answer.token, epoch: answer.epoch });
          location.hash = `#/play/${answer.room}`;
          return;
        }
      }
    } catch (error) {
      if (this.seek) toast(`Play now: ${error.message}`, "error");
      this.seek = null;
      this.draw();
    }
  }

  async cancel() {
    const seek = this.seek;
    if (!seek) return;
    this.seek = null;
    this.draw();
    try {
      await call("DELETE", `/seeks/${encodeURIComponent(seek)}`);
    } catch {
      // gone already: nothing to cancel
    }
  }

  async playComputer(level) {
    try {
      const seated = await api.createComputerRoom({ side: "random", level });
      saveSeat(seated.room, { seat: seated.seat, token: seated.token, epoch: seated.epoch, creator: true });
      location.hash = `#/play/${seated.room}`;
    } catch (error) {
      toast(`Could not start the game: ${error.message}`, "error");
    }
  }

  async invite() {
    try {
      const seated = await api.createRoom({ side: "random" });
      saveSeat(seated.room, { seat: seated.seat, token: seated.token, epoch: seated.epoch, creator: true });
      location.hash = `#/play/${seated.room}`;
    } catch (error) {
      toast(`Could not create the game: ${error.message}`, "error");
    }
  }
}

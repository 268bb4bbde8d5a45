// The lobby: create a game (your name, variants, Challenge, clocks of minutes or days), the games
// this browser plays (whose move, "your move" first, updated live), the open, live and finished
// games; and the join page behind an invite link. The create form is a list of sections
// (`createSections`), so another way to play (a computer opponent) is one more section.

import { h, replace } from "./dom.js";
import { api, seats, saveSeat, forgetSeat, seatFor, displayName, saveDisplayName } from "./api.js";
import { FACTION_NAME, enemyOf } from "./data.js";
import { sideState } from "./model.js";
import { ago, duration } from "./text.js";
import { toast, setWhere } from "./ui.js";
import { account, playerLink, syncSeats } from "./account.js";
import { QuickPlay } from "./quick.js";
import { Featured, watchingText } from "./featured.js";

// Clocks (R12) a game can have: live ones, and Yucata-like games over days.
const CLOCK_PRESETS = [
  { id: "none", label: "No clock", move: null, commit: null, forfeit: null },
  { id: "live", label: "Live: 2 min per move, 1 min per commitment", move: 120, commit: 60, forfeit: 600 },
  { id: "day", label: "Over days: 1 day per move (3 days away and you lose)", move: 86400, commit: 86400, forfeit: 3 * 86400 },
  { id: "days3", label: "Over days: 3 days per move (7 days away and you lose)", move: 3 * 86400, commit: 3 * 86400, forfeit: 7 * 86400 },
];

function variantsText(room) {
  const o = room.options || {};
  const bits = [];
  if (o.open_combat) bits.push("Open Combat");
  if (o.random_setup) bits.push("Random Setup");
  if (room.challenge) bits.push(`Challenge (Chthonians ${o.challenge > 0 ? "+" : ""}${o.challenge ?? 0})`);
  if (o.move_seconds) bits.push(`${duration(o.move_seconds)}/move`);
  if (o.commit_seconds) bits.push(`${duration(o.commit_seconds)}/commitment`);
  if (o.broadcast_delay_seconds) bits.push(`commentary ${duration(o.broadcast_delay_seconds)} delayed`);
  return bits.join(", ") || "Standard";
}

/** "Your name": kept in this browser, sent when creating or joining; the server checks it. */
function nameField() {
  if (account.player) return h("p", { class: "name-field", id: "playing-as" }, "You play as ", h("strong", {}, account.player.name), " (signed in).");
  return h(
    "div",
    { class: "name-field" },
    h("label", { for: "player-name" }, "Your name "),
    h("input", { type: "text", id: "player-name", maxlength: 24, autocomplete: "nickname", value: displayName(), placeholder: "shown to your opponent", "aria-describedby": "player-name-help", oninput: (e) => saveDisplayName(e.target.value) }),
    h("span", { id: "player-name-help", class: "hint" }, " 2–24 letters, digits, spaces or ' . _ -"),
  );
}

/** Keep what is in the name field now (before a create or join sends it). */
function keepName() {
  const input = document.getElementById("player-name");
  if (input) saveDisplayName(input.value);
}

/** "Ann (Olympians) vs Computer (hard) (Chthonians)": the players as the lobby shows them (a
 * seat the computer plays by its level, api.md: a room's ``computer``), a player's name linked
 * to the profile when it is an account's. */
function playersText(room) {
  const names = room.names || {};
  const computer = room.computer || {};
  const accounts = room.players || {};
  const who = Object.keys(room.seats || {})
    .filter((s) => room.seats[s])
    .map((s) => [computer[s] ? `Computer (${computer[s]})` : names[s] ? playerLink(names[s], Boolean(accounts[s])) : "anonymous", ` (${FACTION_NAME[s]})`]);
  if (!who.length) return "—";
  return who.flatMap((w, i) => (i ? [" vs ", ...w] : w));
}

/** Whether the custom game's form is open: remembered in this browser. */
function customOpen() {
  try {
    return localStorage.getItem("olympus.customOpen") === "true";
  } catch {
    return false;
  }
}

function freeSeats(room) {
  return Object.entries(room.seats || {}).filter(([, taken]) => !taken).map(([s]) => s);
}

function when(ms) {
  if (!ms) return "";
  const d = new Date(ms);
  return d.toLocaleString();
}

/** A row of "Your games": whose move it is and how long since the last one, from public facts. */
function gameRow({ room, rec, summary, view, error }) {
  const row = { room, you: FACTION_NAME[rec.seat] || "Challenge", opponent: "", whose: "", turn: "", moved: 0, yours: false };
  if (rec.seat === "host") return { ...row, whose: "waiting for an opponent to pick a side" };
  if (error) return { ...row, whose: error.status === 404 ? "this game is gone" : "cannot load it now" };
  const other = enemyOf(rec.seat);
  const name = summary.names && summary.names[other];
  const linked = name ? playerLink(name, Boolean(summary.players && summary.players[other])) : null;
  row.opponent = summary.seats[other] ? [FACTION_NAME[other], linked ? [" (", linked, ")"] : ""] : `${FACTION_NAME[other]}: nobody yet`;
  row.moved = summary.moved_ms || 0;
  if (view.phase === "over") {
    row.whose = view.result === "aborted" ? "over: aborted, no result" : view.result === "draw" ? "over: a draw" : view.result === rec.seat ? "over: you won" : "over: you lost";
    row.turn = String(view.turn_number);
    return row;
  }
  row.turn = view.phase === "setup" ? "setup" : String(view.turn_number);
  row.yours = summary.seats[other] && sideState(view, rec.seat).acting;
  row.whose = !summary.seats[other] ? "waiting for an opponent" : sideState(view, other).acting ? "their move" : "waiting";
  return row;
}

export class Lobby {
  constructor(root) {
    this.root = root;
    this.timer = null;
    this.lists = { open: [], live: [], finished: [] };
    this.mine = null; // [{room, rec, summary, view, error}] once loaded
    this.quick = new QuickPlay();
    this.featured = new Featured();
    this.counts = null;
  }

  start() {
    setWhere("Lobby");
    this.render();
    this.refresh();
    this.timer = setInterval(() => this.refresh(), 5000);
    this.featured.start();
  }

  stop() {
    clearInterval(this.timer);
    this.quick.stop();
    this.featured.stop();
  }

  async refresh() {
    try {
      const [open, live, finished] = await Promise.all(["open", "live", "finished"].map((s) => api.listRooms(s)));
      this.lists = { open: open.rooms, live: live.rooms, finished: finished.rooms };
      this.renderLists();
      this.counts = await api.lobbyCounts();
      this.renderCounts();
      this.quick.rateLevels(this.counts.computer);
      await this.refreshMine();
    } catch (error) {
      const el = document.getElementById("lobby-lists");
      if (el) replace(el, h("p", { class: "error" }, `Cannot load the games: ${error.message}`));
    }
  }

  render() {
    const challenge = h("input", { type: "checkbox", id: "opt-challenge", onchange: () => sync() });
    const adjust = h("select", { id: "opt-challenge-value", "aria-label": "Honor adjustment for the Chthonians", disabled: true }, [-5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5].map((v) => h("option", { value: String(v), selected: v === 0 }, v > 0 ? `+${v}` : String(v))));
    const sideRadios = ["random", "olympians", "chthonians"].map((s) =>
      h("label", { class: "radio" }, h("input", { type: "radio", name: "side", value: s, checked: s === "random" }), ` ${s === "random" ? "Random" : FACTION_NAME[s]}`),
    );
    const sideSet = h("fieldset", { id: "side-set" }, h("legend", {}, "Your side"), sideRadios);
    const sync = () => {
      adjust.disabled = !challenge.checked;
      sideSet.disabled = challenge.checked;
      sideSet.title = challenge.checked ? "In a Challenge the other player picks the side." : "";
    };
    const said = (input) => {
      input.nextElementSibling.textContent = input.value ? ` s (${duration(Number(input.value))})` : " s";
    };
    const clock = (id, label, placeholder) =>
      h("label", { class: "clock-input" }, label, " ", h("input", { type: "number", id, min: 1, max: 604800, placeholder, inputmode: "numeric", oninput: (e) => said(e.target) }), h("span", { class: "clock-words" }, " s"));
    const preset = h(
      "select",
      {
        id: "opt-clock",
        "aria-label": "Clock",
        onchange: () => {
          const p = CLOCK_PRESETS.find((c) => c.id === preset.value);
          for (const [id, value] of [["#opt-move-seconds", p.move], ["#opt-commit-seconds", p.commit], ["#opt-forfeit-seconds", p.forfeit]]) {
            const input = form.querySelector(id);
            input.value = value === null ? "" : String(value);
            said(input);
          }
        },
      },
      CLOCK_PRESETS.map((c) => h("option", { value: c.id }, c.label)),
    );
    const form = h(
      "form",
      {
        id: "create-form",
        class: "panel create",
        onsubmit: (e) => {
          e.preventDefault();
          this.create(form);
        },
      },
      this.createSections({ sideSet, challenge, adjust, preset, clock }),
      h("button", { type: "submit", class: "primary", id: "btn-create" }, "Create game"),
      h("button", { type: "button", class: "secondary", id: "btn-watch-computer", onclick: () => this.watchComputer() }, "Watch the computer play itself"),
    );
    replace(
      this.root,
      h(
        "div",
        { class: "lobby" },
        h(
          "div",
          { class: "lobby-left" },
          this.quick.render(),
          h("details", { id: "custom-game", class: "panel", open: customOpen(), ontoggle: (e) => { try { localStorage.setItem("olympus.customOpen", String(e.target.open)); } catch { /* private mode */ } } }, h("summary", {}, h("h2", {}, "Custom game")), form),
        ),
        h("div", { class: "lobby-right" }, h("p", { id: "lobby-counts", class: "counts", "aria-live": "polite" }), this.featured.render(), h("section", { class: "panel", id: "my-games", "aria-live": "polite" }), h("div", { id: "lobby-lists" }, h("p", {}, "Loading games…"))),
      ),
    );
    this.renderMine();
    this.renderLists();
  }

  /** The create form's sections, in order: who you are, your side, variants, clocks, the opponent. */
  createSections({ sideSet, challenge, adjust, preset, clock }) {
    return [
      nameField(),
      sideSet,
      h(
        "fieldset",
        {},
        h("legend", {}, "Variants"),
        h("label", { class: "check" }, h("input", { type: "checkbox", id: "opt-open-combat" }), " Open Combat — commitments one after the other; 10 Honor each"),
        h("label", { class: "check" }, h("input", { type: "checkbox", id: "opt-random-setup" }), " Random Setup — the service picks and places both sides"),
        h("div", { class: "check" }, h("label", {}, challenge, " Challenge — Honor adjustment for the Chthonians:"), " ", adjust, h("span", { class: "hint" }, " (the other player then picks the side)")),
        account.player ? h("label", { class: "check" }, h("input", { type: "checkbox", id: "opt-rated" }), " Rated — both players signed in; the ratings change at the end (not with a Challenge or the computer)") : null,
        h("label", { class: "check" }, "Commentary for spectators: ", h("select", { id: "opt-broadcast-delay" }, [[0, "none (hidden stays hidden)"], [60, "everything revealed, 1 min late"], [300, "everything revealed, 5 min late"]].map(([v, label]) => h("option", { value: String(v) }, label)))),
      ),
      h(
        "fieldset",
        {},
        h("legend", {}, "Clock"),
        preset,
        clock("opt-move-seconds", "Per move", "none"),
        clock("opt-commit-seconds", "Per commitment", "none"),
        clock("opt-forfeit-seconds", "Absence before forfeit", "none"),
      ),
      h(
        "fieldset",
        {},
        h("legend", {}, "Opponent"),
        h("select", { id: "opt-opponent", "aria-label": "Opponent" }, [["person", "A person (invite link)"], ["easy", "The computer (easy)"], ["normal", "The computer (normal)"], ["hard", "The computer (hard)"]].map(([v, label]) => h("option", { value: v }, label))),
      ),
    ];
  }

  /** Each game this browser holds a seat in, as a spectator sees it (public facts only). */
  async refreshMine() {
    const mine = Object.entries(seats()).sort((a, b) => (b[1].saved || 0) - (a[1].saved || 0)).slice(0, 20);
    this.mine = await Promise.all(
      mine.map(async ([room, rec]) => {
        if (rec.seat === "host") return { room, rec };
        try {
          const [summary, position] = await Promise.all([api.room(room), api.view(room)]);
          return { room, rec, summary, view: position.view };
        } catch (error) {
          return { room, rec, error };
        }
      }),
    );
    this.renderMine();
  }

  /** "2 players online · 3 live games", the players' names linked to their profiles. */
  renderCounts() {
    const el = document.getElementById("lobby-counts");
    if (!el || !this.counts) return;
    const c = this.counts;
    const names = c.players.flatMap((n, i) => (i ? [", ", playerLink(n)] : [playerLink(n)]));
    replace(el, `${c.online} player${c.online === 1 ? "" : "s"} online`, names.length ? [" (", names, ")"] : "", ` · ${c.live_games} live game${c.live_games === 1 ? "" : "s"}`);
  }

  renderMine() {
    const el = document.getElementById("my-games");
    if (!el) return;
    if (this.mine === null) {
      replace(el, h("h2", {}, "Your games"), h("p", { class: "hint" }, "Loading…"));
      return;
    }
    const rows = this.mine.map(gameRow);
    rows.sort((a, b) => b.yours - a.yours || b.moved - a.moved); // your move first, then latest
    replace(
      el,
      h("h2", {}, "Your games"),
      rows.length
        ? h(
            "table",
            { class: "rooms my-games" },
            h("thead", {}, h("tr", {}, ["Game", "You", "Opponent", "Whose move", "Turn", "Last move"].map((t) => h("th", { scope: "col" }, t)), h("th", { scope: "col" }, h("span", { class: "visually-hidden" }, "Actions")))),
            h(
              "tbody",
              {},
              rows.map((r) =>
                h(
                  "tr",
                  { class: r.yours ? "your-move" : null, dataset: { room: r.room, yourMove: String(r.yours) } },
                  h("td", {}, h("a", { href: `#/play/${r.room}` }, h("code", {}, r.room))),
                  h("td", {}, r.you),
                  h("td", {}, r.opponent),
                  h("td", { class: "whose" }, r.yours ? h("strong", {}, "● your move") : r.whose),
                  h("td", { class: "turn" }, r.turn),
                  h("td", { class: "moved" }, r.moved ? ago(r.moved) : ""),
                  h("td", { class: "actions" }, h("a", { class: "button", href: `#/play/${r.room}` }, r.yours ? "Play" : "Open"), " ", h("button", { type: "button", class: "link", onclick: () => { forgetSeat(r.room); this.mine = this.mine.filter((x) => x.room !== r.room); this.renderMine(); } }, "forget")),
                ),
              ),
            ),
          )
        : h("p", { class: "hint" }, "None yet."),
    );
  }

  renderLists() {
    const el = document.getElementById("lobby-lists");
    if (!el) return;
    const table = (id, title, rooms, action) =>
      h(
        "section",
        { class: "panel", id },
        h("h2", {}, title),
        rooms.length
          ? h(
              "table",
              { class: "rooms" },
              h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Game"), h("th", { scope: "col" }, "Players"), h("th", { scope: "col" }, "Variants"), h("th", { scope: "col" }, "Created"), h("th", { scope: "col" }, h("span", { class: "visually-hidden" }, "Actions")))),
              h("tbody", {}, rooms.map((r) => h("tr", { dataset: { room: r.room } }, h("td", {}, h("code", {}, r.room)), h("td", { class: "players" }, playersText(r)), h("td", {}, variantsText(r)), h("td", {}, when(r.created_ms)), h("td", { class: "actions" }, action(r))))),
            )
          : h("p", { class: "hint" }, "None."),
      );
    replace(
      el,
      table("open-games", "Open games (a seat is free)", this.lists.open, (r) => [
        seatFor(r.room) ? h("a", { class: "button", href: `#/play/${r.room}` }, "Continue") : h("a", { class: "button", href: `#/join/${r.room}` }, r.challenge ? "Join (pick a side)" : `Join (${freeSeats(r).map((s) => FACTION_NAME[s]).join(" or ")})`),
        " ",
        h("a", { class: "button secondary", href: `#/watch/${r.room}` }, "Watch"),
      ]),
      table("live-games", "Live games", this.lists.live, (r) => [
        h("span", { class: "spectators", dataset: { count: String(r.spectators || 0) } }, watchingText(r.spectators)),
        " ",
        seatFor(r.room) ? [h("a", { class: "button", href: `#/play/${r.room}` }, "Continue"), " "] : "",
        h("a", { class: "button secondary", href: `#/watch/${r.room}` }, "Watch"),
      ]),
      table("finished-games", "Finished games", this.lists.finished.slice(-30).reverse(), (r) => h("a", { class: "button secondary", href: `#/replay/${r.room}` }, "Replay")),
    );
  }

  async create(form) {
    const q = (sel) => form.querySelector(sel);
    const body = {
      open_combat: q("#opt-open-combat").checked,
      random_setup: q("#opt-random-setup").checked,
    };
    if (q("#opt-rated") && q("#opt-rated").checked) body.rated = true;
    const delay = q("#opt-broadcast-delay") ? Number(q("#opt-broadcast-delay").value) : 0;
    if (delay) body.broadcast_delay_seconds = delay;
    if (q("#opt-challenge").checked) body.challenge = Number(q("#opt-challenge-value").value);
    else body.side = form.querySelector("input[name=side]:checked").value;
    for (const [id, key] of [["#opt-move-seconds", "move_seconds"], ["#opt-commit-seconds", "commit_seconds"], ["#opt-forfeit-seconds", "forfeit_seconds"]]) {
      const v = q(id).value.trim();
      if (v) body[key] = Number(v);
    }
    const opponent = q("#opt-opponent").value;
    const button = q("#btn-create");
    button.disabled = true;
    keepName();
    try {
      const seated = opponent === "person" ? await api.createRoom(body) : await api.createComputerRoom({ ...body, level: opponent });
      saveSeat(seated.room, { seat: seated.seat, token: seated.token, epoch: seated.epoch, creator: true });
      location.hash = `#/play/${seated.room}`;
    } catch (error) {
      toast(`Could not create the game: ${error.message}`, "error");
      button.disabled = false;
    }
  }

  /** "Watch the computer play itself": a room of two bots, opened as a spectator. */
  async watchComputer() {
    try {
      const room = await api.watchComputer({ olympians: "hard", chthonians: "hard" });
      location.hash = `#/watch/${room.room}`;
    } catch (error) {
      toast(`Could not start the game: ${error.message}`, "error");
    }
  }
}

/** The page behind an invite link: take a seat, then play. */
export class JoinPage {
  constructor(root, room) {
    this.root = root;
    this.room = room;
  }

  async start() {
    setWhere(`Join game ${this.room}`);
    const held = seatFor(this.room);
    if (held && held.seat !== "host") {
      replace(this.root, h("div", { class: "panel narrow" }, h("h2", {}, "You already have a seat"), h("p", {}, `You play the ${FACTION_NAME[held.seat]} in this game.`), h("a", { class: "button primary", href: `#/play/${this.room}`, id: "btn-continue" }, "Continue the game")));
      return;
    }
    let room;
    try {
      room = await api.room(this.room);
    } catch (error) {
      replace(this.root, h("div", { class: "panel narrow" }, h("h2", {}, "No such game"), h("p", {}, error.message), h("a", { href: "#/" }, "Back to the lobby")));
      return;
    }
    const free = freeSeats(room);
    this.delay = room.options.broadcast_delay_seconds ?? null; // the one shown: agreed to by joining
    const buttons = [];
    if (room.challenge) {
      for (const s of ["olympians", "chthonians"]) buttons.push(h("button", { type: "button", class: "primary", id: `btn-join-${s}`, onclick: () => this.join(s) }, `Play the ${FACTION_NAME[s]}`));
    } else {
      for (const s of free) buttons.push(h("button", { type: "button", class: "primary", id: `btn-join-${s}`, onclick: () => this.join(s) }, `Play the ${FACTION_NAME[s]}`));
    }
    replace(
      this.root,
      h(
        "div",
        { class: "panel narrow", id: "join-page" },
        h("h2", {}, `Game ${this.room}`),
        h("p", {}, `Variants: ${variantsText(room)}.`),
        room.challenge ? h("p", {}, `This is a Challenge: the creator gave the Chthonians ${room.options.challenge > 0 ? "+" : ""}${room.options.challenge} Honor; you pick your side.`) : null,
        h("p", {}, "Players: ", playersText(room), "."),
        h("p", { id: "join-broadcast" }, room.options.broadcast_delay_seconds ? `Commentary: everyone may watch this game with every hidden unit and sealed choice revealed, ${duration(room.options.broadcast_delay_seconds)} after it happens.` : "No commentary: hidden units and sealed choices stay hidden from everyone until the end."),
        buttons.length ? nameField() : null,
        buttons.length ? h("div", { class: "button-row" }, buttons) : h("p", {}, "Both seats are taken."),
        h("p", {}, h("a", { href: `#/watch/${this.room}` }, "Watch instead"), " · ", h("a", { href: "#/" }, "Lobby")),
      ),
    );
  }

  stop() {}

  async join(side) {
    keepName();
    try {
      const seated = await api.join(this.room, side, this.delay);
      saveSeat(seated.room, { seat: seated.seat, token: seated.token, epoch: seated.epoch });
      location.hash = `#/play/${seated.room}`;
    } catch (error) {
      toast(`Could not join: ${error.message}`, "error");
    }
  }
}

/** A Challenge creator holds a host token until the opponent picks a side. */
export class HostWait {
  constructor(root, room, record, onSeated) {
    this.root = root;
    this.room = room;
    this.record = record;
    this.onSeated = onSeated;
    this.timer = null;
  }

  start() {
    setWhere(`Challenge ${this.room}`);
    const link = `${location.origin}${location.pathname}#/join/${this.room}`;
    replace(
      this.root,
      h(
        "div",
        { class: "panel narrow", id: "host-wait" },
        h("h2", {}, "Challenge created"),
        h("p", {}, "Send this link to your opponent; they pick their side, and you get the other one."),
        h("input", { id: "invite-link", type: "text", readonly: true, value: link, onfocus: (e) => e.target.select() }),
        h("p", { class: "waiting", role: "status" }, "Waiting for an opponent to pick a side…"),
      ),
    );
    this.poll();
    this.timer = setInterval(() => this.poll(), 2000);
  }

  stop() {
    clearInterval(this.timer);
  }

  async poll() {
    try {
      const seated = await api.hostSeat(this.room, this.record.token);
      clearInterval(this.timer);
      saveSeat(this.room, { seat: seated.seat, token: seated.token, epoch: seated.epoch, hostToken: this.record.token });
      this.onSeated();
    } catch (error) {
      if (error.code !== "no_opponent_yet") {
        clearInterval(this.timer);
        toast(`Challenge: ${error.message}`, "error");
      }
    }
  }
}

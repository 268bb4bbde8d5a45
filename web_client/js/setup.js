// Setup (R2): pick 9 of 12 (the leader always), place each in its own region of your realm by
// click or drag, or draw a random setup; submit it sealed; then wait for the opponent.

import { h } from "./dom.js";
import { BASE, BY_NAME, CHARACTERS, FACTION_NAME, LEADER, REALM_OF, REALM_NAME, enemyOf, byOrder } from "./data.js";
import { toast } from "./ui.js";

const PICKS = 9;

export class SetupDraft {
  constructor(room, seat, board) {
    this.key = `olympus.setup.${room}.${seat}`;
    this.seat = seat;
    this.board = board;
    this.leader = LEADER[seat];
    this.realm = new Set(board.realmRegions(REALM_OF[seat]));
    this.picked = new Set([this.leader]);
    this.placements = {};
    this.selected = this.leader;
    try {
      const saved = JSON.parse(localStorage.getItem(this.key) || "null");
      if (saved) {
        this.picked = new Set([this.leader, ...saved.picked.filter((n) => BY_NAME[n] && BY_NAME[n].side === seat)]);
        this.placements = saved.placements || {};
        this.selected = null;
      }
    } catch {
      // a broken draft is simply forgotten
    }
  }

  save() {
    localStorage.setItem(this.key, JSON.stringify({ picked: [...this.picked], placements: this.placements }));
  }

  get roster() {
    return CHARACTERS.filter((c) => c.side === this.seat).map((c) => c.name);
  }

  occupant(region) {
    return Object.keys(this.placements).find((n) => this.placements[n] === region) || null;
  }

  toggle(name) {
    if (name === this.leader) return;
    if (this.picked.has(name)) {
      this.picked.delete(name);
      delete this.placements[name];
      if (this.selected === name) this.selected = null;
    } else if (this.picked.size < PICKS) {
      this.picked.add(name);
      this.selected = name;
    } else {
      toast(`You already picked ${PICKS}: leave one out first.`, "info", 3000);
    }
    this.save();
  }

  select(name) {
    if (!this.picked.has(name)) {
      if (this.picked.size >= PICKS) {
        toast(`You already picked ${PICKS}: leave one out first.`, "info", 3000);
        return;
      }
      this.picked.add(name);
    }
    this.selected = this.selected === name ? null : name;
    this.save();
  }

  place(name, region) {
    if (!this.realm.has(region)) {
      toast(`Place your units in the ${REALM_NAME[REALM_OF[this.seat]]}.`, "info", 3000);
      return;
    }
    if (!this.picked.has(name)) {
      if (this.picked.size >= PICKS) {
        toast(`You already picked ${PICKS}: leave one out first.`, "info", 3000);
        return;
      }
      this.picked.add(name);
    }
    const other = this.occupant(region);
    const from = this.placements[name];
    if (other && other !== name) {
      if (from !== undefined) this.placements[other] = from; // swap
      else delete this.placements[other];
    }
    this.placements[name] = region;
    // go on with the next picked unit that has no region yet
    const next = this.roster.find((n) => this.picked.has(n) && this.placements[n] === undefined);
    this.selected = next || null;
    this.save();
  }

  random() {
    const others = shuffle(this.roster.filter((n) => n !== this.leader)).slice(0, PICKS - 1);
    const base = BASE[this.seat];
    const nearBase = shuffle([base, ...this.board.neighbours[base]].filter((r) => this.realm.has(r)));
    this.picked = new Set([this.leader, ...others]);
    this.placements = { [this.leader]: nearBase[0] };
    const free = shuffle([...this.realm].filter((r) => r !== nearBase[0]));
    others.forEach((n, i) => {
      this.placements[n] = free[i];
    });
    this.selected = null;
    this.save();
  }

  clear() {
    this.picked = new Set([this.leader]);
    this.placements = {};
    this.selected = this.leader;
    this.save();
  }

  get complete() {
    return this.picked.size === PICKS && [...this.picked].every((n) => this.placements[n] !== undefined);
  }

  command() {
    const placements = {};
    for (const n of [...this.picked].sort(byOrder)) placements[n] = this.placements[n];
    return { type: "submit_setup", placements };
  }
}

function shuffle(list) {
  const a = [...list];
  for (let i = a.length - 1; i > 0; i -= 1) {
    const j = Math.floor(Math.random() * (i + 1));
    [a[i], a[j]] = [a[j], a[i]];
  }
  return a;
}

function mySetupSubmitted(screen) {
  const m = screen.model;
  return Boolean(m.setup && m.setup.submitted && m.setup.submitted[screen.seat]);
}

/** Board options during the setup: my draft (or my sealed setup) and where units may go. */
export function setupBoardOptions(screen) {
  const m = screen.model;
  const base = { board: screen.board, seat: screen.seat, showNumbers: screen.ui.showNumbers };
  if (!screen.seat) return { ...base, model: { units: [] } };
  const draft = screen.setupDraft;
  if (mySetupSubmitted(screen) || m.options.random_setup) {
    const mine = (m.setup && m.setup.mine) || {};
    return { ...base, model: { units: Object.entries(mine).map(([name, region]) => ({ side: screen.seat, token: 0, region, name, revealed: false })) } };
  }
  const units = Object.entries(draft.placements).map(([name, region]) => ({ side: screen.seat, token: 0, region, name, revealed: false }));
  const destinations = new Map();
  if (draft.selected) {
    for (const r of draft.realm) {
      const other = draft.occupant(r);
      if (other) continue;
      destinations.set(r, { honor: 0, energy: 0, kind: "place", badge: "place", label: `Place ${draft.selected} in region ${r}` });
    }
  }
  const sel = new Set(draft.selected ? [draft.selected] : []);
  return {
    ...base,
    model: { units },
    selected: sel,
    placeable: draft.realm,
    destinations,
    onDestination: (r) => {
      draft.place(draft.selected, r);
      screen.queueRender();
    },
    onRegion: (r) => {
      if (draft.selected && draft.realm.has(r)) {
        draft.place(draft.selected, r);
        screen.queueRender();
      }
    },
    onUnit: (u) => {
      if (screen.dragJustEnded) return;
      draft.select(u.name);
      screen.queueRender();
    },
  };
}

/**
 * Who the opponent is, under the setup: against the computer its level (no invite, no seat to
 * take, no spectators to call); against a person the invite link, whether the seat is taken and
 * the spectators' link. Nothing until the room's summary says which (no invite flashing by).
 */
function inviteBox(screen) {
  const link = `${location.origin}${location.pathname}#/join/${screen.room}`;
  const summary = screen.summary;
  const other = screen.seat ? enemyOf(screen.seat) : null;
  if (!summary || !other) return null;
  const computer = screen.computerLevel(other);
  if (computer) {
    return h("p", { id: "opponent-computer", class: "opponent-computer" }, `You play against the computer (${computer}): it sets up its ${FACTION_NAME[other]} at once.`);
  }
  const joined = summary.seats[other];
  return h(
    "div",
    { class: "invite" },
    h("label", { for: "invite-link" }, "Invite link for your opponent"),
    h(
      "div",
      { class: "invite-row" },
      h("input", { id: "invite-link", type: "text", readonly: true, value: link, onfocus: (e) => e.target.select() }),
      h("button", {
        type: "button",
        onclick: async () => {
          try {
            await navigator.clipboard.writeText(link);
            toast("Link copied.", "info", 2000);
          } catch {
            document.getElementById("invite-link").select();
          }
        },
      }, "Copy"),
    ),
    h("p", { id: "opponent-status", class: "hint", dataset: { joined: String(Boolean(joined)) } }, joined ? `The ${FACTION_NAME[other]} seat is taken.` : `Nobody has taken the ${FACTION_NAME[other]} seat yet.`),
    h("p", { class: "hint" }, "Spectators: ", h("a", { href: `#/watch/${screen.room}` }, "watch link")),
  );
}

export function renderSetupPanel(screen) {
  const m = screen.model;
  if (!screen.seat) {
    return h("div", {}, h("h2", {}, "Setup"), h("p", { class: "hint" }, "Both sides are choosing and placing their characters in secret."), statusLine(m));
  }
  if (m.options.random_setup) {
    return h(
      "div",
      { id: "setup-waiting" },
      h("h2", {}, "Random Setup"),
      h("p", {}, "The service draws both setups as soon as both seats are taken: your leader in or next to your base, 8 others at random."),
      h("p", { class: "waiting" }, screen.computerLevel(enemyOf(screen.seat)) ? "The service is drawing both setups…" : "Waiting for the opponent…"),
      inviteBox(screen),
    );
  }
  if (mySetupSubmitted(screen)) {
    return h(
      "div",
      { id: "setup-waiting" },
      h("h2", {}, "Setup sealed"),
      h("p", { class: "waiting", role: "status" }, m.setup.submitted[enemyOf(screen.seat)] ? "Both setups are in…" : `Your setup is sealed. Waiting for ${screen.computerLevel(enemyOf(screen.seat)) ? "the computer" : "the opponent"} to submit theirs…`),
      inviteBox(screen),
    );
  }
  const draft = screen.setupDraft;
  const placed = [...draft.picked].filter((n) => draft.placements[n] !== undefined).length;
  const rows = draft.roster.map((name) => {
    const c = BY_NAME[name];
    const picked = draft.picked.has(name);
    const where = draft.placements[name];
    return h(
      "li",
      { class: ["setup-unit", picked ? "picked" : "left-out", draft.selected === name ? "selected" : null], dataset: { unit: name } },
      h("input", {
        type: "checkbox",
        id: `pick-${name}`,
        checked: picked,
        disabled: name === draft.leader,
        "aria-label": `Pick ${name}${name === draft.leader ? " (the leader is always picked)" : ""}`,
        onchange: () => {
          draft.toggle(name);
          screen.queueRender();
        },
      }),
      h(
        "button",
        {
          type: "button",
          class: "setup-select",
          "aria-pressed": draft.selected === name ? "true" : "false",
          "data-focus-key": `setup:${name}`,
          "aria-describedby": `power-${name}`,
          onclick: () => {
            if (screen.dragJustEnded) return;
            draft.select(name);
            screen.queueRender();
          },
          onpointerdown: (e) => startDrag(screen, name, e),
        },
        h("strong", {}, name),
        ` ${c.strength}`,
        name === draft.leader ? " (leader)" : "",
      ),
      h("span", { class: "where" }, picked ? (where === undefined ? "not placed" : `region ${where}`) : "left out"),
      h("span", { class: "power-line", id: `power-${name}` }, c.power),
    );
  });
  return h(
    "div",
    { id: "setup-panel" },
    h("h2", {}, "Your setup"),
    h("p", { class: "hint" }, `Pick 9 of your 12 characters (${LEADER[screen.seat]} always plays) and place each in its own region of the ${REALM_NAME[REALM_OF[screen.seat]]}: select a character, then click a highlighted region — or drag it there. Dropping on a placed unit swaps them.`),
    h("p", { id: "setup-count", "aria-live": "polite" }, `Picked ${draft.picked.size}/9 · placed ${placed}/9`),
    h("ul", { class: "setup-list" }, rows),
    h(
      "div",
      { class: "button-row" },
      h("button", { type: "button", id: "btn-random-setup", onclick: () => { draft.random(); screen.queueRender(); } }, "Random setup"),
      h("button", { type: "button", class: "secondary", id: "btn-clear-setup", onclick: () => { draft.clear(); screen.queueRender(); } }, "Clear"),
      h("button", {
        type: "button",
        class: "primary",
        id: "btn-submit-setup",
        disabled: !draft.complete || Boolean(screen.inflight),
        onclick: () => screen.send(draft.command()),
      }, "Submit setup (sealed)"),
    ),
    inviteBox(screen),
  );
}

function statusLine(m) {
  const s = (m.setup && m.setup.submitted) || {};
  return h("p", {}, `Olympians: ${s.olympians ? "sealed" : "choosing"} · Chthonians: ${s.chthonians ? "sealed" : "choosing"}`);
}

// --- drag and drop (pointer events: works for the roster and for chips on the board) --------

function startDrag(screen, name, event) {
  if (event.button !== 0) return;
  const startX = event.clientX;
  const startY = event.clientY;
  let ghost = null;
  const move = (e) => {
    if (!ghost && Math.hypot(e.clientX - startX, e.clientY - startY) < 6) return;
    if (!ghost) {
      ghost = h("div", { class: "drag-ghost", "aria-hidden": "true" }, name);
      document.body.append(ghost);
    }
    ghost.style.left = `${e.clientX + 8}px`;
    ghost.style.top = `${e.clientY + 8}px`;
  };
  const up = (e) => {
    document.removeEventListener("pointermove", move);
    document.removeEventListener("pointerup", up);
    if (!ghost) return;
    ghost.remove();
    screen.dragJustEnded = true;
    setTimeout(() => {
      screen.dragJustEnded = false;
    }, 50);
    const target = document.elementsFromPoint(e.clientX, e.clientY).find((el) => el.closest && el.closest("[data-region]") && !el.closest(".unit"));
    const regionEl = target ? target.closest("[data-region]") : null;
    if (regionEl) {
      screen.setupDraft.place(name, Number(regionEl.dataset.region));
      screen.queueRender();
    }
  };
  document.addEventListener("pointermove", move);
  document.addEventListener("pointerup", up);
}

/** Chips on the board can be dragged too (delegated from the board holder). */
export function enableBoardDrag(screen, holder) {
  holder.addEventListener("pointerdown", (event) => {
    const m = screen.model;
    if (!m || m.phase !== "setup" || !screen.seat || mySetupSubmitted(screen) || m.options.random_setup) return;
    const chip = event.target.closest && event.target.closest("g.unit[data-unit]");
    if (chip) startDrag(screen, chip.dataset.unit, event);
  });
}

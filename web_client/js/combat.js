// The combat panel (R8): both groups with their strengths term by term, the five maneuvers,
// Energy within the legal limit with its Honor cost (from the legal commit actions) and the
// resulting power as you choose, the sealed commitment and "waiting for the opponent", the
// revealed round with each side's power explained, the choices that follow (remove a unit, with
// what follows; retreat or stay). Every figure is the rules' own (the `strength`, `powers` and
// `after_removal` of `legal`, the `breakdown` of a resolved round). It can be minimised to look at
// the board, and it closes by itself when the combat ends (its result stays in the log). It also
// hosts the choices outside a combat (a thunderbolt's victim, a sneak attack's).

import { h, signed } from "./dom.js";
import { BY_NAME, FACTION_NAME, FACTIONS, MANEUVERS, MANEUVER_NAME, PENDING_TEXT, enemyOf } from "./data.js";
import { unitsIn } from "./model.js";
import { explainRound, strengthWords } from "./text.js";
import { costLine } from "./actions.js";
import { icon } from "./icons.js";

function combatKey(m) {
  const c = m.combat || m.lastCombat;
  return c ? `${m.turn_number}:${c.region}` : null;
}

/** What the rules sent with the seat's newest `legal` (strengths, outcomes), if it is current. */
function fromLegal(screen, key) {
  const o = screen.options;
  return o && screen.model && o.seq === screen.model.seq ? o[key] || null : null;
}

export function renderCombatPanel(screen) {
  const m = screen.model;
  if (!m || m.phase === "over") return ""; // the game's end closes the panel: the log keeps it
  let mode = null;
  if (m.combat) mode = "combat";
  else if (m.pending) mode = "choice";
  if (!mode) return ""; // the combat is over: the panel closes, the log keeps its result
  const region = m.combat ? m.combat.region : m.pending.region;
  const title = mode === "choice" ? `Choice in region ${region}` : `Combat in region ${region} — round ${m.combat.round}`;

  if (screen.ui.combatMinimized) {
    return h(
      "div",
      { id: "combat", class: ["combat-panel", "minimized"], role: "region", "aria-label": title, dataset: { mode, region: String(region) } },
      h("span", {}, icon("combat"), ` ${title}`, needsMe(screen) ? h("strong", { class: "attention" }, " — your move") : ""),
      h("button", { type: "button", id: "btn-combat-restore", "aria-expanded": "false", onclick: () => { screen.ui.combatMinimized = false; screen.queueRender(); } }, "Show"),
    );
  }

  const body = [];
  const c = m.combat || m.lastCombat;
  if (mode !== "choice" || m.combat) {
    const attacker = c.attacker;
    body.push(h("p", { class: "combat-intro" }, `The ${FACTION_NAME[attacker]} attacked ${c.origin === null || c.origin === undefined ? "from the air (a flight)" : `from region ${c.origin}`}; the attacker wins ties.`));
    body.push(sides(screen, region, mode));
  }
  if (mode === "combat") body.push(commitSection(screen));
  if (m.lastCombat && m.lastCombat.rounds.length && (mode !== "choice" || m.combat)) body.push(lastRoundSection(screen));
  if (m.pending) body.push(choiceSection(screen));
  // against the computer: the Hint for the commitment or the choice to make, here where it is made
  if (needsMe(screen)) body.push(screen.hintBox());

  const panel = h(
    "section",
    {
      id: "combat",
      class: ["combat-panel", `mode-${mode}`],
      role: "dialog",
      "aria-modal": "false",
      "aria-labelledby": "combat-title",
      dataset: { mode, region: String(region), round: m.combat ? String(m.combat.round) : "" },
      onkeydown: (e) => {
        if (e.key === "Escape") {
          screen.ui.combatMinimized = true;
          screen.queueRender();
        }
      },
    },
    h(
      "header",
      { class: "combat-header" },
      h("h2", { id: "combat-title" }, icon("combat"), ` ${title}`),
      h("button", { type: "button", id: "btn-combat-minimize", class: "icon-button", "aria-label": "Minimise the combat panel (Escape)", title: "Minimise (Escape)", "aria-expanded": "true", onclick: () => { screen.ui.combatMinimized = true; screen.queueRender(); } }, "–"),
    ),
    body,
  );
  maybeFocus(screen, panel);
  return panel;
}

function needsMe(screen) {
  return screen.myCommits.length > 0 || screen.myChoices.length > 0;
}

function maybeFocus(screen, panel) {
  const key = `${screen.model.seq}`;
  const wantsInput = needsMe(screen);
  if (!wantsInput || screen.ui.focusedFor === key) return;
  const stepKey = `${combatKey(screen.model)}:${screen.model.combat ? screen.model.combat.round : ""}:${screen.model.pending ? screen.model.pending.kind : ""}`;
  if (screen.ui.focusedStep === stepKey) return;
  screen.ui.focusedStep = stepKey;
  screen.ui.focusedFor = key;
  setTimeout(() => {
    if (document.activeElement && document.activeElement.closest && document.activeElement.closest("dialog[open]")) return;
    const el = panel.querySelector("input[name=maneuver]:checked, button.choice, #btn-commit");
    if (el && panel.isConnected) el.focus({ preventScroll: true });
  }, 0);
}

function sides(screen, region, mode) {
  const m = screen.model;
  const c = m.combat || m.lastCombat;
  const strengths = mode === "combat" ? fromLegal(screen, "strength") : null;
  const order = screen.seat ? [screen.seat, enemyOf(screen.seat)] : FACTIONS;
  return h(
    "div",
    { class: "combat-sides" },
    order.map((f) => {
      const units = unitsIn(m, region, f);
      const role = f === c.attacker ? "attacker" : "defender";
      const commitment = m.combat ? m.combat.commitments[f] : null;
      const committed = m.combat ? m.combat.committed[f] : false;
      let state = "";
      if (m.combat) {
        if (commitment) state = `committed: ${MANEUVER_NAME[commitment.maneuver]}, ${commitment.energy} Energy${f !== screen.seat ? " (you may see it)" : ""}`;
        else if (committed) state = "committed (sealed)";
        else state = "choosing…";
      }
      return h(
        "div",
        { class: ["combat-side", `side-${f}`], dataset: { side: f } },
        h("h3", {}, `${FACTION_NAME[f]}${screen.seat === f ? " (you)" : ""} — ${role}`),
        h(
          "ul",
          { class: "combatants" },
          units.length
            ? units.map((u) => h("li", {}, u.name ? `${u.name} ${BY_NAME[u.name].strength}` : `token #${u.token}`))
            : h("li", { class: "none" }, "no units left here"),
        ),
        strengths
          ? h("p", { class: "base-strength", dataset: { side: f } }, "Strength ", h("strong", { dataset: { base: f } }, String(strengths[f].base)), h("span", { class: "notes" }, `: ${strengthWords(strengths[f])}`))
          : null,
        h("p", { class: "stock" }, `Energy stock ${m.energy[f]} · Honor ${m.honor[f]}`),
        state ? h("p", { class: ["commit-state", committed ? "done" : "pending"], dataset: { committed: String(committed) } }, state) : null,
      );
    }),
  );
}

function commitSection(screen) {
  const m = screen.model;
  const seat = screen.seat;
  if (!seat) return h("p", { class: "hint" }, "Both sides commit a maneuver and Energy in secret; they are revealed together.");
  if (m.pending) return "";
  const actions = screen.myCommits;
  if (m.combat.committed[seat]) {
    const mine = m.combat.commitments[seat];
    return h(
      "div",
      { id: "combat-waiting", class: "waiting", role: "status" },
      h("p", {}, `Your commitment is sealed${mine ? `: ${MANEUVER_NAME[mine.maneuver]} with ${mine.energy} Energy` : ""}.`),
      h("p", { class: "spinner" }, icon("waiting"), " Waiting for the opponent…"),
    );
  }
  if (!actions.length) {
    if (screen.inflight) return h("p", { class: "waiting" }, "Sending your commitment…");
    if (fromLegal(screen, "waiting") !== "opponent_commits_first") return h("p", { class: "waiting", role: "status" }, "Waiting…");
    return h("p", { id: "combat-opponent-first", class: "waiting", role: "status" }, `Your opponent commits first this round (${firstReasons(m, seat).join(", ")}); you will see their choice. Waiting…`);
  }
  const allowed = new Set(actions.map((a) => a.command.maneuver));
  const limit = Math.max(...actions.map((a) => a.command.energy));
  const canReveal = actions.some((a) => a.command.reveal && a.command.reveal.length);
  const revealName = canReveal ? actions.find((a) => a.command.reveal && a.command.reveal.length).command.reveal[0] : null;
  const ui = screen.ui.commit;
  const roundKey = `${m.turn_number}:${m.combat.region}:${m.combat.round}`;
  if (ui.key !== roundKey || !allowed.has(ui.maneuver)) {
    ui.key = roundKey;
    ui.maneuver = allowed.has("standard") ? "standard" : [...allowed][0];
    ui.energy = Math.min(ui.energy || 0, limit);
    ui.reveal = false;
  }
  const costEl = h("p", { id: "commit-cost", class: "cost", "aria-live": "polite" });
  const helpEl = h("span", { id: "energy-help", class: "hint" });
  const strength = fromLegal(screen, "strength");
  const powerEl = h("p", { id: "commit-power", class: "commit-power", "aria-live": "polite" });
  const update = () => {
    const a = matching(actions, ui);
    costEl.textContent = a ? `This commitment: ${costLine(a.honor, a.energy)}.` : "Not allowed.";
    costEl.classList.toggle("costly", Boolean(a && a.honor < 0));
    helpEl.textContent = energyHelp(actions, ui.maneuver, limit);
    const mine = strength && strength[seat];
    const total = mine && mine.powers[ui.maneuver] ? mine.powers[ui.maneuver][ui.energy] : undefined;
    const aphrodite = ui.reveal ? ` (and Aphrodite's +2 for each male Olympian once revealed)` : "";
    powerEl.textContent = total === undefined ? "" : `Your power: ${strengthWords(mine, ui, total)}${aphrodite}`;
    powerEl.dataset.power = total === undefined ? "" : String(total);
  };
  const range = h("input", { type: "range", id: "energy-range", min: 0, max: limit, value: ui.energy, "aria-label": "Energy to commit" });
  const number = h("input", { type: "number", id: "energy", min: 0, max: limit, value: ui.energy, inputmode: "numeric", "aria-describedby": "energy-help commit-cost" });
  const setEnergy = (v) => {
    const n = Math.max(0, Math.min(limit, Number.isFinite(v) ? Math.round(v) : 0));
    ui.energy = n;
    range.value = String(n);
    if (Number(number.value) !== n) number.value = String(n);
    update();
  };
  range.addEventListener("input", () => setEnergy(Number(range.value)));
  number.addEventListener("input", () => {
    if (number.value !== "") setEnergy(Number(number.value));
  });
  number.addEventListener("change", () => setEnergy(Number(number.value)));
  const radios = MANEUVERS.map((mv) => {
    const ok = allowed.has(mv.id);
    const input = h("input", {
      type: "radio",
      name: "maneuver",
      value: mv.id,
      id: `maneuver-${mv.id}`,
      checked: ui.maneuver === mv.id,
      disabled: !ok,
      "aria-describedby": `maneuver-${mv.id}-text`,
      onchange: () => {
        ui.maneuver = mv.id;
        update();
      },
    });
    return h(
      "div",
      { class: ["maneuver", ok ? null : "disabled"] },
      input,
      h("label", { for: `maneuver-${mv.id}` }, h("strong", {}, mv.label), h("span", { id: `maneuver-${mv.id}-text`, class: "maneuver-text" }, ` — ${mv.text}${ok ? "" : " (not allowed for your units now)"}`)),
    );
  });
  const form = h(
    "form",
    {
      id: "commit-form",
      class: "commit-form",
      onsubmit: (e) => {
        e.preventDefault();
        const a = matching(actions, ui);
        if (a) screen.commit(a);
      },
    },
    h("fieldset", {}, h("legend", {}, "Your maneuver"), radios),
    h(
      "fieldset",
      { class: "energy" },
      h("legend", {}, "Energy"),
      h("div", { class: "energy-row" }, range, h("label", { for: "energy", class: "energy-label" }, "Energy"), number, helpEl),
    ),
    canReveal
      ? h("label", { class: "check" }, h("input", { type: "checkbox", id: "reveal-toggle", checked: ui.reveal, onchange: (e) => { ui.reveal = e.target.checked; update(); } }), ` Reveal ${revealName} next door: +2 to each male Olympian in the combat (the Chthonians may commit again)`)
      : null,
    powerEl,
    costEl,
    h("button", { type: "submit", id: "btn-commit", class: "primary" }, "Commit (sealed)"),
  );
  update();
  return form;
}

/**
 * Why the opponent commits first this round, named from public facts (R8, as the rules'
 * `first_to_commit`): Open Combat, and in round 1 the seat's own Athena, who sees it.
 */
function firstReasons(m, seat) {
  const reasons = [];
  if (m.options && m.options.open_combat) reasons.push("Open Combat");
  if (m.combat.round === 1 && unitsIn(m, m.combat.region, seat).some((u) => u.name === "Athena")) reasons.push("Athena sees it");
  return reasons;
}

/** The Energy a maneuver may take, and from which amount it costs Honor, from the legal
 * commitments' own figures ("0 to 6; from 5 on it costs 1 Honor more"). */
function energyHelp(actions, maneuver, limit) {
  const plain = actions.filter((a) => a.command.maneuver === maneuver && !(a.command.reveal && a.command.reveal.length));
  const base = plain.find((a) => a.command.energy === 0);
  const dearer = base ? plain.filter((a) => a.honor < base.honor).sort((x, y) => x.command.energy - y.command.energy)[0] : null;
  return dearer ? `0 to ${limit}; from ${dearer.command.energy} on it costs ${base.honor - dearer.honor} Honor more` : `0 to ${limit}`;
}

function matching(actions, ui) {
  return actions.find((a) => a.command.maneuver === ui.maneuver && a.command.energy === ui.energy && Boolean(a.command.reveal && a.command.reveal.length) === Boolean(ui.reveal));
}

function lastRoundSection(screen) {
  const m = screen.model;
  const lc = m.lastCombat;
  const e = lc.rounds[lc.rounds.length - 1];
  const ex = explainRound(e, lc.attacker);
  const row = (f, prefix) =>
    h("tr", { dataset: { side: f } }, h("th", { scope: "row" }, FACTION_NAME[f]), h("td", {}, MANEUVER_NAME[e[`${prefix}_maneuver`]]), h("td", {}, String(e[`${prefix}_energy`])), h("td", {}, String(e[`${prefix}_power`])));
  return h(
    "div",
    { id: "round-result", class: "round-result", dataset: { round: String(e.round), winner: e.winner || "none" } },
    h("h3", {}, `Round ${e.round}: both choices revealed`),
    h(
      "table",
      {},
      h("thead", {}, h("tr", {}, h("th", {}, ""), h("th", { scope: "col" }, "Maneuver"), h("th", { scope: "col" }, "Energy"), h("th", { scope: "col" }, "Power"))),
      h("tbody", {}, row("olympians", "olympian"), row("chthonians", "chthonian")),
    ),
    e.breakdown
      ? h("ul", { class: "round-powers" }, ["olympians", "chthonians"].map((f) => h("li", { dataset: { side: f } }, h("strong", {}, `${FACTION_NAME[f]}: `), strengthWords(e.breakdown[f], e.breakdown[f]))))
      : null,
    h("ul", { class: "explain" }, ex.lines.map((l) => h("li", {}, l))),
    lc.losses.length ? h("p", {}, `Eliminated in this combat so far: ${lc.losses.join(", ")}.`) : null,
  );
}

function choiceSection(screen) {
  const m = screen.model;
  const p = m.pending;
  if (!screen.seat || p.side !== screen.seat) {
    return h("p", { id: "choice-waiting", class: "waiting", role: "status" }, `Waiting for the ${FACTION_NAME[p.side]} to ${PENDING_TEXT[p.kind] || p.kind}…`);
  }
  const choices = screen.myChoices;
  if (!choices.length) return h("p", { class: "waiting" }, screen.inflight ? "Sending your choice…" : "…");
  const intro = {
    remove: "You lost the round: choose the unit to remove.",
    struck: "A thunderbolt hit your units: choose the one who dies.",
    retreat: "Choose the region to retreat to (also highlighted on the board).",
    leave_or_stay: "You may leave (retreat) or stay in the combat.",
    leave_or_strike: "You beat the chase: leave, or stay and make the chasers remove a unit.",
  }[p.kind] || "Your choice:";
  const outcomes = fromLegal(screen, "after_removal");
  return h(
    "div",
    { id: "choice", class: "choice-box", dataset: { kind: p.kind } },
    h("h3", {}, intro),
    h(
      "div",
      { class: "button-row" },
      choices.map((a) => {
        const c = a.command;
        let label;
        if (c.type === "remove_unit") label = `Remove ${c.unit} (${BY_NAME[c.unit].strength})`;
        else if (c.type === "retreat") label = `Retreat to region ${c.region}${a.honor ? ` (Honor ${signed(a.honor)})` : ""}`;
        else label = p.kind === "leave_or_strike" ? "Stay and strike" : "Stay";
        const outcome = c.type === "remove_unit" && outcomes && c.unit in outcomes ? outcomes[c.unit] : null;
        const follows = outcome ? followsWords(outcome, c.unit, screen.seat, Boolean(m.combat)) : null;
        const id = `follows-${c.type}-${c.unit || c.region || "stay"}`;
        return h(
          "div",
          { class: "choice-item" },
          h("button", { type: "button", class: ["choice", `choice-${c.type}`], "data-focus-key": `choice:${c.type}:${c.unit || c.region || ""}`, "aria-describedby": follows ? id : null, dataset: { type: c.type, value: String(c.unit || c.region || "") }, onclick: () => screen.choose(a) }, label),
          follows ? h("span", { class: ["choice-follows", outcome.result ? "ends-game" : null], id, dataset: { eliminated: outcome.eliminated.join(","), result: outcome.result || "" } }, follows) : null,
        );
      }),
    ),
  );
}

/**
 * What follows a removal, from the rules' own outcome of it (`after_removal`, protocol.md): the
 * other units it eliminates (Thanatos takes his region with him), the leader who follows a
 * fallen one, the game's end, and else both sides' strengths in the next round or the combat's
 * end.
 */
function followsWords(outcome, unit, seat, inCombat) {
  const words = [];
  const others = outcome.eliminated.filter((u) => u !== unit);
  if (others.length) words.push(`Removing ${unit} also eliminates ${others.join(", ")}.`);
  if ("leader" in outcome) words.push(outcome.leader ? `${outcome.leader} leads your side now.` : "Your side has no leader left.");
  if (outcome.result) {
    words.push(outcome.result === "draw" ? "The game ends in a draw." : outcome.result === seat ? "You win the game." : "You lose the game.");
    return words.join(" ");
  }
  const after = outcome.strength;
  if (!after) {
    words.push(inCombat ? "Then the combat ends." : "Nothing else follows.");
    return words.join(" ");
  }
  const mine = after[seat];
  const enemy = after[enemyOf(seat)];
  const factor = mine.energy_factor !== 1 ? ` — ${mine.factor_powers.join(", ")}: your Energy counts × ${mine.energy_factor}` : "";
  words.push(`Then: your strength ${strengthWords(mine)}${factor}; theirs ${enemy.base}.`);
  return words.join(" ");
}

// The rules in short (#/rules): setup, a turn, Honor, Energy, the Styx, combat and its
// maneuvers, the powers, how to win. A summary for a first game, linked from the lobby and the
// game; the characters, maneuvers and the Honor table are the client's own lists (data.js),
// shown here as they are in the game.

import { h, replace } from "./dom.js";
import { CHARACTERS, FACTION_NAME, FACTIONS, HONOR_NOTE, HONOR_TABLE, MANEUVERS } from "./data.js";
import { setWhere } from "./ui.js";

const SECTIONS = [
  ["rules-goal", "How to win", [
    "The Chthonians win when Hades or Persephone, their leaders, stand in the Olympian Palace (region 35), even with Olympians there.",
    "The Olympians win when no Chthonian leader is left: Hades and Persephone eliminated (a Persephone left out of the setup counts as gone).",
    "A side whose Honor falls to 0 or below loses at once, even if it reached its goal in the same action; both at once: a draw.",
  ]],
  ["rules-setup", "Setup", [
    "Each side picks 9 of its 12 characters (its leader, Zeus or Hades, always plays) and places each alone in a region of its own realm: the Olympians in the Olympus (light blue), the Chthonians in the Underworld (dark grey). Both setups are sealed and revealed together.",
    "Each side then sees where the enemy's units stand, not who they are: they show as numbered tokens until revealed (in a combat, or by a power).",
    "Both sides start with 16 Honor and 24 Energy (Open Combat: 10 Honor). The Chthonians move first. With Random Setup the service places both sides.",
  ]],
  ["rules-turn", "A turn", [
    "A turn is one action: move one unit, or a group of units from one region, to a neighbouring region; or perform a Liturgy; or use a leader's power instead of moving (Zeus' thunderbolt, Hades' recall).",
    "At most 4 units of a side may stand in one region. A move into a region held by the enemy is an attack: a combat follows.",
    "At the start of your turn each enemy unit in your base (the Palace or Tartarus) costs you 1 Honor.",
  ]],
  ["rules-honor", "Honor", [
    "Honor measures your followers' devotion. Moving forward (the Chthonians up towards the Palace, the Olympians down towards Tartarus) costs nothing; moving backward costs 2; bold attacks earn Honor and cautious ones cost it. One action costs at most one move penalty: the largest applies.",
    "The game shows each action's Honor before you take it, and asks first when it costs Honor.",
  ]],
  ["rules-energy", "Energy", [
    "Energy adds to your strength in combat and pays for powers. A Liturgy gives 6 Energy for your whole turn and costs Honor (1 when you have no Energy left, else 2).",
    "In each combat round a side may commit up to 6 Energy per unit it has in the combat, never more than its stock; committed Energy is spent whatever happens.",
  ]],
  ["rules-styx", "The Styx", [
    "The river Styx runs between the Underworld and the Exterior World (the blue line on the board). A move across it costs 2 Energy, however many units cross.",
    "A revealed flier's flight crosses it for free, and so does Charon, revealed, with the Chthonians moving next to him. Retreats never cross it (except Charon alone).",
  ]],
  ["rules-combat", "Combat", [
    "A combat involves every unit of both sides in the region; all of them are revealed. Each round both sides choose a maneuver and an amount of Energy in secret; both are revealed together.",
    "Power = the strength of your units (after the powers) + the Energy committed, and then the maneuver's effect. The attacker wins ties. The loser usually removes one unit of its choice; rounds go on while both sides have units there.",
  ]],
  ["rules-powers", "Powers", [
    "Every character has a power (below). Some work by themselves (Hephaestus defending), some need the unit revealed (Charon's ferry, a flight), some are used instead of moving (the thunderbolt, the recall). Using a power reveals the unit.",
  ]],
];

export class RulesPage {
  constructor(root) {
    this.root = root;
  }

  start() {
    setWhere("The rules in short");
    replace(
      this.root,
      h(
        "article",
        { class: "panel rules-page", id: "rules-page" },
        h("h2", {}, "Storm over Olympus: the rules in short"),
        h("p", { class: "hint" }, "Two sides of hidden gods: the Olympians defend the Olympus, the Chthonians climb out of the Underworld to take it."),
        h("nav", { "aria-label": "Sections" }, h("ul", { class: "rules-toc" }, SECTIONS.map(([id, title]) => h("li", {}, h("a", { href: `#/rules/${id}`, onclick: (e) => jump(e, id) }, title))))),
        SECTIONS.map(([id, title, paragraphs]) =>
          h(
            "section",
            { id, "aria-labelledby": `${id}-title` },
            h("h3", { id: `${id}-title` }, title),
            paragraphs.map((p) => h("p", {}, p)),
            id === "rules-honor" ? honorTable() : null,
            id === "rules-combat" ? maneuvers() : null,
            id === "rules-powers" ? powers() : null,
          ),
        ),
        h("p", {}, h("a", { href: "#/", class: "button secondary" }, "Back to the lobby")),
      ),
    );
    const [, , section] = location.hash.split("/");
    if (section) document.getElementById(section)?.scrollIntoView();
  }

  stop() {}
}

function jump(event, id) {
  event.preventDefault();
  document.getElementById(id).scrollIntoView();
}

function honorTable() {
  return h(
    "div",
    {},
    h("table", { class: "rules-table" }, h("caption", {}, "What costs or earns Honor"), h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Action"), h("th", { scope: "col" }, "Honor"))), h("tbody", {}, HONOR_TABLE.map(([a, b]) => h("tr", {}, h("td", {}, a), h("td", {}, b))))),
    h("p", { class: "hint" }, HONOR_NOTE),
  );
}

function maneuvers() {
  return h("dl", { class: "rules-maneuvers" }, MANEUVERS.map((m) => [h("dt", {}, m.label), h("dd", {}, m.text)]));
}

function powers() {
  return FACTIONS.map((f) =>
    h(
      "table",
      { class: ["rules-table", `side-${f}`], dataset: { side: f } },
      h("caption", {}, `The ${FACTION_NAME[f]}`),
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Character"), h("th", { scope: "col" }, "Strength"), h("th", { scope: "col" }, "Power"))),
      h("tbody", {}, CHARACTERS.filter((c) => c.side === f).map((c) => h("tr", { dataset: { name: c.name } }, h("th", { scope: "row" }, c.name, c.leader ? " (leader)" : ""), h("td", {}, String(c.strength)), h("td", {}, c.power)))),
    ),
  );
}

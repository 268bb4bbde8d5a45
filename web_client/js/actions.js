// Turning a `legal` message into what the board offers: destinations for a selection of units,
// the variants of one move (fly, reveal a unit for its power, use a power, Hermes' steps), and the
// words for each. Every cost shown comes from the rules: the legal list, and for Hermes' steps
// beyond the first further one the server's answers to `steps` requests (game.js, `askSteps`).

import { BY_NAME, FACTION_NAME, byOrder } from "./data.js";
import { signed } from "./dom.js";

export const TURN_TYPES = new Set(["move", "liturgy", "pass", "thunderbolt", "recall"]);
export const CHOICE_TYPES = new Set(["remove_unit", "retreat", "stay"]);

function sameUnits(a, b) {
  if (a.length !== b.length) return false;
  const set = new Set(a);
  return b.every((x) => set.has(x));
}

export function isPlain(c) {
  return !c.fly && !(c.reveal && c.reveal.length) && !c.use_power && !(c.steps && c.steps.length);
}

/** The move actions of `selected` (names), without Hermes' extra steps. */
export function movesOf(legal, selected) {
  const names = [...selected];
  return legal.filter((a) => a.command.type === "move" && sameUnits(a.command.units, names) && !(a.command.steps && a.command.steps.length));
}

export function stepMovesOf(legal, selected) {
  const names = [...selected];
  return legal.filter((a) => a.command.type === "move" && sameUnits(a.command.units, names) && a.command.steps && a.command.steps.length);
}

/** Which of my units can move at all (to show what is selectable). */
export function movableUnits(legal) {
  const names = new Set();
  for (const a of legal) if (a.command.type === "move") for (const u of a.command.units) names.add(u);
  return names;
}

export function hasFlights(moves) {
  return moves.some((a) => a.command.fly);
}

/** Pick the variant a destination shows: the plain one, else the cheapest in Honor. */
export function primaryVariant(variants) {
  const plain = variants.find((a) => isPlain(a.command));
  if (plain) return plain;
  return [...variants].sort((a, b) => b.honor - a.honor || a.energy - b.energy)[0];
}

/** Destinations of a selection: Map(region → {variants, primary}). */
export function destinations(moves, { fly }) {
  const map = new Map();
  for (const a of moves) {
    if (a.command.fly && !fly) continue; // flights only in flight mode; walking always
    const to = a.command.to;
    if (!map.has(to)) map.set(to, { variants: [] });
    map.get(to).variants.push(a);
  }
  for (const d of map.values()) d.primary = primaryVariant(d.variants);
  return map;
}

export function costLine(honor, energyPaid) {
  const parts = [];
  parts.push(honor ? `Honor ${signed(honor)}` : "no Honor cost");
  if (energyPaid) parts.push(`Energy ${signed(-energyPaid)}`);
  return parts.join(", ");
}

/** Words for one move variant. */
export function describeVariant(a, model) {
  const c = a.command;
  const bits = [];
  if (c.fly) bits.push(`Fly${c.reveal && c.reveal.includes(c.units[0]) ? ` (reveals ${c.units[0]})` : ""}`);
  for (const r of c.reveal || []) {
    if (c.fly && r === c.units[0]) continue;
    if (r === "Charon") bits.push("Reveal Charon: cross the Styx for free");
    else if (r === "Dionysus") bits.push("Reveal Dionysus: his Honor penalty is 1 smaller");
    else bits.push(`Reveal ${r}`);
  }
  if (c.use_power) {
    // what it costs or gains is the action's own figures (the cost column), never restated here
    if (c.units[0] === "Demeter") bits.push("Use Demeter's drain (the Chthonians' Energy comes to you; reveals her)");
    else if (c.units[0] === "Erinyes") bits.push("Sneak attack (one Olympian dies without a combat, unless Hephaestus is there; reveals them)");
    else bits.push(`Use ${c.units[0]}'s power`);
  }
  if (c.steps && c.steps.length) bits.push(`then on to ${c.steps.join(" → ")}`);
  const enemies = model ? model.units.filter((u) => u.region === c.to && u.side !== sideOfUnits(c.units)).length : 0;
  const verb = enemies > 0 ? "Attack" : "Move to";
  if (!bits.length) bits.push(c.units.length > 1 ? `${verb} region ${c.to} with the group` : `${verb} region ${c.to}`);
  return { label: bits.join(" · "), cost: costLine(a.honor, a.energy), attack: enemies > 0, outcome: outcomeWords(a.outcome) };
}

/**
 * What a move's meeting at its destination does at once, in words, from the rules' own outcome
 * of it (`legal`'s `outcome`: Cronus meeting Zeus, Demeter meeting Persephone, a sneak attack);
 * "" when the rules list none (nothing happens at once, or it depends on a hidden unit).
 */
export function outcomeWords(outcome) {
  if (!outcome) return "";
  const words = [];
  if (outcome.eliminated.length) words.push(`Meeting there eliminates ${outcome.eliminated.join(", ")} at once.`);
  if (outcome.result) words.push(outcome.result === "draw" ? "The game ends in a draw." : `The ${FACTION_NAME[outcome.result]} win the game.`);
  return words.join(" ");
}

function sideOfUnits(units) {
  return BY_NAME[units[0]].side;
}

export function sortNames(names) {
  return [...names].sort(byOrder);
}

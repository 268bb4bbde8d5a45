// Events in plain words for the log, and the explanation of a resolved combat round.

import { FACTION_NAME, MANEUVER_NAME, END_REASON, PENDING_TEXT, enemyOf } from "./data.js";
import { decodeStep, unitLabel } from "./model.js";

function side(faction, seat) {
  if (seat && faction === seat) return "You";
  return `The ${FACTION_NAME[faction] || faction}`;
}

function list(units) {
  const labels = units.map(unitLabel);
  if (labels.length <= 1) return labels.join("");
  return `${labels.slice(0, -1).join(", ")} and ${labels[labels.length - 1]}`;
}

function region(r) {
  if (r === 0) return "Tartarus (0)";
  if (r === 35) return "the Palace (35)";
  return `region ${r}`;
}

const HONOR_REASON = {
  move: "for the move",
  attack: "for the attack",
  liturgy: "for the Liturgy",
  combat: "for the combat commitment",
  retreat: "for retreating",
  thunderbolt: "for the thunderbolt",
  base: "for enemies in the base",
  sneak_attack: "for the sneak attack",
};

const ENERGY_REASON = {
  styx: "to cross the Styx",
  liturgy: "from the Liturgy",
  combat: "committed in combat",
  recall: "for the recall",
  thunderbolt: "for the thunderbolt",
  hecate: "through Hecate",
  drain: "by Demeter's drain",
  poseidon: "from Poseidon",
  sneak_attack: "for the sneak attack",
};

function amount(delta, what) {
  return `${delta > 0 ? "gain" : "lose"} ${Math.abs(delta)} ${what}`;
}

/** One event as a sentence, from `seat`'s point of view (null: neutral). */
export function describe(e, seat = null) {
  switch (e.t) {
    case "game_created": {
      const variants = [];
      if (e.open_combat) variants.push("Open Combat");
      if (e.random_setup) variants.push("Random Setup");
      if (e.chthonian_honor) variants.push(`Challenge: Chthonians ${e.chthonian_honor > 0 ? "+" : ""}${e.chthonian_honor} Honor`);
      return `Game created${variants.length ? ` (${variants.join(", ")})` : ""}.`;
    }
    case "setup_submitted": {
      const who = side(e.faction, seat);
      return `${who} sealed ${who === "You" ? "your" : "their"} setup.`;
    }
    case "random_setup_drawn":
      return "The service drew both setups at random.";
    case "setup_revealed":
      return "Both setups are revealed: the positions are known, the identities are not.";
    case "turn_started":
      return `Turn ${e.number}: ${seat === e.faction ? "your move" : `the ${FACTION_NAME[e.faction]} move`}.`;
    case "honor_changed":
      return `${side(e.faction, seat)} ${amount(e.delta, "Honor")} ${HONOR_REASON[e.reason] || `(${e.reason})`}.`;
    case "energy_changed":
      return `${side(e.faction, seat)} ${amount(e.delta, "Energy")} ${ENERGY_REASON[e.reason] || `(${e.reason})`}.`;
    case "units_revealed":
      return `Revealed: ${list(e.units)}.`;
    case "units_hidden": {
      const named = e.units.filter((u) => typeof u === "string" || u.name).map(unitLabel);
      const unnamed = e.units.length - named.length;
      const who = [...named, ...(unnamed ? [`${unnamed} unit${unnamed > 1 ? "s" : ""}`] : [])];
      const where = e.units.some((u) => typeof u !== "string") ? ` in ${region(regionOf(e.units))}` : "";
      return `${who.length > 1 ? `${who.slice(0, -1).join(", ")} and ${who.at(-1)}` : who[0]}${where} went back into hiding (new tokens).`;
    }
    case "units_moved": {
      return `${side(e.faction, seat)} moved ${list(e.units)} from ${region(e.origin)} to ${region(e.destination)}${e.flight ? " (flying)" : ""}.`;
    }
    case "liturgy_performed": {
      return `${side(e.faction, seat)} performed a Liturgy.`;
    }
    case "passed":
      return `${side(e.faction, seat)} passed.`;
    case "thunderbolt_thrown":
      return `${e.thrower} threw a thunderbolt at ${region(e.region)}!`;
    case "unit_recalled":
      return `${e.leader} recalled ${e.unit} to Tartarus.`;
    case "leader_succeeded":
      if (e.leader) return `${e.leader} now leads the ${FACTION_NAME[e.faction]}.`;
      return `The ${FACTION_NAME[e.faction]} lost their leader.`;
    case "combat_started":
      return `Combat in ${region(e.region)}: the ${FACTION_NAME[e.attacker]} attack${e.origin === null ? " from the air" : ` from ${region(e.origin)}`}.`;
    case "combat_committed": {
      const who = side(e.faction, seat);
      if (e.maneuver) return `${who} committed ${MANEUVER_NAME[e.maneuver]} with ${e.energy} Energy (round ${e.round}).`;
      return `${who} committed (sealed), round ${e.round}.`;
    }
    case "commitment_withdrawn":
      return `${side(e.faction, seat)} may commit again (Aphrodite was revealed).`;
    case "combat_round_resolved": {
      const b = e.breakdown;
      const terms = b ? ` Power: Olympians ${strengthWords(b.olympians, b.olympians)}; Chthonians ${strengthWords(b.chthonians, b.chthonians)}.` : "";
      return `${explainRound(e).summary}${terms}`;
    }
    case "choice_pending": {
      if (!e.steps.length) return "";
      const step = decodeStep(e.steps[0]);
      const who = side(step.side, seat);
      return `${who} must ${PENDING_TEXT[step.kind] || step.kind}.`;
    }
    case "unit_eliminated":
      return `${e.unit} ${eliminationCause(e.cause)}.`;
    case "units_retreated":
      return `${side(e.faction, seat)} retreated ${list(e.units)} to ${region(e.destination)}.`;
    case "stayed_in_combat":
      return `${side(e.faction, seat)} stayed in the combat.`;
    case "combat_round_started":
      return `Combat round ${e.round} begins.`;
    case "combat_ended":
      return `The combat in ${region(e.region)} is over.`;
    case "clock_set":
      return "";
    case "deadline_missed":
      return `${side(e.faction, seat)} missed the ${e.kind} deadline: the service acted for them.`;
    case "game_ended": {
      if (e.result === "aborted") return "Game aborted — no result: the game was called off before both sides had moved.";
      if (e.reason === "resignation") return `${side(enemyOf(e.result), seat)} resigned: the ${FACTION_NAME[e.result]} win.`;
      const winner = e.result === "draw" ? "The game is a draw" : `The ${FACTION_NAME[e.result]} win`;
      return `${winner}: ${END_REASON[e.reason] || e.reason}.`;
    }
    default:
      return `${e.t}`;
  }
}

function regionOf(units) {
  const first = units.find((u) => typeof u !== "string");
  return first ? first.region : "?";
}

function eliminationCause(cause) {
  switch (cause) {
    case "remove":
      return "was eliminated in combat";
    case "struck":
      return "was killed by the thunderbolt";
    case "all_out_attack":
      return "fell in the All-out Attack";
    case "thanatos":
      return "died with Thanatos";
    case "cronus":
      return "was eliminated by Cronus";
    case "demeter":
      return "left the game (Demeter met Persephone)";
    default:
      return `was eliminated (${cause})`;
  }
}

/** A resolved round: who chose what, the powers, the winner and what happens now. */
export function explainRound(e, attacker = null) {
  const o = { maneuver: e.olympian_maneuver, energy: e.olympian_energy, power: e.olympian_power };
  const c = { maneuver: e.chthonian_maneuver, energy: e.chthonian_energy, power: e.chthonian_power };
  const choices = `Olympians: ${MANEUVER_NAME[o.maneuver]}, ${o.energy} Energy (power ${o.power}) · Chthonians: ${MANEUVER_NAME[c.maneuver]}, ${c.energy} Energy (power ${c.power})`;
  const lines = [];
  const by = { olympians: o, chthonians: c };
  if (!e.winner) {
    const retreating = ["olympians", "chthonians"].filter((f) => by[f].maneuver === "retreat");
    if (retreating.length === 2) lines.push("Both sides retreat: the defender chooses its region first; nobody dies.");
    else if (retreating.length === 1) lines.push(`The ${FACTION_NAME[retreating[0]]} retreat: nobody dies (the other side's Energy is spent all the same).`);
    else lines.push("Nobody fought this round.");
  } else {
    const w = e.winner;
    const l = w === "olympians" ? "chthonians" : "olympians";
    const tie = by[w].power === by[l].power;
    lines.push(`The ${FACTION_NAME[w]} win the round, ${by[w].power} against ${by[l].power}${tie ? " (ties go to the attacker)" : ""}.`);
    if (by[l].maneuver === "retreat" && by[w].maneuver === "chase") {
      lines.push(`The chase caught the ${FACTION_NAME[l]}: they remove one unit, and the rest may leave.`);
    } else if (by[w].maneuver === "retreat" && by[l].maneuver === "chase") {
      lines.push(`The ${FACTION_NAME[w]} beat the chase: they may leave, or stay and make the chasers remove a unit.`);
    } else if (by[w].maneuver === "all_out_attack" && by[l].maneuver === "all_out_attack") {
      lines.push("Both attacked all-out: every unit in the combat is eliminated.");
    } else if (by[w].maneuver === "all_out_defense") {
      lines.push("All-out Defense won: nobody dies and another round follows.");
    } else if (by[l].maneuver === "all_out_attack") {
      lines.push(`The All-out Attack failed: all ${FACTION_NAME[l]} units in the combat die.`);
    } else {
      lines.push(`The ${FACTION_NAME[l]} remove one unit of their choice.`);
      if (by[w].maneuver === "all_out_attack" && by[l].maneuver !== "all_out_defense") {
        lines.push(`The ${FACTION_NAME[w]} attacked all-out: all their units in the combat die at the end of the round.`);
      }
    }
  }
  // what the commitments cost in Honor, as the rules charged it (their honor_changed events,
  // folded into the round by model.js); not known yet while the round's own line is written
  for (const f of ["olympians", "chthonians"]) {
    const honor = e.honor && e.honor[f];
    if (honor) lines.push(`${FACTION_NAME[f]}: Honor ${honor < 0 ? "−" : "+"}${Math.abs(honor)} for their commitment.`);
  }
  return { summary: `Round ${e.round} resolved — ${choices}. ${lines[0] || ""}`, choices, lines, attacker };
}

function signedTerm(value) {
  return `${value < 0 ? "−" : "+"} ${Math.abs(value)}`;
}

/**
 * A side's strength or power term by term, in words, from the rules' own breakdown
 * (combat.Strength.to_dict, protocol.md "Combat strength"): "Ares 3 + 2 Energy × 2 (Ares) = 7".
 * Without `commit` it ends at the base strength. `commit` is {maneuver, energy} and `total` the
 * power the rules give for it (in a resolved round, `commit.power`); nothing is added up here.
 */
export function strengthWords(t, commit = null, total = null) {
  const changed = new Map();
  for (const a of t.adjustments) changed.set(a.unit, [...(changed.get(a.unit) || []), `${a.power} ${signedTerm(a.delta).replace(" ", "")}`]);
  let text = t.units.map((u, i) => `${i ? "+ " : ""}${u.unit} ${u.strength}${changed.has(u.unit) ? ` (${changed.get(u.unit).join(", ")})` : ""}`).join(" ");
  for (const b of t.bonuses) text += ` ${signedTerm(b.value)} (${b.power}${b.adjacent ? " next door" : ""})`;
  if (!commit) return `${text || "0"} = ${t.base}`;
  if (commit.energy) text += ` + ${commit.energy} Energy${t.energy_factor !== 1 ? ` × ${t.energy_factor} (${t.factor_powers.join(", ")})` : ""}`;
  if (commit.maneuver === "chase") text += ` ${signedTerm(t.chase)} (Chase${t.chase_power ? `: ${t.chase_power}` : ""})`;
  if (commit.maneuver === "all_out_attack" || commit.maneuver === "all_out_defense") text = `(${text}) × 2 (${MANEUVER_NAME[commit.maneuver]})`;
  return `${text} = ${total ?? commit.power}`;
}

/** A span of time in words: "45 s", "10 min", "5 h 30 min", "3 days". */
export function duration(seconds) {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.round(s / 60)} min`;
  if (s < 86400) {
    const h = Math.floor(s / 3600);
    const min = Math.round((s % 3600) / 60);
    return min ? `${h} h ${min} min` : `${h} h`;
  }
  const days = Math.floor(s / 86400);
  const h = Math.round((s % 86400) / 3600);
  return `${days} day${days > 1 ? "s" : ""}${h ? ` ${h} h` : ""}`;
}

/** How long ago a time of the server's clock (ms) was: "just now", "5 min ago", "2 days ago". */
export function ago(ms, now = Date.now()) {
  const seconds = (now - ms) / 1000;
  return seconds < 60 ? "just now" : `${duration(seconds)} ago`;
}

// Static game data: the 24 characters (R1), powers in one line each, maneuvers, the Honor table,
// and the board (data/board.json, a copy of service/olympus/data/board.json checked by a test).

export const FACTIONS = ["olympians", "chthonians"];
export const FACTION_NAME = { olympians: "Olympians", chthonians: "Chthonians" };
export const LEADER = { olympians: "Zeus", chthonians: "Hades" };
export const BASE = { olympians: 35, chthonians: 0 };
export const REALM_OF = { olympians: "olympus", chthonians: "underworld" };
export const REALM_NAME = { underworld: "Underworld", exterior: "Exterior world", olympus: "Olympus" };
export const TARTARUS = 0;
export const PALACE = 35;

export function enemyOf(side) {
  return side === "olympians" ? "chthonians" : "olympians";
}

const O = "olympians";
const C = "chthonians";

// name, side, strength, short label, flags, power
export const CHARACTERS = [
  ["Zeus", O, 5, "Zeus", "male leader", "Leader. Instead of moving, throws a thunderbolt at an adjacent region with enemies outside the Underworld (6 Energy, 1 Honor); the Chthonians choose who dies."],
  ["Hera", O, 2, "Hera", "", "+3 strength for each other Olympian in her combat. Leads and throws thunderbolts once Zeus is gone."],
  ["Athena", O, 3, "Athena", "", "In round 1 of a combat, sees the opponent's commitment before choosing hers."],
  ["Aphrodite", O, 1, "Aphrod.", "", "In combat: male comrades +2 each, male enemies −3 each. Revealed next to a combat: +2 to each male Olympian in it."],
  ["Dionysus", O, 3, "Dionys.", "male", "Acting alone and revealed, each of his Honor penalties is 1 smaller (not below 0)."],
  ["Apollo", O, 3, "Apollo", "male flier", "Flies to any region once revealed (free over the Styx). Doubles every Honor penalty of an action he is revealed in."],
  ["Hermes", O, 3, "Hermes", "male", "Moving alone, may keep taking single steps until he enters an occupied region. His Chase stops Persephone's retreat."],
  ["Ares", O, 3, "Ares", "male", "Fighting alone, every Energy point he commits counts double."],
  ["Poseidon", O, 5, "Poseidon", "male", "A move that starts and ends next to the Styx gives the Olympians +2 Energy."],
  ["Artemis", O, 3, "Artemis", "", "Chase gives her group +2 instead of −3."],
  ["Hephaestus", O, 3, "Hephaes.", "male", "+5 strength when the Olympians defend. Cancels an Erinyes sneak attack on his region."],
  ["Demeter", O, 2, "Demeter", "", "Ending her move alone in an empty Underworld region, may drain 3 Energy from the Chthonians. Meeting Persephone eliminates both."],
  ["Hades", C, 5, "Hades", "male leader", "Leader. Instead of moving, recalls an eliminated comrade to Tartarus (10 Energy). In the Palace, the Chthonians win."],
  ["Persephone", C, 2, "Perseph.", "", "Alone, she may always retreat, in any direction (unless Hermes chases). Leads when Hades falls; in the Palace she wins."],
  ["Cerberus", C, 5, "Cerberus", "", "Alone he must Chase. Thunderbolts cannot kill him."],
  ["Cronus", C, 6, "Cronus", "male", "Meeting Zeus in a region eliminates Zeus at once."],
  ["Hecate", C, 2, "Hecate", "", "Energy the Olympians commit in her combat round also goes to the Chthonians; a thunderbolt on her region gives them 6 Energy."],
  ["Hypnos", C, 2, "Hypnos", "male", "Every other unit in his combat has nominal strength 0."],
  ["Erinyes", C, 3, "Erinyes", "", "Attacking alone, may sneak attack (2 Energy, 1 Honor): one Olympian dies, no combat. Alone, may not Retreat or All-out Defend."],
  ["Moirae", C, 2, "Moirae", "", "In their combat, the Chthonians may commit their whole Energy stock, and more than 4 Energy costs no Honor."],
  ["Harpies", C, 2, "Harpies", "flier", "Fly to any region once revealed (free over the Styx)."],
  ["Thanatos", C, 4, "Thanatos", "male", "When he is eliminated in combat, every other unit in that region dies too."],
  ["Charon", C, 2, "Charon", "male", "Crosses the Styx for free; revealed next to the Styx, ferries nearby comrades for free; alone, may retreat across it."],
  ["Nyx", C, 3, "Nyx", "", "Fighting alone, the Olympians' Energy limit counts one unit fewer."],
].map(([name, side, strength, short, flags, power], order) => ({
  name,
  side,
  strength,
  short,
  male: flags.includes("male"),
  flier: flags.includes("flier"),
  leader: flags.includes("leader"),
  power,
  order,
}));

export const BY_NAME = Object.fromEntries(CHARACTERS.map((c) => [c.name, c]));
export const ROSTER = {
  olympians: CHARACTERS.filter((c) => c.side === O).map((c) => c.name),
  chthonians: CHARACTERS.filter((c) => c.side === C).map((c) => c.name),
};

export function sideOf(name) {
  return BY_NAME[name] ? BY_NAME[name].side : null;
}

export function byOrder(a, b) {
  return BY_NAME[a].order - BY_NAME[b].order;
}

export const MANEUVERS = [
  ["standard", "Standard", "Base strength + Energy; the loser removes one unit. Ties go to the attacker."],
  ["retreat", "Retreat", "Leave to an adjacent region (−2 Honor); nobody dies — unless the enemy chases."],
  ["chase", "Chase", "−3 power (Artemis: +2), but an enemy Retreat becomes a fight."],
  ["all_out_attack", "All-out Attack", "−2 Honor, power doubled; all your units die at the end of the round, unless the enemy retreats or defends all-out."],
  ["all_out_defense", "All-out Defense", "−2 Honor, power doubled; if you win nobody dies and another round follows."],
].map(([id, label, text]) => ({ id, label, text }));

export const MANEUVER_NAME = Object.fromEntries(MANEUVERS.map((m) => [m.id, m.label]));

export const HONOR_TABLE = [
  ["Move forward, alone or joining friends", "0"],
  ["Move a group of n forward", "−(n−1)"],
  ["Move backward (or sideways without enemy), 1–3 units", "−2"],
  ["Move backward, 4 units", "−3"],
  ["Attack more defenders (each extra defender)", "+2"],
  ["Attack with more attackers (each extra attacker)", "−2"],
  ["Attack an equal group forward (or in your own base)", "0"],
  ["Attack an equal group backward", "−1"],
  ["Open Combat: attack an equal group", "+1"],
  ["Retreat from a combat", "−2"],
  ["All-out Attack or All-out Defense", "−2"],
  ["More than 4 Energy in a combat round", "−1"],
  ["Liturgy (+6 Energy)", "−2 (−1 at 0 Energy)"],
  ["Thunderbolt (6 Energy)", "−1"],
  ["Each enemy unit in your base at the start of your turn", "−1"],
  ["Apollo revealed in the action", "penalty ×2"],
  ["Dionysus alone and revealed", "penalty −1"],
];
export const HONOR_NOTE = "One decision costs at most one move penalty: the largest applies. Honor ≤ 0 loses at once.";

export const PENDING_TEXT = {
  remove: "remove a unit",
  struck: "choose the unit the thunderbolt kills",
  retreat: "choose where to retreat",
  leave_or_stay: "choose: leave (retreat) or stay",
  leave_or_strike: "choose: leave, or stay and strike",
  annihilate: "lose every unit in the combat",
  withdraw: "withdraw",
};

export const END_REASON = {
  both_out_of_honor: "both sides ran out of Honor",
  olympians_out_of_honor: "the Olympians ran out of Honor",
  chthonians_out_of_honor: "the Chthonians ran out of Honor",
  leader_in_palace: "a Chthonian leader reached the Olympian Palace",
  chthonian_leaders_gone: "no Chthonian leader is left",
  forfeit: "a player was absent too long (forfeit)",
  resignation: "a player resigned",
  abort: "a player aborted the game before both sides had moved",
};

/**
 * A finished game's result in words: the winners, a draw, who resigned (`result` is then the
 * winners), or an abort, which names nobody ("Game aborted — no result").
 */
export function resultText(result, reason) {
  if (result === "aborted") return "Game aborted — no result";
  if (result === "draw") return "A draw";
  if (reason === "resignation") return `The ${FACTION_NAME[enemyOf(result)]} resigned`;
  return `The ${FACTION_NAME[result]} win`;
}

// --- the board -------------------------------------------------------------------------------

let boardPromise = null;

export function loadBoard() {
  if (!boardPromise) {
    boardPromise = fetch(new URL("../data/board.json", import.meta.url))
      .then((r) => {
        if (!r.ok) throw new Error(`board.json: HTTP ${r.status}`);
        return r.json();
      })
      .then(buildBoard);
  }
  return boardPromise;
}

export function buildBoard(raw) {
  const regions = [...raw.regions].sort((a, b) => a.id - b.id);
  const styx = new Set(raw.styx_edges.map(([a, b]) => edgeKey(a, b)));
  const neighbours = regions.map((r) => new Set(r.neighbours));
  return {
    regions,
    styxEdges: raw.styx_edges,
    bridge: raw.bridge,
    neighbours,
    realm: (id) => regions[id].realm,
    level: (id) => regions[id].level,
    adjacent: (a, b) => neighbours[a].has(b),
    crossesStyx(a, b) {
      const ua = regions[a].realm === "underworld";
      const ub = regions[b].realm === "underworld";
      return ua !== ub && (styx.has(edgeKey(a, b)) || !neighbours[a].has(b));
    },
    realmRegions: (realm) => regions.filter((r) => r.realm === realm).map((r) => r.id),
  };
}

function edgeKey(a, b) {
  return a < b ? `${a}-${b}` : `${b}-${a}`;
}

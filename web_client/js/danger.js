// "The enemy may win on its next move": what an action of the seat's turn leaves open to the
// enemy, foreseen from the seat's own view only (its model: where the enemy's tokens stand, which
// of them are revealed, the eliminated units, Honor and Energy; and the board's adjacency). A
// hidden enemy token may be any enemy character not known to be elsewhere: nothing here depends
// on what the seat does not know (R7). The exact semantics are in docs/client.md ("Honor").

import { BASE, PALACE, REALM_OF, enemyOf } from "./data.js";

const STACK_LIMIT = 4; // R6
const CHTHONIAN_LEADERS = ["Hades", "Persephone"];
const FLIER = { olympians: "Apollo", chthonians: "Harpies" };
const BASE_NAME = { olympians: "the Palace", chthonians: "Tartarus" };

/**
 * Whether enemy unit `u` may be one of `names`: its name if revealed, else any of them that is
 * neither eliminated nor revealed elsewhere on the board.
 */
function mayBe(m, u, names) {
  return possible(m, u, names).length > 0;
}

/** Which of `names` enemy unit `u` may be (see mayBe). */
function possible(m, u, names) {
  if (u.name) return names.filter((n) => n === u.name);
  const known = new Set([...m.eliminated, ...m.units.filter((x) => x.side === u.side && x.name).map((x) => x.name)]);
  return names.filter((n) => !known.has(n));
}

function label(u) {
  return u.name ? `${u.name} in region ${u.region}` : `token #${u.token} in region ${u.region}`;
}

function maybeWord(m, u, names) {
  return u.name ? "" : ` (it may be ${possible(m, u, names).join(" or ")})`;
}

/**
 * The position after `action` (a legal action of the seat's turn) as the seat can foresee it:
 * its own units moved (or recalled), the enemy's where they stand, less those the action
 * engages: the units of a region it attacks (a combat decides their fate) and, for a
 * thunderbolt, the struck region's units (a lone unit dies unless it may be Cerberus; of several,
 * the enemy chooses one, so one fewer stands there but any of them may be the survivor).
 */
function foresee(m, seat, action) {
  const c = action.command;
  const enemy = enemyOf(seat);
  const units = m.units.map((u) => ({ ...u }));
  let engaged = null;
  let struck = null;
  if (c.type === "move") {
    const to = c.steps && c.steps.length ? c.steps.at(-1) : c.to;
    if (units.some((u) => u.side === enemy && u.region === to)) engaged = to;
    for (const u of units) if (u.side === seat && c.units.includes(u.name)) u.region = to;
  } else if (c.type === "thunderbolt") {
    struck = c.region;
  } else if (c.type === "recall") {
    units.push({ side: seat, token: -1, region: BASE.chthonians, name: c.unit });
  }
  const free = units.filter((u) => !(u.side === enemy && u.region === engaged));
  // enemy units per region (a thunderbolt takes one, see above)
  const enemyCount = (r) => {
    const here = free.filter((u) => u.side === enemy && u.region === r);
    if (r !== struck) return here.length;
    if (here.length === 1 && mayBe(m, here[0], ["Cerberus"])) return 1;
    return Math.max(0, here.length - 1);
  };
  // the enemy units that stay free to act (a lone struck unit is gone, or is Cerberus)
  const loneStruck = free.filter((u) => u.side === enemy && u.region === struck).length === 1;
  const threats = free.filter((u) => u.side === enemy && !(loneStruck && u.region === struck));
  return { units, free, threats, engaged, enemyCount, honor: m.honor[seat] + action.honor };
}

/** A: a Chthonian leader reaches the Palace (the Olympians' danger). */
function palaceThreats(board, m, after) {
  if (after.enemyCount(PALACE) + 1 > STACK_LIMIT) return [];
  return after.threats
    .filter((u) => board.neighbours[u.region].has(PALACE) && mayBe(m, u, CHTHONIAN_LEADERS))
    .map((u) => `The enemy may win on its next move: ${label(u)}${maybeWord(m, u, CHTHONIAN_LEADERS)} can enter the Palace, and a Chthonian leader in the Palace wins.`);
}

/** B: enough enemy units in the seat's base that the penalty at the start of its next turn ends it. */
function baseThreat(board, m, seat, after) {
  const base = BASE[seat];
  const enemy = enemyOf(seat);
  const honor = after.honor;
  if (honor <= 0) return []; // the action itself loses: said already
  const already = after.enemyCount(base);
  const room = STACK_LIMIT - already;
  let more = 0;
  let how = "";
  if (room > 0) {
    // a group from a neighbouring region (all of a region's units may move together)
    for (const r of board.neighbours[base]) {
      const n = Math.min(after.enemyCount(r), room);
      if (n > more) {
        more = n;
        how = `${n} from region ${r}`;
      }
    }
    const lone = after.threats.filter((u) => u.region !== base);
    if (!more) {
      // a flier alone, from anywhere
      const flier = lone.find((u) => mayBe(m, u, [FLIER[enemy]]));
      if (flier) {
        more = 1;
        how = `${label(flier)}${maybeWord(m, flier, [FLIER[enemy]])} by flight`;
      }
    }
    if (!more && enemy === "olympians") {
      // Hermes alone: single steps through empty regions until he meets anyone (R3)
      const hermes = lone.find((u) => mayBe(m, u, ["Hermes"]) && hermesReaches(board, after, u.region, base));
      if (hermes) {
        more = 1;
        how = `${label(hermes)}${maybeWord(m, hermes, ["Hermes"])}, walking on through empty regions`;
      }
    }
  }
  const total = already + more;
  if (!total || honor - total > 0) return [];
  const parts = [];
  if (already) parts.push(`${already} enemy unit${already > 1 ? "s are" : " is"} in ${BASE_NAME[seat]}`);
  if (more) parts.push(`${more > 1 ? `${more} more` : "one more"} can come in (${how})`);
  return [
    `The enemy can make you lose on its next move: ${parts.join(" and ")}; at the start of your next turn each enemy unit in your base costs you 1 Honor: Honor ${honor} → ${honor - total}.`,
  ];
}

/** Whether Hermes, from `from`, can walk into `base` this move (every region he passes is empty). */
function hermesReaches(board, after, from, base) {
  const occupied = new Set(after.free.map((u) => u.region));
  const seen = new Set([from]);
  let frontier = [from];
  while (frontier.length) {
    const next = [];
    for (const r of frontier) {
      if (board.neighbours[r].has(base)) return true;
      for (const n of board.neighbours[r]) {
        if (seen.has(n) || occupied.has(n)) continue; // he would stop there
        seen.add(n);
        next.push(n);
      }
    }
    frontier = next;
  }
  return false;
}

/** C: the Chthonians' last leader eliminated (the Chthonians' danger): a thunderbolt or Demeter. */
function lastLeaderThreats(board, m, seat, after, action) {
  const leaders = after.units.filter((u) => u.side === seat && CHTHONIAN_LEADERS.includes(u.name));
  if (leaders.length !== 1) return [];
  const leader = leaders[0];
  const r = leader.region;
  const out = [];
  const c = action.command;
  if (r === after.engaged) {
    // attacking: a meeting with Demeter comes before any fight
    if (leader.name === "Persephone" && c.type === "move" && c.units.includes("Persephone")) {
      const demeter = m.units.find((u) => u.side !== seat && u.region === r && mayBe(m, u, ["Demeter"]));
      if (demeter) out.push(`This attack may lose the game at once: if ${label(demeter)} is Demeter, she and Persephone, your last leader, are both eliminated.`);
    }
    return out;
  }
  const near = after.threats.filter((u) => board.neighbours[r].has(u.region));
  const alone = after.units.filter((u) => u.side === seat && u.region === r).length === 1;
  const thrower = !m.eliminated.includes("Zeus") ? ["Zeus"] : !m.eliminated.includes("Hera") ? ["Hera"] : [];
  if (alone && thrower.length && board.realm(r) !== REALM_OF.chthonians && m.energy.olympians >= 6) {
    const zeus = near.find((u) => mayBe(m, u, thrower));
    if (zeus) out.push(`The enemy may win on its next move: ${label(zeus)}${maybeWord(m, zeus, thrower)} can throw a thunderbolt at ${leader.name}, your last leader, alone in region ${r}.`);
  }
  if (leader.name === "Persephone" && !m.eliminated.includes("Demeter")) {
    const demeter = near.find((u) => mayBe(m, u, ["Demeter"]));
    if (demeter) out.push(`The enemy may win on its next move: ${label(demeter)}${maybeWord(m, demeter, ["Demeter"])} can meet Persephone, your last leader, in region ${r}, and both are eliminated.`);
  }
  return out;
}

/**
 * What the enemy may do to win after `action` (one of the seat's turn), in plain words: a list of
 * sentences, each naming the danger ("The enemy may win on its next move: …", "The enemy can make
 * you lose on its next move: …", "This attack may lose the game at once: …"); empty when nothing
 * is foreseen. `board` is data.js's board.
 */
export function enemyWinWarnings(board, m, seat, action) {
  if (!seat || !m || m.phase === "over") return [];
  const after = foresee(m, seat, action);
  const found = [];
  if (seat === "olympians") found.push(...palaceThreats(board, m, after));
  else found.push(...lastLeaderThreats(board, m, seat, after, action));
  found.push(...baseThreat(board, m, seat, after));
  return found;
}

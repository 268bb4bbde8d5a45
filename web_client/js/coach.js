// The coach (bots.md, "The coach"): a finished game's analysis drawn over the replay (a graph of
// the Olympians' chance, the marked moves), and the words for a command the search prefers.

import { api } from "./api.js";
import { FACTION_NAME } from "./data.js";

const SVG = "http://www.w3.org/2000/svg";
const MANEUVER = { standard: "Standard", chase: "Chase", retreat: "Retreat", all_out_defense: "All-out Defense", all_out_attack: "All-out Attack" };
export const MARK_TEXT = { mistake: "Mistake", blunder: "Blunder" };

/** A command as a client sends it, in words. */
export function commandLabel(c) {
  if (!c) return "";
  switch (c.type) {
    case "move": {
      const path = [c.to, ...(c.steps || [])].join(" → ");
      const reveal = c.reveal && c.reveal.length ? `, revealing ${c.reveal.join(", ")}` : "";
      return `${c.fly ? "Fly" : "Move"} ${c.units.join(", ")} to region ${path}${reveal}${c.use_power ? ", using its power" : ""}`;
    }
    case "commit":
      return `Commit ${MANEUVER[c.maneuver] || c.maneuver} with ${c.energy} Energy${c.reveal && c.reveal.length ? `, revealing ${c.reveal.join(", ")}` : ""}`;
    case "liturgy":
      return "Perform the Liturgy";
    case "pass":
      return "Pass";
    case "thunderbolt":
      return `Thunderbolt on region ${c.region}`;
    case "recall":
      return `Recall ${c.unit}`;
    case "remove_unit":
      return `Remove ${c.unit}`;
    case "retreat":
      return `Retreat to region ${c.region}`;
    case "stay":
      return "Stay in the combat";
    default:
      return c.type;
  }
}

const pct = (x) => `${Math.round(x * 100)} %`;

/** The analysis once it is made: asks again after each 202 (its Retry-After), at most `tries`. */
export async function fetchAnalysis(room, { tries = 60, onPending = () => {} } = {}) {
  for (let i = 0; i < tries; i++) {
    const reply = await api.analysis(room);
    if (reply.status === 200) return reply.body;
    onPending();
    await new Promise((r) => setTimeout(r, 1000 * Math.min(5, reply.retryAfter || 2)));
  }
  return null;
}

function svg(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  for (const c of children) if (c) el.append(typeof c === "string" ? document.createTextNode(c) : c);
  return el;
}

/** A point's words, for its label and its tooltip. */
export function moveWords(mv) {
  const mark = mv.mark ? `${MARK_TEXT[mv.mark]}: ` : "";
  return `${mark}turn ${mv.turn}, the ${FACTION_NAME[mv.seat]}: ${commandLabel(mv.played)}. The Olympians' chance ${pct(mv.olympians_before)} before, ${pct(mv.olympians_after)} after.`;
}

/** The graph of the Olympians' chance over the turns: one focusable point per judged command
 * (Enter or a click calls `onPick(index)`), the marked ones drawn larger. */
export function winChart(analysis, onPick) {
  const moves = analysis.moves;
  const W = 640, H = 180, PAD = 28;
  const turns = Math.max(1, ...moves.map((m) => m.turn));
  const x = (i) => {
    const m = moves[i];
    const same = moves.filter((o) => o.turn === m.turn);
    return PAD + ((m.turn - 1 + (same.indexOf(m) + 0.5) / same.length) / turns) * (W - 2 * PAD);
  };
  const y = (v) => H - PAD - v * (H - 2 * PAD);
  const chart = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: "win-chart", id: "win-chart", role: "group", "aria-label": "The Olympians' chance to win over the game, by the coach" });
  chart.append(svg("title", {}, "The Olympians' chance to win, turn by turn"));
  chart.append(svg("line", { x1: PAD, x2: W - PAD, y1: y(0.5), y2: y(0.5), class: "win-chart-mid" }));
  for (const v of [0, 0.5, 1]) chart.append(svg("text", { x: 2, y: y(v) + 4, class: "win-chart-axis" }, `${v * 100}%`));
  const step = Math.max(1, Math.ceil(turns / 10));
  for (let t = 1; t <= turns; t += step) chart.append(svg("text", { x: PAD + ((t - 0.5) / turns) * (W - 2 * PAD), y: H - 6, class: "win-chart-axis", "text-anchor": "middle" }, String(t)));
  chart.append(svg("text", { x: W - PAD, y: H - 6, class: "win-chart-axis", "text-anchor": "end" }, "turn"));
  if (moves.length) {
    const d = moves.map((m, i) => `${i ? "L" : "M"}${x(i).toFixed(1)},${y(m.olympians_after).toFixed(1)}`).join(" ");
    chart.append(svg("path", { d, class: "win-chart-line" }));
  }
  moves.forEach((m, i) => {
    const point = svg("circle", { cx: x(i).toFixed(1), cy: y(m.olympians_after).toFixed(1), r: m.mark ? 6 : 3.5, class: ["win-point", `side-${m.seat}`, m.mark ? `mark-${m.mark}` : ""].join(" ").trim(), tabindex: 0, role: "button", "aria-label": moveWords(m), "data-move": i });
    point.append(svg("title", {}, moveWords(m)));
    point.addEventListener("click", () => onPick(i));
    point.addEventListener("keydown", (e) => {
      if (e.key === "Enter" || e.key === " ") {
        e.preventDefault();
        e.stopPropagation();
        onPick(i);
      }
    });
    chart.append(point);
  });
  return chart;
}

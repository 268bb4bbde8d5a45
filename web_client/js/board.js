// The board in SVG: flat-topped hexes in 5 columns (board.md), the Palace on top, Tartarus at the
// bottom, realms filled with a colour AND a pattern and labelled, the Styx with its dry way, units
// as chips (own: name and strength; enemy: token number, or name once revealed).

import { s, activatable, signed } from "./dom.js";
import { BY_NAME, FACTION_NAME, REALM_NAME } from "./data.js";
import { boardIcon } from "./icons.js";

const R = 52;
const DX = R * 1.5;
const DY = (R * Math.sqrt(3)) / 2;
const ML = 84; // left margin: realm bands
const BASE_W = 250;
const BASE_H = 74;
const PEDIMENT = 14; // the Palace's roof rises above its box
const MT = 8 + PEDIMENT + BASE_H / 2 + 2 * DY; // top margin: the whole Palace, roof included
const WIDTH = ML + 2 * R + 4 * DX + 80;
const HEIGHT = MT + 16 * DY + 10 + BASE_H / 2 + 8; // down to Tartarus' floor

export function center(board, id) {
  const r = board.regions[id];
  if (r.column === null) {
    return { x: ML + R + 2 * DX, y: id === 0 ? MT + 16 * DY + 10 : MT - 2 * DY };
  }
  return { x: ML + R + r.column * DX, y: MT + (14 - r.level) * DY };
}

function levelY(level) {
  return MT + (14 - level) * DY;
}

function hexPoints(c, radius = R) {
  const pts = [];
  for (let i = 0; i < 6; i += 1) {
    const a = (Math.PI / 3) * i;
    pts.push(`${(c.x + radius * Math.cos(a)).toFixed(1)},${(c.y + radius * Math.sin(a)).toFixed(1)}`);
  }
  return pts.join(" ");
}

function baseShape(board, id, attrs) {
  const c = center(board, id);
  const x0 = c.x - BASE_W / 2;
  const y0 = c.y - BASE_H / 2;
  if (id === 35) {
    // a temple: a pediment over a hall
    const d = `M${x0},${y0 + 18} L${c.x},${y0 - PEDIMENT} L${x0 + BASE_W},${y0 + 18} L${x0 + BASE_W},${y0 + BASE_H} L${x0},${y0 + BASE_H} Z`;
    return s("path", { d, ...attrs });
  }
  // a pit with rounded bottom
  const d = `M${x0},${y0} L${x0 + BASE_W},${y0} L${x0 + BASE_W},${y0 + BASE_H - 28} Q${x0 + BASE_W},${y0 + BASE_H} ${x0 + BASE_W - 40},${y0 + BASE_H} L${x0 + 40},${y0 + BASE_H} Q${x0},${y0 + BASE_H} ${x0},${y0 + BASE_H - 28} Z`;
  return s("path", { d, ...attrs });
}

function regionShape(board, id, attrs) {
  if (board.regions[id].column === null) return baseShape(board, id, attrs);
  return s("polygon", { points: hexPoints(center(board, id)), ...attrs });
}

function edge(board, a, b) {
  const ca = center(board, a);
  const cb = center(board, b);
  const mx = (ca.x + cb.x) / 2;
  const my = (ca.y + cb.y) / 2;
  const len = Math.hypot(cb.x - ca.x, cb.y - ca.y);
  const px = -(cb.y - ca.y) / len;
  const py = (cb.x - ca.x) / len;
  return { x1: mx + (px * R) / 2, y1: my + (py * R) / 2, x2: mx - (px * R) / 2, y2: my - (py * R) / 2 };
}

function defs() {
  const pattern = (id, bg, body, extra = {}) =>
    s("pattern", { id, width: 12, height: 12, patternUnits: "userSpaceOnUse", ...extra }, s("rect", { width: 12, height: 12, fill: bg }), body);
  return s(
    "defs",
    {},
    // Underworld: dark grey with diagonal hatching
    pattern("pat-underworld", "#5d5a66", s("path", { d: "M0,12 L12,0 M-3,3 L3,-3 M9,15 L15,9", stroke: "#787482", "stroke-width": 2.2 })),
    // Exterior world: green with dots
    pattern("pat-exterior", "#a3c98f", [s("circle", { cx: 3, cy: 3, r: 1.6, fill: "#7fae69" }), s("circle", { cx: 9, cy: 9, r: 1.6, fill: "#7fae69" })]),
    // Olympus: light blue with horizontal cloud lines
    pattern("pat-olympus", "#cfe6f7", s("path", { d: "M0,4 Q3,1 6,4 T12,4", fill: "none", stroke: "#9cc7e6", "stroke-width": 1.4 })),
    // hidden enemy tokens: cross-hatched
    pattern("pat-hidden-olympians", "#f3ead0", s("path", { d: "M0,0 L12,12 M12,0 L0,12", stroke: "#d8c79a", "stroke-width": 1 }), { width: 6, height: 6 }),
    pattern("pat-hidden-chthonians", "#3a2140", s("path", { d: "M0,0 L12,12 M12,0 L0,12", stroke: "#5b3763", "stroke-width": 1 }), { width: 6, height: 6 }),
    s(
      "marker",
      { id: "arrow", viewBox: "0 0 10 10", refX: 8, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" },
      s("path", { d: "M0,0 L10,5 L0,10 z", fill: "#8a5a00" }),
    ),
  );
}

/** Where each unit of a region goes: [{unit, x, y, w, h, font}] relative to the centre.
 * Chips are as large as a hex allows (legible at 1280×720: docs/client.md), own side first: one
 * column up to 4 units, two columns (one per side) beyond. They leave the hex's left corner free
 * for its number. Bases are wide: one row per side. */
function layout(units, perspective, isBase) {
  const order = perspective === "chthonians" ? ["chthonians", "olympians"] : ["olympians", "chthonians"];
  const groups = order.map((side) => units.filter((u) => u.side === side)).filter((g) => g.length);
  const placed = [];
  if (isBase) {
    groups.forEach((g, gi) => {
      const y = groups.length === 1 ? 6 : gi === 0 ? -8 : 17;
      g.forEach((u, i) => placed.push({ unit: u, x: (i - (g.length - 1) / 2) * 61, y, w: 59, h: 24, font: 13.5 }));
    });
    return placed;
  }
  const all = groups.flat();
  const column = (list, x, pitch, size) => list.forEach((u, i) => placed.push({ unit: u, x, y: (i - (list.length - 1) / 2) * pitch, ...size }));
  if (all.length <= 2) column(all, 4, 28, { w: 78, h: 26, font: 14 });
  else if (all.length === 3) column(all, 4, 26, { w: 74, h: 24, font: 13 });
  else if (all.length === 4) column(all, 4, 20.5, { w: 68, h: 19.5, font: 11.5 });
  else groups.forEach((g, gi) => column(g, gi === 0 ? -15 : 28, 19, { w: 42, h: 18, font: 10.5 }));
  return placed;
}

/** The name that fits a chip: the full name unless it would be squeezed below 80 %. */
function chipName(name, room, font) {
  return name.length * font * 0.58 * 0.8 > room ? BY_NAME[name].short : name;
}

function unitAria(u, mine, opts) {
  const who = FACTION_NAME[u.side].replace(/s$/, "");
  if (u.name) {
    let text = `${u.name}, strength ${BY_NAME[u.name].strength}, ${mine ? "your unit" : `${who} unit`}`;
    if (mine && "revealed" in u) text += u.revealed ? ", known to the enemy" : ", hidden from the enemy";
    if (opts.selected && opts.selected.has(u.name)) text += ", selected";
    return `${text}, region ${u.region}`;
  }
  return `${who} token ${u.token}, identity unknown, region ${u.region}`;
}

function chip(u, spot, c, opts) {
  const mine = opts.seat !== null && opts.seat !== undefined && u.side === opts.seat;
  const known = Boolean(u.name);
  const selected = Boolean(u.name && opts.selected && opts.selected.has(u.name));
  const x = c.x + spot.x - spot.w / 2;
  const y = c.y + spot.y - spot.h / 2;
  const classes = ["unit", `side-${u.side}`, mine ? "mine" : "theirs", known ? "known" : "hidden"];
  if (selected) classes.push("selected");
  if (u.name && opts.movable && opts.movable.has(u.name)) classes.push("movable");
  if (mine && opts.enemyKnows) classes.push(u.revealed ? "enemy-knows" : "enemy-unaware");
  const g = s("g", {
    class: classes,
    dataset: { side: u.side, region: String(u.region), token: String(u.token), ...(u.name ? { unit: u.name } : {}) },
    "data-focus-key": u.name ? `unit:${u.name}` : `token:${u.side}:${u.token}`,
  });
  const fill = known ? null : `url(#pat-hidden-${u.side})`;
  g.append(s("rect", { class: "chip", x, y, width: spot.w, height: spot.h, rx: 4, ...(fill ? { fill } : {}) }));
  g.append(s("rect", { class: "stripe", x, y, width: 4, height: spot.h, rx: 2 }));
  const baseline = y + spot.h / 2 + spot.font * 0.36;
  const textAttrs = { class: "chip-label", x: x + 6, y: baseline, "font-size": spot.font };
  const room = spot.w - 8 - spot.font;
  const text = known ? chipName(u.name, room, spot.font) : `#${u.token}`;
  if (known) {
    const label = s("text", textAttrs, text);
    if (text.length * spot.font * 0.58 > room) {
      label.setAttribute("textLength", room);
      label.setAttribute("lengthAdjust", "spacingAndGlyphs");
    }
    g.append(label);
    g.append(s("text", { class: "chip-strength", x: x + spot.w - spot.font * 0.6, y: baseline, "font-size": spot.font, "text-anchor": "middle" }, String(BY_NAME[u.name].strength)));
  } else {
    g.append(s("text", { ...textAttrs, x: x + spot.w / 2 + 2, "text-anchor": "middle" }, text));
  }
  if (mine && opts.enemyKnows) {
    // a non-colour cue: an open eye for "the enemy knows who this is", a struck one otherwise
    const ex = x - 4;
    const ey = y + spot.h / 2;
    g.append(s("circle", { class: "eye-badge", cx: ex, cy: ey, r: 5.5 }));
    g.append(s("text", { class: "eye-text", x: ex, y: ey + 3, "text-anchor": "middle" }, u.revealed ? "◉" : "?"));
  }
  g.append(s("title", {}, unitAria(u, mine, opts)));
  const interactive = opts.onUnit && (mine || opts.unitsAllClickable);
  if (interactive) {
    g.setAttribute("tabindex", "0");
    g.setAttribute("role", "button");
    g.setAttribute("aria-pressed", selected ? "true" : "false");
    g.setAttribute("aria-label", unitAria(u, mine, opts));
    activatable(g, (event) => {
      event.stopPropagation();
      opts.onUnit(u, event);
    });
  } else {
    g.setAttribute("role", "img");
    g.setAttribute("aria-label", unitAria(u, mine, opts));
  }
  return g;
}

function costText(d) {
  const parts = [];
  if (d.honor) parts.push(`H${signed(d.honor)}`);
  if (d.energy) parts.push(`E${signed(-d.energy)}`);
  return parts.length ? parts.join(" ") : "free";
}

/**
 * opts: {board, model, seat, selected:Set, destinations: Map(region → {honor, energy, attack,
 * kind, label}), onUnit, onRegion, onDestination, showNumbers, enemyKnows, placeable:Set,
 * highlight: Set, unitsAllClickable}
 */
export function renderBoard(opts) {
  const { board, model } = opts;
  const svg = s("svg", {
    class: "board",
    viewBox: `0 0 ${WIDTH.toFixed(0)} ${HEIGHT.toFixed(0)}`,
    role: "group",
    "aria-label": "The board: Olympus at the top, the Exterior world in the middle, the Underworld at the bottom",
    preserveAspectRatio: "xMidYMin meet",
  });
  svg.append(defs());

  // realm bands with labels (a legend that does not rely on colour)
  const bands = [
    ["olympus", MT - 2 * DY - BASE_H / 2 - 16, levelY(9.5)],
    ["exterior", levelY(9.5), levelY(4.5)],
    ["underworld", levelY(4.5), HEIGHT - 8],
  ];
  const legend = s("g", { class: "realm-legend" });
  for (const [realm, y0, y1] of bands) {
    legend.append(s("rect", { class: `realm-band realm-${realm}`, x: 8, y: y0, width: 34, height: y1 - y0 - 4, rx: 6, fill: `url(#pat-${realm})`, dataset: { realm } }));
    const cy = (y0 + y1) / 2;
    legend.append(s("text", { class: `realm-label realm-label-${realm}`, x: 31, y: cy, transform: `rotate(-90 31 ${cy})`, "text-anchor": "middle", dataset: { realm } }, REALM_NAME[realm]));
  }
  svg.append(legend);

  // regions
  const regionsLayer = s("g", { class: "regions" });
  for (const r of board.regions) {
    const shape = regionShape(board, r.id, {
      class: ["region", `realm-${r.realm}`, opts.placeable && opts.placeable.has(r.id) ? "placeable" : null, opts.highlight && opts.highlight.has(r.id) ? "highlight" : null],
      fill: `url(#pat-${r.realm})`,
      dataset: { region: String(r.id), realm: r.realm },
    });
    shape.append(s("title", {}, `${r.id === 0 ? "Tartarus (Chthonian base)" : r.id === 35 ? "Olympian Palace (Olympian base)" : `Region ${r.id}`} — ${REALM_NAME[r.realm]}`));
    if (opts.onRegion) {
      shape.addEventListener("click", () => opts.onRegion(r.id));
    }
    regionsLayer.append(shape);
  }
  svg.append(regionsLayer);

  // the Styx and its dry way
  const river = s("g", { class: "styx", role: "img", "aria-label": "River Styx and its dry way" });
  for (const [a, b] of board.styxEdges) {
    const e = edge(board, a, b);
    river.append(s("line", { class: "styx-water", ...e }));
    river.append(s("line", { class: "styx-wave", ...e }));
  }
  const bridge = board.bridge;
  for (const n of board.neighbours[bridge]) {
    if (board.realm(n) !== "underworld") {
      const e = edge(board, bridge, n);
      river.append(s("line", { class: "dry-way", ...e }));
    }
  }
  svg.append(river);
  const bc = center(board, bridge);
  const styxY = levelY(4.5);
  svg.append(
    s(
      "g",
      { class: "styx-legend" },
      s("text", { class: "styx-label", x: WIDTH - 72, y: styxY - 30 }, "~ Styx ~"),
      s("text", { class: "dry-label", x: WIDTH - 72, y: bc.y + 34 }, "dry way"),
      s("line", { class: "leader", x1: WIDTH - 60, y1: bc.y + 24, x2: bc.x + 30, y2: bc.y + 18 }),
    ),
  );

  // base labels
  const palace = center(board, 35);
  const tartarus = center(board, 0);
  svg.append(s("text", { class: "base-label", x: palace.x, y: palace.y - BASE_H / 2 + 14, "text-anchor": "middle" }, "Olympian Palace · Olympian base"));
  svg.append(s("text", { class: "base-label light", x: tartarus.x, y: tartarus.y - BASE_H / 2 + 14, "text-anchor": "middle" }, "Tartarus · Chthonian base"));

  // combat marker and last move
  if (model && model.combat) {
    const c = model.combat.region;
    svg.append(regionShape(board, c, { class: "combat-ring", fill: "none" }));
    const cc = center(board, c);
    svg.append(boardIcon("combat", cc.x + (c === 0 || c === 35 ? BASE_W / 2 - 14 : 30) - 9, cc.y - (c === 0 || c === 35 ? 20 : DY - 16) - 15, 18, "combat-mark"));
  }
  const last = model && model.lastMove;
  if (last && last.destination !== null && last.destination !== undefined) {
    // the last move, plainly: its origin outlined and dashed, its destination outlined in full
    if (last.origin !== null && last.origin !== undefined && last.origin !== last.destination) {
      svg.append(regionShape(board, last.origin, { class: "last-from", fill: "none", dataset: { region: String(last.origin) } }));
    }
    svg.append(regionShape(board, last.destination, { class: "last-to", fill: "none", dataset: { region: String(last.destination) } }));
  }
  if (model && model.lastMove && model.lastMove.origin !== null && model.lastMove.origin !== undefined && model.lastMove.origin !== model.lastMove.destination) {
    const a = center(board, model.lastMove.origin);
    const b = center(board, model.lastMove.destination);
    const t = 0.22;
    svg.append(
      s("line", {
        class: "last-move",
        x1: a.x + (b.x - a.x) * t,
        y1: a.y + (b.y - a.y) * t,
        x2: b.x - (b.x - a.x) * t,
        y2: b.y - (b.y - a.y) * t,
        "marker-end": "url(#arrow)",
      }),
    );
  }

  // units
  const unitsLayer = s("g", { class: "units" });
  if (model) {
    const byRegion = new Map();
    for (const u of model.units) {
      if (!byRegion.has(u.region)) byRegion.set(u.region, []);
      byRegion.get(u.region).push(u);
    }
    for (const [region, units] of [...byRegion.entries()].sort((a, b) => a[0] - b[0])) {
      const c = center(board, region);
      for (const spot of layout(units, opts.seat || "olympians", region === 0 || region === 35)) {
        unitsLayer.append(chip(spot.unit, spot, c, opts));
      }
    }
  }
  svg.append(unitsLayer);

  // region numbers, above the units: at a hex's left corner (chips leave it free), left of a base
  if (opts.showNumbers) {
    const nums = s("g", { class: "region-numbers", "aria-hidden": "true" });
    for (const r of board.regions) {
      const c = center(board, r.id);
      const x = r.column === null ? c.x - BASE_W / 2 - 16 : c.x - R + 8;
      nums.append(s("text", { class: "region-number", x, y: c.y + 4, "text-anchor": "middle", dataset: { region: String(r.id) } }, String(r.id)));
    }
    svg.append(nums);
  }

  // destinations (on top: a click anywhere in the hex chooses it)
  if (opts.destinations && opts.destinations.size) {
    const layer = s("g", { class: "destinations" });
    for (const [region, d] of [...opts.destinations.entries()].sort((a, b) => a[0] - b[0])) {
      const c = center(board, region);
      const g = s("g", {
        class: ["dest", d.attack ? "attack" : null, d.kind ? `dest-${d.kind}` : null],
        tabindex: 0,
        role: "button",
        "aria-label": d.label || `Region ${region}: ${costText(d)}`,
        dataset: { region: String(region), honor: String(d.honor || 0), energy: String(d.energy || 0), attack: d.attack ? "true" : "false", kind: d.kind || "move" },
        "data-focus-key": `dest:${region}`,
      });
      g.append(regionShape(board, region, { class: "dest-shape" }));
      const text = d.badge || costText(d);
      const mark = d.attack ? 12 : 0; // the attack's crossed swords, left of the cost
      const bw = Math.max(34, text.length * 6.4 + 10 + mark);
      const by = region === 0 || region === 35 ? c.y + BASE_H / 2 - 22 : c.y + DY - 20;
      g.append(s("rect", { class: ["dest-badge", (d.honor || 0) < 0 ? "costly" : null], x: c.x - bw / 2, y: by, width: bw, height: 15, rx: 7 }));
      if (mark) g.append(boardIcon("combat", c.x - bw / 2 + 5, by + 2, 11, "dest-mark"));
      g.append(s("text", { class: "dest-text", x: c.x + mark / 2, y: by + 11.5, "text-anchor": "middle" }, text));
      g.append(s("title", {}, d.label || `Region ${region}`));
      activatable(g, (event) => {
        event.stopPropagation();
        opts.onDestination(region, event);
      });
      layer.append(g);
    }
    svg.append(layer);
  }
  return svg;
}

export const BOARD_SIZE = { width: WIDTH, height: HEIGHT };

// The client's pictures of things (a bell, Honor, Energy, a clock, a combat, waiting), as inline
// SVG: an emoji needs a font that has it, and a browser without one (Debian's Chromium with
// no emoji font) draws an empty box. Each icon is drawn in `currentColor` on a 16×16 grid and
// is hidden from assistive technology: the text beside it says what it means.

import { s } from "./dom.js";

const STROKE = { fill: "none", stroke: "currentColor", "stroke-width": 1.6, "stroke-linecap": "round", "stroke-linejoin": "round" };

const SHAPES = {
  bell: () => [
    s("path", { d: "M8 1.6c.6 0 1 .4 1 1v.6a4.4 4.4 0 0 1 3.4 4.3v2.6l1.4 1.9v.9H2.2V12l1.4-1.9V7.5A4.4 4.4 0 0 1 7 3.2v-.6c0-.6.4-1 1-1z", fill: "currentColor" }),
    s("path", { d: "M6.2 13.9h3.6a1.8 1.8 0 0 1-3.6 0z", fill: "currentColor" }),
  ],
  energy: () => [s("path", { d: "M9.6 1 3 9.2h4.2L6.2 15l6.8-8.4H8.7z", fill: "currentColor" })],
  honor: () => [s("path", { d: "M8 1.2 2.6 3.2v4.3c0 3.3 2.2 5.9 5.4 7.3 3.2-1.4 5.4-4 5.4-7.3V3.2z", fill: "currentColor" })],
  clock: () => [s("circle", { cx: 8, cy: 8, r: 6.2, ...STROKE }), s("path", { d: "M8 4.4V8l2.6 1.8", ...STROKE })],
  combat: () => [s("path", { d: "M2.6 2.6l8.6 8.6M13.4 2.6l-8.6 8.6M9.6 13.2l3.6-3.6M2.8 9.6l3.6 3.6", ...STROKE, "stroke-width": 1.8 })],
  play: () => [s("path", { d: "M4.5 2.5v11l9-5.5z", fill: "currentColor" })],
  pause: () => [s("path", { d: "M4 2.5h3v11H4zM9 2.5h3v11H9z", fill: "currentColor" })],
  waiting: () => [s("path", { d: "M4 1.8h8M4 14.2h8M5 1.8c0 3 3 4.2 3 6.2s-3 3.2-3 6.2M11 1.8c0 3-3 4.2-3 6.2s3 3.2 3 6.2", ...STROKE })],
};

/** An inline SVG icon for HTML (1em square, on the text's baseline), hidden from screen readers. */
export function icon(name) {
  return s("svg", { class: ["icon", `icon-${name}`], viewBox: "0 0 16 16", width: 16, height: 16, "aria-hidden": "true", focusable: "false" }, SHAPES[name]());
}

/** The same icon inside the board's SVG: `size` units square with its top left at (x, y). */
export function boardIcon(name, x, y, size, cls = null) {
  return s("svg", { class: ["board-icon", `icon-${name}`, cls], x, y, width: size, height: size, viewBox: "0 0 16 16", "aria-hidden": "true" }, SHAPES[name]());
}

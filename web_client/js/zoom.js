// The board's zoom: 1 is "as large as fits" (the CSS sizes the board to its column), above that
// the board grows inside its holder, which scrolls. Buttons, Ctrl + wheel (a trackpad's pinch
// arrives as one) and a two-finger pinch on a touch screen; the point under the pointer stays put.

import { h } from "./dom.js";
import { prefs, savePrefs } from "./api.js";

export const ZOOM_MIN = 1;
export const ZOOM_MAX = 3;
const STEP = 1.25;

function clamp(z) {
  return Math.round(Math.max(ZOOM_MIN, Math.min(ZOOM_MAX, z)) * 1000) / 1000;
}

export class BoardZoom {
  /** holder: the scrolling element around the board's SVG (it keeps its scroll across renders). */
  constructor(holder) {
    this.holder = holder;
    this.level = clamp(Number(prefs().zoom) || 1);
    this.pointers = new Map();
    this.pinch = null;
    this.apply();
    holder.addEventListener("wheel", (e) => this.onWheel(e), { passive: false });
    holder.addEventListener("pointerdown", (e) => this.onPointer(e));
    holder.addEventListener("pointermove", (e) => this.onPointer(e));
    for (const type of ["pointerup", "pointercancel", "pointerleave"]) holder.addEventListener(type, (e) => this.onPointerEnd(e));
  }

  apply() {
    this.holder.style.setProperty("--zoom", String(this.level));
    this.holder.dataset.zoom = String(this.level);
    this.holder.classList.toggle("zoomed", this.level > 1);
  }

  /** Zoom to `level`, keeping the board point under (clientX, clientY) where it is. */
  set(level, clientX = null, clientY = null) {
    const next = clamp(level);
    if (next === this.level) return;
    const box = this.holder.getBoundingClientRect();
    const px = clientX === null ? box.width / 2 : clientX - box.left;
    const py = clientY === null ? box.height / 2 : clientY - box.top;
    const ratio = next / this.level;
    const x = (this.holder.scrollLeft + px) * ratio - px;
    const y = (this.holder.scrollTop + py) * ratio - py;
    this.level = next;
    this.apply();
    this.holder.scrollLeft = x;
    this.holder.scrollTop = y;
    savePrefs({ ...prefs(), zoom: next });
    if (this.onChange) this.onChange(next);
  }

  onWheel(e) {
    if (!e.ctrlKey) return; // a plain wheel scrolls
    e.preventDefault();
    this.set(this.level * Math.exp(-e.deltaY / 300), e.clientX, e.clientY);
  }

  onPointer(e) {
    if (e.pointerType !== "touch") return;
    this.pointers.set(e.pointerId, { x: e.clientX, y: e.clientY });
    if (this.pointers.size !== 2) {
      this.pinch = null;
      return;
    }
    const [a, b] = [...this.pointers.values()];
    const distance = Math.hypot(a.x - b.x, a.y - b.y);
    if (!this.pinch) this.pinch = { distance, level: this.level };
    else if (this.pinch.distance > 0) this.set((this.pinch.level * distance) / this.pinch.distance, (a.x + b.x) / 2, (a.y + b.y) / 2);
  }

  onPointerEnd(e) {
    this.pointers.delete(e.pointerId);
    this.pinch = null;
  }

  /** The −, fit, + buttons (above the board, in its top right corner); `onChange` redraws them. */
  controls() {
    const button = (id, label, aria, fn, disabled) => h("button", { type: "button", id, class: "zoom-button", "aria-label": aria, title: aria, disabled, onclick: fn }, label);
    return h(
      "div",
      { class: "zoom-controls", role: "group", "aria-label": "Zoom" },
      button("btn-zoom-out", "−", "Zoom out", () => this.set(this.level / STEP), this.level <= ZOOM_MIN),
      button("btn-zoom-fit", `${Math.round(this.level * 100)}%`, "Fit the board to the window", () => this.set(1), this.level === 1),
      button("btn-zoom-in", "+", "Zoom in", () => this.set(this.level * STEP), this.level >= ZOOM_MAX),
    );
  }
}

// Tiny DOM helpers: h() for HTML, s() for SVG. No framework, no build step.

const SVG_NS = "http://www.w3.org/2000/svg";

function apply(el, attrs) {
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") el.setAttribute("class", Array.isArray(value) ? value.filter(Boolean).join(" ") : value);
    else if (key === "dataset") Object.assign(el.dataset, value);
    else if (key === "style" && typeof value === "object") Object.assign(el.style, value);
    else if (key.startsWith("on") && typeof value === "function") el.addEventListener(key.slice(2), value);
    else if (key === "text") el.textContent = value;
    else if (key === "html") el.innerHTML = value;
    else if (key === "value" && "value" in el) el.value = value;
    else if (key === "checked" || key === "disabled" || key === "selected") {
      el[key] = Boolean(value);
      if (value) el.setAttribute(key, "");
    } else el.setAttribute(key, value === true ? "" : String(value));
  }
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  apply(el, attrs);
  append(el, children);
  return el;
}

export function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  apply(el, attrs);
  append(el, children);
  return el;
}

export function clear(el) {
  while (el.firstChild) el.firstChild.remove();
  return el;
}

export function replace(el, ...children) {
  clear(el);
  append(el, children);
  return el;
}

/** Enter and Space activate an element that is not a native button (SVG groups). */
export function activatable(el, handler) {
  el.addEventListener("click", handler);
  el.addEventListener("keydown", (event) => {
    if (event.key === "Enter" || event.key === " ") {
      event.preventDefault();
      handler(event);
    }
  });
  return el;
}

/** Keep the focus on "the same" element across a re-render (elements carry data-focus-key). */
export function focusKey() {
  const el = document.activeElement;
  if (!el || el === document.body) return null;
  if (el.dataset && el.dataset.focusKey) return el.dataset.focusKey;
  return el.id ? `#${el.id}` : null;
}

export function restoreFocus(key) {
  if (!key) return;
  const el = key.startsWith("#")
    ? document.getElementById(key.slice(1))
    : document.querySelector(`[data-focus-key="${CSS.escape(key)}"]`);
  if (el && document.activeElement !== el) el.focus({ preventScroll: true });
}

export function signed(n) {
  if (n > 0) return `+${n}`;
  if (n < 0) return `−${-n}`;
  return "0";
}

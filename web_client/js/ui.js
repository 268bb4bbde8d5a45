// Shared UI pieces: toasts, the confirmation and choice dialogs (native <dialog>: focus trap,
// Escape to cancel), the connection banner.

import { h, replace } from "./dom.js";

export function toast(text, kind = "info", ms = 5000) {
  const box = document.getElementById("toasts");
  const el = h("div", { class: ["toast", `toast-${kind}`], role: kind === "error" ? "alert" : "status" }, text);
  box.append(el);
  setTimeout(() => el.remove(), ms);
}

function openDialog(dialog, build) {
  return new Promise((resolve) => {
    let done = false;
    const finish = (value) => {
      if (done) return;
      done = true;
      if (dialog.open) dialog.close();
      resolve(value);
    };
    replace(dialog, build(finish));
    dialog.onclose = () => finish(null);
    dialog.oncancel = (event) => {
      event.preventDefault();
      finish(null);
    };
    if (dialog.open) dialog.close();
    dialog.showModal();
    const first = dialog.querySelector("[autofocus]") || dialog.querySelector("button, input, select");
    if (first) first.focus();
  });
}

/** Resolves true (OK) or false/null (cancel). `safe`: the focus starts on cancel (a step that
 * cannot be undone is never one Enter away). */
export function confirmDialog({ title, body, ok = "Confirm", cancel = "Cancel", safe = false }) {
  const dialog = document.getElementById("confirm");
  return openDialog(dialog, (finish) =>
    h(
      "form",
      { method: "dialog", class: "dialog-body", onsubmit: (e) => e.preventDefault() },
      h("h2", { id: "confirm-title" }, title),
      typeof body === "string" ? h("p", {}, body) : body,
      h(
        "div",
        { class: "dialog-buttons" },
        h("button", { type: "button", class: "secondary", "data-action": "cancel", autofocus: safe, onclick: () => finish(false) }, cancel),
        h("button", { type: "button", class: "primary", "data-action": "ok", autofocus: !safe, onclick: () => finish(true) }, ok),
      ),
    ),
  ).then((v) => v === true);
}

/** options: [{label, detail, value, cost}] → resolves the chosen value or null. */
export function chooseDialog({ title, intro = null, options }) {
  const dialog = document.getElementById("chooser");
  return openDialog(dialog, (finish) =>
    h(
      "div",
      { class: "dialog-body" },
      h("h2", { id: "chooser-title" }, title),
      intro ? h("p", {}, intro) : null,
      h(
        "ul",
        { class: "variant-list" },
        options.map((o, i) =>
          h(
            "li",
            {},
            h(
              "button",
              { type: "button", class: "variant", dataset: { index: String(i) }, autofocus: i === 0, onclick: () => finish(o.value) },
              h("span", { class: "variant-label" }, o.label),
              o.cost ? h("span", { class: "variant-cost" }, o.cost) : null,
              o.detail ? h("span", { class: "variant-detail" }, o.detail) : null,
            ),
          ),
        ),
      ),
      h("div", { class: "dialog-buttons" }, h("button", { type: "button", class: "secondary", "data-action": "cancel", onclick: () => finish(null) }, "Cancel")),
    ),
  );
}

export function closeDialogs() {
  for (const id of ["confirm", "chooser"]) {
    const d = document.getElementById(id);
    if (d && d.open) d.close();
  }
}

let bannerTimer = null;

/** The connection state, on screen: a badge always, a banner while it is not open. */
export function showConnection(status, retryNow) {
  const badge = document.getElementById("conn-status");
  const banner = document.getElementById("conn-banner");
  clearInterval(bannerTimer);
  badge.dataset.state = status.state;
  if (status.state === "open") {
    badge.textContent = "● Connected";
    banner.hidden = true;
    banner.dataset.state = "open";
    return;
  }
  if (status.state === "idle") {
    badge.textContent = "";
    banner.hidden = true;
    return;
  }
  banner.hidden = false;
  banner.dataset.state = status.state;
  if (status.state === "fatal") {
    badge.textContent = "● Disconnected";
    replace(banner, h("strong", {}, "Disconnected. "), status.reason || "", " ", h("a", { href: "#/" }, "Back to the lobby"));
    return;
  }
  if (status.state === "connecting") {
    badge.textContent = "● Connecting…";
    replace(banner, "Connecting to the server…");
    return;
  }
  badge.textContent = "● Reconnecting…";
  const draw = () => {
    const left = status.at ? Math.max(0, Math.ceil((status.at - Date.now()) / 1000)) : 0;
    replace(
      banner,
      h("strong", {}, "Connection lost. "),
      status.at ? `Reconnecting in ${left} s (attempt ${status.attempt})… ` : `Reconnecting (attempt ${status.attempt})… `,
      retryNow ? h("button", { type: "button", class: "link", onclick: retryNow }, "Retry now") : null,
    );
  };
  draw();
  bannerTimer = setInterval(draw, 500);
}

export function setWhere(text) {
  document.getElementById("where").textContent = text;
}

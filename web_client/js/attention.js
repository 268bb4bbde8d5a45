// Whose move it is, seen from outside the page: the tab's title ("● Your move") and icon, and a
// browser notification when your move arrives while the tab is hidden (if you allowed them:
// the Notification API is asked once, from a button, never on its own).

const BASE_TITLE = "Storm over Olympus";
const icon = (fill) =>
  `data:image/svg+xml,${encodeURIComponent(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><circle cx="8" cy="8" r="7" fill="${fill}"/></svg>`)}`;
const ICONS = { yours: icon("#d4a017"), idle: icon("#8a8f98") };

let yoursBefore = false;

function setIcon(href) {
  let link = document.querySelector("link[rel=icon]");
  if (!link) {
    link = document.createElement("link");
    link.rel = "icon";
    document.head.append(link);
  }
  if (link.getAttribute("href") !== href) link.setAttribute("href", href);
}

/** Show (or clear) "your move" in the tab; notify once per new move when the tab is hidden. */
export function showYourMove(yours, detail = "") {
  const title = yours ? `● Your move — ${BASE_TITLE}` : BASE_TITLE;
  if (document.title !== title) document.title = title;
  setIcon(yours ? ICONS.yours : ICONS.idle);
  if (yours && !yoursBefore && document.hidden && notificationsAllowed()) {
    new Notification("Storm over Olympus: your move", { body: detail, tag: "olympus-your-move" });
  }
  yoursBefore = yours;
}

export function notificationsAllowed() {
  return "Notification" in window && Notification.permission === "granted";
}

/** Whether the browser may still be asked (it never was, and it supports notifications). */
export function mayAskNotifications() {
  return "Notification" in window && Notification.permission === "default";
}

export async function askNotifications() {
  if (mayAskNotifications()) await Notification.requestPermission();
}

// Players (api.md, "Players"): the session (who is signed in, the CSRF token), the top bar's
// account link, the sign-in page, a player's profile with its rating graph, the leaderboard.
// A signed-in player's seats come from the server: after a sign-in the seats this browser held
// as a guest are bound to the account, and the account's other seats fetched (`syncSeats`).

import { h, s, replace } from "./dom.js";
import { ApiError, call, setCsrf, seats, saveSeat } from "./api.js";
import { FACTION_NAME } from "./data.js";
import { toast, setWhere } from "./ui.js";

export const account = { player: null, enabled: false };

function signedIn(answer) {
  account.player = answer.player;
  setCsrf(answer.csrf);
  renderAccountBar();
  return answer.player;
}

/** Who is signed in here (once per page load and after each change). */
export async function loadSession() {
  try {
    const answer = await call("GET", "/account");
    account.enabled = answer.accounts !== false;
    signedIn(answer);
  } catch {
    account.player = null;
  }
  return account.player;
}

/** "Ann 1500?": a player's name and rating, the rating marked while it is provisional. */
export function ratingText(p) {
  return `${p.rating}${p.provisional ? "?" : ""}`;
}

/** A player's name, linked to the profile when the name is an account's. */
export function playerLink(name, isAccount = true) {
  if (!name) return null;
  return isAccount ? h("a", { class: "player-link", href: `#/players/${encodeURIComponent(name)}` }, name) : name;
}

export function renderAccountBar() {
  const bar = document.getElementById("account-bar");
  if (!bar) return;
  const p = account.player;
  replace(
    bar,
    p
      ? [h("a", { id: "account-name", href: `#/players/${encodeURIComponent(p.name)}` }, p.name), h("span", { class: "account-rating" }, ` ${ratingText(p)} `), h("a", { href: "#/account", id: "link-account" }, "Account")]
      : h("a", { href: "#/account", id: "link-sign-in" }, "Sign in"),
    " · ",
    h("a", { href: "#/leaderboard", id: "link-leaderboard" }, "Leaderboard"),
  );
}

/** The seats of the account in this browser: the guest's bound to it, the others fetched. */
export async function syncSeats() {
  if (!account.player) return;
  const held = seats();
  const tokens = Object.values(held).map((r) => r.token).filter(Boolean).slice(0, 100);
  if (tokens.length) await call("POST", "/account/claim", { tokens });
  const { games } = await call("GET", "/account/games");
  for (const g of games.slice(0, 30)) {
    if (held[g.room]) continue;
    try {
      const seated = await call("POST", `/rooms/${encodeURIComponent(g.room)}/seat`);
      saveSeat(seated.room, { seat: seated.seat, token: seated.token, epoch: seated.epoch });
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
    }
  }
}

/** #/account: sign in or up; signed in, the password and signing out. */
export class AccountPage {
  constructor(root) {
    this.root = root;
  }

  async start() {
    setWhere("Account");
    await loadSession();
    this.render();
  }

  stop() {}

  render() {
    const p = account.player;
    if (!account.enabled) {
      replace(this.root, h("div", { class: "panel narrow" }, h("h2", {}, "Accounts"), h("p", {}, "This server keeps no accounts.")));
      return;
    }
    if (p) {
      replace(
        this.root,
        h(
          "div",
          { class: "panel narrow", id: "account-page" },
          h("h2", {}, `Signed in as ${p.name}`),
          h("p", {}, "Rating ", h("strong", {}, ratingText(p)), ` ± ${p.deviation} after ${p.rated_games} rated game${p.rated_games === 1 ? "" : "s"}. `, h("a", { href: `#/players/${encodeURIComponent(p.name)}` }, "Your profile")),
          this.form("password-form", "Change the password", [["old", "Current password", "current-password"], ["new", "New password", "new-password"]], "Change it", async (v) => {
            signedIn(await call("POST", "/account/password", { old: v.old, new: v.new }));
            toast("Your password is changed; your other sessions are signed out.");
          }),
          h(
            "div",
            { class: "button-row" },
            h("button", { type: "button", id: "btn-sign-out", onclick: () => this.signOut(false) }, "Sign out"),
            h("button", { type: "button", id: "btn-sign-out-everywhere", class: "secondary", onclick: () => this.signOut(true) }, "Sign out everywhere"),
          ),
        ),
      );
      return;
    }
    const credentials = (id) => [["name", "Name", "username", id], ["password", "Password", id === "signup" ? "new-password" : "current-password", id]];
    replace(
      this.root,
      h(
        "div",
        { class: "account-forms" },
        h("div", { class: "panel" }, this.form("signin-form", "Sign in", credentials("signin"), "Sign in", (v) => this.enter("/account/signin", v))),
        h(
          "div",
          { class: "panel" },
          this.form("signup-form", "New here? Sign up", credentials("signup"), "Sign up", (v) => this.enter("/account/signup", v)),
          h("p", { class: "hint" }, "No e-mail needed: a name (2–24 letters, digits, spaces or ' . _ -) and a password of at least 8 characters. The games you played in this browser become yours."),
        ),
      ),
    );
  }

  /** A form of labelled fields; `submit(values)` runs on submit, its error said in the form. */
  form(id, title, fields, label, submit) {
    const said = h("p", { class: "form-error", role: "alert" });
    const inputs = fields.map(([name, text, complete, scope]) => {
      const fieldId = `${id}-${name}`;
      return [h("label", { for: fieldId }, text), h("input", { id: fieldId, name, type: name === "name" ? "text" : "password", autocomplete: complete, required: true, maxlength: name === "name" ? 24 : 128, dataset: { scope: scope || "" } })];
    });
    const form = h(
      "form",
      {
        id,
        class: "account-form",
        onsubmit: async (e) => {
          e.preventDefault();
          const values = Object.fromEntries(fields.map(([name]) => [name, form.querySelector(`[name=${name}]`).value]));
          said.textContent = "";
          const button = form.querySelector("button");
          button.disabled = true;
          try {
            await submit(values);
          } catch (error) {
            said.textContent = error.message;
          } finally {
            button.disabled = false;
          }
        },
      },
      h("h2", {}, title),
      inputs,
      said,
      h("button", { type: "submit", class: "primary" }, label),
    );
    return form;
  }

  async enter(path, values) {
    signedIn(await call("POST", path, { name: values.name, password: values.password }));
    await syncSeats();
    location.hash = "#/";
  }

  async signOut(everywhere) {
    await call("POST", "/account/signout", { everywhere });
    account.player = null;
    setCsrf(null);
    renderAccountBar();
    this.render();
    toast(everywhere ? "Signed out everywhere." : "Signed out.");
  }
}

/** The rating over the rated games, oldest first: an SVG line with its points labelled. */
export function ratingGraph(history) {
  const width = 560;
  const height = 180;
  const pad = 32;
  if (!history.length) return h("p", { class: "hint", id: "rating-graph" }, "No rated game yet.");
  const points = [{ value: history[0].before }, ...history.map((c) => ({ value: c.after, change: c }))];
  const values = points.map((p) => p.value);
  const low = Math.min(...values) - 20;
  const high = Math.max(...values) + 20;
  const x = (i) => pad + (points.length === 1 ? 0 : (i * (width - 2 * pad)) / (points.length - 1));
  const y = (v) => height - pad - ((v - low) * (height - 2 * pad)) / (high - low);
  const path = points.map((p, i) => `${i ? "L" : "M"}${x(i).toFixed(1)},${y(p.value).toFixed(1)}`).join(" ");
  return s(
    "svg",
    { id: "rating-graph", class: "rating-graph", viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": `Rating from ${values[0]} to ${values[values.length - 1]} over ${history.length} rated games` },
    s("line", { x1: pad, y1: height - pad, x2: width - pad, y2: height - pad, class: "axis" }),
    s("text", { x: 4, y: y(high - 20) + 4, class: "axis-label" }, String(high - 20)),
    s("text", { x: 4, y: y(low + 20) + 4, class: "axis-label" }, String(low + 20)),
    s("path", { d: path, class: "rating-line", fill: "none" }),
    points.map((p, i) => s("circle", { cx: x(i), cy: y(p.value), r: 4, class: "rating-point" }, s("title", {}, p.change ? `${p.value} after game ${p.change.room} (${p.change.delta >= 0 ? "+" : ""}${p.change.delta})` : `${p.value} at the start`))),
  );
}

/** #/players/<name>: rating, its graph, wins and losses by side, recent games. */
export class ProfilePage {
  constructor(root, name) {
    this.root = root;
    this.name = name;
  }

  async start() {
    setWhere(`Player ${this.name}`);
    let profile;
    try {
      profile = await call("GET", `/players/${encodeURIComponent(this.name)}`);
    } catch (error) {
      replace(this.root, h("div", { class: "panel narrow", id: "profile" }, h("h2", {}, "No such player"), h("p", {}, error.message), h("a", { href: "#/" }, "Back to the lobby")));
      return;
    }
    const p = profile.player;
    const record = Object.entries(profile.record).map(([side, r]) => h("tr", {}, h("th", { scope: "row" }, FACTION_NAME[side]), h("td", {}, String(r.won)), h("td", {}, String(r.lost)), h("td", {}, String(r.drawn))));
    replace(
      this.root,
      h(
        "div",
        { class: "panel profile", id: "profile" },
        h("h2", {}, p.name),
        h("p", { class: "big" }, "Rating ", h("strong", { id: "profile-rating" }, ratingText(p)), ` ± ${p.deviation} · ${p.rated_games} rated game${p.rated_games === 1 ? "" : "s"}`),
        h("h3", {}, "Rating history"),
        ratingGraph(profile.history),
        h("h3", {}, "Rated games by side"),
        h("table", { class: "rooms record" }, h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Side"), h("th", { scope: "col" }, "Won"), h("th", { scope: "col" }, "Lost"), h("th", { scope: "col" }, "Drawn"))), h("tbody", {}, record)),
        h("h3", {}, "Recent games"),
        profile.recent.length
          ? h("ul", { id: "recent-games" }, profile.recent.map((g) => h("li", {}, h("a", { href: `#/replay/${g.room}` }, `Game ${g.room}`), ` — ${FACTION_NAME[g.seat] || "Challenge"}${g.summary.options.rated ? ", rated" : ""}`)))
          : h("p", { class: "hint" }, "None yet."),
      ),
    );
  }

  stop() {}
}

/** #/leaderboard: the best rated players with enough rated games. */
export class LeaderboardPage {
  constructor(root) {
    this.root = root;
  }

  async start() {
    setWhere("Leaderboard");
    const board = await call("GET", "/players");
    replace(
      this.root,
      h(
        "div",
        { class: "panel narrow", id: "leaderboard" },
        h("h2", {}, "Leaderboard"),
        h("p", { class: "hint" }, `Players of at least ${board.min_games} rated game${board.min_games === 1 ? "" : "s"}.`),
        board.players.length
          ? h(
              "table",
              { class: "rooms" },
              h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "#"), h("th", { scope: "col" }, "Player"), h("th", { scope: "col" }, "Rating"), h("th", { scope: "col" }, "Rated games"))),
              h("tbody", {}, board.players.map((p, i) => h("tr", {}, h("td", {}, String(i + 1)), h("td", {}, playerLink(p.name)), h("td", {}, ratingText(p)), h("td", {}, String(p.rated_games))))),
            )
          : h("p", {}, "Nobody yet."),
      ),
    );
  }

  stop() {}
}

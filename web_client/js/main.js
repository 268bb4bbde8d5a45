// The router: #/ lobby · #/join/<room> invite · #/play/<room> your seat · #/watch/<room> spectate ·
// #/replay/<room> finished game · #/rules the rules in short · #/account sign in or up ·
// #/players/<name> a profile · #/leaderboard.

import { h, replace } from "./dom.js";
import { loadBoard } from "./data.js";
import { seatFor } from "./api.js";
import { Lobby, JoinPage, HostWait } from "./lobby.js";
import { GameScreen } from "./game.js";
import { ReplayScreen } from "./replay.js";
import { RulesPage } from "./rules.js";
import { AccountPage, LeaderboardPage, ProfilePage, loadSession } from "./account.js";
import { setWhere, showConnection } from "./ui.js";
import { enableBoardDrag } from "./setup.js";

const root = document.getElementById("app");
let current = null;

async function route() {
  if (current && current.stop) current.stop();
  current = null;
  showConnection({ state: "idle" });
  const hash = location.hash.replace(/^#\/?/, "");
  const [page, room] = hash.split("/");
  let board;
  try {
    board = await loadBoard();
  } catch (error) {
    replace(root, h("p", { class: "error" }, `Cannot load the board: ${error.message}`));
    return;
  }
  if (!page) {
    current = new Lobby(root);
  } else if (page === "rules") {
    current = new RulesPage(root);
  } else if (page === "account") {
    current = new AccountPage(root);
  } else if (page === "leaderboard") {
    current = new LeaderboardPage(root);
  } else if (page === "players" && room) {
    current = new ProfilePage(root, decodeURIComponent(room));
  } else if (page === "join" && room) {
    current = new JoinPage(root, room);
  } else if (page === "watch" && room) {
    current = new GameScreen(root, { board, room, seat: null });
  } else if (page === "replay" && room) {
    current = new ReplayScreen(root, { board, room });
  } else if (page === "play" && room) {
    const record = seatFor(room);
    if (!record) {
      setWhere(`Game ${room}`);
      replace(
        root,
        h(
          "div",
          { class: "panel narrow", id: "no-seat" },
          h("h2", {}, "You have no seat in this game"),
          h("p", {}, "This browser holds no seat token for it."),
          h("div", { class: "button-row" }, h("a", { class: "button primary", href: `#/join/${room}` }, "Join it"), h("a", { class: "button", href: `#/watch/${room}` }, "Watch it"), h("a", { class: "button secondary", href: "#/" }, "Lobby")),
        ),
      );
      return;
    }
    if (record.seat === "host") {
      current = new HostWait(root, room, record, () => route());
    } else {
      current = new GameScreen(root, { board, room, seat: record.seat, token: record.token });
    }
  } else {
    location.hash = "#/";
    return;
  }
  await current.start();
  if (current instanceof GameScreen) {
    const holder = document.getElementById("board-holder");
    if (holder) enableBoardDrag(current, holder);
  }
}

window.addEventListener("hashchange", route);
loadSession().finally(route);

// The first-game guide: during the setup and the first turns, one line on the next thing to do,
// and that thing marked on the screen (`.guide-target`). It is the seat's own: spectators have
// none. Hidden with its button, and remembered (olympus.prefs `guide: false`) until shown again
// from the board's tools.

import { h } from "./dom.js";
import { prefs, savePrefs } from "./api.js";

/** The guide's turns: it says nothing after the side's first few turns. */
export const GUIDE_TURNS = 6;

export function guideOn() {
  return prefs().guide !== false;
}

export function setGuide(on) {
  savePrefs({ ...prefs(), guide: on });
}

/**
 * The guide's step for a screen now: `{key, text, target}` (`target`: a selector of what to
 * mark, or null), or null when it has nothing to say (a spectator, the game past its first
 * turns, over). Made of what the screen shows: its model, its `legal` and its selection.
 */
export function guideStep(screen) {
  const m = screen.model;
  if (!screen.seat || !m || m.phase === "over") return null;
  if (m.phase === "setup") {
    const mine = m.setup && m.setup.submitted && m.setup.submitted[screen.seat];
    if (mine || m.options.random_setup) return { key: "setup-wait", text: "Your setup is made. The game starts once your opponent's is in: then the enemy's units show as numbered tokens.", target: null };
    const draft = screen.setupDraft;
    if (draft && draft.complete) return { key: "setup-submit", text: "Nine characters placed: submit your setup. Nobody sees it until both are in.", target: "#btn-submit-setup" };
    return { key: "setup-place", text: "Your first game: choose 9 of your 12 characters. Select one in the list (its power is under its name), then click a highlighted region of your realm to place it — or press Random setup.", target: ".setup-list" };
  }
  if (m.turn_number > GUIDE_TURNS) return null;
  if (screen.viewedTurn()) return { key: "viewing", text: "The board shows a past turn: go back to the live position to play on.", target: "#btn-live" };
  if (screen.myChoices.length) return { key: "choice", text: "Choose in the combat panel: the words under each choice say what follows.", target: "#choice" };
  if (screen.myCommits.length) return { key: "commit", text: "A combat: choose a maneuver and how much Energy to add, in secret, then commit. The panel shows your power as you choose.", target: "#commit-form" };
  if (m.combat) return { key: "combat-wait", text: "Waiting for your opponent's commitment: both are revealed together.", target: null };
  if (screen.myTurnActions.length) {
    if (screen.ui.selected.size) return { key: "destination", text: "Click a highlighted region to move there; its badge says what it costs in Honor (H) and Energy (E), and the crossed swords mark an attack.", target: "svg.board g.dest" };
    return { key: "select", text: "Your turn: click one of your units to see where it may go. Moving forward is free; instead of moving, a Liturgy gives you Energy (its button says how much, and what it costs).", target: "svg.board g.unit.movable" };
  }
  return { key: "wait", text: "Your opponent is moving. The log tells what happens; a unit stays a token until it is revealed.", target: "#tab-panel" };
}

/** The guide's box, or null: its step in words and the button that hides it. */
export function renderGuide(screen, onHide) {
  if (!guideOn()) return null;
  const step = guideStep(screen);
  if (!step) return null;
  return h(
    "div",
    { id: "guide", class: "guide", role: "note", "aria-label": "First-game guide", dataset: { step: step.key } },
    h("p", {}, h("strong", {}, "Guide: "), step.text),
    h("button", { type: "button", id: "btn-guide-hide", class: "secondary", onclick: onHide }, "Hide the guide"),
  );
}

/** Mark what the guide points at (the first element its step names), after a drawing. */
export function markGuideTarget(root, screen) {
  for (const el of root.querySelectorAll(".guide-target")) el.classList.remove("guide-target");
  if (!guideOn()) return;
  const step = guideStep(screen);
  const target = step && step.target ? root.querySelector(step.target) : null;
  if (target) target.classList.add("guide-target");
}

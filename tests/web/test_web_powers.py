"""How the turn UI presents the rarer entries of a ``legal`` message: Hermes' extra steps, a
flight that reveals the flier, a reveal for a power (Charon), the thunderbolt and the recall.

Random games seldom reach these, so the page's ``legal`` list and two unit names are set by
hand (the client draws only from ``legal`` and its model). Nothing is sent: every dialog is
cancelled, and the test checks what it offered and what it would cost.
"""

from __future__ import annotations

from web_harness import random_setup_game

SETUP = """
() => {
  const g = window.olympus;
  const m = g.model;
  const mine = m.units.filter((u) => u.side === "olympians");
  const occupied = new Set(m.units.map((u) => u.region));
  const free = (r) => !occupied.has(r);
  // Hermes: a unit with two free regions in a row ahead of it
  let hermes = null, first = null, second = null;
  for (const u of mine) {
    for (const a of g.board.neighbours[u.region]) {
      if (!free(a)) continue;
      const b = [...g.board.neighbours[a]].find((x) => free(x) && x !== u.region);
      if (b !== undefined) { hermes = u; first = a; second = b; break; }
    }
    if (hermes) break;
  }
  hermes.name = "Hermes";
  // Apollo: another unit with a free neighbour of its own
  const open = (u) => [...g.board.neighbours[u.region]].find(
    (r) => free(r) && r !== first && r !== second);
  const apollo = mine.find((u) => u !== hermes && u.region !== hermes.region
    && open(u) !== undefined);
  apollo.name = "Apollo";
  apollo.revealed = false;
  const walk = open(apollo);
  const far = [...Array(36).keys()].find((r) => free(r) && r !== first && r !== second
      && r !== walk && !g.board.neighbours[apollo.region].has(r) && r !== apollo.region);
  const enemy = m.units.find((u) => u.side === "chthonians").region;
  const move = (units, to, extra = {}) => ({ type: "move", units, to, fly: false, reveal: [],
    use_power: false, steps: [], ...extra });
  g.legal = [
    { command: move(["Hermes"], first), honor: 0, energy: 0 },
    { command: move(["Hermes"], first, { steps: [second] }), honor: -2, energy: 0 },
    { command: move(["Apollo"], walk), honor: 0, energy: 0 },
    { command: move(["Apollo"], walk, { reveal: ["Charon"] }), honor: 0, energy: 0 },
    { command: move(["Apollo"], far, { fly: true, reveal: ["Apollo"] }), honor: -4, energy: 0 },
    { command: move(["Apollo"], enemy), honor: -1, energy: 0 },
    { command: { type: "liturgy" }, honor: -2, energy: -6 },
    { command: { type: "thunderbolt", region: enemy }, honor: -1, energy: 6 },
    { command: { type: "recall", unit: "Ares" }, honor: 0, energy: 10 },
  ];
  g.render();
  return { first, second, far, walk, enemy };
}
"""

# The page's position is made by hand, not the server's: its ``steps`` requests are kept here
# and answered by the test (``ANSWER``) as the server answers (docs/protocol.md).
ANSWERED = """
() => {
  const g = window.olympus;
  window.stepRequests = [];
  const send = g.conn.send.bind(g.conn);
  g.conn.send = (message) => {
    if (message.type === "steps") window.stepRequests.push(message);
    else send(message);
  };
}
"""
ANSWER = """
({ id, walk }) => {
  const g = window.olympus;
  const last = walk.steps.at(-1);
  const occupied = new Set(g.model.units.map((u) => u.region));
  const third = [...g.board.neighbours[last]].find((r) => !occupied.has(r) && r !== walk.to);
  const command = { ...walk, steps: [...walk.steps, third] };
  const actions = [{ command, honor: -3, energy: 2 }];
  g.onMessage({ type: "steps", id, seq: g.model.seq, actions });
  return third;
}
"""

def test_power_actions_are_offered_with_their_costs(new_page, web_server):
    page = random_setup_game(new_page, web_server, "olympians")
    page.wait_for_selector("g.unit.mine")
    spots = page.evaluate(SETUP)
    page.wait_for_selector("#your-turn")

    # Hermes: a move, then "keep going", the listed step, then the server's priced steps
    page.evaluate(ANSWERED)
    page.click("g.unit[data-unit=Hermes]")
    page.click(f"g.dest[data-region='{spots['first']}']")
    chooser = page.locator("dialog#chooser[open]")
    assert chooser.locator("button.variant").count() == 2
    chooser.locator("button.variant:has-text('Keep going')").click()
    step = page.locator(f"g.dest.dest-step[data-region='{spots['second']}']")
    assert step.get_attribute("data-honor") == "-2"
    assert page.evaluate("window.stepRequests.length") == 0  # the first one is in `legal`
    step.click()
    page.wait_for_selector("#btn-hermes-finish")
    # the next steps are asked for, the walk so far sent; none shown until the answer comes
    page.wait_for_function("window.stepRequests.length === 1")
    asked = page.evaluate("window.stepRequests[0]")
    assert asked["command"]["units"] == ["Hermes"] and asked["command"]["to"] == spots["first"]
    assert asked["command"]["steps"] == [spots["second"]]
    # the board drawn for the walk so far (a frame after the click): no step offered
    page.wait_for_selector("#hermes-path:has-text('Asking the rules')")
    page.wait_for_function("document.querySelectorAll('g.dest.dest-step').length === 0")
    third = page.evaluate(ANSWER, {"id": asked["id"], "walk": asked["command"]})
    # the step's own figures: what the walk costs with it (−3, 2 Energy) less what it costs so far
    step = page.locator(f"g.dest.dest-step[data-region='{third}']")
    step.wait_for()
    assert (step.get_attribute("data-honor"), step.get_attribute("data-energy")) == ("-1", "2")
    assert "≈" not in page.text_content("#board-holder")  # nothing estimated
    step.click()
    page.wait_for_function("window.stepRequests.length === 2")
    page.click("#btn-hermes-finish")
    confirm = page.locator("dialog#confirm[open]")
    text = confirm.inner_text()
    assert f"Hermes → {spots['first']} → {spots['second']} → {third}" in text
    honor = page.evaluate("window.olympus.model.honor.olympians")
    energy = page.evaluate("window.olympus.model.energy.olympians")
    assert f"Honor {honor} → {honor - 3}" in text and f"Energy {energy} → {energy - 2}" in text
    confirm.locator("[data-action=cancel]").click()
    page.click("#action-panel button:text-is('Undo last step')")  # back to the answered step
    page.locator(f"g.dest.dest-step[data-region='{third}']").wait_for()
    page.click("#action-panel button:text-is('Cancel')")  # leave Hermes' path

    # Apollo: walking by default; the flight (which reveals him) behind the Fly toggle
    page.click("g.unit[data-unit=Apollo]")
    assert page.locator(f"g.dest[data-region='{spots['far']}']").count() == 0
    walk = page.locator(f"g.dest[data-region='{spots['walk']}']")
    assert "…" in walk.locator(".dest-text").text_content()  # more than one way to go there
    walk.click()
    options = page.locator("dialog#chooser[open] button.variant").all_inner_texts()
    assert any("Reveal Charon" in o for o in options)
    page.locator("dialog#chooser[open] [data-action=cancel]").click()
    page.check("#fly-toggle")
    far = page.locator(f"g.dest.dest-fly[data-region='{spots['far']}']")
    assert far.get_attribute("data-honor") == "-4"
    far.click()
    confirm = page.locator("dialog#confirm[open]")
    assert "Fly (reveals Apollo)" in confirm.inner_text()
    confirm.locator("[data-action=cancel]").click()
    page.uncheck("#fly-toggle")
    page.click(f"g.dest[data-region='{spots['enemy']}']")  # an attack is called one
    confirm = page.locator("dialog#confirm[open]")
    assert f"Attack region {spots['enemy']}" in confirm.inner_text()
    confirm.locator("[data-action=cancel]").click()

    # the thunderbolt: its targets on the board, its cost confirmed
    page.click("#btn-clear")
    page.click("#btn-thunderbolt")
    bolt = page.locator(f"g.dest.dest-thunderbolt[data-region='{spots['enemy']}']")
    assert bolt.get_attribute("data-energy") == "6"
    bolt.click()
    costs = page.locator("dialog#confirm[open]").inner_text()
    assert f"Honor {honor} → {honor - 1}, Energy {energy} → {energy - 6}" in costs
    page.locator("dialog#confirm[open] [data-action=cancel]").click()

    # the recall: a list of the fallen, its Energy before → after
    page.click("button:has-text('Cancel the thunderbolt')")
    page.click("#btn-recall")
    chooser = page.locator("dialog#chooser[open]").inner_text()
    assert "Ares" in chooser
    assert f"Energy {energy} → {energy - 10}" in chooser, chooser
    page.keyboard.press("Escape")
    assert page.locator("dialog[open]").count() == 0

    # a decision that loses the game says so: a Liturgy (−2 Honor) at 2 Honor
    page.evaluate("() => { window.olympus.model.honor.olympians = 2; window.olympus.render(); }")
    page.click("#btn-liturgy")
    confirm = page.locator("dialog#confirm[open]")
    assert "You will lose the game" in confirm.inner_text()
    assert "Honor 2 → 0" in confirm.inner_text()
    confirm.locator("[data-action=cancel]").click()
    assert page.get_attribute("#game", "data-inflight") == "false"  # nothing was sent

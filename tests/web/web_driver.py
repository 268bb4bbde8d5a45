"""A player that plays through the UI only: it reads what the page offers (highlighted
destinations, enabled maneuvers, choice buttons) and clicks or types, never sends a frame.

Its choices are random among what the UI shows, biased so that games end quickly: attacks
first, then forward moves; after ``liturgy_after`` turns it only performs Liturgies, which
drains Honor until a side is out.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

Page = Any
BOARD = json.loads(
    (Path(__file__).resolve().parents[2] / "web_client" / "data" / "board.json").read_text()
)
LEVEL = {r["id"]: r["level"] for r in BOARD["regions"]}


@dataclass
class UiPlayer:
    page: Page
    name: str
    rng: random.Random
    liturgy_after: int = 30
    keyboard: bool = False  # act with the keyboard only (focus + Enter/Space, arrows, typing)
    actions: int = 0
    seen_combat: bool = False
    log: list[str] = field(default_factory=list)

    def attr(self, name: str) -> str | None:
        return self.page.get_attribute("#game", f"data-{name}")

    def over(self) -> bool:
        return self.page.locator("#game-over").count() > 0

    def press(self, target: Any) -> None:
        """Activate a button or a focusable SVG element: a click, or focus and Enter/Space."""
        locator = self.page.locator(target) if isinstance(target, str) else target
        if self.keyboard:
            locator.focus()
            self.page.keyboard.press(self.rng.choice(["Enter", " "]))
        else:
            locator.click()

    def confirm_if_asked(self) -> None:
        dialog = self.page.locator("dialog#confirm[open]")
        if dialog.count():
            if self.keyboard:  # the OK button has the focus
                self.page.wait_for_function("document.activeElement.dataset.action === 'ok'")
                self.page.keyboard.press("Enter")
            else:
                dialog.locator("[data-action=ok]").click()

    def busy(self) -> bool:
        return self.attr("inflight") == "true"

    def step(self) -> bool:
        """Do one thing if the UI asks this player for something; True if it did."""
        page = self.page
        if self.busy() or self.over():
            return False
        if page.locator("dialog[open]").count():
            self.confirm_if_asked()
            return True
        if page.locator("#btn-combat-restore").count():  # the combat panel was minimised
            self.press("#btn-combat-restore")
        if page.locator("#btn-commit").count():
            return self.commit()
        choices = page.locator("#combat button.choice")
        if choices.count():
            pick = choices.nth(self.rng.randrange(choices.count()))
            self.log.append(f"choice {pick.inner_text()}")
            self.press(pick)
            self.confirm_if_asked()
            self.actions += 1
            return True
        if self.attr("my-turn") == "true":
            return self.turn()
        return False

    def commit(self) -> bool:
        page = self.page
        radios = page.locator("#commit-form input[name=maneuver]:not([disabled])")
        values = [radios.nth(i).get_attribute("value") for i in range(radios.count())]
        if not values:
            return False  # the form was being redrawn: look again
        weights = [0.5 if v in ("retreat", "all_out_defense") else 1.0 for v in values]
        maneuver = self.rng.choices(values, weights)[0]
        limit = int(page.get_attribute("#energy", "max") or 0)
        energy = self.rng.randint(0, min(limit, 6))
        self.log.append(f"commit {maneuver} {energy}")
        if self.keyboard:
            page.focus("#commit-form input[name=maneuver]:checked")
            for _ in range(12):  # arrows move through the enabled maneuvers
                if page.is_checked(f"#maneuver-{maneuver}"):
                    break
                page.keyboard.press("ArrowDown")
            assert page.is_checked(f"#maneuver-{maneuver}")
            page.keyboard.press("Tab")  # the Energy slider
            for _ in range(energy):
                page.keyboard.press("ArrowRight")
            page.keyboard.press("Tab")  # the Energy number
            assert page.evaluate("document.activeElement.id") == "energy"
            assert page.input_value("#energy") == str(energy)
            page.keyboard.press("Enter")  # submits the form
        else:
            page.check(f"#maneuver-{maneuver}")
            page.fill("#energy", str(energy))
            page.click("#btn-commit")
        self.actions += 1
        return True

    def turn(self) -> bool:
        page = self.page
        turn_number = int(self.attr("turn-number") or 0)
        if turn_number > self.liturgy_after and page.locator("#btn-liturgy").count():
            return self.liturgy()
        units = page.locator("g.unit.mine.movable")
        order = list(range(units.count()))
        self.rng.shuffle(order)
        for index in order[:6]:
            unit = units.nth(index)
            name = unit.get_attribute("data-unit")
            self.press(unit)
            page.wait_for_selector(f"#game[data-selection='{name}']")
            dests = page.locator("g.dest")
            if not dests.count():
                self.press("#btn-clear")
                page.wait_for_selector("#game[data-selection='']")
                continue
            found = [
                (
                    dests.nth(i).get_attribute("data-region"),
                    dests.nth(i).get_attribute("data-attack") == "true",
                    int(dests.nth(i).get_attribute("data-honor") or 0),
                )
                for i in range(dests.count())
            ]
            # attacks first, then the move that gets closest to the enemy's base
            attacks = [d for d in found if d[1] and d[2] >= -2]
            origin = LEVEL[int(unit.get_attribute("data-region") or 0)]
            ahead = 1 if self.name == "chthonians" else -1
            gains = [(LEVEL[int(d[0] or 0)] - origin) * ahead for d in found]
            forward = [(g, d) for g, d in zip(gains, found, strict=True) if g > 0 and d[2] >= -1]
            best = max((g for g, _ in forward), default=0)
            pool = attacks or [d for g, d in forward if g == best] or found
            region = self.rng.choice(pool)[0]
            self.log.append(f"move to {region}")
            self.press(f"g.dest[data-region='{region}']")
            chooser = page.locator("dialog#chooser[open]")
            if chooser.count():
                self.press(chooser.locator("button.variant").first)
            if page.locator("#btn-hermes-finish").count():
                self.press("#btn-hermes-finish")
            self.confirm_if_asked()
            self.actions += 1
            return True
        if page.locator("#btn-liturgy").count():
            return self.liturgy()
        if page.locator("#btn-pass").count():
            self.press("#btn-pass")
            self.confirm_if_asked()
            return True
        return False

    def liturgy(self) -> bool:
        self.log.append("liturgy")
        self.press("#btn-liturgy")
        self.confirm_if_asked()
        self.actions += 1
        return True

"""Fixtures for the browser tests: a real ``olympus serve`` process, Debian's Chromium through
Playwright (never a downloaded browser), and screenshots in ``test-artifacts/`` on failure.

The server runs as a subprocess on a free port with a temporary data dir (its own embedded
Redis), like ``make serve`` does, so the tests see exactly what a browser sees in production:
the static client at ``/``, the HTTP API and the websocket.

Every browser test fails if one of its pages threw an uncaught error or logged an error to its
console, unless the test provokes that console error on purpose and says so with
``@pytest.mark.console_errors(pattern, ...)`` (regular expressions a message must match).
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from web_harness import Server

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
VIEWPORT = {"width": 1400, "height": 950}
# A browser whose player left the lobby's custom game form open (lobby.js, ``customOpen``).
OPEN_CUSTOM = (
    "try { if (localStorage.getItem('olympus.customOpen') === null)"
    " localStorage.setItem('olympus.customOpen', 'true'); } catch (e) {}"
)
# On a failure every page is photographed at both sizes the layout is made for.
SCREENSHOT_SIZES = ({"width": 1280, "height": 720}, {"width": 1920, "height": 1080})


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "console_errors(*patterns): console errors the test provokes on purpose (regular "
        "expressions, searched in '<page>: <message> (<url>)'); any other fails it",
    )


@pytest.fixture(scope="session")
def web_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    server = Server(tmp_path_factory.mktemp("olympus-web")).start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(f"{CHROMIUM} is not installed: `make test` installs it (make browser)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    setattr(item, f"rep_{report.when}", report)


@pytest.fixture
def new_page(
    browser: object, web_server: Server, request: pytest.FixtureRequest
) -> Iterator[Callable[..., object]]:
    """Open a page in a fresh browser context (its own localStorage: another player).

    At the end of the test, no page may have thrown an uncaught error (``errors``) or logged an
    error to its console (``console_errors``) but those the test's ``console_errors`` marker
    allows."""
    contexts: list[object] = []
    pages: list[tuple[str, object]] = []
    errors: list[str] = []
    console_errors: list[str] = []

    def on_console(name: str, message: object) -> None:
        if message.type == "error":  # type: ignore[attr-defined]
            url = message.location.get("url")  # type: ignore[attr-defined]
            where = f" ({url})" if url else ""
            console_errors.append(f"{name}: {message.text}{where}")  # type: ignore[attr-defined]

    def open_page(
        name: str, path: str = "/", custom_open: bool = True, **options: object
    ) -> object:
        """``options`` go to the browser context (``viewport``, ``has_touch``...). The lobby's
        custom game form is open (as its player left it) unless ``custom_open`` is False: the
        tests of other things create their games with it."""
        options = {"viewport": VIEWPORT, **options}
        context = browser.new_context(base_url=web_server.url, **options)  # type: ignore[attr-defined]
        if custom_open:
            context.add_init_script(OPEN_CUSTOM)  # type: ignore[attr-defined]
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(15_000)
        page.on("pageerror", lambda e: errors.append(f"{name}: {e}"))
        page.on("console", lambda m: on_console(name, m))
        pages.append((name, page))
        page.goto(path)
        return page

    open_page.errors = errors  # type: ignore[attr-defined]
    open_page.console_errors = console_errors  # type: ignore[attr-defined]
    yield open_page
    for _, page in pages:  # a round trip: what the page logged last has been delivered
        with contextlib.suppress(Exception):
            page.evaluate("0")  # type: ignore[attr-defined]
    allowed = [
        re.compile(pattern)
        for marker in request.node.iter_markers("console_errors")
        for pattern in marker.args
    ]
    unexpected = [*errors, *(e for e in console_errors if not any(p.search(e) for p in allowed))]
    failed = bool(unexpected) or any(
        getattr(request.node, f"rep_{when}", None) is not None
        and getattr(request.node, f"rep_{when}").failed
        for when in ("setup", "call")
    )
    if failed:
        ARTIFACTS.mkdir(exist_ok=True)
        test = re.sub(r"[^A-Za-z0-9_.-]+", "_", request.node.name)
        for name, page in pages:
            for size in SCREENSHOT_SIZES:
                shot = ARTIFACTS / f"{test}-{name}-{size['width']}x{size['height']}.png"
                with contextlib.suppress(Exception):
                    page.set_viewport_size(size)  # type: ignore[attr-defined]
                    page.screenshot(path=str(shot))  # type: ignore[attr-defined]
        (ARTIFACTS / f"{test}-server.log").write_bytes(web_server.log_path.read_bytes()[-200_000:])
    for context in contexts:
        with contextlib.suppress(Exception):
            context.close()  # type: ignore[attr-defined]
    assert not unexpected, "errors in the pages:\n" + "\n".join(unexpected)

"""docs/protocol.md tells the truth: it lists every error code a client can be sent (the
service's own and the rules', found in the source, so that a new code without its row fails
here), and its worked session is what a real server says to the same frames."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import httpx
from service_harness import ServerThread, WsClient, create_game, seat, setup_from

from olympus.rules import Faction

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ROOT / "service" / "olympus"
# The constructors whose first argument is a code that reaches a client as ``error.code``.
RAISED = re.compile(
    r"(?:ProtocolError|CommandRejected|IllegalCommand|Refusal|TokenError)\(\s*\"([a-z_]+)\"|"
    r"self\._error\(\s*\"([a-z_]+)\""
)


def codes_in_source() -> set[str]:
    found: set[str] = set()
    for path in [*SOURCES.glob("server/*.py"), *SOURCES.glob("rules/**/*.py")]:
        for match in RAISED.finditer(path.read_text()):
            found.add(match.group(1) or match.group(2))
    return found


# The HTTP API's answers: ``LobbyError(status, "code", …)``, the handlers' ``_error(status,
# "code", …)`` and the errors that pass their own (``super().__init__(429, "code", …)``).
ANSWERED = re.compile(r"(?:LobbyError\(|_error\(|__init__\()\s*(\d+),\s*\"([a-z_]+)\"")
HTTP_TABLE = "**The HTTP API's codes**"


def http_codes_in_source() -> set[str]:
    return {
        match.group(2)
        for path in SOURCES.glob("server/*.py")
        for match in ANSWERED.finditer(path.read_text())
    }


def _codes(section: str) -> set[str]:
    return {
        code
        for row in re.findall(r"^\| (.+?) \|", section, re.M)
        for code in re.findall(r"`([a-z_]+)`", row)
    }


def codes_in_doc() -> set[str]:
    text = (ROOT / "docs" / "protocol.md").read_text()
    return _codes(text[text.index("## Errors") : text.index(HTTP_TABLE)])


def http_codes_in_doc() -> set[str]:
    text = (ROOT / "docs" / "protocol.md").read_text()
    return _codes(text[text.index(HTTP_TABLE) : text.index("## Close codes")])


def test_every_error_code_is_in_the_protocol_table() -> None:
    source = codes_in_source()
    assert len(source) > 60  # the pattern still finds them
    documented = codes_in_doc()
    assert source - documented == set(), "codes the service can send, missing from the table"
    assert documented - source == set(), "codes in the table that nothing sends any more"


def test_every_http_error_code_is_in_the_protocol_table() -> None:
    source = http_codes_in_source()
    assert len(source) > 30  # the pattern still finds them
    documented = http_codes_in_doc()
    assert source - documented == set(), "codes the HTTP API can answer, missing from the table"
    assert documented - source == set(), "codes in the table that nothing answers any more"


def session_in_doc() -> tuple[list[dict[str, Any]], list[str]]:
    """The worked session: the client's frames (whole, but the token) and the gist of each
    server message (its type, event, reason or code; the doc cuts long ones at ``…``)."""
    text = (ROOT / "docs" / "protocol.md").read_text()
    session = text[text.index("## A session") :]
    session = session[session.index("```text") : session.index("```", session.index("```text") + 3)]
    sent = [json.loads(line[2:]) for line in session.splitlines() if line.startswith("→ ")]
    said = [gist_of_line(line[2:]) for line in session.splitlines() if line.startswith("← ")]
    return sent, said


def gist_of_line(line: str) -> str:
    found = {
        key: re.search(rf'"{key}":"([a-z_]+)"', line) for key in ("type", "t", "waiting", "code")
    }
    gist = {key: m.group(1) for key, m in found.items() if m}
    if gist["type"] == "legal" and "waiting" not in gist:
        gist["options"] = "setup" if '"setup":' in line else "actions"
    return json.dumps(gist, sort_keys=True)


def gist(message: dict[str, Any]) -> str:
    found: dict[str, Any] = {"type": message["type"]}
    for key in ("waiting", "code"):
        if key in message:
            found[key] = message[key]
    if "event" in message:
        found["t"] = message["event"]["t"]
    if message["type"] == "legal" and "waiting" not in message:
        found["options"] = "setup" if "setup" in message else "actions"
    return json.dumps(found, sort_keys=True)


async def test_the_worked_session_is_what_a_server_says(
    http: httpx.AsyncClient, server: ServerThread
) -> None:
    """The Olympians' frames of the doc's session, sent to a real server, with the Chthonians
    setting up and making a quiet first move; the Olympians' seat hears the same messages, in
    the same order, as the doc shows."""
    sent, said = session_in_doc()
    hello, *commands = sent
    game = await create_game(http)
    client = await WsClient.open(server.ws_url)
    await client.send({**hello, "token": game.tokens[Faction.OLYMPIANS]})
    await client.expect("welcome")
    await client.latest_legal()
    setup, bad = commands
    assert (await client.command(setup["id"], setup["command"]))["type"] == "ack"
    await client.latest_legal()

    chthonians = await seat(server.ws_url, game, Faction.CHTHONIANS)
    options = await chthonians.latest_legal()
    reply = await chthonians.command("s1", setup_from(options))
    assert reply["type"] == "ack", reply
    await client.latest_legal()
    olympians = set(setup["command"]["placements"].values())
    move = next(
        a["command"]
        for a in (await chthonians.latest_legal())["actions"]
        if a["command"]["type"] == "move"
        and a["command"]["to"] not in olympians
        and not (a["command"]["reveal"] or a["command"]["use_power"] or a["command"]["fly"])
        and not a["command"]["steps"]
    )
    assert (await chthonians.command("m1", move))["type"] == "ack"
    await client.latest_legal()
    assert (await client.command(bad["id"], bad["command"]))["type"] == "error"
    assert [gist(m) for m in client.messages] == said

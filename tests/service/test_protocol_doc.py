"""docs/protocol.md lists every error code a client can be sent: the service's own and the
rules' (found in the source, so that a new code without its row fails here)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ROOT / "service" / "olympus"
# The constructors whose first argument is a code that reaches a client as ``error.code``.
RAISED = re.compile(
    r"(?:ProtocolError|CommandRejected|IllegalCommand|TokenError)\(\s*\"([a-z_]+)\"|"
    r"self\._error\(\s*\"([a-z_]+)\""
)


def codes_in_source() -> set[str]:
    found: set[str] = set()
    for path in [*SOURCES.glob("server/*.py"), *SOURCES.glob("rules/**/*.py")]:
        for match in RAISED.finditer(path.read_text()):
            found.add(match.group(1) or match.group(2))
    return found


def codes_in_doc() -> set[str]:
    text = (ROOT / "docs" / "protocol.md").read_text()
    errors = text[text.index("## Errors") : text.index("## Close codes")]
    return {
        code
        for row in re.findall(r"^\| (.+?) \|", errors, re.M)
        for code in re.findall(r"`([a-z_]+)`", row)
    }


def test_every_error_code_is_in_the_protocol_table() -> None:
    source = codes_in_source()
    assert len(source) > 60  # the pattern still finds them
    documented = codes_in_doc()
    assert source - documented == set(), "codes the service can send, missing from the table"
    assert documented - source == set(), "codes in the table that nothing sends any more"

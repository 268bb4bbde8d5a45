"""Display names (api.md, "Names"): sent when creating or joining, checked (length, characters,
no impersonation of the computer opponent) with a stable code, nothing created or joined when
refused, and shown in the room's summary to everyone, a Challenge creator's included."""

from __future__ import annotations

import httpx
import pytest

from olympus.server.names import check_name

# The service's own logic: on the memory backend (tests/store shows both backends alike).
pytestmark = pytest.mark.memory_store


@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("A", "bad_name"),  # too short
        ("x" * 25, "bad_name"),  # too long
        ("   ", "bad_name"),  # nothing once trimmed
        ("Ann<script>", "bad_name"),
        ("Анна", "bad_name"),  # Cyrillic: look-alikes of Latin letters
        ("Ann\u200bKay", "bad_name"),  # an invisible character
        ("Computer", "reserved_name"),
        ("computer 2", "reserved_name"),
        ("C0mput3r", "reserved_name"),
        ("Cómpüter", "reserved_name"),
        ("The C.o.m.p.u.t.e.r", "reserved_name"),
    ],
)
async def test_bad_names_are_refused_and_nothing_is_created(
    http: httpx.AsyncClient, name: str, code: str
) -> None:
    before = (await http.get("/rooms", params={"status": "open"})).json()["rooms"]
    refused = await http.post("/rooms", json={"side": "olympians", "name": name})
    assert refused.status_code == 422 and refused.json()["code"] == code, refused.text
    assert refused.json()["sentence"]
    assert (await http.get("/rooms", params={"status": "open"})).json()["rooms"] == before

    room = (await http.post("/rooms", json={"side": "olympians"})).json()["room"]
    joined = await http.post(f"/rooms/{room}/join", json={"name": name})
    assert joined.status_code == 422 and joined.json()["code"] == code
    summary = (await http.get(f"/rooms/{room}")).json()
    assert summary["seats"]["chthonians"] is False  # the seat was not taken


def test_names_are_tidied() -> None:
    assert check_name("  Zoë   d'Arc-2 ") == "Zoë d'Arc-2"
    assert check_name("Ｋａｙ") == "Kay"  # full-width letters are the plain ones
    assert check_name(None) is None


async def test_names_are_shown_to_everyone(http: httpx.AsyncClient) -> None:
    created = (await http.post("/rooms", json={"side": "olympians", "name": "Ann"})).json()
    room = created["room"]
    summary = (await http.get(f"/rooms/{room}")).json()
    assert summary["names"] == {"olympians": "Ann", "chthonians": None}
    await http.post(f"/rooms/{room}/join", json={"name": "  Bob  "})
    live = (await http.get("/rooms", params={"status": "live"})).json()["rooms"]
    assert next(r for r in live if r["room"] == room)["names"] == {
        "olympians": "Ann",
        "chthonians": "Bob",
    }

    # a Challenge: the creator's name goes to the side the opponent leaves
    host = (await http.post("/rooms", json={"challenge": 2, "name": "Cleo"})).json()
    guest = await http.post(f"/rooms/{host['room']}/join", json={"side": "olympians"})
    assert guest.status_code == 200
    names = (await http.get(f"/rooms/{host['room']}")).json()["names"]
    assert names == {"olympians": None, "chthonians": "Cleo"}

"""Crawl every GET page and endpoint of the characters app as every persona, with a unique marker
in each secret field: a marker shows up only for those allowed to see it, and no page is a 500.

- ST notes: staff only (DESIGN "ST notes are never shown to players").
- A player's characters, ledger and purchases: that player and staff (XP-07).
- The regnant of a bond that has not taken (pure level 2): staff only; the thrall gets a notice
  without the name (BND-01), and the regnant is never told (BND-08).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
from django.urls import URLPattern, URLResolver, get_resolver

from characters.models import Bond, BondKind, Status, XpKind, XpPurchase
from characters.services import ledger

pytestmark = pytest.mark.django_db

MARKS = {
    "st_note_alice": "MARKSTNOTEALICE",
    "ledger_alice": "MARKLEDGERALICE",
    "name_bob": "MARKNAMEBOB",
    "purchase_bob": "MARKPURCHASEBOB",
    "regnant": "MARKREGNANTSECRET",
    "st_note_npc": "MARKSTNOTENPC",
}
# Which personas may see each marker.
STAFF = {"admin", "storyteller"}
ALLOWED = {
    "st_note_alice": STAFF,
    "ledger_alice": STAFF | {"player_alice"},
    "name_bob": STAFF | {"player_bob"},
    "purchase_bob": STAFF | {"player_bob"},
    "regnant": STAFF,
    "st_note_npc": STAFF,
}
PERSONAS = [
    None,
    "admin",
    "storyteller",
    "player_alice",
    "player_bob",
    "outsider",
    "other_storyteller",
]


def _patterns(resolver: URLResolver, prefix: str = "") -> Iterator[tuple[str, URLPattern]]:
    for entry in resolver.url_patterns:
        route = prefix + str(entry.pattern)
        if isinstance(entry, URLResolver):
            yield from _patterns(entry, route)
        else:
            yield route, entry


def _characters_routes() -> list[str]:
    """Every route served by the characters app (pages and API), as regex-ish strings."""
    routes = []
    for route, pattern in _patterns(get_resolver()):
        module = getattr(pattern.callback, "__module__", "")
        if module.startswith("characters.") or "characters" in getattr(
            getattr(pattern.callback, "cls", None), "__module__", ""
        ):
            routes.append(route)
    return routes


def _fill(route: str, values: dict[str, str]) -> str | None:
    """Turn a route ("c/<slug:slug>/characters/<int:pk>/" or a DRF regex) into a path."""
    path = route.lstrip("^").rstrip("$")
    path = re.sub(r"\\\.\(\?P<format>[^)]*\)/?", "", path)  # DRF format suffixes
    if "format" in path:
        return None

    def converter(match: re.Match[str]) -> str:
        name = match.group(1)
        return values.get(name, "\0")

    path = re.sub(r"<(?:\w+:)?(\w+)>", converter, path)
    path = re.sub(r"\(\?P<(\w+)>[^)]*\)", converter, path)
    if "\0" in path or "(" in path or "\\" in path:
        return None
    return "/" + path


@pytest.fixture
def seeded(world: Any, make_character: Any) -> dict[str, Any]:
    alice = make_character("Lucien", player="player_alice", st_notes=MARKS["st_note_alice"])
    bob = make_character(f"Bastien {MARKS['name_bob']}", player="player_bob", clan="brujah")
    npc = make_character(
        f"Lord {MARKS['regnant']}", player=None, clan="ventrue", st_notes=MARKS["st_note_npc"]
    )
    npc.status = Status.NPC
    npc.save(update_fields=["status"])
    ledger.xp_entry_add(
        chronicle=world.chronicle,
        player_id=world.users["player_alice"].pk,
        amount=Decimal(10),
        kind=XpKind.AWARD,
        reason=f"Costume vote {MARKS['ledger_alice']}",
        key="award:seed",
    )
    ledger.xp_entry_add(
        chronicle=world.chronicle,
        player_id=world.users["player_bob"].pk,
        amount=Decimal(10),
        kind=XpKind.AWARD,
        reason="Game 1",
        key="award:seed",
    )
    purchase = XpPurchase.objects.create(
        character=bob,
        kind="discipline",
        discipline="potence",
        levels=["1a"],
        cost=Decimal(3),
        note=MARKS["purchase_bob"],
        requested_by=world.users["player_bob"],
        requested_at=dt.datetime(2024, 3, 10, tzinfo=dt.UTC),
    )
    Bond.objects.create(
        thrall=alice,
        regnant=npc,
        kind=BondKind.PURE,
        level=2,
        bound=False,
        due_on=dt.date(2025, 3, 1),
    )
    return {"alice": alice, "bob": bob, "npc": npc, "purchase": purchase}


def test_markers_appear_only_where_they_belong(world: Any, seeded: dict[str, Any]) -> None:
    routes = _characters_routes()
    assert len(routes) > 10, routes  # the crawl must find the app's pages and endpoints
    paths: set[str] = set()
    for route in routes:
        for character in ("alice", "bob", "npc"):
            values = {
                "slug": world.chronicle.slug,
                "pk": str(seeded[character].pk),
                "character_id": str(seeded[character].pk),
            }
            if "purchase" in route:
                values["pk"] = str(seeded["purchase"].pk)
            path = _fill(route, values)
            if path is not None and not path.rstrip("/").endswith(("/st/\0", "/check", "/submit")):
                paths.add(path)
    assert len(paths) > 15
    leaks: list[str] = []
    for persona in PERSONAS:
        client = world.client(persona)
        for path in sorted(paths):
            response = client.get(path)
            assert response.status_code < 500, (persona, path, response.status_code)
            body = response.content.decode(errors="replace")
            for mark, text in MARKS.items():
                if text in body and persona not in ALLOWED[mark]:
                    leaks.append(f"{persona} sees {mark} at {path} ({response.status_code})")
    assert not leaks, "\n".join(leaks)


def test_staff_do_see_the_secrets_somewhere(world: Any, seeded: dict[str, Any]) -> None:
    """The crawl above would pass on empty pages; prove the marks are on the staff's pages."""
    client = world.client("storyteller")
    sheet = client.get(f"/c/{world.chronicle.slug}/characters/{seeded['alice'].pk}/")
    assert sheet.status_code == 200
    body = sheet.content.decode()
    assert MARKS["st_note_alice"] in body
    assert MARKS["ledger_alice"] in body
    alice_sheet = (
        world.client("player_alice")
        .get(f"/c/{world.chronicle.slug}/characters/{seeded['alice'].pk}/")
        .content.decode()
    )
    assert MARKS["ledger_alice"] in alice_sheet
    assert "beginning of a bond" in alice_sheet

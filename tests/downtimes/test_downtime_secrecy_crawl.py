"""Crawl every GET page and endpoint of the project as every persona, with a unique marker in each
secret field of downtimes: a marker shows up only for those allowed to see it, and nothing is a
500.

- A player's submission (notes, game report, what an action says): that player and the STs.
- ST notes on a desk item, and a result not yet released: the STs only.
- A released result: its player and the STs.
- A picked report's sanitized text, before it is published: the STs only.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from downtimes.models import DeskItem, ItemKind, ReportPick, Submission
from tests import crawl

pytestmark = pytest.mark.django_db

MARKS = {
    "alice_notes": "MARKALICENOTES",
    "alice_report": "MARKALICEREPORT",
    "alice_action": "MARKALICEACTION",
    "st_notes": "MARKSTNOTES",
    "unreleased": "MARKUNRELEASED",
    "released": "MARKRELEASED",
    "bob_notes": "MARKBOBNOTES",
    "unpublished": "MARKUNPUBLISHED",
}
STAFF = {"admin", "storyteller"}
ALLOWED = {
    "alice_notes": STAFF | {"player_alice"},
    "alice_report": STAFF | {"player_alice"},
    "alice_action": STAFF | {"player_alice"},
    "st_notes": STAFF,
    "unreleased": STAFF,
    "released": STAFF | {"player_alice"},
    "bob_notes": STAFF | {"player_bob"},
    "unpublished": STAFF,
}
PERSONAS = [None, "admin", "storyteller", "player_alice", "player_bob", "outsider"]
NOW = dt.datetime(2024, 3, 15, 20, 0, tzinfo=dt.UTC)


@pytest.fixture
def seeded(world: Any, make_character: Any) -> dict[str, Any]:
    cycle = world.game.cycle
    alice = make_character("Lucien", player="player_alice")
    bob = make_character("Bastien", player="player_bob", clan="brujah")

    def submission(character: Any, player: str, **fields: Any) -> Submission:
        return Submission.objects.create(
            cycle=cycle,
            character=character,
            player=world.users[player],
            status="submitted",
            submitted_at=NOW,
            created_at=NOW,
            updated_at=NOW,
            **fields,
        )

    mine = submission(
        alice,
        "player_alice",
        notes=f"Sire {MARKS['alice_notes']}",
        game_report=f"That night {MARKS['alice_report']}",
    )
    theirs = submission(bob, "player_bob", notes=f"Plans {MARKS['bob_notes']}")

    def item(key: str, **fields: Any) -> DeskItem:
        return DeskItem.objects.create(
            cycle=cycle,
            kind=ItemKind.INFLUENCE,
            character=alice,
            submission=mine,
            influence="business",
            points=1,
            action="investigate",
            created_at=NOW,
            updated_at=NOW,
            key=key,
            **fields,
        )

    pending = item(
        "a",
        description=f"Dig into the docks {MARKS['alice_action']}",
        st_notes=f"She is lying {MARKS['st_notes']}",
        result=f"Draft {MARKS['unreleased']}",
        status="in_progress",
    )
    done = item("b", result=f"You learn {MARKS['released']}", status="resolved", released_at=NOW)
    pick = ReportPick.objects.create(
        submission=mine,
        cycle=cycle,
        sanitized_text=f"Cleaned {MARKS['unpublished']}",
        published=False,
        picked_by=world.users["storyteller"],
        picked_at=NOW,
    )
    return {"mine": mine, "theirs": theirs, "pending": pending, "done": done, "pick": pick}


def test_markers_appear_only_where_they_belong(world: Any, seeded: dict[str, Any]) -> None:
    ids = sorted({str(obj.pk) for obj in seeded.values()})
    paths = crawl.all_paths(world.chronicle.slug, ids, world.game.number)
    assert any("/downtime/" in p for p in paths) and any("desk" in p for p in paths), paths
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


def test_those_allowed_do_see_the_secrets(world: Any, seeded: dict[str, Any]) -> None:
    """The crawl above would pass on empty pages: the marks are where they belong."""
    api = f"/api/chronicles/{world.chronicle.slug}/"
    mine = world.client("player_alice").get(f"{api}submissions/{seeded['mine'].pk}/")
    assert mine.status_code == 200
    body = mine.content.decode()
    assert MARKS["alice_notes"] in body and MARKS["released"] in body
    desk = world.client("storyteller").get(f"{api}desk-items/{seeded['pending'].pk}/")
    assert MARKS["st_notes"] in desk.content.decode()

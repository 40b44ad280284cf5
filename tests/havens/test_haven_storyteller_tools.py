"""A haven's page for a storyteller shows the storytellers' tools, not the owners' forms (issue
12: a storyteller used to see "Transfer … As Felix Grant", forms meant for Felix's player)."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

import pytest

from havens.models import Attribute, Project, Structure

pytestmark = [pytest.mark.django_db]
NOW = dt.datetime(2024, 3, 12, 20, 0, tzinfo=dt.UTC)

OWNER_FORMS = (
    "Ask for the transfer",
    "Set the will",
    "Forsake in downtime",
    "Contribute",
    "Cancel this project",
    "Vote to destroy",
    "Repair",
)


@pytest.fixture
def manor(make_character: Any, make_haven: Any) -> Structure:
    felix = make_character("Felix Grant", player="player_alice")
    manor = make_haven(felix, name="Grant Manor")
    make_haven(make_character("Cellar Rat", player="player_bob"), name="Cellar", outer=manor)
    Attribute.objects.create(
        structure=manor, kind="two_way_lock", cost=2, state="destroyed", created_at=NOW
    )
    Project.objects.create(
        structure=manor,
        kind="attribute",
        attribute_kind="camera",
        quantity=1,
        cost=3,
        requested_by=felix,
        created_at=NOW,
    )
    return manor


def _page(world: Any, persona: str, manor: Structure) -> str:
    response = world.client(persona).get(f"/c/{world.chronicle.slug}/havens/{manor.pk}/")
    assert response.status_code == 200
    return response.content.decode()


@pytest.mark.parametrize("persona", ["storyteller", "admin"])
def test_a_storyteller_sees_the_storytellers_tools_only(
    world: Any, manor: Structure, persona: str
) -> None:
    page = _page(world, persona, manor)
    for words in OWNER_FORMS:
        assert words not in page, words
    # No "As <owner>" picker: the storyteller is not Felix.
    assert not re.search(r'<select name="character"', page)
    assert not re.search(r"\bAs\b\s*<select", page)
    for words in ("Storytellers", "Theft control", "Destroy now", "Hiding points"):
        assert words in page, words
    assert "Felix Grant" in page  # still told who owns it


def test_the_owner_still_has_the_owners_forms(world: Any, manor: Structure) -> None:
    page = _page(world, "player_alice", manor)
    for words in ("Ask for the transfer", "Set the will", "Forsake in downtime", "Contribute"):
        assert words in page, words
    assert "Theft control" not in page and "Destroy now" not in page

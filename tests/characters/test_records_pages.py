"""The records page and its forms, for every persona (404 for others' characters, 403 for the
character's own player), errors beside the field with the input kept, and a constant query
count."""

from __future__ import annotations

import re
from typing import Any

import pytest
import time_machine
from django.urls import reverse

from characters.models import BloodDrink, Bond, Item

pytestmark = pytest.mark.django_db


@pytest.fixture
def pc(make_character: Any) -> Any:
    return make_character("Lucien", player="player_alice")


def page(pc: Any) -> str:
    return reverse("character_actions", args=["nightfall", pc.pk])


def action(pc: Any, slug: str) -> str:
    return reverse("character_action", args=["nightfall", pc.pk, slug])


@pytest.mark.parametrize(
    ("persona", "status"),
    [
        ("admin", 200),
        ("storyteller", 200),
        ("player_alice", 403),
        ("player_bob", 404),
        ("outsider", 404),
        ("other_storyteller", 404),
    ],
)
def test_page_personas(world: Any, pc: Any, persona: str, status: int) -> None:
    assert world.client(persona).get(page(pc)).status_code == status


def test_page_anonymous_is_sent_to_log_in(world: Any, pc: Any) -> None:
    response = world.client(None).get(page(pc))
    assert response.status_code == 302
    assert "/accounts/login/" in response["Location"]


@pytest.mark.parametrize(
    ("persona", "status"),
    [
        ("player_alice", 403),
        ("player_bob", 404),
        ("outsider", 404),
        ("other_storyteller", 404),
    ],
)
def test_action_personas_write_nothing(world: Any, pc: Any, persona: str, status: int) -> None:
    data = {"item-name": "Knife", "item-concealability": "blue", "item-armor": "0"}
    data["item-purchase_cost"] = "2"
    assert world.client(persona).post(action(pc, "item"), data).status_code == status
    assert not Item.objects.exists()


def test_unknown_action_is_404(world: Any, pc: Any) -> None:
    assert world.client("storyteller").post(action(pc, "teleport"), {}).status_code == 404


def test_item_recorded_then_redirect(world: Any, pc: Any) -> None:
    data = {
        "item-name": "Knife",
        "item-concealability": "blue",
        "item-armor": "0",
        "item-purchase_cost": "2",
    }
    response = world.client("admin").post(action(pc, "item"), data)
    assert response.status_code == 302
    assert Item.objects.get().name == "Knife"


def test_refusal_beside_the_form_and_input_kept(world: Any, pc: Any) -> None:
    data = {
        "item-name": "Plate armour",
        "item-concealability": "yellow",
        "item-armor": "5",
        "item-purchase_cost": "9",
    }
    response = world.client("storyteller").post(action(pc, "item"), data)
    assert response.status_code == 400
    body = response.content.decode()
    assert "ITM-01" in body
    assert 'value="Plate armour"' in body
    assert not Item.objects.exists()


@time_machine.travel("2024-01-02 12:00-05:00", tick=False)
def test_drink_through_htmx_returns_the_fragment(world: Any, pc: Any, make_character: Any) -> None:
    regnant = make_character("Regnant", player="player_bob")
    data = {"drink-night": "2024-01-01", "drink-donors": [str(regnant.pk)]}
    response = world.client("storyteller").post(action(pc, "drink"), data, HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    body = response.content.decode()
    assert "Drink recorded" in body
    assert "<html" not in body
    assert BloodDrink.objects.count() == 1
    assert Bond.objects.get().level == 1


def test_drink_refused_through_htmx_keeps_input(world: Any, pc: Any, make_character: Any) -> None:
    a, b = make_character("A", player=None), make_character("B", player=None)
    data = {"drink-night": "2024-01-01", "drink-donors": [str(a.pk), str(b.pk)]}
    response = world.client("storyteller").post(action(pc, "drink"), data, HTTP_HX_REQUEST="true")
    assert response.status_code == 400
    body = response.content.decode()
    assert "BND-04" in body and 'value="2024-01-01"' in body
    assert not BloodDrink.objects.exists()


@pytest.mark.parametrize("others", [1, 50])
def test_page_query_count_constant(
    world: Any, pc: Any, make_character: Any, django_assert_num_queries: Any, others: int
) -> None:
    for i in range(others):
        make_character(f"NPC {i}", player=None)
    client = world.client("storyteller")
    # session, user, membership, character, ledger entries, characters, stored blood, items,
    # captivities, requests, titles, known locations, sewer locations, cycles, bonds,
    # memberships for the header switcher
    with django_assert_num_queries(16):
        assert client.get(page(pc)).status_code == 200


def test_note_form_shows_current_notes(world: Any, pc: Any) -> None:
    pc.st_notes = "Watch the Prince"
    pc.save()
    assert "Watch the Prince" in world.client("storyteller").get(page(pc)).content.decode()
    response = world.client("storyteller").post(action(pc, "note"), {"note-notes": "New"})
    assert response.status_code == 302
    pc.refresh_from_db()
    assert pc.st_notes == "New"


def test_correction_adds_a_ledger_entry(world: Any, pc: Any) -> None:
    response = world.client("storyteller").post(
        action(pc, "correction"), {"correction-amount": "2.5", "correction-reason": "Typo fix"}
    )
    assert response.status_code == 302
    assert pc.player.xp_entries.get().amount == 2.5


def test_a_double_clicked_correction_writes_once(world: Any, pc: Any) -> None:
    """The form carries a token drawn with it; the same submit twice is one ledger entry."""
    client = world.client("storyteller")
    page = client.get(reverse("character_actions", args=["nightfall", pc.pk])).content.decode()
    token = re.search(r'name="correction-token" value="([0-9a-f]{32})"', page)
    assert token is not None
    form = {
        "correction-amount": "5",
        "correction-reason": "Costume vote was missed",
        "correction-token": token.group(1),
    }
    assert client.post(action(pc, "correction"), form).status_code == 302
    assert client.post(action(pc, "correction"), form).status_code == 302
    assert pc.player.xp_entries.count() == 1
    fresh = client.get(reverse("character_actions", args=["nightfall", pc.pk])).content.decode()
    assert token.group(1) not in fresh  # the next form draws a new token

"""The creation API (CRE-01..09) under /api/chronicles/<slug>/drafts/: personas, the quote,
refusals in the one error shape, and approval through the same services."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from django.test import Client

from characters.models import Approval, Character, DisciplineLevel
from characters.services import creation
from tests.characters.test_creation_services import NOW, TOREADOR, make_draft

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("postgres")]

BASE = "/api/chronicles/nightfall/drafts/"
BODY: dict[str, Any] = {
    "name": "Lucien",
    "creature": "kindred",
    "clan": "toreador",
    "clan_bonus": "social",
    "physical": 3,
    "social": 7,
    "mental": 5,
    "abilities": {"etiquette": 2, "expression": 2, "empathy": 1},
    "willpower": 2,
    "influences": {"herd": 1, "business": 1, "occult": 1},
    "disciplines": [
        {"discipline": "auspex", "free": "1b"},
        {"discipline": "presence", "free": "1a"},
        {"discipline": "celerity", "top": "1a"},
    ],
    "disadvantages": [{"name": "Vain", "major": True}],
    "extra_social": 2,
    "extra_willpower": 1,
    "background_questionnaire": "Embraced at the opera in 1923.",
}
PERSONAS: list[str | None] = [
    "admin",
    "storyteller",
    "player_alice",
    "player_bob",
    "outsider",
    "other_storyteller",
    None,
]


def api(world: Any, persona: str | None) -> Client:
    return world.client(persona)


def post(client: Client, path: str, body: dict[str, Any] | None = None) -> Any:
    return client.post(path, body or {}, content_type="application/json")


def submitted(world: Any) -> Character:
    character = make_draft(world)
    return creation.character_submit(character=character, by=world.users["player_alice"], now=NOW)


def test_create_returns_the_draft_and_its_quote(world: Any) -> None:
    response = post(api(world, "player_alice"), BASE, BODY)
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["approval"] == "draft"
    assert body["quote"]["cost"] == 8 and body["quote"]["freebies"] == 10
    assert body["quote"]["problems"] == {}
    assert body["draft"]["disciplines"][2] == {"discipline": "celerity", "free": "", "top": "1a"}
    assert Character.objects.get(pk=body["id"]).player == world.users["player_alice"]


@pytest.mark.parametrize(
    ("persona", "expected"),
    list(zip(PERSONAS, [201, 201, 201, 201, 404, 404, 401], strict=True)),
)
def test_create_personas(world: Any, persona: str | None, expected: int) -> None:
    assert post(api(world, persona), BASE, BODY).status_code == expected


def test_check_quotes_without_saving(world: Any) -> None:
    body = BODY | {"disciplines": [*BODY["disciplines"], {"discipline": "protean", "top": "1a"}]}
    response = post(api(world, "player_bob"), BASE + "check/", body)
    assert response.status_code == 200
    quote = response.json()
    assert quote["cost"] == 8
    assert any("(DIS-04)" in message for message in quote["problems"]["disciplines"])
    assert {"item": "Celerity 1a (in-clan)", "cost": 3} in quote["lines"]
    assert not Character.objects.exists()


@pytest.mark.parametrize(
    ("persona", "expected"),
    list(zip(PERSONAS, [200, 200, 200, 404, 404, 404, 401], strict=True)),
)
def test_retrieve_and_update_personas(world: Any, persona: str | None, expected: int) -> None:
    character = make_draft(world)
    client = api(world, persona)
    assert client.get(f"{BASE}{character.pk}/").status_code == expected
    response = client.put(
        f"{BASE}{character.pk}/", BODY | {"name": "Renamed"}, content_type="application/json"
    )
    assert response.status_code == expected
    renamed = Character.objects.get(pk=character.pk).name == "Renamed"
    assert renamed == (expected == 200)


def test_list_shows_a_player_only_their_own_drafts(
    world: Any, django_assert_num_queries: Any
) -> None:
    make_draft(world)
    make_draft(world, dataclasses.replace(TOREADOR, name="Bob's"), persona="player_bob")
    alice = api(world, "player_alice")
    # session, user, membership (with chronicle), count, page
    with django_assert_num_queries(5):
        response = alice.get(BASE)
    assert [row["draft"]["name"] for row in response.json()["results"]] == ["Lucien"]
    names = [row["draft"]["name"] for row in api(world, "storyteller").get(BASE).json()["results"]]
    assert names == ["Lucien", "Bob's"]


def test_list_costs_the_same_for_many_drafts(world: Any, django_assert_num_queries: Any) -> None:
    # More drafts than a player may open by default (issue 16's limit, a house setting).
    world.chronicle.house_rule_overrides = {"open_drafts_per_player": 8}
    world.chronicle.save(update_fields=["house_rule_overrides"])
    for n in range(8):
        make_draft(world, dataclasses.replace(TOREADOR, name=f"Draft {n}"))
    alice = api(world, "player_alice")
    # session, user, membership (with chronicle), count, page: as for one draft
    with django_assert_num_queries(5):
        assert len(alice.get(BASE).json()["results"]) == 8


def test_submit_refusal_has_the_one_error_shape_and_writes_nothing(world: Any) -> None:
    character = make_draft(world, dataclasses.replace(TOREADOR, extra_mental=3))
    response = post(api(world, "player_alice"), f"{BASE}{character.pk}/submit/")
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "invalid"
    assert "(CRE-01)" in error["fields"]["freebies"][0]
    assert Character.objects.get(pk=character.pk).approval == Approval.DRAFT


def test_submit_then_approve_writes_the_levels(world: Any) -> None:
    character = make_draft(world)
    response = post(api(world, "player_alice"), f"{BASE}{character.pk}/submit/")
    assert response.json()["approval"] == "submitted"
    approved = post(api(world, "storyteller"), f"{BASE}{character.pk}/approve/")
    assert approved.status_code == 200
    assert approved.json()["approval"] == "approved"
    assert DisciplineLevel.objects.filter(character=character).count() == 4


@pytest.mark.parametrize(
    ("persona", "expected"),
    list(zip(PERSONAS, [200, 200, 403, 404, 404, 404, 401], strict=True)),
)
@pytest.mark.parametrize("action", ["approve", "return", "background-approve"])
def test_storyteller_actions_personas(
    world: Any, persona: str | None, expected: int, action: str
) -> None:
    character = submitted(world)
    response = post(api(world, persona), f"{BASE}{character.pk}/{action}/", {"note": "Why?"})
    assert response.status_code == expected
    fresh = Character.objects.get(pk=character.pk)
    if expected != 200:
        assert fresh.approval == Approval.SUBMITTED
        assert fresh.background_approved_at is None


def test_second_active_pc_is_refused_over_the_api(world: Any, make_character: Any) -> None:
    make_character("Old Hand", player="player_alice")
    character = submitted(world)
    response = post(api(world, "storyteller"), f"{BASE}{character.pk}/approve/")
    assert response.status_code == 400
    assert "(XP-07)" in response.json()["error"]["message"]
    assert Character.objects.get(pk=character.pk).approval == Approval.SUBMITTED


def test_return_needs_a_note(world: Any) -> None:
    character = submitted(world)
    response = post(api(world, "storyteller"), f"{BASE}{character.pk}/return/", {"note": ""})
    assert response.status_code == 400
    assert "note" in response.json()["error"]["fields"]
    assert Character.objects.get(pk=character.pk).approval == Approval.SUBMITTED


def test_a_bad_shape_is_refused_before_any_write(world: Any) -> None:
    response = post(api(world, "player_alice"), BASE, BODY | {"clan": "werewolf", "physical": -1})
    assert response.status_code == 400
    assert set(response.json()["error"]["fields"]) == {"clan", "physical"}
    assert not Character.objects.exists()

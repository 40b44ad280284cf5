"""Storyteller forms for services that had none (SEW-03/04 sewer-add and sewer-search, BND-09
request-drop), on the records page and the records API; and the player's decline of a queued
diablerie generation step (XP-05) from the sheet and the API."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
import time_machine
from django.urls import reverse

from characters.models import (
    Character,
    Diablerie,
    GenerationStep,
    KnownSewerLocation,
    RegnantRequest,
    RequestSetAt,
    SewerLocation,
)

pytestmark = pytest.mark.django_db

NOW = dt.datetime(2024, 3, 12, 18, 0, tzinfo=dt.UTC)
STRANGERS = [("player_bob", 404), ("outsider", 404), ("other_storyteller", 404)]


@pytest.fixture(autouse=True)
def frozen() -> Any:
    with time_machine.travel(NOW, tick=False):
        yield


@pytest.fixture
def pc(make_character: Any) -> Character:
    return make_character("Mole", player="player_alice", clan="nosferatu", sewer_lore=3)


def action(pc: Character, slug: str) -> str:
    return reverse("character_action", args=["nightfall", pc.pk, slug])


def api(pc: Character, kind: str) -> str:
    return f"/api/chronicles/nightfall/characters/{pc.pk}/records/{kind}/"


def test_the_records_page_has_the_three_new_forms(world: Any, pc: Character) -> None:
    page = world.client("storyteller").get(reverse("character_actions", args=["nightfall", pc.pk]))
    html = page.content.decode()
    for slug in ("sewer-add", "sewer-search", "request-drop"):
        assert f'id="action-{slug}"' in html, slug


# --- sewer-add (SEW-03) -------------------------------------------------------------------------


def test_sewer_add_records_the_location_and_its_defenders(
    world: Any, pc: Character, make_character: Any
) -> None:
    guard = make_character("Guard", player=None, clan="nosferatu", sewer_lore=4)
    data = {
        "sewer-add-number": "7",
        "sewer-add-level": "3",
        "sewer-add-description": "Under the old cathedral",
        "sewer-add-defenders": [str(guard.pk)],
    }
    response = world.client("storyteller").post(action(pc, "sewer-add"), data, follow=True)
    assert "Location 7 (level 3) added." in response.content.decode()
    location = SewerLocation.objects.get()
    assert (location.number, location.level, location.description) == (
        7,
        3,
        "Under the old cathedral",
    )
    assert list(location.defenders.all()) == [guard]


def test_sewer_add_refuses_a_taken_number_beside_the_field(world: Any, pc: Character) -> None:
    SewerLocation.objects.create(chronicle=world.chronicle, number=7, level=2)
    data = {"sewer-add-number": "7", "sewer-add-level": "5", "sewer-add-description": "Again"}
    response = world.client("storyteller").post(action(pc, "sewer-add"), data)
    assert response.status_code == 400
    html = response.content.decode()
    assert "Location 7 already exists (SEW-03)." in html
    assert 'value="Again"' in html
    assert SewerLocation.objects.get().level == 2


def test_sewer_add_refuses_a_level_above_8(world: Any, pc: Character) -> None:
    data = {"sewer-add-number": "3", "sewer-add-level": "9"}
    assert world.client("storyteller").post(action(pc, "sewer-add"), data).status_code == 400
    assert not SewerLocation.objects.exists()


@pytest.mark.parametrize(("persona", "status"), [("player_alice", 403), *STRANGERS])
def test_sewer_add_personas_write_nothing(
    world: Any, pc: Character, persona: str, status: int
) -> None:
    data = {"sewer-add-number": "1", "sewer-add-level": "1"}
    assert world.client(persona).post(action(pc, "sewer-add"), data).status_code == status
    response = world.client(persona).post(
        api(pc, "sewer-add"), {"number": 1, "level": 1}, content_type="application/json"
    )
    assert response.status_code == status
    assert not SewerLocation.objects.exists()


def test_sewer_add_anonymous_writes_nothing(world: Any, pc: Character) -> None:
    data = {"sewer-add-number": "1", "sewer-add-level": "1"}
    assert world.client(None).post(action(pc, "sewer-add"), data).status_code == 302
    assert not SewerLocation.objects.exists()


def test_sewer_add_through_the_api(world: Any, pc: Character) -> None:
    response = world.client("admin").post(
        api(pc, "sewer-add"), {"number": 4, "level": 2}, content_type="application/json"
    )
    assert response.status_code == 200, response.json()
    assert response.json() == {"message": "Location 4 (level 2) added."}


# --- sewer-search (SEW-04) ----------------------------------------------------------------------


def test_a_successful_search_says_who_learned_it(
    world: Any, pc: Character, make_character: Any
) -> None:
    friend = make_character("Rat", player="player_bob", clan="nosferatu", sewer_lore=2)
    guard = make_character("Guard", player=None, clan="nosferatu", sewer_lore=1)
    location = SewerLocation.objects.create(chronicle=world.chronicle, number=5, level=4)
    location.defenders.set([guard])
    # Lore 3 + 2 = 5 >= 3 x 1: found; both have free slots.
    data = {"sewer-search-searchers": [str(pc.pk), str(friend.pk)]}
    data["sewer-search-location"] = str(location.pk)
    response = world.client("storyteller").post(
        action(pc, "sewer-search"), data, HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 200
    assert "Location 5 found; learned by Mole, Rat." in response.content.decode()
    assert set(KnownSewerLocation.objects.values_list("character__name", flat=True)) == {
        "Mole",
        "Rat",
    }


def test_a_failed_search_teaches_nobody(world: Any, pc: Character, make_character: Any) -> None:
    guard = make_character("Guard", player=None, clan="nosferatu", sewer_lore=2)
    location = SewerLocation.objects.create(chronicle=world.chronicle, number=5, level=4)
    location.defenders.set([guard])
    response = world.client("storyteller").post(
        api(pc, "sewer-search"),
        {"searchers": [pc.pk], "location": location.pk},  # 3 < 3 x 2
        content_type="application/json",
    )
    assert response.status_code == 200
    assert response.json()["message"].startswith("Nobody learned location 5")
    assert not KnownSewerLocation.objects.exists()


@pytest.mark.parametrize(("persona", "status"), [("player_alice", 403), *STRANGERS])
def test_sewer_search_personas_write_nothing(
    world: Any, pc: Character, persona: str, status: int
) -> None:
    location = SewerLocation.objects.create(chronicle=world.chronicle, number=5, level=1)
    data = {"sewer-search-searchers": [str(pc.pk)], "sewer-search-location": str(location.pk)}
    assert world.client(persona).post(action(pc, "sewer-search"), data).status_code == status
    assert not KnownSewerLocation.objects.exists()


# --- request-drop (BND-09) ----------------------------------------------------------------------


@pytest.fixture
def request_(world: Any, pc: Character, make_character: Any) -> RegnantRequest:
    regnant = make_character("Regnant", player="player_bob")
    return RegnantRequest.objects.create(
        thrall=pc,
        regnant=regnant,
        text="Bring me the ledger",
        set_at=RequestSetAt.GAME,
        created_at=NOW,
    )


def test_request_drop_frees_the_request(world: Any, pc: Character, request_: Any) -> None:
    client = world.client("storyteller")
    page = client.get(reverse("character_actions", args=["nightfall", pc.pk])).content.decode()
    assert "Regnant: Bring me the ledger" in page
    response = client.post(action(pc, "request-drop"), {"request-drop-request": str(request_.pk)})
    assert response.status_code == 302
    request_.refresh_from_db()
    assert request_.dropped_at == NOW
    # Dropped requests are no longer offered: a second drop is a choice error, not a 500.
    again = client.post(action(pc, "request-drop"), {"request-drop-request": str(request_.pk)})
    assert again.status_code == 400
    assert "Select a valid choice" in again.content.decode()


def test_request_drop_through_the_api(world: Any, pc: Character, request_: Any) -> None:
    response = world.client("storyteller").post(
        api(pc, "request-drop"), {"request": request_.pk}, content_type="application/json"
    )
    assert response.json() == {"message": "Request dropped."}
    request_.refresh_from_db()
    assert request_.dropped_at is not None


@pytest.mark.parametrize(("persona", "status"), [("player_alice", 403), *STRANGERS, (None, 401)])
def test_request_drop_personas_write_nothing(
    world: Any, pc: Character, request_: Any, persona: str | None, status: int
) -> None:
    response = world.client(persona).post(
        api(pc, "request-drop"), {"request": request_.pk}, content_type="application/json"
    )
    assert response.status_code == status
    request_.refresh_from_db()
    assert request_.dropped_at is None


# --- The player's decline of a diablerie step (XP-05) --------------------------------------------


@pytest.fixture
def diablerie(world: Any, pc: Character) -> Diablerie:
    return Diablerie.objects.create(
        diablerist=pc,
        victim_name="Old One",
        victim_generation=9,
        occurred_on=dt.date(2024, 3, 9),
        black_veins_until=dt.date(2024, 9, 9),
        generation_step=GenerationStep.QUEUED,
        recorded_by=world.users["storyteller"],
        recorded_at=NOW,
    )


def decline(pc: Character, diablerie: Diablerie) -> str:
    return reverse("diablerie_step_decline", args=["nightfall", pc.pk, diablerie.pk])


def decline_api(pc: Character, diablerie: Diablerie) -> str:
    return f"/api/chronicles/nightfall/characters/{pc.pk}/diableries/{diablerie.pk}/decline/"


def test_the_sheet_offers_the_decline_to_the_player_only(
    world: Any, pc: Character, diablerie: Diablerie
) -> None:
    sheet = reverse("character_sheet", args=["nightfall", pc.pk])
    assert decline(pc, diablerie) in world.client("player_alice").get(sheet).content.decode()
    staff_view = world.client("storyteller").get(sheet).content.decode()
    assert "Diablerie of Old One" in staff_view
    assert decline(pc, diablerie) not in staff_view


def test_the_player_declines_from_the_sheet(
    world: Any, pc: Character, diablerie: Diablerie
) -> None:
    client = world.client("player_alice")
    response = client.post(decline(pc, diablerie), follow=True)
    assert "Declined the generation step from the diablerie of Old One (XP-05)." in (
        response.content.decode()
    )
    diablerie.refresh_from_db()
    assert diablerie.generation_step == GenerationStep.DECLINED
    assert client.post(decline(pc, diablerie)).status_code == 302  # twice changes nothing


def test_a_step_not_queued_is_refused_with_its_rule(
    world: Any, pc: Character, diablerie: Diablerie
) -> None:
    Diablerie.objects.filter(pk=diablerie.pk).update(generation_step=GenerationStep.TAKEN)
    page = world.client("player_alice").post(decline(pc, diablerie), follow=True)
    assert "(XP-05)" in page.content.decode()
    response = world.client("player_alice").post(decline_api(pc, diablerie))
    assert response.status_code == 400
    assert "XP-05" in str(response.json())
    diablerie.refresh_from_db()
    assert diablerie.generation_step == GenerationStep.TAKEN


@pytest.mark.parametrize(
    "persona", ["admin", "storyteller", "player_bob", "outsider", "other_storyteller"]
)
def test_only_the_player_may_decline(
    world: Any, pc: Character, diablerie: Diablerie, persona: str
) -> None:
    assert world.client(persona).post(decline(pc, diablerie)).status_code == 404
    assert world.client(persona).post(decline_api(pc, diablerie)).status_code == 404
    diablerie.refresh_from_db()
    assert diablerie.generation_step == GenerationStep.QUEUED


def test_anonymous_cannot_decline(world: Any, pc: Character, diablerie: Diablerie) -> None:
    assert world.client(None).post(decline(pc, diablerie)).status_code == 302
    assert world.client(None).post(decline_api(pc, diablerie)).status_code == 401
    diablerie.refresh_from_db()
    assert diablerie.generation_step == GenerationStep.QUEUED


def test_another_characters_path_is_404(
    world: Any, pc: Character, diablerie: Diablerie, make_character: Any
) -> None:
    other = make_character("Other", player="player_alice", status="retired")
    wrong = reverse("diablerie_step_decline", args=["nightfall", other.pk, diablerie.pk])
    assert world.client("player_alice").post(wrong).status_code == 404
    assert world.client("player_alice").get(decline(pc, diablerie)).status_code == 405


def test_the_player_declines_through_the_api(
    world: Any, pc: Character, diablerie: Diablerie
) -> None:
    response = world.client("player_alice").post(decline_api(pc, diablerie))
    assert response.status_code == 200
    assert response.json()["generation_step"] == "declined"

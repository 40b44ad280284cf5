"""CRE-08 / CLN-01 flags in the creation wizard: a Gangrel's Wolf or Bat form, a Ventrue's
feeding demographic, a Tzimisce's embrace earth and the sect, through the services, the page and
the drafts API, copied onto the sheet at approval."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from characters.models import Approval, Character
from characters.services import creation
from characters.services.creation import DisciplinePick, Draft
from tests.characters.test_creation_api import BODY
from tests.characters.test_creation_pages import FORM
from tests.characters.test_creation_services import NOW, TOREADOR

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("postgres")]

GANGREL = dataclasses.replace(
    TOREADOR,
    name="Rowan",
    clan="gangrel",
    clan_bonus="",
    disciplines=(DisciplinePick("protean", free="1b"), DisciplinePick("animalism", free="1a")),
    extra_social=0,
    protean_form="bat",
    sect="independent",
)
VENTRUE = dataclasses.replace(
    GANGREL,
    name="Magnus",
    clan="ventrue",
    clan_bonus="leadership",
    disciplines=(DisciplinePick("dominate", free="1b"), DisciplinePick("presence", free="1a")),
    protean_form="",
    feeding_demographic="Night-shift nurses",
    sect="camarilla",
)
TZIMISCE = dataclasses.replace(
    GANGREL,
    name="Vlad",
    clan="tzimisce",
    disciplines=(DisciplinePick("vicissitude", free="1b"), DisciplinePick("auspex", free="1a")),
    protean_form="",
    embrace_earth=True,
    sect="sabbat",
)


def problems(world: Any, draft: Draft) -> dict[str, list[str]]:
    return dict(creation.creation_quote(draft, house_rules=world.chronicle.house_rules).problems)


def approve(world: Any, draft: Draft) -> Character:
    alice = world.users["player_alice"]
    character = creation.character_draft_create(
        chronicle=world.chronicle, player=alice, draft=draft, now=NOW
    )
    creation.character_submit(character=character, by=alice, now=NOW)
    creation.character_approve(character=character, by=world.users["storyteller"], now=NOW)
    character.refresh_from_db()
    return character


@pytest.mark.parametrize(
    ("draft", "columns"),
    [
        pytest.param(GANGREL, {"protean_form": "bat", "sect": "independent"}, id="gangrel"),
        pytest.param(
            VENTRUE,
            {"feeding_demographic": "Night-shift nurses", "sect": "camarilla"},
            id="ventrue",
        ),
        pytest.param(TZIMISCE, {"embrace_earth": True, "sect": "sabbat"}, id="tzimisce"),
    ],
)
def test_approval_copies_the_flags_onto_the_sheet(
    world: Any, draft: Draft, columns: dict[str, Any]
) -> None:
    assert problems(world, draft) == {}
    character = approve(world, draft)
    defaults = {"protean_form": "", "feeding_demographic": "", "embrace_earth": False}
    for name, value in (defaults | columns).items():
        assert getattr(character, name) == value, name


def test_a_draft_keeps_its_flags_off_the_sheet_until_approval(world: Any) -> None:
    character = creation.character_draft_create(
        chronicle=world.chronicle, player=world.users["player_alice"], draft=VENTRUE, now=NOW
    )
    character.refresh_from_db()
    assert (character.feeding_demographic, character.sect) == ("", "")
    assert Draft.from_character(character).feeding_demographic == "Night-shift nurses"


@pytest.mark.parametrize(
    ("draft", "field", "rule"),
    [
        pytest.param(
            dataclasses.replace(GANGREL, protean_form=""), "protean_form", "CRE-08", id="CRE-08"
        ),
        pytest.param(
            dataclasses.replace(TOREADOR, protean_form="wolf"),
            "protean_form",
            "CRE-08",
            id="CRE-08-not-gangrel",
        ),
        pytest.param(
            dataclasses.replace(VENTRUE, feeding_demographic=""),
            "feeding_demographic",
            "CLN-01",
            id="CLN-01-ventrue",
        ),
        pytest.param(
            dataclasses.replace(TZIMISCE, embrace_earth=False),
            "embrace_earth",
            "CLN-01",
            id="CLN-01-tzimisce",
        ),
    ],
)
def test_a_missing_or_foreign_flag_refuses_submission_and_writes_nothing(
    world: Any, draft: Draft, field: str, rule: str
) -> None:
    assert [rule in message for message in problems(world, draft)[field]] == [True]
    alice = world.users["player_alice"]
    character = creation.character_draft_create(
        chronicle=world.chronicle, player=alice, draft=draft, now=NOW
    )
    with pytest.raises(ValidationError) as caught:
        creation.character_submit(character=character, by=alice, now=NOW)
    assert rule in " ".join(caught.value.message_dict[field])
    character.refresh_from_db()
    assert character.approval == Approval.DRAFT and character.submitted_at is None


def test_the_setting_lets_others_choose_their_form_at_creation(world: Any) -> None:
    world.chronicle.house_rule_overrides = {"gangrel_only_choose_form_at_creation": False}
    world.chronicle.save()
    character = approve(world, dataclasses.replace(TOREADOR, protean_form="wolf"))
    assert character.protean_form == "wolf"


def test_an_unknown_sect_is_refused(world: Any) -> None:
    with pytest.raises(ValidationError) as caught:
        creation.character_draft_create(
            chronicle=world.chronicle,
            player=world.users["player_alice"],
            draft=dataclasses.replace(TOREADOR, sect="inconnu"),
        )
    assert "sect" in caught.value.message_dict
    assert not Character.objects.exists()


# --- The page and the API ------------------------------------------------------------------------

GANGREL_FORM = FORM | {
    "name": "Rowan",
    "clan": "gangrel",
    "clan_bonus": "",
    "discipline_1": "protean",
    "free_1": "1b",
    "discipline_2": "animalism",
    "free_2": "1a",
    "discipline_3": "",
    "top_3": "",
    "extra_social": "0",
    "sect": "independent",
}


def test_the_wizard_shows_the_missing_form_beside_its_field_and_keeps_the_rest(
    world: Any,
) -> None:
    alice = world.client("player_alice")
    response = alice.post(reverse("character_create", args=["nightfall"]), GANGREL_FORM)
    character = Character.objects.get()
    page = alice.get(response["Location"]).content.decode()
    box = page.split('id="problems-protean_form"')[1].split("</div>")[0]
    assert "A Gangrel chooses Wolf or Bat form for Protean 2a at creation (CRE-08)." in box
    assert '<option value="independent" selected>' in page
    alice.post(
        reverse("character_edit", args=["nightfall", character.pk]),
        GANGREL_FORM | {"protean_form": "wolf"},
    )
    assert Draft.from_character(Character.objects.get()).protean_form == "wolf"
    submit = alice.post(
        reverse("character_submit", args=["nightfall", character.pk]),
        GANGREL_FORM | {"protean_form": "wolf"},
    )
    assert submit.status_code == 302
    assert Character.objects.get().approval == Approval.SUBMITTED


def test_the_wizard_page_has_the_flag_fields(world: Any) -> None:
    html = world.client("player_alice").get(reverse("character_create", args=["nightfall"]))
    text = html.content.decode()
    for name in ("sect", "protean_form", "feeding_demographic", "embrace_earth"):
        assert f'name="{name}"' in text, name


def test_the_drafts_api_takes_and_returns_the_flags(world: Any) -> None:
    client = world.client("player_alice")
    body = BODY | {"clan": "ventrue", "clan_bonus": "leadership", "sect": "camarilla"}
    body["disciplines"] = [
        {"discipline": "dominate", "free": "1b"},
        {"discipline": "presence", "free": "1a"},
    ]
    body["extra_social"] = 0
    first = client.post("/api/chronicles/nightfall/drafts/", body, content_type="application/json")
    assert first.status_code == 201, first.json()
    assert first.json()["quote"]["problems"]["feeding_demographic"] == [
        "A Ventrue names the feeding demographic, a group under 20% of people (CLN-01)."
    ]
    body["feeding_demographic"] = "Night-shift nurses"
    second = client.post("/api/chronicles/nightfall/drafts/", body, content_type="application/json")
    assert second.status_code == 201, second.json()
    out = second.json()
    assert out["quote"]["problems"] == {}
    assert out["draft"]["feeding_demographic"] == "Night-shift nurses"
    assert out["draft"]["sect"] == "camarilla"
    bad = client.post(
        "/api/chronicles/nightfall/drafts/",
        body | {"protean_form": "both"},
        content_type="application/json",
    )
    assert bad.status_code == 400

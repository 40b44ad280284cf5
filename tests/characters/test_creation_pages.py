"""The creation wizard's pages (CRE-01..09): personas, save and submit without JavaScript, the
htmx live check, and the ST review."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from characters.models import Approval, Character, DisciplineLevel
from characters.services import creation
from tests.characters.test_creation_services import NOW, TOREADOR, make_draft

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("postgres")]

# A valid Toreador as the wizard posts it: 8 of 10 freebies.
FORM: dict[str, Any] = {
    "name": "Lucien",
    "creature": "kindred",
    "clan": "toreador",
    "clan_bonus": "social",
    "physical": "3",
    "social": "7",
    "mental": "5",
    "willpower": "2",
    "generation": "13",
    "ability_1": "Etiquette",
    "rating_1": "2",
    "ability_2": "Expression",
    "rating_2": "2",
    "ability_3": "Empathy",
    "rating_3": "1",
    "herd": "1",
    "business": "1",
    "occult": "1",
    "discipline_1": "auspex",
    "free_1": "1b",
    "discipline_2": "presence",
    "free_2": "1a",
    "discipline_3": "celerity",
    "top_3": "1a",
    "disadvantage_1": "Vain",
    "major_1": "on",
    "extra_social": "2",
    "extra_willpower": "1",
    "background_questionnaire": "Embraced at the opera in 1923.",
}
STRANGERS = {"outsider": 404, "other_storyteller": 404}


def url(name: str, *pk: int) -> str:
    from django.urls import reverse

    return reverse(name, args=["nightfall", *pk])


def client(world: Any, persona: str | None) -> Client:
    return world.client(persona)


@pytest.mark.parametrize(
    ("persona", "expected"),
    [
        ("admin", 200),
        ("storyteller", 200),
        ("player_alice", 200),
        ("player_bob", 200),
        ("outsider", 404),
        ("other_storyteller", 404),
        (None, 302),
    ],
)
def test_create_page_personas(world: Any, persona: str | None, expected: int) -> None:
    response = client(world, persona).get(url("character_create"))
    assert response.status_code == expected


def test_every_input_has_its_label(world: Any) -> None:
    html = client(world, "player_alice").get(url("character_create")).content.decode()
    for label in (
        "Name",
        "Creature",
        "Clan",
        "Physical",
        "Social",
        "Mental",
        "Willpower",
        "Background questionnaire",
        "Ability 1",
        "Rating 1",
        "Discipline 1",
        "Free levels 1",
        "Bought up to 1",
        "Disadvantage 1",
        "Major 1",
    ):
        assert f">{label}" in html, label
    assert ">Save draft</button>" in html and ">Submit for approval</button>" in html
    assert 'hx-trigger="input changed delay:300ms"' in html


def test_create_saves_a_draft_and_redirects_to_edit(world: Any) -> None:
    response = client(world, "player_alice").post(url("character_create"), FORM)
    character = Character.objects.get()
    assert response.status_code == 302
    assert response["Location"] == url("character_edit", character.pk)
    assert (character.player, character.approval) == (world.users["player_alice"], Approval.DRAFT)
    page = client(world, "player_alice").get(response["Location"]).content.decode()
    assert "Freebies: 8 of 10 spent" in page
    assert 'value="Lucien"' in page  # what was typed comes back


def test_a_shape_error_keeps_what_was_typed(world: Any) -> None:
    response = client(world, "player_alice").post(
        url("character_create"), FORM | {"physical": "seven"}
    )
    assert response.status_code == 400
    html = response.content.decode()
    assert 'value="seven"' in html and "Enter a whole number." in html
    assert not Character.objects.exists()


@pytest.mark.parametrize(
    ("persona", "expected"),
    [
        ("admin", 200),
        ("storyteller", 200),
        ("player_alice", 200),
        ("player_bob", 404),
        ("outsider", 404),
        ("other_storyteller", 404),
        (None, 302),
    ],
)
def test_edit_page_personas(world: Any, persona: str | None, expected: int) -> None:
    character = make_draft(world)
    assert client(world, persona).get(url("character_edit", character.pk)).status_code == expected


def test_another_player_cannot_save_over_a_draft(world: Any) -> None:
    character = make_draft(world)
    response = client(world, "player_bob").post(
        url("character_edit", character.pk), FORM | {"name": "Stolen"}
    )
    assert response.status_code == 404
    assert Character.objects.get(pk=character.pk).name == "Lucien"


def test_save_without_js_shows_problems_beside_their_section(world: Any) -> None:
    character = make_draft(world)
    alice = client(world, "player_alice")
    bad = FORM | {"physical": "5", "social": "5", "mental": "5", "extra_mental": "3"}
    response = alice.post(url("character_edit", character.pk), bad, follow=True)
    html = response.content.decode()
    assert "Draft saved." in html
    assert '<div class="problems" id="problems-physical"' in html
    assert "The trait areas must be 7, 5 and 3, one each (CRE-01)." in html
    assert "Freebies: 11 of 10 spent" in html
    assert "(CRE-01)" in html.split('id="problems-freebies"')[1].split("</div>")[0]


def test_htmx_check_returns_the_partial_with_the_running_total(world: Any) -> None:
    character = make_draft(world)
    response = client(world, "player_alice").post(
        url("character_check", character.pk),
        FORM | {"extra_social": "0", "discipline_4": "protean", "top_4": "1a"},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 200
    html = response.content.decode()
    assert "<html" not in html
    assert 'id="freebie-total"' in html and "Freebies: 6 of 10 spent" in html
    disciplines = html.split('id="problems-disciplines"')[1].split("</div>")[0]
    assert "(DIS-04)" in disciplines and 'hx-swap-oob="true"' in html
    # Checking writes nothing.
    assert Character.objects.get(pk=character.pk).creation["extra_social"] == 2


def test_htmx_check_on_the_create_page(world: Any) -> None:
    response = client(world, "player_bob").post(url("character_check", 0), FORM)
    assert "Freebies: 8 of 10 spent" in response.content.decode()


@pytest.mark.parametrize(
    ("persona", "expected"),
    [
        ("storyteller", 200),
        ("player_alice", 200),
        ("player_bob", 404),
        ("outsider", 404),
        ("other_storyteller", 404),
        (None, 302),
    ],
)
def test_check_personas(world: Any, persona: str | None, expected: int) -> None:
    character = make_draft(world)
    response = client(world, persona).post(url("character_check", character.pk), FORM)
    assert response.status_code == expected


def test_submit_from_the_page_and_a_double_click_writes_once(world: Any) -> None:
    character = make_draft(world)
    alice = client(world, "player_alice")
    first = alice.post(url("character_submit", character.pk), FORM)
    assert first.status_code == 302
    submitted_at = Character.objects.get(pk=character.pk).submitted_at
    second = alice.post(url("character_submit", character.pk), FORM | {"name": "Other"})
    assert second.status_code == 302
    fresh = Character.objects.get(pk=character.pk)
    assert (fresh.approval, fresh.submitted_at, fresh.name) == (
        Approval.SUBMITTED,
        submitted_at,
        "Lucien",
    )


def test_a_refused_submit_lists_every_problem_and_stays_a_draft(world: Any) -> None:
    character = make_draft(world)
    response = client(world, "player_alice").post(
        url("character_submit", character.pk),
        FORM | {"background_questionnaire": "", "extra_mental": "3"},
    )
    assert response.status_code == 400
    html = response.content.decode()
    assert "(CRE-09)" in html and "Freebies: 11 of 10 spent" in html
    assert Character.objects.get(pk=character.pk).approval == Approval.DRAFT


@pytest.mark.parametrize(
    ("persona", "expected"),
    [
        ("admin", 200),
        ("storyteller", 200),
        ("player_alice", 403),
        ("player_bob", 404),
        ("outsider", 404),
        ("other_storyteller", 404),
        (None, 302),
    ],
)
def test_review_page_personas(world: Any, persona: str | None, expected: int) -> None:
    character = make_draft(world)
    creation.character_submit(character=character, by=world.users["player_alice"], now=NOW)
    response = client(world, persona).get(url("character_review", character.pk))
    assert response.status_code == expected
    post = client(world, persona).post(url("character_review", character.pk), {"action": "approve"})
    assert post.status_code == {200: 302}.get(expected, expected)


def test_review_approve_redirects_to_the_sheet(world: Any) -> None:
    character = make_draft(world)
    creation.character_submit(character=character, by=world.users["player_alice"], now=NOW)
    st = client(world, "storyteller")
    page = st.get(url("character_review", character.pk)).content.decode()
    assert ">Approve</button>" in page and ">Return to player</button>" in page
    assert "Freebies: 8 of 10 spent" in page
    response = st.post(url("character_review", character.pk), {"action": "approve"})
    assert response["Location"] == url("character_sheet", character.pk)
    assert Character.objects.get(pk=character.pk).approval == Approval.APPROVED
    assert DisciplineLevel.objects.filter(character=character).count() == 4


def test_review_return_needs_a_note(world: Any) -> None:
    character = make_draft(world)
    creation.character_submit(character=character, by=world.users["player_alice"], now=NOW)
    st = client(world, "storyteller")
    empty = st.post(url("character_review", character.pk), {"action": "return", "note": ""})
    assert empty.status_code == 400
    assert Character.objects.get(pk=character.pk).approval == Approval.SUBMITTED
    st.post(url("character_review", character.pk), {"action": "return", "note": "Less, please."})
    fresh = Character.objects.get(pk=character.pk)
    assert (fresh.approval, fresh.approval_note) == (Approval.RETURNED, "Less, please.")
    page = client(world, "player_alice").get(url("character_edit", character.pk)).content.decode()
    assert "Less, please." in page and ">Save draft</button>" in page


def test_review_refusal_is_shown_not_a_500(world: Any, make_character: Any) -> None:
    make_character("Old Hand", player="player_alice")
    character = make_draft(world)
    creation.character_submit(character=character, by=world.users["player_alice"], now=NOW)
    response = client(world, "storyteller").post(
        url("character_review", character.pk), {"action": "approve"}
    )
    assert response.status_code == 400
    assert "(XP-07)" in response.content.decode()


def test_review_background_approval(world: Any) -> None:
    character = make_draft(world)
    client(world, "storyteller").post(
        url("character_review", character.pk), {"action": "background"}
    )
    assert Character.objects.get(pk=character.pk).background_approved_at is not None


@pytest.mark.parametrize("drafts", [1, 6])
def test_pages_cost_the_same_whatever_the_data(
    world: Any, django_assert_num_queries: Any, drafts: int
) -> None:
    import dataclasses

    # More drafts than a player may open by default (issue 16's limit, a house setting).
    world.chronicle.house_rule_overrides = {"open_drafts_per_player": drafts}
    world.chronicle.save(update_fields=["house_rule_overrides"])
    for n in range(drafts):
        make_draft(world, dataclasses.replace(TOREADOR, name=f"Draft {n}"))
    character = Character.objects.order_by("pk").first()
    assert character is not None
    creation.character_submit(character=character, by=world.users["player_alice"], now=NOW)
    alice, st = client(world, "player_alice"), client(world, "storyteller")
    # session, user, membership (with chronicle), character (with player), the header's
    # chronicle switcher
    with django_assert_num_queries(5):
        assert alice.get(url("character_edit", character.pk)).status_code == 200
    # session, user, membership (with chronicle), character (with player), chronicle switcher
    with django_assert_num_queries(5):
        assert st.get(url("character_review", character.pk)).status_code == 200

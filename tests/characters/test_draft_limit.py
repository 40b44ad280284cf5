"""Issue 16: a player could open drafts without limit (143 in five minutes of fuzzing the
API). A player keeps at most `open_drafts_per_player` characters in creation (drafts and
returned ones, default 3); submitting or deleting one frees a place; storytellers are not
limited. The page shows the refusal at the top of the form, the API answers 400 in the one
error shape."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from django.core.exceptions import ValidationError

from characters import rules
from characters.models import Approval, Character
from characters.services import creation
from chronicle.models import Chronicle
from tests.characters.test_creation_api import BASE, BODY, post
from tests.characters.test_creation_pages import FORM, url
from tests.characters.test_creation_services import TOREADOR, make_draft, user

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("postgres")]


def draft(name: str) -> creation.Draft:
    return dataclasses.replace(TOREADOR, name=name)


def three_drafts(world: Any, persona: str = "player_alice") -> list[Character]:
    return [make_draft(world, draft(f"Draft {n}"), persona) for n in range(1, 4)]


def open_drafts(world: Any, persona: str = "player_alice") -> int:
    return Character.objects.filter(
        player=world.users[persona], approval__in=creation.EDITABLE
    ).count()


@pytest.mark.parametrize(
    ("open_now", "limit", "refused"),
    [
        pytest.param(0, 3, False, id="GEN-drafts-first"),
        pytest.param(2, 3, False, id="GEN-drafts-third"),
        pytest.param(3, 3, True, id="GEN-drafts-fourth"),
        pytest.param(7, 3, True, id="GEN-drafts-above"),
        pytest.param(3, 5, False, id="GEN-drafts-setting"),
    ],
)
def test_rule(open_now: int, limit: int, refused: bool) -> None:
    if refused:
        with pytest.raises(ValueError, match="in creation"):
            rules.check_open_drafts(open_now, open_drafts_per_player=limit)
    else:
        rules.check_open_drafts(open_now, open_drafts_per_player=limit)


def test_the_fourth_draft_is_refused_by_the_service(world: Any) -> None:
    three_drafts(world)
    with pytest.raises(ValidationError) as caught:
        make_draft(world, draft("Draft 4"))
    assert "3 characters in creation" in caught.value.messages[0]
    assert open_drafts(world) == 3
    # Saving over an open draft (same name: a second click) is not a new one.
    make_draft(world, draft("Draft 2"))
    # Another player has places of their own.
    make_draft(world, draft("Bob's"), "player_bob")


def test_the_setting_changes_the_limit(world: Any) -> None:
    three_drafts(world)
    # The stored override, as the settings page writes it once in force.
    Chronicle.objects.filter(pk=world.chronicle.pk).update(
        house_rule_overrides={"open_drafts_per_player": 4}
    )
    world.chronicle.refresh_from_db()
    make_draft(world, draft("Draft 4"))
    with pytest.raises(ValidationError):
        make_draft(world, draft("Draft 5"))


def test_storytellers_are_not_limited(world: Any) -> None:
    for n in range(5):
        make_draft(world, draft(f"NPC {n}"), "storyteller")
    assert open_drafts(world, "storyteller") == 5


def test_submitting_or_deleting_frees_a_place(world: Any) -> None:
    first, second, _third = three_drafts(world)
    creation.character_submit(character=first, by=user(world, "player_alice"))
    make_draft(world, draft("Draft 4"))
    with pytest.raises(ValidationError):
        make_draft(world, draft("Draft 5"))
    creation.character_draft_delete(character=second, by=user(world, "player_alice"))
    assert not Character.objects.filter(pk=second.pk).exists()
    make_draft(world, draft("Draft 5"))
    # A returned character counts again: it is open for the player to change.
    creation.character_return(character=first, by=user(world, "storyteller"), note="Fix it.")
    assert open_drafts(world) == 4


def test_only_characters_in_creation_can_be_deleted(world: Any) -> None:
    character = make_draft(world)
    creation.character_submit(character=character, by=user(world, "player_alice"))
    with pytest.raises(ValidationError, match="still in creation"):
        creation.character_draft_delete(character=character, by=user(world, "player_alice"))
    other = make_draft(world, draft("Other"))
    with pytest.raises(Exception, match="Only the character's player"):
        creation.character_draft_delete(character=other, by=user(world, "player_bob"))
    assert Character.objects.filter(pk=other.pk, approval=Approval.DRAFT).exists()


def test_the_page_refuses_the_fourth_draft_at_the_top_of_the_form(world: Any) -> None:
    three_drafts(world)
    response = world.client("player_alice").post(
        url("character_create"), {**FORM, "name": "Draft 4"}
    )
    assert response.status_code == 400
    html = response.content.decode()
    assert 'class="errors" role="alert"' in html
    assert "3 characters in creation" in html
    assert open_drafts(world) == 3


def test_the_page_deletes_a_draft(world: Any) -> None:
    first, *_rest = three_drafts(world)
    page = world.client("player_alice").get(url("character_edit", first.pk))
    assert url("character_delete", first.pk) in page.content.decode()
    response = world.client("player_alice").post(url("character_delete", first.pk))
    assert response.status_code == 302
    assert not Character.objects.filter(pk=first.pk).exists()
    # Bob cannot delete Alice's draft: he does not see it.
    second = Character.objects.filter(player=world.users["player_alice"]).first()
    assert second is not None
    response = world.client("player_bob").post(url("character_delete", second.pk))
    assert response.status_code == 404
    response = world.client("player_alice").post(url("character_create"), FORM)
    assert response.status_code == 302


def test_the_api_answers_400_then_201_after_a_delete(world: Any) -> None:
    client = world.client("player_alice")
    ids = []
    for n in range(1, 4):
        response = post(client, BASE, {**BODY, "name": f"Draft {n}"})
        assert response.status_code == 201, response.content
        ids.append(response.json()["id"])
    response = post(client, BASE, {**BODY, "name": "Draft 4"})
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "invalid"
    assert "3 characters in creation" in error["message"]
    assert open_drafts(world) == 3
    assert client.delete(f"{BASE}{ids[0]}/").status_code == 204
    assert world.client("player_bob").delete(f"{BASE}{ids[1]}/").status_code == 404
    response = post(client, BASE, {**BODY, "name": "Draft 4"})
    assert response.status_code == 201
    # Submitting frees a place too.
    assert post(client, f"{BASE}{ids[1]}/submit/").status_code == 200
    assert post(client, BASE, {**BODY, "name": "Draft 5"}).status_code == 201

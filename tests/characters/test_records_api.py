"""The records API: personas on both endpoints, one error shape, the same services."""

from __future__ import annotations

from typing import Any

import pytest
import time_machine

from characters.models import BloodDrink, Item

pytestmark = pytest.mark.django_db


@pytest.fixture
def pc(make_character: Any) -> Any:
    return make_character("Lucien", player="player_alice")


def url(pc: Any, kind: str = "") -> str:
    base = f"/api/chronicles/nightfall/characters/{pc.pk}/records/"
    return f"{base}{kind}/" if kind else base


ITEM = {"name": "Knife", "concealability": "blue", "armor": 0, "purchase_cost": 2}


@pytest.mark.parametrize(
    ("persona", "status"),
    [
        ("admin", 200),
        ("storyteller", 200),
        ("player_alice", 403),
        ("player_bob", 404),
        ("outsider", 404),
        ("other_storyteller", 404),
        (None, 401),
    ],
)
def test_personas(world: Any, pc: Any, persona: str | None, status: int) -> None:
    client = world.client(persona)
    assert client.get(url(pc)).status_code == status
    response = client.post(url(pc, "item"), ITEM, content_type="application/json")
    assert response.status_code == status
    assert Item.objects.count() == (1 if status == 200 else 0)


def test_refusal_has_the_one_error_shape(world: Any, pc: Any, make_character: Any) -> None:
    a, b = make_character("A", player=None), make_character("B", player=None)
    response = world.client("storyteller").post(
        url(pc, "drink"),
        {"night": "2024-01-01", "donors": [a.pk, b.pk], "mixed": False},
        content_type="application/json",
    )
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "invalid"
    assert "BND-04" in error["fields"]["donors"][0]
    assert not BloodDrink.objects.exists()


@time_machine.travel("2024-01-02 12:00-05:00", tick=False)
def test_drink_then_bond_state(world: Any, pc: Any, make_character: Any) -> None:
    regnant = make_character("Regnant", player="player_bob")
    client = world.client("storyteller")
    response = client.post(
        url(pc, "drink"),
        {"night": "2024-01-01", "donors": [regnant.pk]},
        content_type="application/json",
    )
    assert response.status_code == 200, response.content
    (bond,) = client.get(url(pc)).json()["bonds"]
    assert (bond["regnant"], bond["level"], bond["bound"]) == (regnant.pk, 1, False)


def test_unknown_kind_is_404(world: Any, pc: Any) -> None:
    response = world.client("storyteller").post(
        url(pc, "teleport"), {}, content_type="application/json"
    )
    assert response.status_code == 404


@pytest.mark.parametrize("kind", ["death", "retire", "summons-lock", "drink"])
@pytest.mark.parametrize(
    "value", [5, -1, 2**40, True, [1], {"a": 1}, "1e400", "9999-12-31"], ids=repr
)
def test_any_json_value_is_a_400_never_a_500(
    world: Any, pc: Any, make_character: Any, kind: str, value: Any
) -> None:
    """Dates (and every other field) sent as numbers, booleans, lists or objects are refused
    with the one error shape, as the page would refuse them."""
    make_character("Prince", player=None, clan="ventrue")
    field = {"death": "died_on", "retire": "on", "summons-lock": "won_on", "drink": "night"}[kind]
    client = world.client("storyteller")
    client.raise_request_exception = False
    response = client.post(url(pc, kind), {field: value}, content_type="application/json")
    assert response.status_code == 400, response.content
    assert response.json()["error"]["code"] == "invalid"
    pc.refresh_from_db()
    assert pc.status == "active"


def test_a_body_that_is_not_an_object_is_refused(world: Any, pc: Any) -> None:
    response = world.client("storyteller").post(
        url(pc, "note"), [1, 2], content_type="application/json"
    )
    assert response.status_code == 400
    assert "JSON object" in response.json()["error"]["message"]

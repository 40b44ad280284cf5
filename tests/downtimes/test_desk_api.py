"""The influence desk's API: personas, filters, PATCH with the version check, bulk approval,
at-game requests (INF-04), the one error shape, and no ST notes in D1's player serializers."""

from __future__ import annotations

import datetime as dt
import itertools
from typing import Any

import pytest

from characters.models import Character
from downtimes.models import DeskItem

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("postgres")]

NOW = dt.datetime(2024, 3, 12, 20, 0, tzinfo=dt.UTC)
BASE = "/api/chronicles/nightfall/desk-items/"
_keys = itertools.count(1)


def make_item(cycle: Any, character: Character, **fields: Any) -> DeskItem:
    values: dict[str, Any] = {
        "kind": "influence",
        "influence": "business",
        "points": 1,
        "action": "investigate",
        "description": "Ask around.",
        "created_at": NOW,
        "updated_at": NOW,
        "key": f"test:{next(_keys)}",
    }
    values.update(fields)
    return DeskItem.objects.create(cycle=cycle, character=character, **values)


@pytest.fixture
def alice(make_character: Any) -> Character:
    return make_character("Lucien", player="player_alice", business=3)


@pytest.fixture
def bob(make_character: Any) -> Character:
    return make_character("Marguerite", player="player_bob", clan="ventrue")


@pytest.mark.parametrize(
    ("persona", "expected"),
    [
        ("admin", 200),
        ("storyteller", 200),
        ("player_alice", 403),
        ("player_bob", 403),
        ("outsider", 404),
        ("other_storyteller", 404),
        (None, 403),
    ],
)
def test_personas(world: Any, alice: Character, persona: str | None, expected: int) -> None:
    item = make_item(world.game.cycle, alice, st_notes="secret plan")
    client = world.client(persona)
    listed = client.get(BASE)
    assert listed.status_code in ({expected, 401} if persona is None else {expected})
    assert client.get(f"{BASE}{item.pk}/").status_code in (
        {expected, 401} if persona is None else {expected}
    )
    if expected != 200:
        assert b"secret plan" not in listed.content
        assert "error" in listed.json()
        patch = client.patch(
            f"{BASE}{item.pk}/",
            {"version": 1, "st_notes": "x"},
            content_type="application/json",
        )
        assert patch.status_code != 200
        item.refresh_from_db()
        assert item.st_notes == "secret plan"


def test_list_filters_and_shows_st_fields_to_staff(
    world: Any, alice: Character, bob: Character, make_character: Any
) -> None:
    make_item(world.game.cycle, alice, description="Alpha one", st_notes="n1")
    make_item(world.game.cycle, bob, description="Bravo one", status="approved")
    klaus = make_character("Klaus", player=None, chronicle=world.other)
    make_item(world.other_game.cycle, klaus, description="Foreign")
    client = world.client("storyteller")
    everything = client.get(BASE).json()
    descriptions = [row["description"] for row in everything["results"]]
    assert descriptions == ["Alpha one", "Bravo one"]
    assert everything["results"][0]["st_notes"] == "n1"
    only_bob = client.get(BASE, {"character": bob.pk, "game": 1}).json()["results"]
    assert [row["description"] for row in only_bob] == ["Bravo one"]
    approved = client.get(BASE, {"status": "approved"}).json()["results"]
    assert [row["description"] for row in approved] == ["Bravo one"]
    assert client.get(BASE, {"game": 99}).status_code == 404


def test_other_chronicles_item_is_404(world: Any, make_character: Any) -> None:
    klaus = make_character("Klaus", player=None, chronicle=world.other)
    foreign = make_item(world.other_game.cycle, klaus)
    client = world.client("storyteller")
    assert client.get(f"{BASE}{foreign.pk}/").status_code == 404
    response = client.patch(
        f"{BASE}{foreign.pk}/",
        {"version": 1, "status": "approved"},
        content_type="application/json",
    )
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


def test_patch_with_version_and_the_stale_one_is_refused(world: Any, alice: Character) -> None:
    item = make_item(world.game.cycle, alice)
    st, admin = world.client("storyteller"), world.client("admin")
    url = f"{BASE}{item.pk}/"
    ok = st.patch(
        url,
        {
            "version": 1,
            "status": "in_progress",
            "assignee": world.users["storyteller"].pk,
            "st_notes": "Mine",
        },
        content_type="application/json",
    )
    assert ok.status_code == 200
    assert (ok.json()["version"], ok.json()["assignee_name"]) == (2, "storyteller")
    stale = admin.patch(url, {"version": 1, "status": "rejected"}, content_type="application/json")
    assert stale.status_code == 400
    error = stale.json()["error"]
    assert "Another storyteller changed this item" in error["fields"]["version"][0]
    item.refresh_from_db()
    assert (item.status, item.st_notes) == ("in_progress", "Mine")
    unassigned = admin.patch(url, {"version": 2, "assignee": None}, content_type="application/json")
    assert unassigned.json()["assignee"] is None
    bad = admin.patch(
        url,
        {"version": 3, "assignee": world.users["player_bob"].pk},
        content_type="application/json",
    )
    assert bad.status_code == 400 and "assignee" in bad.json()["error"]["fields"]


def test_bulk_approve_by_ids_or_filters(world: Any, alice: Character, bob: Character) -> None:
    a = make_item(world.game.cycle, alice)
    b = make_item(world.game.cycle, bob)
    c = make_item(world.game.cycle, bob, status="rejected")
    client = world.client("storyteller")
    by_ids = client.post(
        f"{BASE}bulk-approve/", {"game": 1, "ids": [a.pk]}, content_type="application/json"
    )
    assert by_ids.json() == {"updated": 1, "skipped": 0}
    by_filter = client.post(
        f"{BASE}bulk-approve/?character={bob.pk}", {"game": 1}, content_type="application/json"
    )
    assert by_filter.json() == {"updated": 1, "skipped": 1}
    statuses = dict(DeskItem.objects.values_list("pk", "status"))
    assert statuses == {a.pk: "approved", b.pk: "approved", c.pk: "rejected"}


def test_at_game_request(world: Any, alice: Character) -> None:
    client = world.client("storyteller")
    body = {
        "game": 1,
        "character": alice.pk,
        "action": "leave_city",
        "influence": "business",
        "points": 1,
        "description": "Drives to Chicago",
        "requested_at": "2024-03-09T22:15:00-05:00",
        "key": "k1",
    }
    first = client.post(f"{BASE}at-game/", body, content_type="application/json")
    again = client.post(f"{BASE}at-game/", body, content_type="application/json")
    assert (first.status_code, again.status_code) == (201, 200)
    assert first.json()["id"] == again.json()["id"]
    assert first.json()["kind"] == "at_game"
    refused = client.post(
        f"{BASE}at-game/", body | {"points": 9, "key": "k2"}, content_type="application/json"
    )
    assert refused.status_code == 400
    assert "INF-03" in refused.json()["error"]["fields"]["points"][0]
    assert DeskItem.objects.count() == 1


def test_player_serializers_of_downtimes_carry_no_st_fields() -> None:
    """ST notes never reach a player: the desk is staff-only, and no serializer of the
    player's downtime API (D1's, in downtimes.api.submissions) names st_notes or assignee."""
    from rest_framework import serializers

    from downtimes.api import submissions

    found = [
        (name, obj)
        for name, obj in vars(submissions).items()
        if isinstance(obj, type) and issubclass(obj, serializers.BaseSerializer)
    ]
    for name, serializer in found:
        fields = getattr(getattr(serializer, "Meta", None), "fields", None) or []
        declared = getattr(serializer, "_declared_fields", {})
        assert "st_notes" not in fields and "st_notes" not in declared, name


# --- Review fixes: invalid filters, withdrawn items, XP purchases, odd cycle numbers -------------


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("kind=power&character=999999", "character"),
        ("kind=power&character=%C2%B2", "character"),
        ("assignee=12345", "assignee"),
        ("status=bogus", "status"),
    ],
)
def test_an_invalid_filter_is_a_400_never_a_wider_set(
    world: Any, alice: Character, query: str, field: str
) -> None:
    make_item(world.game.cycle, alice, kind="power", action="", power="ritual")
    make_item(world.game.cycle, alice)
    client = world.client("storyteller")
    approve = client.post(
        f"{BASE}bulk-approve/?{query}", {"game": 1}, content_type="application/json"
    )
    assert approve.status_code == 400
    assert field in approve.json()["error"]["fields"]
    assert set(DeskItem.objects.values_list("status", "version")) == {("new", 1)}
    listing = client.get(f"{BASE}?{query}")
    assert listing.status_code == 400 and field in listing.json()["error"]["fields"]


def test_bulk_approve_leaves_withdrawn_items_and_purchases_and_patch_refuses(
    world: Any, alice: Character
) -> None:
    live = make_item(world.game.cycle, alice)
    withdrawn = make_item(world.game.cycle, alice, withdrawn_at=NOW)
    purchase = make_item(
        world.game.cycle, alice, kind="purchase", action="", influence="", points=0
    )
    client = world.client("storyteller")
    done = client.post(f"{BASE}bulk-approve/", {"game": 1}, content_type="application/json")
    assert done.json() == {"updated": 1, "skipped": 2}
    statuses = dict(DeskItem.objects.values_list("pk", "status"))
    assert statuses == {live.pk: "approved", withdrawn.pk: "new", purchase.pk: "new"}
    for item, words in (
        (withdrawn, "The player withdrew this item"),
        (purchase, "Sign off XP purchases on the purchase queue (XP-01)."),
    ):
        refused = client.patch(
            f"{BASE}{item.pk}/",
            {"version": 1, "status": "approved"},
            content_type="application/json",
        )
        assert refused.status_code == 400
        assert words in refused.json()["error"]["fields"]["status"][0]
    assert DeskItem.objects.get(pk=withdrawn.pk).status == "new"


@pytest.mark.parametrize("game", ["²", "x", "0", "9" * 30])
def test_odd_cycle_numbers_are_404_never_500(world: Any, game: str) -> None:
    client = world.client("storyteller")
    client.raise_request_exception = False
    assert client.get(BASE, {"game": game}).status_code == 404

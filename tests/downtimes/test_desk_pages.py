"""The influence desk's pages: personas, filters, edits with the version check, assignment,
bulk approval, reminders, at-game requests and query counts for 10 and 1,000 items."""

from __future__ import annotations

import datetime as dt
import itertools
from decimal import Decimal
from typing import Any

import pytest
from django.core import mail
from django.urls import reverse

from characters.models import Character, XpPurchase
from downtimes.models import DeskItem, ItemKind

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("postgres")]

NOW = dt.datetime(2024, 3, 12, 20, 0, tzinfo=dt.UTC)
_keys = itertools.count(1)


def item_fields(character: Character, **fields: Any) -> dict[str, Any]:
    values: dict[str, Any] = {
        "kind": "influence",
        "character": character,
        "influence": "business",
        "points": 1,
        "action": "investigate",
        "description": "Ask around.",
        "created_at": NOW,
        "updated_at": NOW,
        "key": f"test:{next(_keys)}",
    }
    values.update(fields)
    return values


def make_item(cycle: Any, character: Character, **fields: Any) -> DeskItem:
    return DeskItem.objects.create(cycle=cycle, **item_fields(character, **fields))


def desk_url(world: Any) -> str:
    return reverse("desk", args=[world.chronicle.slug])


@pytest.fixture
def alice(make_character: Any) -> Character:
    return make_character("Lucien", player="player_alice", business=3)


@pytest.fixture
def bob(make_character: Any) -> Character:
    return make_character("Marguerite", player="player_bob", clan="ventrue")


# --- Personas ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("persona", "expected"),
    [
        ("admin", 200),
        ("storyteller", 200),
        ("player_alice", 403),
        ("player_bob", 403),
        ("outsider", 404),
        ("other_storyteller", 404),
    ],
)
def test_desk_page_personas(world: Any, alice: Character, persona: str, expected: int) -> None:
    item = make_item(world.game.cycle, alice, st_notes="secret plan")
    client = world.client(persona)
    assert client.get(desk_url(world)).status_code == expected
    detail = reverse("desk_item", args=[world.chronicle.slug, item.pk])
    assert client.get(detail).status_code == expected
    # Staff: redirected back, or the at-game form's errors (an empty form is a 400).
    for name, done in [
        ("desk_bulk_approve", 302),
        ("desk_remind", 302),
        ("desk_release", 302),
        ("desk_at_game", 400),
    ]:
        response = client.post(reverse(name, args=[world.chronicle.slug]), {"game": 1})
        assert response.status_code == (done if expected == 200 else expected)
    if expected != 200:
        response = client.post(
            reverse("desk_item", args=[world.chronicle.slug, item.pk]),
            {"status": "approved", "version": 1, "st_notes": "x"},
        )
        assert response.status_code == expected
        item.refresh_from_db()
        assert (item.status, item.st_notes) == ("new", "secret plan")


def test_anonymous_is_sent_to_log_in(world: Any) -> None:
    response = world.client(None).get(desk_url(world))
    assert response.status_code == 302
    assert "/accounts/login/" in response["Location"]


def test_an_item_of_another_chronicle_is_404(world: Any, make_character: Any) -> None:
    klaus = make_character("Klaus", player=None, chronicle=world.other)
    foreign = make_item(world.other_game.cycle, klaus)
    client = world.client("storyteller")
    for name in ("desk_item", "desk_assign"):
        url = reverse(name, args=[world.chronicle.slug, foreign.pk])
        assert client.post(url, {"version": 1, "assignee": "me"}).status_code == 404
    assert client.get(reverse("desk_item", args=["nightfall", 2**40])).status_code == 404
    assert client.get(desk_url(world) + "?game=99").status_code == 404
    assert client.get(desk_url(world) + "?game=x").status_code == 404


# --- The page --------------------------------------------------------------------------------


def test_desk_shows_counts_filters_conflicts_and_who_has_not_submitted(
    world: Any, alice: Character, bob: Character
) -> None:
    cycle = world.game.cycle
    make_item(
        cycle, alice, action="attack_influence", target_character=bob, description="Alpha one"
    )
    make_item(cycle, bob, action="acquire", description="Bravo one", status="approved")
    make_item(
        cycle, bob, kind="purchase", action="", influence="", points=0, description="Xray purchase"
    )
    client = world.client("storyteller")
    page = client.get(desk_url(world)).content.decode()
    assert "New: 2" in page and "Approved: 1" in page
    assert "Marguerite&#x27;s Business influence" in page
    assert "Not submitted yet" in page and "Lucien" in page
    filtered = client.get(desk_url(world), {"character": bob.pk, "kind": "influence"})
    body = filtered.content.decode()
    assert "Bravo one" in body and "Alpha one" not in body and "Xray purchase" not in body
    # The counts count the filtered set whatever its status.
    assert "Approved: 1" in body and "New: 0" in body
    by_target = client.get(desk_url(world), {"target": "margu"}).content.decode()
    assert "Alpha one" in by_target and "Bravo one" not in by_target
    # htmx asks for the results only.
    partial = client.get(desk_url(world), {"status": "approved"}, HTTP_HX_REQUEST="true")
    assert b"<html" not in partial.content and b"Bravo one" in partial.content
    # A filter value that is not a choice is ignored, never a 500.
    assert client.get(desk_url(world), {"assignee": "zzz", "character": "x"}).status_code == 200


def test_the_desk_opens_on_the_latest_working_cycle(world: Any, alice: Character) -> None:
    from chronicle import services as chronicle_services

    second = chronicle_services.game_create(chronicle=world.chronicle, date=dt.date(2024, 3, 30))
    make_item(second.cycle, alice, description="Second cycle's")
    make_item(world.game.cycle, alice, description="First cycle's")
    client = world.client("storyteller")
    page = client.get(desk_url(world)).content.decode()
    assert "Second cycle&#x27;s" in page and "First cycle&#x27;s" not in page
    first = client.get(desk_url(world), {"game": 1}).content.decode()
    assert "First cycle&#x27;s" in first


def test_edit_item_and_the_stale_tab_is_told_keeping_what_was_typed(
    world: Any, alice: Character
) -> None:
    item = make_item(world.game.cycle, alice)
    url = reverse("desk_item", args=[world.chronicle.slug, item.pk])
    st, admin = world.client("storyteller"), world.client("admin")
    response = st.post(
        url,
        {
            "status": "in_progress",
            "assignee": str(world.users["storyteller"].pk),
            "st_notes": "Check the harbour",
            "result": "",
            "version": 1,
        },
    )
    assert response.status_code == 302
    stale = admin.post(
        url,
        {
            "status": "rejected",
            "assignee": "",
            "st_notes": "Admin's view",
            "result": "No.",
            "version": 1,
        },
    )
    assert stale.status_code == 409
    body = stale.content.decode()
    assert "Another storyteller changed this item" in body
    assert "Admin&#x27;s view" in body  # what the admin typed is kept
    assert "Check the harbour" in body  # and their version shown
    assert 'name="version" value="2"' in body
    item.refresh_from_db()
    assert (item.status, item.st_notes, item.version) == ("in_progress", "Check the harbour", 2)


def test_assign_from_the_list(world: Any, alice: Character) -> None:
    item = make_item(world.game.cycle, alice)
    client = world.client("storyteller")
    url = reverse("desk_assign", args=[world.chronicle.slug, item.pk])
    assert client.post(url, {"assignee": "me", "version": 1, "back": "game=1"}).status_code == 302
    item.refresh_from_db()
    assert item.assignee == world.users["storyteller"]
    admin_id = world.users["admin"].pk
    client.post(url, {"assignee": str(admin_id), "version": 1})  # stale: refused
    item.refresh_from_db()
    assert item.assignee == world.users["storyteller"]
    client.post(url, {"assignee": str(admin_id), "version": 2})
    item.refresh_from_db()
    assert item.assignee_id == admin_id
    # A player is not a possible assignee.
    client.post(url, {"assignee": str(world.users["player_bob"].pk), "version": 3})
    item.refresh_from_db()
    assert item.assignee_id == admin_id


def test_bulk_approve_needs_confirmation_and_follows_the_filters(
    world: Any, alice: Character, bob: Character
) -> None:
    cycle = world.game.cycle
    a = make_item(cycle, alice)
    b = make_item(cycle, bob)
    client = world.client("storyteller")
    url = reverse("desk_bulk_approve", args=[world.chronicle.slug])
    client.post(url, {"game": 1, "character": alice.pk})
    assert set(DeskItem.objects.values_list("status", flat=True)) == {"new"}
    response = client.post(url, {"game": 1, "character": alice.pk, "confirm": "on"})
    assert response.status_code == 302
    assert f"character={alice.pk}" in response["Location"]
    a.refresh_from_db()
    b.refresh_from_db()
    assert (a.status, b.status) == ("approved", "new")


def test_remind_button_mails_those_who_have_not_submitted(
    world: Any, alice: Character, django_capture_on_commit_callbacks: Any
) -> None:
    client = world.client("storyteller")
    url = reverse("desk_remind", args=[world.chronicle.slug])
    with django_capture_on_commit_callbacks(execute=True):
        client.post(url, {"game": 1, "characters": [alice.pk]})
        client.post(url, {"game": 1, "characters": [alice.pk]})
    assert [m.to for m in mail.outbox] == [["player_alice@example.com"]]


def test_at_game_request_form(world: Any, alice: Character) -> None:
    client = world.client("storyteller")
    url = reverse("desk_at_game", args=[world.chronicle.slug])
    data = {
        "game": 1,
        "character": alice.pk,
        "action": "leave_city",
        "influence": "business",
        "points": 5,
        "description": "Drives to Chicago",
        "requested_at": "2024-03-09T22:15",
        "key": "abc",
    }
    refused = client.post(url, data)
    assert refused.status_code == 400
    body = refused.content.decode()
    assert "INF-03" in body and "Drives to Chicago" in body
    assert client.post(url, data | {"points": 1}).status_code == 302
    assert client.post(url, data | {"points": 1}).status_code == 302
    item = DeskItem.objects.get()
    assert item.kind == ItemKind.AT_GAME
    # 22:15 in New York, the chronicle's time.
    assert item.requested_at == dt.datetime(2024, 3, 10, 3, 15, tzinfo=dt.UTC)
    assert item.recorded_by == world.users["storyteller"]


# --- Query counts --------------------------------------------------------------------------------


def _fill(world: Any, characters: list[Character], n: int) -> None:
    cycle = world.game.cycle
    st = world.users["storyteller"]
    DeskItem.objects.bulk_create(
        DeskItem(
            cycle=cycle,
            **item_fields(
                characters[i % len(characters)],
                assignee=st if i % 3 == 0 else None,
                target_character=characters[(i + 1) % len(characters)] if i % 2 else None,
                status=["new", "approved", "in_progress"][i % 3],
            ),
        )
        for i in range(n)
    )


@pytest.mark.parametrize("n", [10, 1000])
def test_desk_page_query_count_does_not_grow(
    world: Any, make_character: Any, django_assert_num_queries: Any, n: int
) -> None:
    characters = [make_character(f"PC {i}", player=None) for i in range(5)]
    _fill(world, characters, n)
    client = world.client("storyteller")
    client.get(desk_url(world))  # warm the session
    # 1 session, 2 user, 3 membership, 4 the working cycle, 5 staff for the assignee lists,
    # 6 count of the filtered items, 7 counts per status, 8 conflicts (one query over the
    # cycle), 9 the page of rows (joined), 10 not submitted, 11 base.html's memberships,
    # 12 the cycle picker, 13 the filter's characters, 14 the at-game form's characters.
    with django_assert_num_queries(14):
        response = client.get(desk_url(world))
    assert response.status_code == 200
    # The htmx fragment: 1-10 only (no base.html, cycle picker, filter or at-game form).
    with django_assert_num_queries(10):
        response = client.get(
            desk_url(world), {"status": "new", "assignee": "me"}, HTTP_HX_REQUEST="true"
        )
    assert response.status_code == 200


# --- Review fixes: invalid filters, withdrawn items, XP purchases, odd cycle numbers -------------


def test_bulk_approve_with_an_invalid_filter_is_refused(world: Any, alice: Character) -> None:
    power = make_item(world.game.cycle, alice, kind="power", action="", power="ritual")
    influence = make_item(world.game.cycle, alice)
    client = world.client("storyteller")
    url = reverse("desk_bulk_approve", args=[world.chronicle.slug])
    for bad in ({"assignee": "12345"}, {"character": "999999"}, {"status": "bogus"}):
        response = client.post(url, {"game": 1, "kind": "power", "confirm": "on", **bad})
        assert response.status_code == 400
        body = response.content.decode()
        assert "Nothing was approved: fix the filters marked below first." in body
        assert "Select a valid choice" in body
        assert set(DeskItem.objects.values_list("status", "version")) == {("new", 1)}
    assert {power.pk, influence.pk} == set(DeskItem.objects.values_list("pk", flat=True))


def test_the_list_shows_invalid_filters_and_applies_only_the_valid_ones(
    world: Any, alice: Character
) -> None:
    make_item(world.game.cycle, alice, kind="power", action="", power="ritual", description="Rite")
    make_item(world.game.cycle, alice, description="Ask around the docks.")
    client = world.client("storyteller")
    body = client.get(desk_url(world), {"game": 1, "kind": "power", "character": "999999"})
    assert body.status_code == 200
    text = body.content.decode()
    assert 'id="filter-errors"' in text and "Character: Select a valid choice" in text
    assert "has-error" in text  # beside the field too
    assert "Rite" in text and "Ask around the docks." not in text
    # No bulk approval of a set the ST did not mean.
    assert reverse("desk_bulk_approve", args=[world.chronicle.slug]) not in text
    assert "Fix the filters to approve in bulk." in text


def test_withdrawn_badge_and_refusal_on_the_item_page(world: Any, alice: Character) -> None:
    item = make_item(world.game.cycle, alice, withdrawn_at=NOW)
    client = world.client("storyteller")
    listing = client.get(desk_url(world), {"game": 1}).content.decode()
    assert 'data-badge="withdrawn">Withdrawn<' in listing
    url = reverse("desk_item", args=[world.chronicle.slug, item.pk])
    assert 'data-badge="withdrawn"' in client.get(url).content.decode()
    response = client.post(url, {"status": "approved", "assignee": "", "version": 1})
    assert response.status_code == 400
    assert "The player withdrew this item" in response.content.decode()
    item.refresh_from_db()
    assert (item.status, item.version) == ("new", 1)


def test_xp_purchase_links_to_the_purchase_queue_and_is_not_approved_here(
    world: Any, alice: Character
) -> None:
    purchase = XpPurchase.objects.create(
        character=alice,
        kind="willpower",
        cycle=world.game.cycle,
        cost=Decimal("3"),
        requested_by=world.users["player_alice"],
        requested_at=NOW,
    )
    item = make_item(
        world.game.cycle,
        alice,
        kind="purchase",
        action="",
        influence="",
        points=0,
        purchase=purchase,
    )
    decide = reverse("purchase_decide", args=[world.chronicle.slug, purchase.pk])
    client = world.client("storyteller")
    assert decide in client.get(desk_url(world), {"game": 1}).content.decode()
    url = reverse("desk_item", args=[world.chronicle.slug, item.pk])
    assert decide in client.get(url).content.decode()
    response = client.post(url, {"status": "approved", "assignee": "", "version": 1})
    assert response.status_code == 400
    assert "Sign off XP purchases on the purchase queue (XP-01)." in response.content.decode()
    bulk = reverse("desk_bulk_approve", args=[world.chronicle.slug])
    client.post(bulk, {"game": 1, "confirm": "on"})
    item.refresh_from_db()
    purchase.refresh_from_db()
    assert (item.status, purchase.status) == ("new", "requested")


@pytest.mark.parametrize("game", ["²", "١٢", "9" * 30, "-1", "1.0"])
def test_odd_cycle_numbers_are_404_never_500(world: Any, game: str) -> None:
    client = world.client("storyteller")
    client.raise_request_exception = False
    assert client.get(desk_url(world), {"game": game}).status_code == 404
    for name in ("desk_release", "desk_bulk_approve", "desk_remind", "desk_at_game"):
        response = client.post(reverse(name, args=[world.chronicle.slug]), {"game": game})
        assert response.status_code == 404, name

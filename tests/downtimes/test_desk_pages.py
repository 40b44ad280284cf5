"""The influence desk's pages: personas, filters, edits with the version check, assignment,
bulk approval, reminders, at-game requests and query counts for 10 and 1,000 items; and, since
issue 12, the two panes (the item pane by htmx, a full page by its own address), "Save and
next", pages of 50, the character type-ahead and the link to the one release page."""

from __future__ import annotations

import datetime as dt
import itertools
import re
from decimal import Decimal
from typing import Any

import pytest
from django.core import mail
from django.urls import NoReverseMatch, reverse

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


def item_url(world: Any, item: DeskItem) -> str:
    return reverse("desk_item", args=[world.chronicle.slug, item.pk])


def count_tab(body: str, status: str) -> int:
    """The number on a status tab of the list ("New 2")."""
    found = re.search(rf'data-status="{status}"[^>]*>[^<]*<span class="count">(\d+)</span>', body)
    assert found, f"no {status} tab"
    return int(found.group(1))


# An htmx request aimed at the item pane, and one from the list.
PANE = {"HTTP_HX_REQUEST": "true", "HTTP_HX_TARGET": "desk-detail"}
LIST = {"HTTP_HX_REQUEST": "true", "HTTP_HX_TARGET": "desk-results"}


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
    characters = reverse("desk_characters", args=[world.chronicle.slug])
    assert client.get(characters, {"q": "Luc"}, **LIST).status_code == expected
    for name, done in [
        ("desk_bulk_approve", 302),
        ("desk_remind", 302),
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
    assert (count_tab(page, "new"), count_tab(page, "approved")) == (2, 1)
    assert "Marguerite&#x27;s Business influence" in page
    assert "Not submitted yet" in page and "Lucien" in page
    filtered = client.get(desk_url(world), {"character": bob.pk, "kind": "influence"})
    body = filtered.content.decode()
    assert "Bravo one" in body and "Alpha one" not in body and "Xray purchase" not in body
    # The counts count the filtered set whatever its status.
    assert (count_tab(body, "approved"), count_tab(body, "new")) == (1, 0)
    by_target = client.get(desk_url(world), {"target": "margu"}).content.decode()
    assert "Alpha one" in by_target and "Bravo one" not in by_target
    # htmx asks for the list pane only.
    partial = client.get(desk_url(world), {"status": "approved"}, **LIST)
    assert b"<html" not in partial.content and b"Bravo one" in partial.content
    assert b"Alpha one" not in partial.content and b'id="desk-filters"' in partial.content
    assert "HX-Request" in partial["Vary"]
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
    # The character it was typed as stays in its type-ahead field.
    assert f'value="Lucien #{alice.pk}"' in body
    done = client.post(url, data | {"points": 1}, follow=True)
    # Told in the chronicle's time, naming its zone.
    assert "Recorded Lucien&#x27;s request at Sat 9 Mar 2024, 22:15 EST." in done.content.decode()
    assert client.post(url, data | {"points": 1}).status_code == 302
    # Typed by hand without a pick, a name only one character has is enough.
    by_name = data | {"points": 0, "character": "lucien", "key": "by-name"}
    assert client.post(url, by_name).status_code == 302
    assert DeskItem.objects.filter(key__endswith="page:by-name", character=alice).exists()
    DeskItem.objects.filter(key__endswith="page:by-name").delete()
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
    # 6 count of the filtered items, 7 counts per status, 8 conflicts (one grouped query),
    # 9 the page of rows (joined), 10 not submitted, 11 base.html's memberships, 12 the cycle
    # picker. No query for the characters: the filter and the at-game form type ahead.
    with django_assert_num_queries(12):
        response = client.get(desk_url(world))
    assert response.status_code == 200
    # The htmx list pane: 1-9, and 10 the character the filter names.
    picked = f"PC 1 #{characters[1].pk}"
    with django_assert_num_queries(10):
        response = client.get(
            desk_url(world), {"status": "new", "assignee": "me", "character": picked}, **LIST
        )
    assert response.status_code == 200
    # _fill: new and mine every third item, PC 1 every fifth from the second; a page holds 50.
    matching = [i for i in range(n) if i % 3 == 0 and i % 5 == 1]
    assert response.content.count(b"data-desk-row ") == min(len(matching), 50)


@pytest.mark.parametrize("n", [10, 1000])
def test_item_pane_and_item_page_query_counts_do_not_grow(
    world: Any, make_character: Any, django_assert_num_queries: Any, n: int
) -> None:
    characters = [make_character(f"PC {i}", player=None) for i in range(5)]
    _fill(world, characters, n)
    item = DeskItem.objects.order_by("pk")[n // 2]
    client = world.client("storyteller")
    client.get(desk_url(world))  # warm the session
    url = item_url(world, item)
    # The pane: 1 session, 2 user, 3 membership, 4 the item (joined), 5 staff for the
    # assignee choice, 6 the previous and 7 the next item of the filtered list.
    with django_assert_num_queries(7):
        response = client.get(url, {"game": 1, "status": "new"}, **PANE)
    assert response.status_code == 200 and b"<html" not in response.content
    # The same address as a full page: the pane's 1-7, and the list's 8 count, 9 counts per
    # status, 10 conflicts, 11 rows, then 12 not submitted, 13 base.html's memberships and
    # 14 the cycle picker: no more than the desk cost before it had two panes.
    with django_assert_num_queries(14):
        response = client.get(url, {"game": 1, "status": "new"})
    assert response.status_code == 200 and b"<html" in response.content


@pytest.mark.parametrize("n", [10, 300])
def test_character_type_ahead_query_count_does_not_grow(
    world: Any, make_character: Any, django_assert_num_queries: Any, n: int
) -> None:
    for i in range(n):
        make_character(f"Childe {i:03}", player=None)
    client = world.client("storyteller")
    url = reverse("desk_characters", args=[world.chronicle.slug])
    client.get(url)  # warm the session
    # 1 session, 2 user, 3 membership, 4 the matching characters (ten at most).
    with django_assert_num_queries(4):
        response = client.get(url, {"q": "childe"}, HTTP_HX_REQUEST="true")
    assert response.content.count(b"<option") == 10


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
    for name in ("desk_bulk_approve", "desk_remind", "desk_at_game"):
        response = client.post(reverse(name, args=[world.chronicle.slug]), {"game": game})
        assert response.status_code == 404, name


# --- Issue 12: two panes, Save and next, pages, the type-ahead ---------------------------------


def test_an_item_opens_in_the_pane_by_htmx_and_as_a_full_page_by_its_address(
    world: Any, alice: Character, bob: Character
) -> None:
    first = make_item(world.game.cycle, alice, description="Alpha one")
    item = make_item(world.game.cycle, bob, action="acquire", description="Bravo one")
    client = world.client("storyteller")
    url = item_url(world, item)
    # Without JavaScript (or shared, or reloaded): the whole desk, this item open beside the
    # list and marked in it.
    page = client.get(url, {"game": 1}).content.decode()
    assert "<html" in page and 'id="desk-filters"' in page
    assert "Alpha one" in page  # the list
    assert 'class="pane-detail" id="desk-detail"' in page
    assert "Acquire an item of Marguerite" not in page  # the heading reads by kind
    assert "Influence use of Marguerite (#" in page
    assert re.search(rf'id="desk-item-{item.pk}"[^>]*aria-current="true"', page)
    assert not re.search(rf'id="desk-item-{first.pk}"[^>]*aria-current', page)
    # The previous item of the list is a link away (k), and there is no next one.
    assert f'{item_url(world, first)}?game=1" hx-get' in page
    assert "data-desk-next" not in page
    # htmx: the pane alone.
    pane = client.get(url, {"game": 1}, **PANE)
    body = pane.content.decode()
    assert pane.status_code == 200 and "<html" not in body
    assert "Influence use of Marguerite (#" in body and "Alpha one" not in body
    assert 'id="desk-filters"' not in body
    # The list's rows open items into the pane and push their address.
    listing = client.get(desk_url(world), {"game": 1}).content.decode()
    assert (
        f'href="{url}?game=1" hx-get="{url}?game=1" hx-target="#desk-detail" hx-push-url="true"'
        in listing
    )


def test_save_and_next_opens_the_next_item_of_the_filtered_list(
    world: Any, alice: Character, bob: Character
) -> None:
    cycle = world.game.cycle
    a = make_item(cycle, alice, description="First of Lucien")
    make_item(cycle, bob, description="Marguerite's, filtered out")
    c = make_item(cycle, alice, description="Second of Lucien")
    d = make_item(cycle, alice, description="Third of Lucien")
    client = world.client("storyteller")
    query = f"game=1&character={alice.pk}&status=new"
    fields = {"status": "resolved", "assignee": "", "st_notes": "", "result": "Done."}
    # Without JavaScript: saved, then sent to the next item with the same filters, although
    # the saved one (now resolved) left the "new" filter.
    response = client.post(f"{item_url(world, a)}?{query}", fields | {"version": 1, "then": "next"})
    assert response.status_code == 302
    assert response["Location"] == f"{item_url(world, c)}?{query}"
    a.refresh_from_db()
    assert (a.status, a.result, a.version) == ("resolved", "Done.", 2)
    # With htmx: the next item's pane, its address pushed, and the list told to reload.
    response = client.post(
        f"{item_url(world, c)}?{query}", fields | {"version": 1, "then": "next"}, **PANE
    )
    body = response.content.decode()
    assert response.status_code == 200 and "<html" not in body
    assert f"(#{d.pk})" in body and "Saved: Influence use of Lucien." in body
    assert response["HX-Push-Url"] == f"{item_url(world, d)}?{query}"
    assert response["HX-Trigger"] == "deskChanged"
    # The last item: saved, and it stays open saying so.
    response = client.post(
        f"{item_url(world, d)}?{query}", fields | {"version": 1, "then": "next"}, **PANE
    )
    assert "That was the last item of the list." in response.content.decode()
    assert "HX-Push-Url" not in response
    assert set(DeskItem.objects.filter(character=alice).values_list("status", flat=True)) == {
        "resolved"
    }
    # Plain "Save" stays on the item.
    response = client.post(
        f"{item_url(world, d)}?{query}", fields | {"version": 2, "then": "stay", "st_notes": "n"}
    )
    assert response["Location"] == f"{item_url(world, d)}?{query}"


def test_a_refused_save_in_the_pane_answers_the_pane_with_its_errors(
    world: Any, alice: Character
) -> None:
    item = make_item(world.game.cycle, alice)
    client = world.client("storyteller")
    fields = {"status": "in_progress", "assignee": "", "st_notes": "Mine", "result": ""}
    client.post(item_url(world, item), fields | {"version": 1})
    stale = client.post(
        item_url(world, item), fields | {"version": 1, "st_notes": "Theirs"}, **PANE
    )
    body = stale.content.decode()
    assert stale.status_code == 409 and "<html" not in body
    assert "Their version" in body and "Theirs" in body and 'name="version" value="2"' in body


def test_the_list_shows_fifty_items_a_page(world: Any, alice: Character) -> None:
    items = [make_item(world.game.cycle, alice, description=f"Item {i:03}") for i in range(120)]
    client = world.client("storyteller")
    first = client.get(desk_url(world), {"game": 1}).content.decode()
    assert first.count("data-desk-row ") == 50
    assert "Item 049" in first and "Item 050" not in first
    assert "Page 1 of 3" in first and "120 items match the filters." in first
    assert 'href="/c/nightfall/desk/?game=1&amp;page=2"' in first
    third = client.get(desk_url(world), {"game": 1, "page": 3}).content.decode()
    assert third.count("data-desk-row ") == 20 and "Item 119" in third
    # An item opened from page 3 keeps the list on page 3 beside it.
    url = item_url(world, items[110])
    assert f"{url}?game=1&amp;page=3" in third
    beside = client.get(url, {"game": 1, "page": 3}).content.decode()
    assert "Item 119" in beside and "Item 049" not in beside


def test_the_character_type_ahead(world: Any, make_character: Any) -> None:
    client = world.client("storyteller")
    url = reverse("desk_characters", args=[world.chronicle.slug])
    lucien = make_character("Lucien", player="player_alice")
    make_character("Old Lucienne", player=None)
    gone = make_character("Lucius", player=None, status="inactive")
    make_character("Klaus Lucan", player=None, chronicle=world.other)
    for i in range(12):
        make_character(f"Luc {i:02}", player=None)

    def names(**params: str) -> list[str]:
        body = client.get(url, params, HTTP_HX_REQUEST="true").content.decode()
        return re.findall(r'<option value="([^"]*)">', body)

    found = names(q="luc")
    # Ten at most, names starting with the letters first; never another chronicle's.
    assert len(found) == 10
    assert found[:3] == [
        f"Luc 00 #{Character.objects.get(name='Luc 00').pk}",
        f"Luc 01 #{Character.objects.get(name='Luc 01').pk}",
        f"Luc 02 #{Character.objects.get(name='Luc 02').pk}",
    ]
    assert not any("Klaus" in name for name in names(q="lucan") + names(q="klaus"))
    assert names(q="lucienne") == [f"Old Lucienne #{Character.objects.get(name='Old Lucienne').pk}"]
    # The field's own name works too (htmx sends it), and a picked "Name #id" finds its name.
    assert names(character="Lucien") == [f"Lucien #{lucien.pk}", names(q="lucienne")[0]]
    assert names(q=f"Lucien #{lucien.pk}")[0] == f"Lucien #{lucien.pk}"
    assert names(q="") == [] and names(q="zzz") == []
    # The at-game request offers only active, approved characters.
    assert f"Lucius #{gone.pk}" in names(q="lucius")
    assert names(q="lucius", scope="active") == []
    # Each suggestion says whose character it is.
    suggestions = client.get(url, {"q": "Lucien"}, HTTP_HX_REQUEST="true").content.decode()
    assert f'<option value="Lucien #{lucien.pk}">player_alice</option>' in suggestions
    # Not a page of its own: without htmx, the desk filtered by the words typed.
    plain = client.get(url, {"q": f"Lucien #{lucien.pk}"})
    assert plain["Location"] == f"{desk_url(world)}?character=Lucien"
    assert client.get(url)["Location"] == desk_url(world)


def test_the_character_filter_takes_a_pick_an_id_or_a_typed_name(
    world: Any, alice: Character, bob: Character, make_character: Any
) -> None:
    make_item(world.game.cycle, alice, description="Alpha one")
    make_item(world.game.cycle, bob, description="Bravo one")
    make_character("Marguerite", player=None)  # a namesake
    client = world.client("storyteller")

    def listed(character: str) -> str:
        return client.get(desk_url(world), {"character": character}).content.decode()

    for way in (f"Lucien #{alice.pk}", str(alice.pk), "lucien", "Luci"):
        body = listed(way)
        assert "Alpha one" in body and "Bravo one" not in body, way
        # The field shows the character picked.
        assert f'value="Lucien #{alice.pk}"' in body, way
    ambiguous = listed("Marguerite")
    assert "Several characters match" in ambiguous and "Alpha one" in ambiguous
    assert "Bravo one" in listed(f"Marguerite #{bob.pk}")
    other = make_character("Klaus", player=None, chronicle=world.other)
    assert "Select a valid choice" in listed(f"Klaus #{other.pk}")


def test_no_select_of_every_character_on_the_desk(world: Any, make_character: Any) -> None:
    for i in range(300):
        make_character(f"Childe {i:03}", player=None)
    page = world.client("storyteller").get(desk_url(world)).content.decode()
    assert "Childe 150" not in page
    assert page.count("<option") < 60
    # Both character fields type ahead.
    assert page.count("data-typeahead") == 2
    assert f'hx-get="{reverse("desk_characters", args=["nightfall"])}?scope=active"' in page


def test_the_desk_links_to_the_one_release_page(world: Any) -> None:
    page = world.client("storyteller").get(desk_url(world)).content.decode()
    assert f'href="{reverse("cycle_release", args=["nightfall", 1])}"' in page
    assert "desk/release" not in page
    with pytest.raises(NoReverseMatch):
        reverse("desk_release", args=["nightfall"])


def test_the_cycle_picker_shows_deadlines_in_the_chronicle_zone(world: Any) -> None:
    cycle = world.game.cycle
    cycle.deadline_at = dt.datetime(2026, 12, 9, 4, 59, tzinfo=dt.UTC)
    cycle.save(update_fields=["deadline_at"])
    page = world.client("storyteller").get(desk_url(world)).content.decode()
    # 04:59 UTC is 23:59 the day before in New York.
    assert ">Tue 8 Dec 2026, 23:59 EST</time>" in page
    assert "04:59" not in page


def test_assign_to_me_from_the_pane_and_take_from_the_list(
    world: Any, alice: Character, bob: Character
) -> None:
    item = make_item(world.game.cycle, alice)
    other = make_item(world.game.cycle, bob)
    client = world.client("storyteller")
    assign = reverse("desk_assign", args=[world.chronicle.slug, item.pk])
    # From the pane (the "a" key presses this button): the pane again, the list told.
    pane = client.post(
        f"{assign}?game=1", {"assignee": "me", "version": 1, "open": item.pk}, **PANE
    )
    assert pane.status_code == 200 and "<html" not in pane.content.decode()
    assert "Assigned: Influence use of Lucien." in pane.content.decode()
    assert pane["HX-Trigger"] == "deskChanged"
    item.refresh_from_db()
    assert item.assignee == world.users["storyteller"]
    # A stale version is refused in the pane.
    refused = client.post(f"{assign}?game=1", {"assignee": "me", "version": 1}, **PANE)
    assert refused.status_code == 409 and "Another storyteller" in refused.content.decode()
    # A row's Take (htmx): the list again, with the row taken.
    take = reverse("desk_assign", args=[world.chronicle.slug, other.pk])
    listing = client.post(f"{take}?game=1", {"assignee": "me", "version": 1}, **LIST)
    body = listing.content.decode()
    assert 'id="desk-filters"' in body and "<html" not in body
    row = body[body.index(f'id="desk-item-{other.pk}"') :]
    assert "storyteller" in row[: row.index("</li>")]
    assert f'"pk": {other.pk}' in listing["HX-Trigger"]
    # Without JavaScript: back to the item open beside the list, or to the list.
    item.refresh_from_db()
    back = client.post(take, {"assignee": "me", "version": 2, "back": "game=1", "open": item.pk})
    assert back["Location"] == f"{item_url(world, item)}?game=1"


def test_the_page_loads_its_script_and_shows_the_keys(world: Any, alice: Character) -> None:
    item = make_item(world.game.cycle, alice)
    page = world.client("storyteller").get(item_url(world, item)).content.decode()
    head = page[: page.index("</head>")]
    assert "/static/downtimes/desk.js" in head and "/static/downtimes/desk.css" in head
    # No inline script: every <script> has a source.
    assert all("src=" in tag for tag in re.findall(r"<script[^>]*>", page))
    assert not re.search(r"<[^>]+\son[a-z]+=", page)  # nor an on* handler
    for key in ("j", "k", "a", "r"):
        assert f"<kbd>{key}</kbd>" in page or f'<kbd aria-hidden="true">{key}</kbd>' in page
    assert 'aria-keyshortcuts="a"' in page and 'data-desk-key="save-next"' in page

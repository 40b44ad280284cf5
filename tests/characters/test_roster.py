"""The character list, as a page and through the API (CLN clan and sect filters): who sees
what, search and filters, the htmx partial, and a constant number of queries for 1 or 300
characters."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pytest

from characters.models import Approval, Character, Sect, Status, Title, XpEntry, XpKind
from tests.conftest import PERSONAS, World

pytestmark = pytest.mark.django_db

PAGE = "/c/nightfall/characters/"
API = "/api/chronicles/nightfall/characters/"
SECRET = "Secretly a Sabbat spy"


@pytest.fixture
def cast(world: World, make_character: Callable[..., Character]) -> dict[str, Character]:
    """Alice's Toreador and her draft, Bob's Brujah, an NPC, and a character of another city."""
    lucien = make_character(
        "Lucien", clan="toreador", sect=Sect.CAMARILLA, st_notes=SECRET, business=3
    )
    Title.objects.create(character=lucien, name="Keeper of Elysium", city="Chicago")
    draft = Character.objects.create(
        chronicle=world.chronicle,
        player=world.users["player_alice"],
        name="Draft Dora",
        clan="ventrue",
        sect=Sect.CAMARILLA,
        approval=Approval.SUBMITTED,
    )
    bruno = make_character("Bruno", player="player_bob", clan="brujah", sect=Sect.ANARCH)
    npc = make_character("Prince Vanya", player=None, clan="ventrue", sect=Sect.CAMARILLA)
    berlin = make_character("Greta", player=None, chronicle=world.other, clan="nosferatu")
    XpEntry.objects.create(
        chronicle=world.chronicle,
        player=world.users["player_alice"],
        amount=Decimal("7.5"),
        kind=XpKind.AWARD,
        reason="Game 1",
        key="award:1",
        created_at=dt.datetime(2024, 3, 10, tzinfo=dt.UTC),
    )
    return {"lucien": lucien, "draft": draft, "bruno": bruno, "npc": npc, "berlin": berlin}


def _names(response: Any) -> set[str]:
    return {row["name"] for row in response.json()["results"]}


# --- The page: personas ------------------------------------------------------------------------


EXPECTED_PAGE = {
    "admin": {"Lucien", "Draft Dora", "Bruno", "Prince Vanya"},
    "storyteller": {"Lucien", "Draft Dora", "Bruno", "Prince Vanya"},
    "player_alice": {"Lucien", "Draft Dora"},
    "player_bob": {"Bruno"},
}
EVERYONE = {"Lucien", "Draft Dora", "Bruno", "Prince Vanya", "Greta"}


@pytest.mark.parametrize("persona", [*PERSONAS, None])
def test_page_shows_each_persona_what_is_theirs(
    world: World, cast: dict[str, Character], persona: str | None
) -> None:
    response = world.client(persona).get(PAGE)
    if persona is None:
        assert response.status_code == 302
        assert response["Location"].startswith("/accounts/login/")
        return
    if persona not in EXPECTED_PAGE:  # outsider, other_storyteller: not their chronicle
        assert response.status_code == 404
        return
    assert response.status_code == 200
    html = response.content.decode()
    shown = {name for name in EVERYONE if name in html}
    assert shown == EXPECTED_PAGE[persona]
    assert SECRET not in html


def test_staff_rows_link_to_sheet_and_review(world: World, cast: dict[str, Character]) -> None:
    html = world.client("storyteller").get(PAGE).content.decode()
    draft, lucien = cast["draft"], cast["lucien"]
    assert f'href="/c/nightfall/characters/{lucien.pk}/"' in html
    assert f'href="/c/nightfall/characters/{draft.pk}/review/"' in html
    assert f'href="/c/nightfall/characters/{lucien.pk}/review/"' not in html
    assert "player_bob" in html  # the player column
    assert "Create a character" not in html
    assert "7.5" in html  # Alice's balance on her rows


def test_player_sees_create_link_and_own_balance(world: World, cast: dict[str, Character]) -> None:
    html = world.client("player_alice").get(PAGE).content.decode()
    assert 'href="/c/nightfall/characters/new/"' in html
    assert "Create a character" in html
    assert "7.5" in html
    assert "/review/" not in html


def test_status_counts(world: World, cast: dict[str, Character]) -> None:
    Character.objects.filter(pk=cast["bruno"].pk).update(status=Status.TORPOR)
    response = world.client("storyteller").get(PAGE)
    counts = {e["status"]: e["count"] for e in response.context["status_counts"]}
    assert counts["active"] == 3
    assert counts["torpor"] == 1
    assert counts["dead"] == 0


# --- The page: search and filters --------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("q=luc", {"Lucien"}),
        ("q=PLAYER_BOB", {"Bruno"}),  # by player, any case
        ("clan=ventrue", {"Draft Dora", "Prince Vanya"}),
        ("sect=anarch", {"Bruno"}),
        ("status=active&approval=submitted", {"Draft Dora"}),
        ("creature=ghoul", set()),
        ("clan=ventrue&q=vanya", {"Prince Vanya"}),
    ],
)
def test_search_and_filters(
    world: World, cast: dict[str, Character], query: str, expected: set[str]
) -> None:
    response = world.client("storyteller").get(f"{PAGE}?{query}")
    assert response.status_code == 200
    assert {row["character"].name for row in response.context["rows"]} == expected


def test_filters_never_widen_a_players_view(world: World, cast: dict[str, Character]) -> None:
    response = world.client("player_bob").get(f"{PAGE}?q=luc")
    assert response.context["rows"] == []


def test_unknown_filter_value_is_shown_beside_the_field_and_kept(
    world: World, cast: dict[str, Character]
) -> None:
    response = world.client("storyteller").get(f"{PAGE}?status=undead&q=bru")
    assert response.status_code == 400
    html = response.content.decode()
    assert "Select a valid choice" in html
    assert 'value="bru"' in html  # what was typed stays in the box
    # The valid part of the filters still applies.
    assert {row["character"].name for row in response.context["rows"]} == {"Bruno"}


def test_htmx_gets_only_the_table(world: World, cast: dict[str, Character]) -> None:
    response = world.client("storyteller").get(f"{PAGE}?clan=brujah", HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    html = response.content.decode()
    assert html.lstrip().startswith('<div id="roster-table">')
    assert "<html" not in html and "roster-filters" not in html
    assert "Bruno" in html and "Lucien" not in html


def test_full_page_has_a_working_get_form_and_htmx_wiring(
    world: World, cast: dict[str, Character]
) -> None:
    html = world.client("storyteller").get(PAGE).content.decode()
    assert '<form method="get"' in html
    assert 'hx-target="#roster-table"' in html and 'hx-push-url="true"' in html


def _bulk(world: World, count: int) -> None:
    """`count` more characters: drafts of Alice and Bob (one active PC per player, XP-07) and
    NPCs, half with a title."""
    users = [world.users["player_alice"], world.users["player_bob"], None]
    made = Character.objects.bulk_create(
        Character(
            chronicle=world.chronicle,
            player=users[i % 3],
            name=f"Extra {i:03d}",
            clan="gangrel",
            sect=Sect.INDEPENDENT,
            approval=Approval.APPROVED if users[i % 3] is None else Approval.DRAFT,
            status=Status.NPC if users[i % 3] is None else Status.ACTIVE,
        )
        for i in range(count)
    )
    Title.objects.bulk_create(Title(character=c, name="Whip", city="Chicago") for c in made[::2])


def test_pagination_keeps_the_filters(world: World, cast: dict[str, Character]) -> None:
    _bulk(world, 120)
    client = world.client("storyteller")
    first = client.get(f"{PAGE}?clan=gangrel")
    assert len(first.context["rows"]) == 50
    assert "?clan=gangrel&amp;page=2" in first.content.decode()
    third = client.get(f"{PAGE}?clan=gangrel&page=3")
    assert [r["character"].name for r in third.context["rows"]][-1] == "Extra 119"
    assert len(third.context["rows"]) == 20
    # A page past the end shows the last page rather than an error.
    assert client.get(f"{PAGE}?clan=gangrel&page=99").context["page"].number == 3


# --- Query counts ------------------------------------------------------------------------------


def visible(persona: str, extra: int) -> int:
    """How many characters `persona` sees after `_bulk(world, extra)` plus Alice's Lucien."""
    if persona == "storyteller":
        return 1 + extra
    return 1 + len(range(0, extra, 3))  # Alice's Lucien and every third extra


@pytest.mark.parametrize("extra", [0, 299], ids=["1-character", "300-characters"])
@pytest.mark.parametrize(
    ("persona", "url", "headers", "expected"),
    [
        # 1. session, 2. user, 3. membership (chronicle joined), 4. COUNT, 5. the page of
        # characters (player joined), 6. XP balances of the page's players, 7. counts per
        # status, 8. the header's chronicle switcher
        ("storyteller", PAGE, {}, 8),
        # a player's list: the same queries, filtered on their own id
        ("player_alice", PAGE, {}, 8),
        # the htmx table: no status counts, no header
        ("storyteller", PAGE + "?sect=independent", {"HTTP_HX_REQUEST": "true"}, 6),
        # 1. session, 2. user, 3. membership, 4. COUNT, 5. the page (player joined),
        # 6. the page's titles
        ("storyteller", API, {}, 6),
        ("player_alice", API, {}, 6),
    ],
    ids=["page-staff", "page-player", "htmx-staff", "api-staff", "api-player"],
)
def test_constant_queries(
    world: World,
    make_character: Callable[..., Character],
    extra: int,
    persona: str,
    url: str,
    headers: dict[str, str],
    expected: int,
    django_assert_num_queries: Any,
) -> None:
    lucien = make_character("Lucien", sect=Sect.INDEPENDENT)
    Title.objects.create(character=lucien, name="Prince", city="Chicago")
    _bulk(world, extra)
    client = world.client(persona)
    with django_assert_num_queries(expected):
        response = client.get(url, **headers)
    assert response.status_code == 200, response.content[:300]
    if url == API:
        shown = len(response.json()["results"])
    else:  # the table's rows, less its header row
        shown = response.content.decode().count("<tr>") - 1
    assert shown == min(visible(persona, extra), 100 if url == API else 50)


# --- The API -----------------------------------------------------------------------------------


@pytest.mark.parametrize("persona", [*PERSONAS, None])
def test_api_list_personas(world: World, cast: dict[str, Character], persona: str | None) -> None:
    response = world.client(persona).get(API)
    if persona is None:
        assert response.status_code == 401
        return
    if persona not in EXPECTED_PAGE:
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "not_found"
        return
    assert response.status_code == 200
    assert _names(response) == EXPECTED_PAGE[persona]
    rows = response.json()["results"]
    if persona in ("admin", "storyteller"):
        assert all("st_notes" in row for row in rows)
        assert SECRET in response.content.decode()
    else:
        assert all("st_notes" not in row for row in rows)
        assert SECRET not in response.content.decode()


@pytest.mark.parametrize("persona", [*PERSONAS, None])
def test_api_retrieve_personas(
    world: World, cast: dict[str, Character], persona: str | None
) -> None:
    lucien = cast["lucien"]
    response = world.client(persona).get(f"{API}{lucien.pk}/")
    expected = {
        None: 401,
        "admin": 200,
        "storyteller": 200,
        "player_alice": 200,
        "player_bob": 404,  # not theirs: its existence is not theirs to know
        "outsider": 404,
        "other_storyteller": 404,
    }[persona]
    assert response.status_code == expected
    if expected != 200:
        return
    body = response.json()
    assert body["player"] == "player_alice"
    assert body["traits"] == {"physical": 7, "social": 5, "mental": 3}
    assert body["influences"] == {
        "business": 3,
        "government": 0,
        "herd": 1,
        "occult": 1,
        "underworld": 0,
    }
    assert body["titles"] == [{"name": "Keeper of Elysium", "city": "Chicago"}]
    assert ("st_notes" in body) == (persona != "player_alice")


def test_api_npc_has_no_player_and_other_city_is_404(
    world: World, cast: dict[str, Character]
) -> None:
    client = world.client("storyteller")
    assert client.get(f"{API}{cast['npc'].pk}/").json()["player"] is None
    assert client.get(f"{API}{cast['berlin'].pk}/").status_code == 404
    assert client.get(f"{API}99999999999/").status_code == 404


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("q=luc", {"Lucien"}),
        ("clan=ventrue", {"Draft Dora", "Prince Vanya"}),
        ("sect=anarch", {"Bruno"}),
        ("approval=submitted", {"Draft Dora"}),
        ("status=npc", set()),
    ],
)
def test_api_filters(
    world: World, cast: dict[str, Character], query: str, expected: set[str]
) -> None:
    response = world.client("storyteller").get(f"{API}?{query}")
    assert response.status_code == 200
    assert _names(response) == expected


def test_api_refuses_an_unknown_filter_value(world: World, cast: dict[str, Character]) -> None:
    response = world.client("storyteller").get(f"{API}?sect=tremere")
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "invalid"
    assert "sect" in error["fields"]


def test_api_is_paginated(world: World, cast: dict[str, Character]) -> None:
    _bulk(world, 30)
    body = world.client("storyteller").get(f"{API}?limit=10&offset=10").json()
    assert body["count"] == 34
    assert len(body["results"]) == 10

"""The character sheet (issue 3): what a player may know (BND-01, ST notes), the print page, the
XP chart, and a page that costs the same whatever the history's length."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any

import pytest
import time_machine

from characters.models import (
    Bond,
    BondKind,
    Character,
    DisciplineLevel,
    DonorType,
    Item,
    StoredBlood,
    XpEntry,
    XpKind,
)
from characters.selectors import BOND_BEGINNING, chart_points, sheet_for
from chronicle.models import Membership

pytestmark = pytest.mark.django_db

NOW = dt.datetime(2024, 3, 12, 18, 0, tzinfo=dt.UTC)


@pytest.fixture(autouse=True)
def frozen() -> Iterator[None]:
    with time_machine.travel(NOW, tick=False):
        yield


@pytest.fixture
def alice(world: Any, make_character: Callable[..., Character]) -> Character:
    return make_character(
        "Mole",
        clan="nosferatu",
        disciplines={"obfuscate": "1b", "animalism": "1b"},
        st_notes="Secretly a Sabbat spy.",
        sewer_lore=2,
    )


def url(world: Any, character: Character, suffix: str = "") -> str:
    return f"/c/{world.chronicle.slug}/characters/{character.pk}/{suffix}"


def add_entries(world: Any, character: Character, count: int) -> None:
    XpEntry.objects.bulk_create(
        XpEntry(
            chronicle=world.chronicle,
            player=character.player,
            character=character,
            amount=Decimal("2.5"),
            kind=XpKind.AWARD,
            reason=f"award {i}",
            key=f"award:{i}",
            created_at=NOW - dt.timedelta(days=count - i),
        )
        for i in range(count)
    )


def bonds_section(page: str) -> str:
    """The sheet's bonds card (an ST's buy form lists every active character as a teacher)."""
    start = page.index("<h2>Blood bonds</h2>")
    return page[start : page.index("</section>", start)]


def bond(thrall: Character, regnant: Character, *, kind: str, level: int, bound: bool) -> Bond:
    return Bond.objects.create(
        thrall=thrall,
        regnant=regnant,
        kind=kind,
        level=level,
        bound=bound,
        due_on=dt.date(2025, 1, 1),
    )


def test_player_sees_bonds_per_bnd01(
    world: Any, alice: Character, make_character: Callable[..., Character]
) -> None:
    whisper = make_character("Lady Whisper", player=None, clan="ventrue")
    faint = make_character("Faint Count", player=None, clan="ventrue")
    shared = make_character("Crowd Donor", player=None, clan="brujah")
    bound_to = make_character(
        "True Regnant", player=None, clan="tremere", chosen_disciplines=["thaumaturgy_blood"]
    )
    bond(alice, whisper, kind=BondKind.PURE, level=2, bound=False)
    bond(alice, faint, kind=BondKind.PURE, level=1, bound=False)
    bond(alice, shared, kind=BondKind.SHARED, level=4, bound=False)
    bond(alice, bound_to, kind=BondKind.SHARED, level=6, bound=True)

    page = bonds_section(world.client("player_alice").get(url(world, alice)).content.decode())
    assert BOND_BEGINNING in page
    assert "True Regnant" in page  # a bond in force shows its regnant
    for secret in ("Lady Whisper", "Faint Count", "Crowd Donor"):
        assert secret not in page, secret
    whole = world.client("player_alice").get(url(world, alice, "print/")).content.decode()
    assert "Lady Whisper" not in whole and "Secretly a Sabbat spy" not in whole

    st_page = world.client("storyteller").get(url(world, alice)).content.decode()
    for name in ("Lady Whisper", "Faint Count", "Crowd Donor", "True Regnant"):
        assert name in st_page
    assert "Secretly a Sabbat spy" in st_page


def test_st_notes_never_reach_a_player_in_the_selector_or_api(world: Any, alice: Character) -> None:
    player = Membership.objects.get(chronicle=world.chronicle, user=world.users["player_alice"])
    assert sheet_for(character=alice, membership=player).st_notes is None
    body = world.client("player_alice").get(f"/api/chronicles/nightfall/sheets/{alice.pk}/").json()
    assert body["st_notes"] is None
    staff = world.client("storyteller").get(f"/api/chronicles/nightfall/sheets/{alice.pk}/").json()
    assert staff["st_notes"] == "Secretly a Sabbat spy."


def test_sheet_shows_balance_chart_levels_control_and_expiry(world: Any, alice: Character) -> None:
    add_entries(world, alice, 3)
    Item.objects.create(
        character=alice,
        name="Old Vest",
        concealability="yellow",
        purchase_cost=2,
        expires_on=dt.date(2024, 3, 1),
    )
    StoredBlood.objects.create(
        holder=alice,
        location="fridge",
        points=2,
        donor_type=DonorType.KINE,
        collected_on=dt.date(2023, 11, 1),
        unusable_from=dt.date(2024, 2, 1),
    )
    response = world.client("player_alice").get(url(world, alice))
    page = response.content.decode()
    assert response.status_code == 200
    assert "XP balance: 7.5" in page
    assert "<svg" in page and "<polyline" in page
    assert "Beast Within" in page and "Overcome the Beast" in page  # DIS-01 names
    # CTL-01: 13 − 4 levels + 2 willpower = 11, +3 for Animalism 1b = 14, capped at 10.
    sheet = response.context["sheet"]
    assert sheet.control == 10 and sheet.on_body_limit == 5  # BLD-01
    assert sheet.sewer_slots == 8  # SEW-02: Nosferatu lore 2
    assert [line.expired for line in sheet.items] == [True]  # ITM-01
    assert [line.expired for line in sheet.stored_blood] == [True]  # BLD-03
    assert [line.balance for line in sheet.ledger] == [Decimal("2.5"), Decimal(5), Decimal("7.5")]


def test_chart_points_span_the_box() -> None:
    t0 = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)
    points = chart_points([(t0, Decimal(0)), (t0 + dt.timedelta(days=2), Decimal(10))])
    assert points == "0.0,80.0 320.0,0.0"
    assert chart_points([]) == ""


def test_print_page_has_the_sheet_and_print_css_without_nav(world: Any, alice: Character) -> None:
    response = world.client("player_alice").get(url(world, alice, "print/"))
    page = response.content.decode()
    assert response.status_code == 200
    assert "XP balance:" in page and "characters/sheet.css" in page
    assert 'aria-label="Chronicle"' not in page and "Request purchase" not in page
    with open("characters/static/characters/sheet.css") as css_file:
        css = css_file.read()
    assert "@media print" in css


# --- Query counts ------------------------------------------------------------------------------

# The sheet page, for a player: 1. session, 2. user, 3. membership with chronicle, 4. character
# with player, then the sheet (selectors.sheet_for): 5. ledger, 6. discipline levels,
# 7. diableries, 8. stored blood, 9. its donors, 10. bonds with regnants, 11. items, 12. pending
# purchases, 13. titles, 14. rituals, 15. disadvantages, 16. sewer locations; then 17. the
# header's chronicle switcher. A player's buy form has no teacher select (DIS-07: they name
# their teacher in words), so no query for teacher choices.
SHEET_QUERIES = 17


def grow(
    world: Any, character: Character, make_character: Callable[..., Character], n: int
) -> None:
    add_entries(world, character, n)
    Item.objects.bulk_create(
        Item(
            character=character,
            name=f"Knife {i}",
            concealability="blue",
            purchase_cost=1,
            expires_on=dt.date(2024, 9, 1),
        )
        for i in range(n)
    )
    for i in range(n):
        stored = StoredBlood.objects.create(
            holder=character,
            location=f"cache {i}",
            points=1,
            donor_type=DonorType.KINDRED,
            collected_on=dt.date(2024, 3, 1),
        )
        stored.donors.add(character)
    teacher = make_character(f"Teacher {n}", player=None, clan="toreador")
    bond(character, teacher, kind=BondKind.PURE, level=3, bound=True)


@pytest.mark.parametrize("size", [1, 200], ids=["1-row", "200-rows"])
def test_sheet_query_count_does_not_grow(
    world: Any,
    alice: Character,
    make_character: Callable[..., Character],
    django_assert_num_queries: Any,
    size: int,
) -> None:
    grow(world, alice, make_character, size)
    for discipline in ("auspex", "celerity", "presence", "dominate")[: 1 if size == 1 else 4]:
        DisciplineLevel.objects.create(
            character=alice, discipline=discipline, level=1, acquired="play"
        )
    client = world.client("player_alice")
    with django_assert_num_queries(SHEET_QUERIES):
        response = client.get(url(world, alice))
    assert response.status_code == 200
    assert len(response.context["sheet"].ledger) == size


@pytest.mark.parametrize("size", [1, 200], ids=["1-entry", "200-entries"])
def test_sheet_api_query_count_does_not_grow(
    world: Any,
    alice: Character,
    make_character: Callable[..., Character],
    django_assert_num_queries: Any,
    size: int,
) -> None:
    grow(world, alice, make_character, size)
    client = world.client("player_alice")
    # As the page (1-16), without the switcher.
    with django_assert_num_queries(16):
        response = client.get(f"/api/chronicles/nightfall/sheets/{alice.pk}/")
    assert response.status_code == 200
    assert len(response.json()["items"]) == size


def test_no_template_comment_leaks_onto_the_sheet(world: Any, make_character: Any) -> None:
    """A multi-line {# … #} is not a comment in Django templates: it would print as text."""
    character = make_character("Comment Check", player="player_alice")
    for persona in ("player_alice", "storyteller"):
        body = (
            world.client(persona)
            .get(f"/c/{world.chronicle.slug}/characters/{character.pk}/")
            .content.decode()
        )
        assert "{#" not in body and "#}" not in body

"""The character sheet as a PDF (issue 17, "Paper"): opened with pypdf, it holds the sheet's
names and numbers, under the print page's access rules, and never what the reader may not see
on the page (the ST notes; a bond's regnant before the bond has taken, BND-01)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import translation

from characters.models import Bond, BondKind, Character, Concealability, Item, XpKind
from characters.services import ledger
from chronicle import services
from chronicle.models import Role
from tests.pdfs import fonts_of, language_of, pages_of, text_of

pytestmark = pytest.mark.django_db

ST_NOTE = "Secretly a Sabbat spy"
REGNANT = "Madame Zephyrine"


def url(world: Any, character: Character) -> str:
    return f"/c/{world.chronicle.slug}/characters/{character.pk}/sheet.pdf"


@pytest.fixture
def lucien(world: Any, make_character: Callable[..., Character]) -> Character:
    """Alice's Lucien: 7.5 XP (5 + 2.5), Auspex to 1b, an ST note, and a pure bond at level 2
    to an NPC that has not taken (the player may know a bond begins, not whose)."""
    lucien = make_character(
        "Lucien", player="player_alice", disciplines={"auspex": "1b"}, st_notes=ST_NOTE
    )
    regnant = make_character(REGNANT, player=None)
    Bond.objects.create(
        thrall=lucien,
        regnant=regnant,
        kind=BondKind.PURE,
        level=2,
        bound=False,
        due_on=dt.date(2025, 3, 1),
    )
    for amount, key in ((Decimal(5), "award:one"), (Decimal("2.5"), "award:two")):
        ledger.xp_entry_add(
            chronicle=world.chronicle,
            player_id=world.users["player_alice"].pk,
            amount=amount,
            kind=XpKind.AWARD,
            reason=f"Costume prize {key}",
            key=key,
        )
    return lucien


def test_the_player_reads_their_own_sheet_without_the_storytellers_secrets(
    world: Any, lucien: Character
) -> None:
    response = world.client("player_alice").get(url(world, lucien))
    assert response["Content-Disposition"] == 'inline; filename="nightfall-lucien-sheet.pdf"'
    assert "no-store" in response["Cache-Control"]
    text = text_of(response)
    assert "Lucien" in text and "Nightfall" in text
    assert "XP balance: 7.5" in text
    assert "Costume prize award:one" in text and "Costume prize award:two" in text
    assert "Auspex" in text
    assert "You feel the beginning of a bond." in text
    # What the page keeps from players stays off their paper.
    assert ST_NOTE not in text
    assert REGNANT not in text
    # The page shows the same: the PDF is no window onto more.
    page = world.client("player_alice").get(f"/c/nightfall/characters/{lucien.pk}/print/")
    assert ST_NOTE not in page.content.decode() and REGNANT not in page.content.decode()


def test_staff_read_the_secrets_where_the_page_shows_them(world: Any, lucien: Character) -> None:
    for persona in ("storyteller", "admin"):
        page = world.client(persona).get(f"/c/nightfall/characters/{lucien.pk}/print/")
        assert ST_NOTE in page.content.decode()
        text = text_of(world.client(persona).get(url(world, lucien)))
        assert ST_NOTE in text, persona
        assert REGNANT in text, persona
        assert "XP balance: 7.5" in text


@pytest.mark.parametrize(
    ("persona", "status"),
    [
        pytest.param("player_bob", 404, id="another-player"),
        pytest.param("outsider", 404, id="outsider"),
        pytest.param("other_storyteller", 404, id="another-chronicles-storyteller"),
    ],
)
def test_those_who_may_not_see_the_page_get_no_pdf(
    world: Any, lucien: Character, persona: str, status: int
) -> None:
    client = world.client(persona)
    page = client.get(f"/c/nightfall/characters/{lucien.pk}/print/")
    response = client.get(url(world, lucien))
    assert page.status_code == response.status_code == status
    assert ST_NOTE.encode() not in response.content and b"%PDF" not in response.content


def test_anonymous_is_sent_to_log_in(world: Any, lucien: Character) -> None:
    response = world.client(None).get(url(world, lucien))
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/?next=")


def test_the_pdf_is_set_in_dejavu_sans_from_our_own_stylesheet(
    world: Any, lucien: Character
) -> None:
    """pdf.css (served to WeasyPrint by the static-files-only fetcher) sets the font: without
    the stylesheet the PDF would use another."""
    fonts = {
        font.split("+")[-1]
        for font in fonts_of(world.client("player_alice").get(url(world, lucien)))
    }
    # WeasyPrint's own default is a serif: DejaVu Sans comes from pdf.css.
    assert fonts and all(font.startswith("DejaVu-Sans") for font in fonts), fonts


def test_accents_survive_on_paper(world: Any, make_character: Callable[..., Character]) -> None:
    named = make_character("Àngel Çaterina dell'Òmbra", player="player_alice")
    text = text_of(world.client("player_alice").get(url(world, named)))
    assert "Àngel Çaterina dell'Òmbra" in text


def test_the_sheet_in_italian_declares_its_language(world: Any, lucien: Character) -> None:
    """The catalogs are translated alongside: the document's language must follow the reader's,
    and a label the catalog already has must appear translated."""
    with translation.override("it"):
        response = world.client("player_alice").get(url(world, lucien), HTTP_ACCEPT_LANGUAGE="it")
        traits = translation.gettext("Traits")
    assert language_of(response) == "it"
    text = text_of(response)
    assert "Lucien" in text
    if traits != "Traits":
        assert traits in text


def test_a_sheet_costs_the_same_queries_with_3_or_30_rows(
    world: Any, make_user: Callable[..., Any], make_character: Callable[..., Character]
) -> None:
    """Ledger lines and items, 3 or 30 of each: the same number of queries (those of
    `sheet_for` and the membership), and the 30th of each on paper."""

    def sheet_with(rows: int) -> tuple[int, list[str]]:
        player = f"p{rows}"
        world.users[player] = user = make_user(player)
        services.membership_add(chronicle=world.chronicle, user=user, role=Role.PLAYER)
        character = make_character(f"Many{rows}", player=player)
        for n in range(rows):
            ledger.xp_entry_add(
                chronicle=world.chronicle,
                player_id=user.pk,
                amount=Decimal(1),
                kind=XpKind.AWARD,
                reason=f"Game {n}",
                key=f"award:{n}",
            )
            Item.objects.create(
                character=character,
                name=f"Knife {n}",
                concealability=Concealability.BLUE,
                purchase_cost=1,
                expires_on=dt.date(2030, 1, 1),
            )
        client = world.client(player)
        with CaptureQueriesContext(connection) as queries:
            response = client.get(url(world, character))
        return len(queries), pages_of(response)

    few, few_pages = sheet_with(3)
    many, many_pages = sheet_with(30)
    assert few == many, (few, many)
    assert "Knife 29" in " ".join(many_pages) and "XP balance: 30" in " ".join(many_pages)

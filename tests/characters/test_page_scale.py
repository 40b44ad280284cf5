"""Issue 15: the roster and a storyteller's sheet cost the same queries with 10 or 200
characters in the chronicle, and say the same words as before (the roster's choice labels,
the sheet's teacher select)."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from characters.models import Approval, Character, Sect, Status
from tests.conftest import World

pytestmark = pytest.mark.django_db


def _add(world: World, count: int, start: int) -> None:
    """`count` active characters with no player (one active PC per player, XP-07): each is a
    roster row and, for a storyteller, a teacher to choose."""
    Character.objects.bulk_create(
        Character(
            chronicle=world.chronicle,
            player=None,
            name=f"Vassal {start + i:03d}",
            clan="brujah",
            sect=Sect.ANARCH,
            approval=Approval.APPROVED,
            status=Status.ACTIVE,
        )
        for i in range(count)
    )


def _get(world: World, persona: str, url: str) -> tuple[int, str]:
    client = world.client(persona)
    client.get(url)
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    assert response.status_code == 200
    return len(queries), response.content.decode()


def test_roster_queries_and_words_do_not_depend_on_size(
    world: World, make_character: Callable[..., Character]
) -> None:
    lucien = make_character("Lucien", clan="toreador", sect=Sect.CAMARILLA)
    _add(world, 9, 0)
    small, page = _get(world, "storyteller", "/c/nightfall/characters/")
    _add(world, 190, 9)
    large, page = _get(world, "storyteller", "/c/nightfall/characters/")
    assert large == small
    assert page.count('href="/c/nightfall/characters/') >= 50  # a full page of 50 rows
    # Each column's words are the model's own display of the row's value.
    _, row = _get(world, "storyteller", "/c/nightfall/characters/?q=Lucien")
    cells = re.search(r'<td><a href="[^"]+">Lucien</a></td>(.*?)</tr>', row, re.S)
    assert cells is not None
    words = re.findall(r">([^<>]+)<", cells.group(1))
    for display in (
        lucien.get_creature_display(),
        lucien.get_clan_display(),
        lucien.get_sect_display(),
        lucien.get_status_display(),
        lucien.get_approval_display(),
    ):
        assert display in words, (display, words)


def test_a_storytellers_sheet_queries_do_not_depend_on_the_teachers(
    world: World, make_character: Callable[..., Character]
) -> None:
    lucien = make_character("Lucien", clan="toreador")
    url = f"/c/nightfall/characters/{lucien.pk}/"
    _add(world, 10, 0)
    small, page = _get(world, "storyteller", url)
    teachers_small = _teacher_options(page)
    _add(world, 190, 10)
    large, page = _get(world, "storyteller", url)
    assert large == small
    assert _teacher_options(page) == teachers_small + 190
    assert '<option value="" selected>---------</option>' in page


def _teacher_options(page: str) -> int:
    select = re.search(r'<select name="teacher"[^>]*>(.*?)</select>', page, re.S)
    assert select is not None
    return select.group(1).count("<option ")


def test_a_players_sheet_has_no_teacher_select(
    world: World, make_character: Callable[..., Character]
) -> None:
    """DIS-07: players name their teacher in words; nothing lists the chronicle's characters."""
    lucien = make_character("Lucien", clan="toreador")
    _add(world, 20, 0)
    _, page = _get(world, "player_alice", f"/c/nightfall/characters/{lucien.pk}/")
    assert 'name="teacher"' not in page and "Vassal 000" not in page
    assert 'name="teacher_name"' in page


@pytest.mark.parametrize("persona", ["storyteller", "player_alice"])
def test_the_roster_htmx_table_has_the_same_words(
    world: World, make_character: Callable[..., Character], persona: str
) -> None:
    make_character("Lucien", clan="toreador", sect=Sect.CAMARILLA)
    client = world.client(persona)
    table = client.get("/c/nightfall/characters/?clan=toreador", HTTP_HX_REQUEST="true")
    text = table.content.decode()
    assert "Toreador" in text and "Camarilla" in text and "Active" in text

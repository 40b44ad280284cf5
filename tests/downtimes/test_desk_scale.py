"""The desk at the size of a 300-player chronicle (issue 15): the page's queries do not grow with
the items or the characters, it draws at most 50 rows and the pager reaches the rest, the
conflicts come from one grouped query whatever their number, and "Not submitted yet" names the
first 50 and reminds them all."""

from __future__ import annotations

import datetime as dt
import itertools
import re
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from characters.models import Approval, Character, Status
from downtimes import selectors_desk
from downtimes.models import DeskItem

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("postgres")]

NOW = dt.datetime(2024, 3, 12, 20, 0, tzinfo=dt.UTC)
LIST = {"HTTP_HX_REQUEST": "true", "HTTP_HX_TARGET": "desk-results"}
_keys = itertools.count(1)


def _players(world: Any, n: int, prefix: str) -> list[Character]:
    """`n` active, approved characters with players of their own, none of them submitted."""
    users = get_user_model().objects.bulk_create(
        get_user_model()(username=f"{prefix}{i:03}", email=f"{prefix}{i:03}@example.com")
        for i in range(n)
    )
    return Character.objects.bulk_create(
        Character(
            chronicle=world.chronicle,
            player=user,
            name=f"{prefix.title()} {i:03}",
            status=Status.ACTIVE,
            approval=Approval.APPROVED,
        )
        for i, user in enumerate(users)
    )


def _items(world: Any, characters: list[Character], n: int) -> list[DeskItem]:
    """`n` items in a known order (a minute apart), every other one aimed at a character, so
    a growing number of them are in conflicts; an assignee, a lender and a status to show."""
    st = world.users["storyteller"]
    return DeskItem.objects.bulk_create(
        DeskItem(
            cycle=world.game.cycle,
            kind="influence",
            character=characters[i % len(characters)],
            influence="business",
            points=1 + i % 3,
            action=["investigate", "attack_influence", "acquire"][i % 3],
            target_character=characters[(i * 7) % len(characters)] if i % 2 else None,
            lender=characters[(i + 1) % len(characters)] if i % 5 == 0 else None,
            description=f"Scale item {i:03}",
            created_at=NOW + dt.timedelta(minutes=i),
            updated_at=NOW,
            key=f"scale:{next(_keys)}",
            status=["new", "approved", "in_progress"][i % 3],
            assignee=st if i % 4 == 0 else None,
        )
        for i in range(n)
    )


def _queries(client: Any, url: str, **headers: Any) -> tuple[int, str]:
    with CaptureQueriesContext(connection) as captured:
        response = client.get(url, **headers)
    assert response.status_code == 200
    return len(captured), response.content.decode()


def test_the_page_costs_the_same_with_10_or_200_items_and_characters(world: Any) -> None:
    """The same number of queries for 10 items and 10 characters as for 200 and 200, with
    every row's labels, names, assignee and lender drawn (a deferred column read per row, or
    a query per conflict, would show as a difference)."""
    client = world.client("storyteller")
    url = reverse("desk", args=[world.chronicle.slug])
    client.get(url)  # warm the session
    small_chars = _players(world, 10, "small")
    _items(world, small_chars, 10)
    small_page, small_body = _queries(client, url)
    small_list, _ = _queries(client, url, **LIST)
    big_chars = _players(world, 190, "big")
    _items(world, small_chars + big_chars, 190)
    big_page, big_body = _queries(client, url)
    big_list, big_list_body = _queries(client, url, **LIST)
    # The page: session, user, membership, cycle, staff, count, counts by status, conflicts,
    # rows, not submitted, base.html's memberships, cycle picker (listed in test_desk_pages).
    assert (small_page, small_list) == (big_page, big_list)
    assert big_page <= 12 and big_list <= 10
    # What the rows show came with the rows' query.
    assert "Attack another&#x27;s influence" in big_body and "In progress" in big_body
    assert "lent by Small 001" in big_body and "storyteller</span>" in big_body
    assert big_body.count("data-desk-row ") == 50 and big_list_body.count("data-desk-row ") == 50
    assert small_body.count("data-desk-row ") == 10


def test_the_list_draws_fifty_rows_and_the_pager_reaches_the_fifty_first(world: Any) -> None:
    characters = _players(world, 20, "pc")
    items = _items(world, characters, 180)
    client = world.client("storyteller")
    url = reverse("desk", args=[world.chronicle.slug])
    first = client.get(url, {"game": 1}).content.decode()
    assert first.count("data-desk-row ") == 50
    assert "Scale item 049" in first and "Scale item 050" not in first
    following = re.search(r'rel="next" href="([^"]+)"', first)
    assert following is not None
    second = client.get(following.group(1).replace("&amp;", "&")).content.decode()
    assert second.count("data-desk-row ") == 50
    assert f'id="desk-item-{items[50].pk}"' in second and "Scale item 050" in second
    # The htmx list keeps the filters and the page.
    page_two = client.get(url, {"game": 1, "status": "new", "page": 2}, **LIST).content.decode()
    new = [item for item in items if item.status == "new"]
    assert page_two.count("data-desk-row ") == len(new) - 50
    assert f'id="desk-item-{new[50].pk}"' in page_two and "<html" not in page_two


def test_conflicts_are_grouped_by_the_database_and_linked_to_the_pane(world: Any) -> None:
    characters = _players(world, 4, "pc")
    aimed = characters[3]
    # Three items aim at the same character: one conflict; one aimed elsewhere: none.
    clashing = [
        DeskItem.objects.create(
            cycle=world.game.cycle,
            kind="influence",
            character=characters[i],
            influence="business",
            points=1,
            action="investigate",
            target_character=aimed,
            description=f"Aim {i}",
            created_at=NOW,
            updated_at=NOW,
            key=f"scale:{next(_keys)}",
        )
        for i in range(3)
    ]
    DeskItem.objects.create(
        cycle=world.game.cycle,
        kind="influence",
        character=characters[3],
        action="investigate",
        target_character=characters[0],
        description="Alone",
        created_at=NOW,
        updated_at=NOW,
        key=f"scale:{next(_keys)}",
    )
    with CaptureQueriesContext(connection) as captured:
        groups = selectors_desk.desk_conflicts(cycle=world.game.cycle)
    assert len(captured) == 1
    assert [(g.kind, g.label, g.item_ids) for g in groups] == [
        ("character", "Character Pc 003", sorted(item.pk for item in clashing))
    ]
    page = world.client("storyteller").get(reverse("desk", args=[world.chronicle.slug]))
    body = page.content.decode()
    section = body[body.index('id="desk-conflicts"') :]
    section = section[: section.index("</details>")]
    assert "Character Pc 003:" in section
    for item in clashing:
        path = reverse("desk_item", args=[world.chronicle.slug, item.pk])
        assert f'<a href="{path}?game=1" hx-get="{path}?game=1">#{item.pk}</a>' in section
    assert 'hx-target="#desk-detail"' in section
    # Each row in a conflict says so in the list, in the same words.
    assert body.count("Conflicts: Character Pc 003") == 3


def test_not_submitted_names_fifty_and_the_reminder_goes_to_all(
    world: Any, django_capture_on_commit_callbacks: Any
) -> None:
    characters = _players(world, 55, "late")
    client = world.client("storyteller")
    body = client.get(reverse("desk", args=[world.chronicle.slug])).content.decode()
    waiting = body[body.index('id="desk-waiting"') :]
    waiting = waiting[: waiting.index("</details>")]
    assert '<span class="count">55</span>' in waiting
    assert "Late 049" in waiting and "Late 050" not in waiting
    assert "And 5 more: the reminder goes to them too." in waiting
    assert 'name="characters"' not in waiting and 'name="everyone" value="1"' in waiting
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            reverse("desk_remind", args=[world.chronicle.slug]), {"game": 1, "everyone": "1"}
        )
    assert response.status_code == 302
    assert sorted(m.to[0] for m in mail.outbox) == sorted(
        c.player.email for c in characters if c.player is not None
    )


def test_a_reminder_without_anyone_to_remind_is_refused(world: Any) -> None:
    client = world.client("storyteller")
    response = client.post(
        reverse("desk_remind", args=[world.chronicle.slug]), {"game": 1}, follow=True
    )
    assert "Pick who to remind among those who have not submitted." in response.content.decode()
    assert mail.outbox == []

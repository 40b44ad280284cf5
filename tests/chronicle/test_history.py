"""History of every change (issue 16): django-pghistory's triggers record `update()`, raw SQL,
a request's user and a task's name; storytellers read a History tab, players get 404."""

from __future__ import annotations

import datetime as dt
import itertools
from collections.abc import Callable
from typing import Any

import pghistory
import pytest
from django.apps import apps
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from characters.models import Character, TorporHold
from characters.tasks import sweep_torpor_holds
from downtimes.models import DeskItem, Submission
from havens.models import Structure, StructureStatus
from tests.conftest import World

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("postgres")]

NOW = dt.datetime(2024, 3, 12, 20, 0, tzinfo=dt.UTC)
_keys = itertools.count(1)


def character_events(character: Character) -> list[Any]:
    return list(character.pgh_events.order_by("pgh_id").select_related("pgh_context"))  # type: ignore[attr-defined]


HISTORY_NAMES = {
    "character": "character_history",
    "haven": "haven_history",
    "submission": "submission_history",
    "desk-item": "desk_item_history",
}


def history_url(world: World, kind: str, pk: int) -> str:
    return reverse(HISTORY_NAMES[kind], args=[world.chronicle.slug, pk])


def test_queryset_update_and_raw_sql_are_recorded_with_context(
    make_character: Callable[..., Character],
) -> None:
    lucien = make_character("Lucien")
    with pghistory.context(note="queryset update"):
        Character.objects.filter(pk=lucien.pk).update(st_notes="Watch him.")
    with pghistory.context(note="raw sql"), connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {Character._meta.db_table} SET willpower = 5 WHERE id = %s", [lucien.pk]
        )

    events = character_events(lucien)
    assert [e.pgh_label for e in events] == ["insert", "update", "update"]
    assert events[1].st_notes == "Watch him."
    assert events[1].pgh_context.metadata == {"note": "queryset update"}
    assert events[2].willpower == 5
    assert events[2].pgh_context.metadata == {"note": "raw sql"}


def test_bulk_update_and_delete_of_a_record_are_recorded(
    make_character: Callable[..., Character],
) -> None:
    lucien = make_character("Lucien")
    title = lucien.titles.create(name="Harpy", city="Chicago")
    lucien.titles.filter(pk=title.pk).update(city="Gary")
    title.refresh_from_db()
    title.city = "Joliet"
    type(title).objects.bulk_update([title], ["city"])
    title_id = title.pk
    title.delete()
    events = apps.get_model("characters", "TitleHistory").objects.filter(pgh_obj_id=title_id)
    labels = list(events.order_by("pgh_id").values_list("pgh_label", "city"))
    assert labels == [
        ("insert", "Chicago"),
        ("update", "Gary"),
        ("update", "Joliet"),
        ("delete", "Joliet"),
    ]


def test_a_request_records_its_user_url_and_method(
    world: World, make_character: Callable[..., Character]
) -> None:
    lucien = make_character("Lucien")
    url = reverse("character_action", args=[world.chronicle.slug, lucien.pk, "note"])
    response = world.client("storyteller").post(url, {"note-notes": "Owes the Prince."})
    assert response.status_code == 302

    event = character_events(lucien)[-1]
    assert event.st_notes == "Owes the Prince."
    assert event.pgh_context.metadata["user"] == world.users["storyteller"].pk
    assert event.pgh_context.metadata["url"] == url
    assert event.pgh_context.metadata["method"] == "POST"


def test_a_task_records_its_name(world: World, make_character: Callable[..., Character]) -> None:
    holder = make_character("Holder", player="player_alice")
    sleeper = make_character("Sleeper", player="player_bob", status="torpor")
    cycle = world.game.cycle
    type(cycle).objects.filter(pk=cycle.pk).update(deadline_at=timezone.now() - dt.timedelta(1))
    TorporHold.objects.create(
        holder=holder,
        captive=sleeper,
        cycle=cycle,
        recorded_by=world.users["storyteller"],
        recorded_at=timezone.now(),
    )
    result = sweep_torpor_holds.apply()
    assert result.successful(), result.traceback

    event = character_events(sleeper)[-1]
    assert (event.pgh_label, event.status) == ("update", "active")
    metadata = event.pgh_context.metadata
    assert metadata["task"] == "characters.tasks.sweep_torpor_holds"
    assert metadata["task_id"] == result.id
    page = world.client("storyteller").get(history_url(world, "character", sleeper.pk))
    text = page.content.decode()
    assert "a background task" in text
    assert "characters.tasks.sweep_torpor_holds" in text
    assert "Torpor → Active" in text


def test_the_tab_shows_who_and_old_to_new(
    world: World, make_character: Callable[..., Character]
) -> None:
    lucien = make_character("Lucien", willpower=2)
    client = world.client("storyteller")
    client.post(
        reverse("character_action", args=[world.chronicle.slug, lucien.pk, "note"]),
        {"note-notes": "Owes the Prince."},
    )
    with pghistory.context(note="raw"), connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {Character._meta.db_table} SET willpower = 4 WHERE id = %s", [lucien.pk]
        )
    lucien.titles.create(name="Harpy", city="Chicago")
    # A moment changed at 03:30 UTC reads as the evening before in Nightfall's New York.
    Character.objects.filter(pk=lucien.pk).update(
        approved_at=dt.datetime(2026, 12, 5, 3, 30, tzinfo=dt.UTC)
    )

    response = client.get(history_url(world, "character", lucien.pk))
    assert response.status_code == 200
    page = response.content.decode()
    assert "Willpower</strong>: 2 → 4" in page
    assert "Approved at</strong>: — → Fri 4 Dec 2026, 22:30 EST" in page
    assert "Storyteller notes</strong>: — → Owes the Prince." in page
    assert "storyteller" in page  # who: the storyteller's display name
    assert "POST " in page
    # The way back to the sheet the tab belongs to.
    assert f'href="{reverse("character_sheet", args=[world.chronicle.slug, lucien.pk])}"' in page
    assert "Title “Harpy” created" in page
    # Newest first: the title, then the raw update, then the note.
    assert page.index("Harpy") < page.index("2 → 4") < page.index("Owes the Prince.")


def test_players_and_other_chronicles_get_404(
    world: World, make_character: Callable[..., Character]
) -> None:
    lucien = make_character("Lucien", player="player_alice")
    url = history_url(world, "character", lucien.pk)
    assert world.client("player_alice").get(url).status_code == 404
    assert world.client("player_bob").get(url).status_code == 404
    assert world.client("outsider").get(url).status_code == 404
    other_url = reverse("character_history", args=[world.other.slug, lucien.pk])
    assert world.client("other_storyteller").get(other_url).status_code == 404
    assert world.client("admin").get(url).status_code == 200


def _make_submission_and_item(world: World, character: Character) -> tuple[Submission, DeskItem]:
    submission = Submission.objects.create(
        cycle=world.game.cycle,
        character=character,
        player=character.player,
        created_at=NOW,
        updated_at=NOW,
    )
    item = DeskItem.objects.create(
        cycle=world.game.cycle,
        submission=submission,
        kind="influence",
        character=character,
        influence="business",
        points=1,
        action="investigate",
        description="Ask around.",
        created_at=NOW,
        updated_at=NOW,
        key=f"test:{next(_keys)}",
    )
    return submission, item


def test_haven_submission_and_desk_item_tabs(
    world: World, make_character: Callable[..., Character]
) -> None:
    lucien = make_character("Lucien")
    haven = Structure.objects.create(
        chronicle=world.chronicle,
        kind="outer",
        name="The Loft",
        location="Under the bridge",
        status=StructureStatus.STANDING,
        designed_by=lucien,
        created_at=NOW,
    )
    Structure.objects.filter(pk=haven.pk).update(name="The High Loft")
    submission, item = _make_submission_and_item(world, lucien)
    DeskItem.objects.filter(pk=item.pk).update(status="done", st_notes="A secret.")
    Submission.objects.filter(pk=submission.pk).update(notes="Quiet month.")

    client = world.client("storyteller")
    page = client.get(history_url(world, "haven", haven.pk)).content.decode()
    assert "The Loft → The High Loft" in page
    page = client.get(history_url(world, "submission", submission.pk)).content.decode()
    assert "— → Quiet month." in page
    assert "A secret." in page  # the submission's desk items are on its tab
    page = client.get(history_url(world, "desk-item", item.pk)).content.decode()
    assert "— → A secret." in page
    for kind, pk in [("haven", haven.pk), ("submission", submission.pk), ("desk-item", item.pk)]:
        assert world.client("player_alice").get(history_url(world, kind, pk)).status_code == 404


def test_the_pages_link_to_their_tab(
    world: World, make_character: Callable[..., Character]
) -> None:
    lucien = make_character("Lucien")
    client = world.client("storyteller")
    url = history_url(world, "character", lucien.pk)
    staff_page = client.get(reverse("character_actions", args=[world.chronicle.slug, lucien.pk]))
    assert url in staff_page.content.decode()
    player_sheet = world.client("player_alice").get(
        reverse("character_sheet", args=[world.chronicle.slug, lucien.pk])
    )
    assert url not in player_sheet.content.decode()


def _queries_for(client: Any, url: str) -> int:
    with CaptureQueriesContext(connection) as queries:
        assert client.get(url).status_code == 200
    return len(queries)


def test_query_count_is_constant(world: World, make_character: Callable[..., Character]) -> None:
    lucien = make_character("Lucien")
    client = world.client("storyteller")
    url = history_url(world, "character", lucien.pk)
    client.post(
        reverse("character_action", args=[world.chronicle.slug, lucien.pk, "note"]),
        {"note-notes": "one"},
    )
    few = _queries_for(client, url)
    for number in range(30):
        with pghistory.context(user=world.users["admin"].pk):
            Character.objects.filter(pk=lucien.pk).update(
                willpower=number % 5, st_notes=str(number)
            )
        lucien.titles.create(name=f"Title {number}", city="Chicago")
    many = _queries_for(client, url)
    assert few == many
    # 62 events: the second page has the rest.
    response = client.get(url + "?page=2")
    assert response.status_code == 200
    assert "Page 2 of 2" in response.content.decode()

"""The havens' downtime, all steps in DT-10 order (`havens_resolve`): what one step builds the next
one sees, the whole run twice gives the effects of one, and the statements do not grow with the
number of havens."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from chronicle import services as chronicle_services
from havens.models import (
    Attribute,
    Find,
    InfluenceAttack,
    Ownership,
    Project,
    Search,
    SearchResult,
    Structure,
)
from havens.services import ownership, searches
from havens.services.ownership import AttributeRequest
from havens.services.resolution import HAVEN_STEPS, havens_resolve

pytestmark = [pytest.mark.django_db]


def digest() -> list[Any]:
    return [
        list(Structure.objects.order_by("pk").values_list("pk", "status", "destroyed_by")),
        list(Ownership.objects.order_by("pk").values_list("pk", "character_id", "ended_at")),
        list(Attribute.objects.order_by("pk").values_list("pk", "kind", "quantity", "state")),
        list(Project.objects.order_by("pk").values_list("pk", "status")),
        list(Search.objects.order_by("pk").values_list("pk", "status", "explanation")),
        list(SearchResult.objects.order_by("pk").values_list("search_id", "structure_id", "found")),
        list(Find.objects.order_by("pk").values_list("structure_id", "character_id", "cleared_at")),
        list(InfluenceAttack.objects.order_by("pk").values_list("pk", "status", "destroyed")),
    ]


def test_steps_follow_dt10() -> None:
    assert [name for name, _ in HAVEN_STEPS] == [
        "ownership",
        "forsaking",
        "theft",
        "construction",
        "mobile_havens",
        "searches",
        "influence_attacks",
    ]


def test_hiding_paid_this_downtime_protects_against_this_downtimes_search(
    world: Any, make_character: Any
) -> None:
    """DT-10: construction comes before searches, so Hiding fully paid in this downtime doubles
    the hiding points the same downtime's search meets (HAV-14, HAV-25)."""
    alice = make_character("Lucien", mental=5, business=5, government=5, herd=5, occult=0)
    bob = make_character("Bastien", player="player_bob", underworld=5, business=5, herd=0)
    users = world.users
    haven = ownership.structure_design(
        character=alice,
        by=users["player_alice"],
        kind="outer",
        name="Loft",
        location="Above the gallery",
        attributes=[AttributeRequest("hiding")],
    )
    project = haven.projects.get()
    for influence in ("business", "government", "herd"):
        ownership.project_contribute(
            project=project,
            character=alice,
            influence=influence,
            points=5,
            by=users["player_alice"],
            key=f"pay-{influence}",
        )
    # Searched with (mental 5 + influences 15) x 2 = 40 hiding points before the downtime,
    # but the Hiding paid this downtime is built first: the search meets 80.
    search = searches.search_submit(
        character=bob,
        target_name="Lucien",
        influence="underworld",
        points=5,
        by=users["player_bob"],
        key="s1",
    )
    cycle = world.game.cycle
    chronicle_services.cycle_close(cycle=cycle, by=users["storyteller"])
    first = havens_resolve(cycle=cycle)
    assert first["construction"]["attributes_built"] == 1
    result = SearchResult.objects.get(search=search)
    assert (result.hiding_points, result.found) == (80, False)
    before = digest()
    again = havens_resolve(cycle=cycle)
    assert digest() == before
    assert again["construction"]["attributes_built"] == 0
    assert again["searches"]["searches"] == 0


def _seed(world: Any, make_character: Any, make_haven: Any, count: int, tag: str) -> None:
    for i in range(count):
        owner = make_character(f"Owner {tag}{i}", player=None, mental=3)
        hunter = make_character(f"Hunter {tag}{i}", player=None, underworld=5)
        haven = make_haven(owner, name=f"Haven {tag}{i}", attributes={"influence_resistance": 3})
        cycle = chronicle_services.current_downtime(world.chronicle)
        Find.objects.create(
            structure=haven, character=hunter, cycle=cycle, found_at=haven.created_at
        )
        searches.search_submit(
            character=hunter,
            target_name=f"Owner {tag}{i}",
            influence="underworld",
            points=1,
            by=world.users["storyteller"],
            key=f"search-{tag}{i}",
        )
        searches.influence_attack_submit(
            attacker=hunter,
            structure=haven,
            influence="underworld",
            points=4,
            by=world.users["storyteller"],
            key=f"attack-{tag}{i}",
        )


def _resolve_counting(world: Any, cycle: Any) -> tuple[int, dict[str, Any]]:
    chronicle_services.cycle_close(cycle=cycle, by=world.users["storyteller"])
    with CaptureQueriesContext(connection) as queries:
        summary = havens_resolve(cycle=cycle)
    return len(queries), summary


@pytest.mark.usefixtures("postgres")
def test_statements_do_not_grow_with_the_havens(
    world: Any, make_character: Any, make_haven: Any
) -> None:
    """The whole haven resolution runs the same statements for a downtime with 2 havens, each
    searched and attacked, and one with 20 (set-based steps)."""
    _seed(world, make_character, make_haven, 2, "a")
    small, summary = _resolve_counting(world, world.game.cycle)
    assert summary["searches"]["searches"] == 2
    assert summary["influence_attacks"]["destroyed"] == 2
    later = chronicle_services.game_create(
        chronicle=world.chronicle, date=world.game.date + dt.timedelta(days=28)
    )
    _seed(world, make_character, make_haven, 20, "b")
    large, summary = _resolve_counting(world, later.cycle)
    assert summary["searches"]["searches"] == 20
    assert summary["influence_attacks"]["destroyed"] == 20
    assert large == small

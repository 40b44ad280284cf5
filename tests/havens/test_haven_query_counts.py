"""The havens list costs the same number of queries for 1 structure and for 200, for a player
and for a storyteller."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from havens.models import (
    Attribute,
    ChangeKind,
    ChangeStatus,
    Ownership,
    OwnershipChange,
    Project,
    Structure,
)

pytestmark = [pytest.mark.django_db]
NOW = dt.datetime(2024, 3, 12, 20, 0, tzinfo=dt.UTC)


def _havens(world: Any, owner: Any, count: int) -> None:
    structures = Structure.objects.bulk_create(
        Structure(
            chronicle=world.chronicle,
            kind="outer",
            name=f"Haven {i:03}",
            location=f"Street {i}",
            status="standing",
            created_at=NOW,
        )
        for i in range(count)
    )
    Ownership.objects.bulk_create(
        Ownership(structure=s, character=owner, how="built", started_at=NOW) for s in structures
    )
    Attribute.objects.bulk_create(
        Attribute(
            structure=s, kind="alarm", cost=5, trigger="attack", effect="page", created_at=NOW
        )
        for s in structures
    )
    Attribute.objects.bulk_create(
        Attribute(structure=s, kind="hiding", cost=15, created_at=NOW) for s in structures
    )
    Project.objects.bulk_create(
        Project(
            structure=s,
            kind="attribute",
            attribute_kind="camera",
            cost=1,
            requested_by=owner,
            created_at=NOW,
        )
        for s in structures
    )
    OwnershipChange.objects.bulk_create(
        OwnershipChange(
            structure=s,
            kind=ChangeKind.FORSAKE,
            cycle=world.game.cycle,
            status=ChangeStatus.APPLIED,
            outcome="Applied",
            requested_at=NOW,
            applied_at=NOW,
            from_character=owner,
        )
        for s in structures
    )


# player: session, user, membership, structures, current owners, attributes, projects,
# the membership again for the page's header.
PLAYER_QUERIES = 8
# storyteller: the same seven, hiding points (owners, Hiding/Mobility kinds), the latest
# cycle's applied changes (one query with a subquery), the header's membership.
STAFF_QUERIES = 11


@pytest.mark.parametrize("count", [1, 200])
@pytest.mark.parametrize(
    ("persona", "queries"), [("player_alice", PLAYER_QUERIES), ("storyteller", STAFF_QUERIES)]
)
def test_list_query_count_is_fixed(
    world: Any,
    make_character: Any,
    django_assert_num_queries: Any,
    count: int,
    persona: str,
    queries: int,
) -> None:
    alice = make_character("Lucien", player="player_alice")
    _havens(world, alice, count)
    client = world.client(persona)
    url = f"/c/{world.chronicle.slug}/havens/"
    client.get(url)  # warm the session
    with django_assert_num_queries(queries):
        response = client.get(url)
    assert response.status_code == 200
    assert response.content.decode().count("Haven ") >= count

"""Two owners paying into one project at the same instant never lose a contribution, and a
double-submitted contribution counts once (HAV-02, INF-03). On PostgreSQL, because SQLite
serialises every writer and so cannot show a race."""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection

from havens.models import Contribution, Ownership, Project, ProjectStatus, Structure
from havens.services import ownership as services

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]
NOW = dt.datetime(2024, 3, 12, 20, 0, tzinfo=dt.UTC)


def run_together(count: int, work: Callable[[int], Any]) -> list[Any]:
    barrier = threading.Barrier(count)
    results: list[Any] = [None] * count

    def run(i: int) -> None:
        try:
            barrier.wait()
            results[i] = work(i)
        except Exception as exc:  # surfaced to the test
            results[i] = exc
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return results


@pytest.fixture
def shared(world: Any, make_character: Any) -> dict[str, Any]:
    alice = make_character("Lucien", player="player_alice", business=5, occult=5)
    bob = make_character("Bastien", player="player_bob", business=5, occult=5)
    structure = Structure.objects.create(
        chronicle=world.chronicle,
        kind="outer",
        name="Shared",
        location="Docks",
        status="standing",
        created_at=NOW,
    )
    for owner in (alice, bob):
        Ownership.objects.create(structure=structure, character=owner, how="built", started_at=NOW)
    project = Project.objects.create(
        structure=structure,
        kind="attribute",
        attribute_kind="hiding",
        cost=15,
        requested_by=alice,
        created_at=NOW,
    )
    return {"alice": alice, "bob": bob, "project": project, "users": world.users}


def test_owners_paying_at_once_lose_nothing(postgres: None, shared: dict[str, Any]) -> None:
    who = [("alice", "player_alice"), ("bob", "player_bob")]

    def work(i: int) -> Any:
        character, user = who[i % 2]
        return services.project_contribute(
            project=shared["project"],
            character=shared[character],
            influence="business" if i < 2 else "occult",
            points=2,
            by=shared["users"][user],
            key=f"race-{i}",
            now=NOW,
        )

    results = run_together(4, work)
    assert not [r for r in results if isinstance(r, Exception)], results
    project = Project.objects.get(pk=shared["project"].pk)
    assert project.paid == 8 == sum(c.points for c in Contribution.objects.all())
    assert Contribution.objects.count() == 4


def test_paying_the_last_points_at_once_lets_only_one_through(
    postgres: None, shared: dict[str, Any]
) -> None:
    Project.objects.filter(pk=shared["project"].pk).update(paid=12)
    who = [("alice", "player_alice"), ("bob", "player_bob")]

    def work(i: int) -> Any:
        character, user = who[i]
        return services.project_contribute(
            project=shared["project"],
            character=shared[character],
            influence="business",
            points=3,
            by=shared["users"][user],
            key=f"last-{i}",
            now=NOW,
        )

    results = run_together(2, work)
    assert sum(isinstance(r, Contribution) for r in results) == 1, results
    project = Project.objects.get(pk=shared["project"].pk)
    assert (project.paid, project.status) == (15, ProjectStatus.PAID)


def test_a_double_submitted_contribution_counts_once(
    postgres: None, shared: dict[str, Any]
) -> None:
    def work(i: int) -> Any:
        return services.project_contribute(
            project=shared["project"],
            character=shared["alice"],
            influence="business",
            points=2,
            by=shared["users"]["player_alice"],
            key="double",
            now=NOW,
        )

    results = run_together(4, work)
    assert not [r for r in results if isinstance(r, Exception)], results
    assert len({r.pk for r in results}) == 1
    assert Project.objects.get(pk=shared["project"].pk).paid == 2

"""The downtime steps of this area in DT-10 order (mobile havens move → searches → influence
attacks → release): each idempotent (run twice = one effect) and set-based (the same number of
queries for 1 search as for 30)."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from havens.models import Find, InfluenceAttack, Search, SearchResult, Structure
from havens.services import searches as svc

pytestmark = pytest.mark.django_db


def _searches(world: Any, searcher: Any, make_npc: Any, make_haven: Any, n: int) -> None:
    for i in range(n):
        target = make_npc(f"Target {i}", mental=7)
        make_haven(target, name=f"Haven {i}", location=f"Place {i}")
        svc.search_submit(
            character=searcher,
            target_name=f"Target {i}",
            influence="business",
            points=21 if i % 2 == 0 else 5,
            by=world.users["player_alice"],
            key=f"s{i}",
        )


def test_dt10_steps_twice_give_one_effect(
    world: Any, make_character: Any, make_npc: Any, make_haven: Any
) -> None:
    alice = make_character("Lucien", player="player_alice", business=500)
    _searches(world, alice, make_npc, make_haven, 4)
    wagon = make_haven(make_npc("Nomad"), name="Wagon", attributes={"mobility": 1})
    old = Find.objects.create(
        structure=wagon, character=alice, cycle=world.game.cycle, found_at=wagon.created_at
    )
    cycle = world.game.cycle
    first = [
        svc.mobile_havens_move(cycle=cycle),
        svc.searches_resolve(cycle=cycle),
        svc.influence_attacks_resolve(cycle=cycle),
        svc.search_results_release(cycle=cycle),
    ]
    snapshot = (
        SearchResult.objects.count(),
        Find.objects.filter(cleared_at__isnull=True).count(),
        list(Search.objects.values_list("status", "released_at")),
    )
    second = [
        svc.mobile_havens_move(cycle=cycle),
        svc.searches_resolve(cycle=cycle),
        svc.influence_attacks_resolve(cycle=cycle),
        svc.search_results_release(cycle=cycle),
    ]
    assert first[1] == {"searches": 4, "unlinked": 0, "found": 2}
    assert second == [
        {"moved": 0, "finds_cleared": 0},
        {"searches": 0, "unlinked": 0, "found": 0},
        {"attacks": 0, "destroyed": 0},
        {"searches": 0, "attacks": 0},
    ]
    assert snapshot == (
        SearchResult.objects.count(),
        Find.objects.filter(cleared_at__isnull=True).count(),
        list(Search.objects.values_list("status", "released_at")),
    )
    # HAV-25b: the wagon's find was made at this cycle's game; the wagon moved this downtime.
    assert first[0] == {"moved": 1, "finds_cleared": 1}
    old.refresh_from_db()
    assert old.cleared_at is not None


def _count(fn: Any) -> int:
    with CaptureQueriesContext(connection) as ctx:
        fn()
    return len(ctx.captured_queries)


@pytest.mark.parametrize("n", [1, 30])
def test_searches_resolve_fixed_queries(
    world: Any,
    make_character: Any,
    make_npc: Any,
    make_haven: Any,
    n: int,
    django_assert_num_queries: Any,
) -> None:
    alice = make_character("Lucien", player="player_alice", business=500)
    _searches(world, alice, make_npc, make_haven, n)
    # SAVEPOINT; lock the submitted searches; searchers' spends; targets' structures; owners
    # and active Hiding/Mobility for hiding points (2); insert results; read back found results;
    # searchers; insert finds; mark resolved; RELEASE SAVEPOINT.
    with django_assert_num_queries(12):
        summary = svc.searches_resolve(cycle=world.game.cycle)
    assert summary["searches"] == n
    assert SearchResult.objects.count() == n


@pytest.mark.parametrize("n", [1, 30])
def test_influence_attacks_resolve_fixed_queries(
    world: Any,
    make_character: Any,
    make_npc: Any,
    make_haven: Any,
    n: int,
    django_assert_num_queries: Any,
) -> None:
    alice = make_character("Lucien", player="player_alice", business=500)
    for i in range(n):
        owner = make_npc(f"Owner {i}")
        haven = make_haven(owner, name=f"H{i}", attributes={"influence_resistance": 3})
        make_haven(owner, name=f"C{i}", outer=haven)
        Find.objects.create(
            structure=haven, character=alice, cycle=world.game.cycle, found_at=haven.created_at
        )
        svc.influence_attack_submit(
            attacker=alice,
            structure=haven,
            influence="business",
            points=1 if i % 2 else 4,
            by=world.users["player_alice"],
            key=f"a{i}",
        )
    # SAVEPOINT; lock attacks; lock structures; lock resistance rows; active Mobility (one
    # query); update attacks; update resistance; destroy structures; end their ownerships;
    # clear their finds; read the crypts inside; destroy them; end their ownerships; clear
    # their finds; void pending ownership changes; RELEASE SAVEPOINT.
    with django_assert_num_queries(16):
        summary = svc.influence_attacks_resolve(cycle=world.game.cycle)
    assert summary == {"attacks": n, "destroyed": (n + 1) // 2}
    assert InfluenceAttack.objects.filter(status="resolved").count() == n
    assert Structure.objects.filter(status="destroyed").count() == 2 * ((n + 1) // 2)

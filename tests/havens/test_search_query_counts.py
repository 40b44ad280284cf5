"""Query counts of this area's list pages and list endpoints: identical for 1 row and for 200
(searches, finds, attacks, structures, hidden objects)."""

from __future__ import annotations

from typing import Any

import pytest
from django.utils import timezone

from characters.models import InfluenceSpend
from havens.models import (
    AttackStatus,
    Find,
    HiddenObject,
    InfluenceAttack,
    Ownership,
    OwnershipHow,
    ReinforcementAttack,
    Search,
    Searcher,
    SearchResult,
    SearchStatus,
    Structure,
    StructureStatus,
)

pytestmark = pytest.mark.django_db

BASE = "/api/chronicles/nightfall"


@pytest.fixture
def build(world: Any, make_character: Any, make_npc: Any) -> Any:
    """build(n): n havens of an NPC, each found by Bob through a released search of his,
    attacked by him (resolved, released), attacked physically, and n hidden objects."""

    def make(n: int) -> dict[str, Any]:
        now = timezone.now()
        cycle = world.game.cycle
        bob = make_character("Marta", player="player_bob", business=1000)
        owner = make_npc("Owner", mental=7)
        structures = Structure.objects.bulk_create(
            Structure(
                chronicle=world.chronicle,
                kind="outer",
                name=f"Haven {i}",
                location=f"Place {i}",
                status=StructureStatus.STANDING,
                created_at=now,
            )
            for i in range(n)
        )
        Ownership.objects.bulk_create(
            Ownership(structure=s, character=owner, how=OwnershipHow.BUILT, started_at=now)
            for s in structures
        )
        spends = InfluenceSpend.objects.bulk_create(
            InfluenceSpend(
                character=bob,
                cycle=cycle,
                influence="business",
                points=1,
                reason="bulk",
                key=f"bulk{i}",
                created_at=now,
            )
            for i in range(2 * n)
        )
        searches = Search.objects.bulk_create(
            Search(
                cycle=cycle,
                target_name="Owner",
                target=owner,
                party_code=f"code{i}",
                status=SearchStatus.RESOLVED,
                created_by=bob,
                created_at=now,
                resolved_at=now,
                released_at=now,
            )
            for i in range(n)
        )
        Searcher.objects.bulk_create(
            Searcher(
                search=s,
                character=bob,
                influence="business",
                points=1,
                spend=spends[i],
                joined_at=now,
            )
            for i, s in enumerate(searches)
        )
        results = SearchResult.objects.bulk_create(
            SearchResult(
                search=s,
                structure=structures[i],
                spent=21,
                hiding_points=20,
                found=True,
                explanation="found",
                created_at=now,
            )
            for i, s in enumerate(searches)
        )
        Find.objects.bulk_create(
            Find(structure=structures[i], character=bob, result=r, cycle=cycle, found_at=now)
            for i, r in enumerate(results)
        )
        InfluenceAttack.objects.bulk_create(
            InfluenceAttack(
                cycle=cycle,
                attacker=bob,
                structure=structures[i],
                influence="business",
                points=1,
                spend=spends[n + i],
                status=AttackStatus.RESOLVED if i % 2 else AttackStatus.SUBMITTED,
                created_at=now,
                released_at=now if i % 2 else None,
                destroyed=False if i % 2 else None,
            )
            for i in range(n)
        )
        ReinforcementAttack.objects.bulk_create(
            ReinforcementAttack(
                structure=structures[i],
                game=world.game,
                attackers=[{"character": None, "name": "x", "potence": 1}],
                bid=9,
                reinforcement=0,
                results=[True],
                penetrated=True,
                recorded_by=world.users["storyteller"],
                recorded_at=now,
                key=f"r{i}",
            )
            for i in range(n)
        )
        HiddenObject.objects.bulk_create(
            HiddenObject(
                chronicle=world.chronicle,
                hider=owner,
                description=f"Object {i}",
                obfuscate_bid=3,
                number=i % 10 + 1,
                registered_by=world.users["storyteller"],
                registered_at=now,
            )
            for i in range(n)
        )
        return {"bob": bob}

    return make


# (persona, url, queries). Every page starts with session, user, membership (+ chronicle) and
# the header's memberships (4); every endpoint with session, user, membership (3).
CASES = [
    # 4 + own characters; open cycle; influence spent and loans (INF-03); searches; their
    # searchers (prefetch); released found locations; finds; attacks; the search, join and
    # attack forms' choices (3).
    pytest.param("player_bob", "/c/nightfall/searches/", 16, id="page-search-list-player"),
    # 4 + game (+ cycle); searches; searchers; preview (searchers, target structures, owners,
    # active kinds); results; attacks; attack arithmetic (attributes); characters; the
    # at-game form's target and searcher selects.
    pytest.param("storyteller", "/c/nightfall/searches/cycle/1/", 15, id="page-search-desk"),
    # 4 + structures select; games select; 5 attacker character selects; recent attacks.
    pytest.param("storyteller", "/c/nightfall/reinforcement/", 12, id="page-reinforcement"),
    # 4 + objects with hider and finder; the register form's hider and game selects.
    pytest.param("storyteller", "/c/nightfall/hidden/", 7, id="page-hidden-registry"),
    # 3 + count; page; found results (prefetch); searchers (prefetch); own character ids.
    pytest.param("player_bob", f"{BASE}/searches/", 8, id="api-searches-player"),
    # The same, plus every result (prefetch).
    pytest.param("storyteller", f"{BASE}/searches/", 9, id="api-searches-staff"),
    # 3 + count; page (with character and structure).
    pytest.param("player_bob", f"{BASE}/finds/", 5, id="api-finds"),
    pytest.param("player_bob", f"{BASE}/haven-attacks/", 5, id="api-haven-attacks"),
    pytest.param("storyteller", f"{BASE}/reinforcement-attacks/", 5, id="api-reinforcement"),
    pytest.param("storyteller", f"{BASE}/hidden-objects/", 5, id="api-hidden-objects"),
]


@pytest.mark.parametrize(("persona", "url", "queries"), CASES)
@pytest.mark.parametrize("n", [1, 200])
def test_fixed_queries(
    world: Any,
    build: Any,
    django_assert_num_queries: Any,
    persona: str,
    url: str,
    queries: int,
    n: int,
) -> None:
    build(n)
    client = world.client(persona)
    with django_assert_num_queries(queries):
        response = client.get(url)
    assert response.status_code == 200

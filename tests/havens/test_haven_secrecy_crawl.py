"""HAV-04: crawl every GET page and endpoint of the whole project as every persona, with a unique
marker in each secret field of havens, searches and hidden objects: a marker shows up only for
those allowed to see it, and no page is a 500.

- Alice's haven (name, description, location, attribute and alarm notes, its co-owner's name,
  a contribution's reason, a pending transfer's note): her and the storytellers only.
- Its location: also Bob, once his search that found it is released; nothing else of it.
- Bob's own haven: him and the storytellers.
- Bob's search (the name he searched for, the party code): him and the storytellers.
- The hidden-object registry and the record of a reinforcement attack: storytellers (and the
  attacked haven's owners for the attack).

And a structure a member may not see answers exactly like one that does not exist.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

import pytest

from characters.models import InfluenceSpend, Status
from havens.models import (
    AlarmFiring,
    Attribute,
    ChangeKind,
    Contribution,
    Find,
    HiddenObject,
    InfluenceAttack,
    Ownership,
    OwnershipChange,
    Project,
    ProjectKind,
    ReinforcementAttack,
    Search,
    Searcher,
    SearchResult,
    SearchStatus,
    Structure,
    StructureStatus,
)
from tests import crawl

pytestmark = pytest.mark.django_db

MARKS = {
    "haven_name": "MARKHAVENNAME",
    "haven_desc": "MARKHAVENDESC",
    "haven_location": "MARKHAVENLOC",
    "attribute_note": "MARKATTRNOTE",
    "alarm_note": "MARKALARMNOTE",
    "co_owner": "MARKCOOWNER",
    "contribution": "MARKCONTRIB",
    "transfer_note": "MARKTRANSFER",
    "unfound_location": "MARKUNFOUNDLOC",
    "bob_haven": "MARKBOBHAVEN",
    "search_target": "MARKSEARCHTARGET",
    "party_code": "MARKPARTY",
    "hidden_object": "MARKHIDDENOBJ",
    "reinforcement_note": "MARKREINFNOTE",
}
STAFF = {"admin", "storyteller"}
ALLOWED = {
    "haven_name": STAFF | {"player_alice"},
    "haven_desc": STAFF | {"player_alice"},
    "haven_location": STAFF | {"player_alice", "player_bob"},
    "attribute_note": STAFF | {"player_alice"},
    "alarm_note": STAFF | {"player_alice"},
    "co_owner": STAFF | {"player_alice"},
    "contribution": STAFF | {"player_alice"},
    "transfer_note": STAFF | {"player_alice"},
    "unfound_location": STAFF | {"player_alice"},
    "bob_haven": STAFF | {"player_bob"},
    "search_target": STAFF | {"player_bob"},
    "party_code": STAFF | {"player_bob"},
    "hidden_object": STAFF,
    "reinforcement_note": STAFF | {"player_alice"},
}
PERSONAS = [
    None,
    "admin",
    "storyteller",
    "player_alice",
    "player_bob",
    "outsider",
    "other_storyteller",
]
NOW = dt.datetime(2024, 3, 12, 20, 0, tzinfo=dt.UTC)


def _spend(character: Any, cycle: Any, points: int, key: str) -> InfluenceSpend:
    return InfluenceSpend.objects.create(
        character=character,
        cycle=cycle,
        influence="business",
        points=points,
        reason=f"Spend {key}",
        key=key,
        created_at=NOW,
    )


@pytest.fixture
def seeded(world: Any, make_character: Any) -> dict[str, Any]:
    cycle = world.game.cycle
    alice = make_character("Lucien", player="player_alice", business=5)
    bob = make_character("Bastien", player="player_bob", clan="brujah", business=5)
    co_owner = make_character(f"Lord {MARKS['co_owner']}", player=None, clan="ventrue")
    co_owner.status = Status.NPC
    co_owner.save(update_fields=["status"])

    def structure(name: str, location: str, **extra: Any) -> Structure:
        return Structure.objects.create(
            chronicle=world.chronicle,
            kind="outer",
            name=name,
            location=location,
            status=StructureStatus.STANDING,
            created_at=NOW,
            **extra,
        )

    haven = structure(
        f"Crypt of {MARKS['haven_name']}",
        f"Under the {MARKS['haven_location']} bridge",
        description=f"Damp {MARKS['haven_desc']}",
    )
    hideout = structure("Second lair", f"Old mill {MARKS['unfound_location']}")
    bob_haven = structure(f"Bob's {MARKS['bob_haven']}", "Bob's place")
    for owned, owner in ((haven, alice), (haven, co_owner), (hideout, alice), (bob_haven, bob)):
        Ownership.objects.create(structure=owned, character=owner, how="built", started_at=NOW)
    alarm = Attribute.objects.create(
        structure=haven,
        kind="alarm",
        cost=5,
        trigger="attack",
        effect="silent",
        note=f"Bell {MARKS['attribute_note']}",
        created_at=NOW,
    )
    Attribute.objects.create(
        structure=haven, kind="reinforcement", quantity=100, cost=10, created_at=NOW
    )
    Attribute.objects.create(structure=hideout, kind="hiding", cost=15, created_at=NOW)
    project = Project.objects.create(
        structure=haven,
        kind=ProjectKind.ATTRIBUTE,
        attribute_kind="two_way_lock",
        cost=2,
        paid=1,
        requested_by=alice,
        created_at=NOW,
    )
    Contribution.objects.create(
        project=project,
        character=alice,
        cycle=cycle,
        influence="business",
        points=1,
        spend=_spend(alice, cycle, 1, f"contribution {MARKS['contribution']}"),
        created_at=NOW,
    )
    OwnershipChange.objects.create(
        structure=haven,
        kind=ChangeKind.TRANSFER,
        cycle=cycle,
        from_character=alice,
        note=f"To my childe {MARKS['transfer_note']}",
        requested_at=NOW,
    )
    search = Search.objects.create(
        cycle=cycle,
        target_name=f"Lucien {MARKS['search_target']}",
        target=alice,
        party_code=MARKS["party_code"],
        status=SearchStatus.RESOLVED,
        created_by=bob,
        created_at=NOW,
        resolved_at=NOW,
        released_at=NOW,
    )
    Searcher.objects.create(
        search=search,
        character=bob,
        influence="business",
        points=5,
        spend=_spend(bob, cycle, 5, "search"),
        joined_at=NOW,
    )
    result = SearchResult.objects.create(
        search=search,
        structure=haven,
        spent=5,
        hiding_points=4,
        found=True,
        explanation="search of 5 influence against 4 hiding points: found",
        created_at=NOW,
    )
    SearchResult.objects.create(
        search=search,
        structure=hideout,
        spent=5,
        hiding_points=40,
        found=False,
        explanation="search of 5 influence against 40 hiding points: not found",
        created_at=NOW,
    )
    find = Find.objects.create(
        structure=haven, character=bob, result=result, cycle=cycle, found_at=NOW
    )
    attack = InfluenceAttack.objects.create(
        cycle=cycle,
        attacker=bob,
        structure=haven,
        influence="business",
        points=1,
        spend=_spend(bob, cycle, 1, "attack"),
        created_at=NOW,
    )
    reinforcement = ReinforcementAttack.objects.create(
        structure=haven,
        game=world.game,
        attackers=[{"character": bob.pk, "name": "Bastien", "potence": 5}],
        bid=49,
        reinforcement=100,
        results=[False],
        penetrated=False,
        note=f"Rammed with a truck {MARKS['reinforcement_note']}",
        recorded_by=world.users["storyteller"],
        recorded_at=NOW,
        key="seed",
    )
    firing = AlarmFiring.objects.create(
        alarm=alarm,
        game=world.game,
        cause="attack",
        reinforcement_attack=reinforcement,
        note=f"Rang {MARKS['alarm_note']}",
        fired_at=NOW,
    )
    hidden = HiddenObject.objects.create(
        chronicle=world.chronicle,
        game=world.game,
        hider=alice,
        description=f"A letter {MARKS['hidden_object']}",
        place="Behind the bar",
        obfuscate_bid=6,
        number=3,
        registered_by=world.users["storyteller"],
        registered_at=NOW,
    )
    return {
        "alice": alice,
        "bob": bob,
        "haven": haven,
        "hideout": hideout,
        "bob_haven": bob_haven,
        "alarm": alarm,
        "project": project,
        "search": search,
        "find": find,
        "attack": attack,
        "reinforcement": reinforcement,
        "firing": firing,
        "hidden": hidden,
    }


def _all_paths(world: Any, seeded: dict[str, Any]) -> set[str]:
    """Every GET-able path of the project, each id parameter filled with every seeded id."""
    ids = sorted({str(obj.pk) for obj in seeded.values()})
    return crawl.all_paths(world.chronicle.slug, ids, world.game.number)


def test_markers_appear_only_where_they_belong(world: Any, seeded: dict[str, Any]) -> None:
    paths = _all_paths(world, seeded)
    assert any("/havens/" in p for p in paths) and any("searches" in p for p in paths), paths
    leaks: list[str] = []
    for persona in PERSONAS:
        client = world.client(persona)
        for path in sorted(paths):
            response = client.get(path)
            assert response.status_code < 500, (persona, path, response.status_code)
            body = response.content.decode(errors="replace")
            for mark, text in MARKS.items():
                if text in body and persona not in ALLOWED[mark]:
                    leaks.append(f"{persona} sees {mark} at {path} ({response.status_code})")
    assert not leaks, "\n".join(leaks)


def test_owners_and_staff_do_see_the_secrets(world: Any, seeded: dict[str, Any]) -> None:
    """The crawl above would pass on empty pages: the marks are where they belong."""
    slug = world.chronicle.slug
    haven = seeded["haven"].pk
    for persona in ("storyteller", "player_alice"):
        body = world.client(persona).get(f"/c/{slug}/havens/{haven}/").content.decode()
        for mark in ("haven_name", "haven_location", "attribute_note", "co_owner", "alarm_note"):
            assert MARKS[mark] in body, (persona, mark)
    bob_searches = world.client("player_bob").get(f"/c/{slug}/searches/").content.decode()
    assert MARKS["haven_location"] in bob_searches
    assert MARKS["search_target"] in bob_searches


def _scrub(body: bytes) -> str:
    text = body.decode(errors="replace")
    text = re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"', "", text)
    text = re.sub(r'"X-CSRFToken": "[^"]*"', "", text)
    # The CSP nonce, new on every response (its attributes and htmx's config).
    text = re.sub(r'(nonce="|Nonce": ")[^"]*"', "", text)
    return re.sub(r"\b\d{5,}\b", "", text)


@pytest.mark.parametrize("persona", ["player_bob", "outsider", "other_storyteller"])
def test_a_haven_not_yours_answers_like_one_that_does_not_exist(
    world: Any, seeded: dict[str, Any], persona: str
) -> None:
    """HAV-04: same status and same body for someone else's haven and for no haven at all, on
    every route that takes an id, page and API alike (no 403-versus-404 oracle)."""
    secret = str(seeded["haven"].pk)
    missing = str(max(obj.pk for obj in seeded.values()) + 1000)
    client = world.client(persona)
    compared = 0
    for route, _pattern in crawl.patterns():
        names = [n for n in crawl.params(route) if n not in ("slug", "format")]
        if not names or "haven" not in route and "structure" not in route:
            continue
        filled = {name: secret for name in names}
        path_secret = crawl.fill(route, {"slug": world.chronicle.slug, **filled})
        filled = {name: missing for name in names}
        path_missing = crawl.fill(route, {"slug": world.chronicle.slug, **filled})
        if path_secret is None or path_missing is None:
            continue
        for method in ("get", "post"):
            a = getattr(client, method)(path_secret)
            b = getattr(client, method)(path_missing)
            assert a.status_code == b.status_code, (method, route, a.status_code, b.status_code)
            # An id may only show up inside a path ("/havens/12/"), never anywhere else.
            body_a = re.sub(rf"/{secret}/", "/ID/", _scrub(a.content))
            body_b = re.sub(rf"/{missing}/", "/ID/", _scrub(b.content))
            assert body_a == body_b, (method, route)
            compared += 1
    assert compared >= 4

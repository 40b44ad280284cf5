"""The searches API for every persona: searches, finds, haven attacks, reinforcement attacks,
hidden objects. One error shape; 404 for what a member may not see; HAV-04 secrecy."""

from __future__ import annotations

from typing import Any

import pytest

from havens.models import Find, InfluenceAttack, ReinforcementAttack, Search
from havens.services import searches as svc

pytestmark = pytest.mark.django_db

BASE = "/api/chronicles/nightfall"
STAFF = {"admin", "storyteller"}
MEMBERS = ["admin", "storyteller", "player_alice", "player_bob"]
STRANGERS = ["outsider", "other_storyteller"]


@pytest.fixture
def scene(world: Any, make_character: Any, make_npc: Any, make_haven: Any) -> dict[str, Any]:
    alice = make_character("Lucien", player="player_alice", mental=7, disciplines={"auspex": "2a"})
    bob = make_character("Marta", player="player_bob", business=30)
    haven = make_haven(
        alice,
        name="SECRETNAME",
        location="Behind the cathedral",
        attributes={"influence_resistance": 18, "reinforcement": 100},
        alarms=[("attack", "audible")],
    )
    return {"world": world, "alice": alice, "bob": bob, "haven": haven, "npc": make_npc("Shade")}


def _json(client: Any, path: str, body: dict[str, Any]) -> Any:
    return client.post(path, body, content_type="application/json")


@pytest.mark.parametrize(
    "endpoint", ["searches", "finds", "haven-attacks", "reinforcement-attacks", "hidden-objects"]
)
@pytest.mark.parametrize("persona", MEMBERS + STRANGERS + [None])
def test_list_personas(scene: dict[str, Any], endpoint: str, persona: str | None) -> None:
    response = scene["world"].client(persona).get(f"{BASE}/{endpoint}/")
    if persona is None:
        assert response.status_code in (401, 403)
    elif persona in STRANGERS:
        assert response.status_code == 404
    elif endpoint in ("reinforcement-attacks", "hidden-objects") and persona not in STAFF:
        assert response.status_code == 403
        assert set(response.json()) == {"error"}
    else:
        assert response.status_code == 200
        assert "SECRETNAME" not in response.content.decode()


def test_search_flow_and_secrecy(scene: dict[str, Any]) -> None:
    world = scene["world"]
    bob = world.client("player_bob")
    body = {
        "character": scene["bob"].pk,
        "target_name": "Lucien",
        "influence": "business",
        "points": 21,
        "key": "k1",
    }
    first = _json(bob, f"{BASE}/searches/", body)
    assert first.status_code == 201, first.content
    assert _json(bob, f"{BASE}/searches/", body).json()["id"] == first.json()["id"]
    data = first.json()
    assert "target" not in data and data["found_locations"] == []
    assert data["my_spends"] == [
        {"character": scene["bob"].pk, "influence": "business", "points": 21}
    ]
    search_id = data["id"]
    alice = world.client("player_alice")
    assert alice.get(f"{BASE}/searches/{search_id}/").status_code == 404
    assert alice.get(f"{BASE}/searches/{2**40}/").status_code == 404
    svc.searches_resolve(cycle=world.game.cycle)
    assert bob.get(f"{BASE}/searches/{search_id}/").json()["found_locations"] == []
    assert bob.get(f"{BASE}/finds/").json()["results"] == []
    svc.search_results_release(cycle=world.game.cycle)
    assert bob.get(f"{BASE}/searches/{search_id}/").json()["found_locations"] == [
        "Behind the cathedral"
    ]
    finds = bob.get(f"{BASE}/finds/").json()["results"]
    assert [f["location"] for f in finds] == ["Behind the cathedral"]
    assert "structure" not in finds[0]
    staff = world.client("storyteller").get(f"{BASE}/searches/{search_id}/").json()
    assert staff["results"][0]["explanation"].endswith(": found")


def test_search_refusals_one_shape(scene: dict[str, Any]) -> None:
    bob = scene["world"].client("player_bob")
    too_much = _json(
        bob,
        f"{BASE}/searches/",
        {
            "character": scene["bob"].pk,
            "target_name": "Lucien",
            "influence": "business",
            "points": 31,
            "key": "k1",
        },
    )
    assert too_much.status_code == 400
    assert "INF-03" in too_much.json()["error"]["fields"]["points"][0]
    foreign = _json(
        bob,
        f"{BASE}/searches/",
        {
            "character": scene["alice"].pk,
            "target_name": "x",
            "influence": "herd",
            "points": 1,
            "key": "k2",
        },
    )
    assert foreign.status_code == 400
    assert foreign.json()["error"]["fields"]["character"]
    join = _json(
        bob,
        f"{BASE}/searches/join/",
        {
            "party_code": "nope",
            "character": scene["bob"].pk,
            "influence": "business",
            "points": 1,
            "key": "j1",
        },
    )
    assert join.status_code == 400
    assert join.json()["error"]["fields"]["party_code"] == [svc.UNKNOWN_CODE]
    assert not Search.objects.exists()


def test_join_and_withdraw(scene: dict[str, Any]) -> None:
    world = scene["world"]
    search = svc.search_submit(
        character=scene["alice"],
        target_name="Marta",
        influence="business",
        points=1,
        by=world.users["player_alice"],
        key="s1",
    )
    bob = world.client("player_bob")
    joined = _json(
        bob,
        f"{BASE}/searches/join/",
        {
            "party_code": search.party_code,
            "character": scene["bob"].pk,
            "influence": "business",
            "points": 2,
            "key": "j1",
        },
    )
    assert joined.status_code == 200
    assert joined.json()["searcher_count"] == 2
    assert len(joined.json()["my_spends"]) == 1
    out = _json(bob, f"{BASE}/searches/{search.pk}/withdraw/", {})
    assert out.status_code == 200 and out.json()["searcher_count"] == 1
    assert (
        _json(world.client("outsider"), f"{BASE}/searches/{search.pk}/withdraw/", {}).status_code
        == 404
    )


def test_haven_attack_api(scene: dict[str, Any]) -> None:
    world = scene["world"]
    bob = world.client("player_bob")
    body = {"find": 2**31 - 1, "influence": "business", "points": 19, "key": "a1"}
    unknown = _json(bob, f"{BASE}/haven-attacks/", body)
    assert unknown.status_code == 400
    assert unknown.json()["error"]["fields"] == {"find": [svc.UNKNOWN_HAVEN]}
    Find.objects.create(
        structure=scene["haven"],
        character=scene["bob"],
        cycle=world.game.cycle,
        found_at=scene["haven"].created_at,
    )
    finds = bob.get(f"{BASE}/finds/").json()["results"]
    assert [f["location"] for f in finds] == ["Behind the cathedral"]
    body["find"] = finds[0]["id"]
    made = _json(bob, f"{BASE}/haven-attacks/", body)
    assert made.status_code == 201, made.content
    assert _json(bob, f"{BASE}/haven-attacks/", body).json()["id"] == made.json()["id"]
    assert "resistance_before" not in made.json() and "structure" not in made.json()
    attack_id = made.json()["id"]
    alice = world.client("player_alice")
    assert _json(alice, f"{BASE}/haven-attacks/{attack_id}/withdraw/", {}).status_code == 404
    svc.influence_attacks_resolve(cycle=world.game.cycle)
    svc.search_results_release(cycle=world.game.cycle)
    listed = bob.get(f"{BASE}/haven-attacks/").json()["results"]
    assert listed[0]["outcome"] == "The haven was destroyed."
    assert "explanation" not in listed[0]
    staff = world.client("storyteller").get(f"{BASE}/haven-attacks/").json()["results"]
    assert staff[0]["resistance_before"] == 18
    assert InfluenceAttack.objects.count() == 1


def test_attack_on_unreleased_others_or_lost_find_answers_like_unknown(
    scene: dict[str, Any], make_npc: Any, make_haven: Any
) -> None:
    """HAV-25b/HAV-04 (review S2): before the results are released, the find of a downtime
    search gets exactly the answer an unknown id gets, and so does another player's find, a
    find lost since, or a find of another of one's characters than the one named."""
    world = scene["world"]
    target = make_npc("Victor Kane", mental=1, business=0, herd=0, occult=0)
    found_haven = make_haven(target, name="Found", location="Docks")
    svc.search_submit(
        character=scene["bob"],
        target_name="Victor Kane",
        influence="business",
        points=5,
        by=world.users["player_bob"],
        key="s1",
    )
    svc.searches_resolve(cycle=world.game.cycle)
    early = Find.objects.get(character=scene["bob"], structure=found_haven)
    alices = Find.objects.create(
        structure=found_haven,
        character=scene["alice"],
        cycle=world.game.cycle,
        found_at=found_haven.created_at,
    )
    lost = Find.objects.create(
        structure=scene["haven"],
        character=scene["bob"],
        cycle=world.game.cycle,
        found_at=found_haven.created_at,
        cleared_at=found_haven.created_at,
    )
    bob = world.client("player_bob")
    body = {"influence": "business", "points": 1}

    def attack(find_id: int, key: str, **extra: Any) -> Any:
        return _json(bob, f"{BASE}/haven-attacks/", {**body, "find": find_id, "key": key, **extra})

    answers = [
        attack(2**31 - 1, "k0"),
        attack(early.pk, "k1"),
        attack(alices.pk, "k2"),
        attack(lost.pk, "k3"),
    ]
    assert {r.status_code for r in answers} == {400}
    assert all(r.json() == answers[0].json() for r in answers)
    assert bob.get(f"{BASE}/finds/").json()["results"] == []
    assert not InfluenceAttack.objects.exists()
    svc.search_results_release(cycle=world.game.cycle)
    made = attack(early.pk, "k4", character=scene["bob"].pk)
    assert made.status_code == 201, made.content
    assert made.json()["location"] == "Docks"


def test_attack_withdraw_after_the_deadline(scene: dict[str, Any]) -> None:
    """DT-01 (review I5): the API answers the service's refusal, in the one error shape."""
    from chronicle import services as chronicle_services

    world = scene["world"]
    Find.objects.create(
        structure=scene["haven"],
        character=scene["bob"],
        cycle=world.game.cycle,
        found_at=scene["haven"].created_at,
    )
    find = Find.objects.get()
    bob = world.client("player_bob")
    made = _json(
        bob,
        f"{BASE}/haven-attacks/",
        {"find": find.pk, "influence": "business", "points": 1, "key": "a1"},
    )
    chronicle_services.cycle_close(cycle=world.game.cycle, by=world.users["storyteller"])
    out = _json(bob, f"{BASE}/haven-attacks/{made.json()['id']}/withdraw/", {})
    assert out.status_code == 400
    assert "DT-01" in out.json()["error"]["message"]
    assert InfluenceAttack.objects.get().status == "submitted"


def test_reinforcement_api(scene: dict[str, Any]) -> None:
    world = scene["world"]
    st = world.client("storyteller")
    preview = _json(
        st,
        f"{BASE}/reinforcement-attacks/preview/",
        {"structure": scene["haven"].pk, "potence": [5, 3, 3]},
    )
    assert preview.status_code == 200
    assert (preview.json()["bid"], preview.json()["points_to_hold"]) == (99, 100)
    body = {
        "structure": scene["haven"].pk,
        "game": world.game.pk,
        "attackers": [{"name": "Brute", "potence": 3}],
        "results": [False, True],
        "key": "r1",
    }
    made = _json(st, f"{BASE}/reinforcement-attacks/", body)
    assert made.status_code == 201 and made.json()["penetrated"] is True
    assert _json(st, f"{BASE}/reinforcement-attacks/", body).json()["id"] == made.json()["id"]
    assert ReinforcementAttack.objects.count() == 1
    bob = world.client("player_bob")
    assert _json(bob, f"{BASE}/reinforcement-attacks/", {**body, "key": "r2"}).status_code == 403
    assert (
        _json(
            bob, f"{BASE}/reinforcement-attacks/preview/", {"structure": 1, "potence": [1]}
        ).status_code
        == 403
    )
    assert (
        _json(
            st, f"{BASE}/reinforcement-attacks/preview/", {"structure": 2**31 - 1, "potence": [1]}
        ).status_code
        == 404
    )


def test_hidden_objects_api(scene: dict[str, Any]) -> None:
    world = scene["world"]
    st = world.client("storyteller")
    made = _json(
        st,
        f"{BASE}/hidden-objects/",
        {"hider": scene["npc"].pk, "description": "Dagger", "obfuscate_bid": 5, "number": 4},
    )
    assert made.status_code == 201
    bad = _json(
        st,
        f"{BASE}/hidden-objects/",
        {"hider": scene["npc"].pk, "description": "Dagger", "obfuscate_bid": 5, "number": 11},
    )
    assert bad.status_code == 400 and "HID-01" in bad.json()["error"]["fields"]["number"][0]
    weak = _json(
        st,
        f"{BASE}/hidden-objects/search/",
        {"searcher": scene["bob"].pk, "number": 4, "key": "h0"},
    )
    assert weak.status_code == 400 and "HID-02" in weak.json()["error"]["fields"]["searcher"][0]
    listed = _json(
        st,
        f"{BASE}/hidden-objects/search/",
        {"searcher": scene["alice"].pk, "number": 4, "key": "h1"},
    ).json()
    assert listed["results"][0]["class"] == "wins_ties_retest"
    object_id = made.json()["id"]
    won = _json(
        st,
        f"{BASE}/hidden-objects/search/",
        {"searcher": scene["alice"].pk, "number": 4, "key": "h1", "won": {str(object_id): True}},
    ).json()
    assert won["results"][0]["won"] is True
    assert st.get(f"{BASE}/hidden-objects/{object_id}/").json()["found_by"] == scene["alice"].pk
    assert (
        world.client("player_alice").get(f"{BASE}/hidden-objects/{object_id}/").status_code == 403
    )
    assert _json(st, f"{BASE}/hidden-objects/{object_id}/remove/", {}).status_code == 200

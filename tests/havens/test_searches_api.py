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
    body = {
        "character": scene["bob"].pk,
        "structure": scene["haven"].pk,
        "influence": "business",
        "points": 19,
        "key": "a1",
    }
    unfound = _json(bob, f"{BASE}/haven-attacks/", body)
    unknown = _json(bob, f"{BASE}/haven-attacks/", {**body, "structure": 2**31 - 1})
    assert unfound.status_code == unknown.status_code == 400
    assert unfound.json() == unknown.json()
    Find.objects.create(
        structure=scene["haven"],
        character=scene["bob"],
        cycle=world.game.cycle,
        found_at=scene["haven"].created_at,
    )
    made = _json(bob, f"{BASE}/haven-attacks/", body)
    assert made.status_code == 201, made.content
    assert "resistance_before" not in made.json()
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

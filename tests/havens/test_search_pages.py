"""The search pages through the test client, for every persona: the player's search page, the
cycle desk, the reinforcement-attack page (99 against 100) and the hidden-object registry.
HAV-04: Bob never sees Alice's haven beyond the location he found, and only once released."""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse

from havens.models import (
    Find,
    HiddenObject,
    HiddenObjectSearch,
    InfluenceAttack,
    ReinforcementAttack,
    Search,
    SearchStatus,
)
from havens.services import searches as svc

pytestmark = pytest.mark.django_db

SLUG = "nightfall"


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


def url(name: str, *args: Any) -> str:
    return reverse(name, args=[SLUG, *args])


@pytest.mark.parametrize(
    ("persona", "status"),
    [
        ("admin", 200),
        ("storyteller", 200),
        ("player_alice", 200),
        ("player_bob", 200),
        ("outsider", 404),
        ("other_storyteller", 404),
        (None, 302),
    ],
)
def test_search_list_personas(scene: dict[str, Any], persona: str | None, status: int) -> None:
    response = scene["world"].client(persona).get(url("search_list"))
    assert response.status_code == status
    if status == 200:
        assert b"SECRETNAME" not in response.content


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("search_desk", (1,)),
        ("reinforcement_attack", ()),
        ("reinforcement_preview", ()),
        ("hidden_registry", ()),
        ("hidden_search", ()),
    ],
)
@pytest.mark.parametrize(
    ("persona", "status"),
    [
        ("admin", 200),
        ("storyteller", 200),
        ("player_alice", 403),
        ("player_bob", 403),
        ("outsider", 404),
        ("other_storyteller", 404),
    ],
)
def test_staff_pages_personas(
    scene: dict[str, Any], name: str, args: tuple[int, ...], persona: str, status: int
) -> None:
    assert scene["world"].client(persona).get(url(name, *args)).status_code == status


def test_desk_unknown_game_404(scene: dict[str, Any]) -> None:
    client = scene["world"].client("storyteller")
    assert client.get(url("search_desk", 99)).status_code == 404


def _search(client: Any, scene: dict[str, Any], points: int, name: str = "Lucien") -> Any:
    return client.post(
        url("search_create"),
        {
            "character": scene["bob"].pk,
            "target_name": name,
            "influence": "business",
            "points": points,
            "key": "form-key-1",
        },
    )


def test_bob_searches_alice_and_sees_location_only_after_release(scene: dict[str, Any]) -> None:
    world = scene["world"]
    bob = world.client("player_bob")
    # Alice: mental 7 + influences 3 → 20 hiding points; 21 finds.
    response = _search(bob, scene, 21)
    assert response.status_code == 302
    assert _search(bob, scene, 21).status_code == 302  # double click: one search
    assert Search.objects.count() == 1
    page = bob.get(url("search_list")).content.decode()
    assert "results at the next game" in page
    assert Search.objects.get().party_code in page
    svc.searches_resolve(cycle=world.game.cycle)
    page = bob.get(url("search_list")).content.decode()
    assert "Behind the cathedral" not in page
    svc.search_results_release(cycle=world.game.cycle)
    page = bob.get(url("search_list")).content.decode()
    assert "Behind the cathedral" in page
    for secret in ("SECRETNAME", "against 20", "udible"):
        assert secret not in page


def test_unknown_name_reads_the_same(scene: dict[str, Any]) -> None:
    bob = scene["world"].client("player_bob")
    first = _search(bob, scene, 3, name="Lucien")
    second = bob.post(
        url("search_create"),
        {
            "character": scene["bob"].pk,
            "target_name": "No Such Person",
            "influence": "business",
            "points": 3,
            "key": "form-key-2",
        },
    )
    assert first.status_code == second.status_code == 302
    page = bob.get(url("search_list")).content.decode()
    assert page.count("Submitted") >= 2


def test_search_errors_beside_the_field_keep_input(scene: dict[str, Any]) -> None:
    bob = scene["world"].client("player_bob")
    response = _search(bob, scene, 31, name="Typed Name")
    assert response.status_code == 400
    page = response.content.decode()
    assert "INF-03" in page and 'value="Typed Name"' in page
    assert not Search.objects.exists()


def test_foreign_character_refused(scene: dict[str, Any]) -> None:
    alice = scene["world"].client("player_alice")
    response = _search(alice, scene, 1)
    assert response.status_code == 400
    assert not Search.objects.exists()


def test_join_and_withdraw(scene: dict[str, Any], make_character: Any) -> None:
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
    bad = bob.post(
        url("search_join"),
        {
            "character": scene["bob"].pk,
            "party_code": "nope",
            "influence": "business",
            "points": 2,
            "key": "j0",
        },
    )
    assert bad.status_code == 400 and svc.UNKNOWN_CODE in bad.content.decode()
    ok = bob.post(
        url("search_join"),
        {
            "character": scene["bob"].pk,
            "party_code": search.party_code,
            "influence": "business",
            "points": 2,
            "key": "j1",
        },
    )
    assert ok.status_code == 302
    page = bob.get(url("search_list")).content.decode()
    assert "Marta: 2" in page and "Lucien" not in page  # co-searchers counted, never named
    # Outsider's and other players' withdrawals of a search not theirs: 404.
    assert world.client("outsider").post(url("search_withdraw", search.pk)).status_code == 404
    assert bob.post(url("search_withdraw", search.pk)).status_code == 302
    assert bob.post(url("search_withdraw", 2**40)).status_code == 404
    search.refresh_from_db()
    assert search.status == SearchStatus.SUBMITTED  # Alice is still in it


def test_attack_from_finds_only(scene: dict[str, Any]) -> None:
    world = scene["world"]
    bob = world.client("player_bob")
    page = bob.get(url("search_list")).content.decode()
    assert "Influence attack (HAV-25c)" not in page
    find = Find.objects.create(
        structure=scene["haven"],
        character=scene["bob"],
        cycle=world.game.cycle,
        found_at=scene["haven"].created_at,
    )
    alice = world.client("player_alice")
    stolen = alice.post(
        url("attack_create"), {"find": find.pk, "influence": "herd", "points": 1, "key": "a0"}
    )
    assert stolen.status_code == 400 and not InfluenceAttack.objects.exists()
    response = bob.post(
        url("attack_create"), {"find": find.pk, "influence": "business", "points": 19, "key": "a1"}
    )
    assert response.status_code == 302
    attack = InfluenceAttack.objects.get()
    assert alice.post(url("attack_withdraw", attack.pk)).status_code == 404
    svc.influence_attacks_resolve(cycle=world.game.cycle)
    page = bob.get(url("search_list")).content.decode()
    assert "The outcome comes at the next game." in page
    svc.search_results_release(cycle=world.game.cycle)
    page = bob.get(url("search_list")).content.decode()
    assert (
        "The haven was destroyed." in page
        and "resistance" not in page.split("Your influence attacks")[1].split("</table>")[0]
    )


def test_desk_shows_outcome_links_and_releases(scene: dict[str, Any]) -> None:
    world = scene["world"]
    svc.search_submit(
        character=scene["bob"],
        target_name="lucien",
        influence="business",
        points=21,
        by=world.users["player_bob"],
        key="s1",
    )
    unlinked = svc.search_submit(
        character=scene["bob"],
        target_name="Someone",
        influence="business",
        points=2,
        by=world.users["player_bob"],
        key="s2",
    )
    st = world.client("storyteller")
    page = st.get(url("search_desk", 1)).content.decode()
    assert "21 against 20 hiding points now: would find" in page
    assert "No target linked" in page
    response = st.post(url("search_link", unlinked.pk), {"target": scene["alice"].pk})
    assert response.status_code == 302
    unlinked.refresh_from_db()
    assert unlinked.target == scene["alice"]
    svc.searches_resolve(cycle=world.game.cycle)
    page = st.get(url("search_desk", 1)).content.decode()
    assert "search of 21 influence against 20 hiding points: found" in page
    assert st.post(url("search_release", 1)).status_code == 302
    assert Search.objects.filter(released_at__isnull=False).count() == 2
    assert world.client("player_bob").post(url("search_release", 1)).status_code == 403


def test_at_game_search_form(scene: dict[str, Any]) -> None:
    world = scene["world"]
    st = world.client("storyteller")
    response = st.post(
        url("search_at_game", 1),
        {
            "target": scene["alice"].pk,
            "searcher_1": scene["bob"].pk,
            "influence_1": "business",
            "points_1": 21,
            "key": "g1",
        },
    )
    assert response.status_code == 302
    assert Find.objects.filter(character=scene["bob"]).exists()
    bad = st.post(url("search_at_game", 1), {"target": scene["alice"].pk, "key": "g2"})
    assert bad.status_code == 400


def test_reinforcement_page_99_against_100(scene: dict[str, Any]) -> None:
    world = scene["world"]
    st = world.client("storyteller")
    query = {
        "structure": scene["haven"].pk,
        "name_1": "Brute",
        "potence_1": 5,
        "name_2": "Thug",
        "potence_2": 3,
        "name_3": "Goon",
        "potence_3": 3,
    }
    preview = st.get(url("reinforcement_preview"), query, HTTP_HX_REQUEST="true")
    assert preview.status_code == 200
    assert "99 against 100" in preview.content.decode()
    record = st.post(
        url("reinforcement_attack"),
        {
            **query,
            "game": world.game.pk,
            "test_1": "lost",
            "test_2": "lost",
            "key": "r1",
            "note": "",
        },
    )
    assert record.status_code == 302
    attack = ReinforcementAttack.objects.get()
    assert attack.bid == 99 and attack.penetrated  # Potence 3a: breached after 2 failed tests
    page = st.get(url("reinforcement_attack"), follow=True).content.decode()
    assert "penetrated" in page
    empty = st.post(
        url("reinforcement_attack"),
        {"structure": scene["haven"].pk, "game": world.game.pk, "key": "r2"},
    )
    assert empty.status_code == 400 and "at least one attacker" in empty.content.decode()


def test_reinforcement_page_counts_only_the_rows_filled_in(scene: dict[str, Any]) -> None:
    """A browser sends every row of the form: untouched rows are blank, not attackers without
    Potence (who would add 4 each, HAV-26). One attacker at 2a bids (2 + 3)² = 25."""
    st = scene["world"].client("storyteller")
    query: dict[str, Any] = {"structure": scene["haven"].pk}
    for i in range(1, 6):
        query |= {f"name_{i}": "", f"character_{i}": "", f"potence_{i}": ""}
    query |= {"name_1": "Brute", "potence_1": 3}
    preview = st.get(url("reinforcement_preview"), query, HTTP_HX_REQUEST="true")
    assert "<dd><strong>25</strong></dd>" in preview.content.decode()  # the bid
    query["potence_1"] = ""
    query["name_1"] = ""
    record = st.post(
        url("reinforcement_attack"), {**query, "game": scene["world"].game.pk, "key": "r3"}
    )
    assert record.status_code == 400 and "at least one attacker" in record.content.decode()


def test_hidden_flow(scene: dict[str, Any]) -> None:
    world = scene["world"]
    st = world.client("storyteller")
    response = st.post(
        url("hidden_registry"),
        {
            "hider": scene["npc"].pk,
            "description": "MARKOBJ",
            "place": "bar",
            "obfuscate_bid": 5,
            "number": 4,
            "key": "register-once",
        },
    )
    assert response.status_code == 302
    again = st.post(
        url("hidden_registry"),
        {
            "hider": scene["npc"].pk,
            "description": "MARKOBJ",
            "place": "bar",
            "obfuscate_bid": 5,
            "number": 4,
            "key": "register-once",
        },
    )
    assert again.status_code == 302  # a double submit registers one object
    obj = HiddenObject.objects.get()
    assert "MARKOBJ" in st.get(url("hidden_registry")).content.decode()
    assert world.client("player_alice").get(url("hidden_registry")).status_code == 403
    refused = st.post(url("hidden_search"), {"searcher": scene["bob"].pk, "number": 4, "key": "h0"})
    assert refused.status_code == 400 and "HID-02" in refused.content.decode()
    eleven = st.post(
        url("hidden_search"), {"searcher": scene["alice"].pk, "number": 11, "key": "h1"}
    )
    assert eleven.status_code == 400
    step1 = st.post(url("hidden_search"), {"searcher": scene["alice"].pk, "number": 4, "key": "h2"})
    assert step1.status_code == 302
    record = HiddenObjectSearch.objects.get()
    page = st.get(url("hidden_search_tests", record.pk)).content.decode()
    assert "wins_ties_retest" in page
    step2 = st.post(url("hidden_search_tests", record.pk), {f"won_{obj.pk}": "on"})
    assert step2.status_code == 302
    obj.refresh_from_db()
    assert obj.found_by == scene["alice"]
    assert st.get(url("hidden_search_tests", 2**40)).status_code == 404
    assert st.post(url("hidden_remove", obj.pk)).status_code == 302


def test_attack_on_unreleased_find_reads_like_unknown(
    scene: dict[str, Any], make_npc: Any, make_haven: Any
) -> None:
    """HAV-25b/HAV-04 (review S2): the page answers a find of a search not yet released
    exactly like an id that does not exist, and offers no attack form yet."""
    world = scene["world"]
    target = make_npc("Victor Kane", mental=1, business=0, herd=0, occult=0)
    make_haven(target, name="Found", location="Docks")
    svc.search_submit(
        character=scene["bob"],
        target_name="Victor Kane",
        influence="business",
        points=5,
        by=world.users["player_bob"],
        key="s1",
    )
    svc.searches_resolve(cycle=world.game.cycle)
    early = Find.objects.get(character=scene["bob"])
    bob = world.client("player_bob")
    page = bob.get(url("search_list")).content.decode()
    assert "Docks" not in page and "Influence attack (HAV-25c)" not in page

    def attack(find_id: int) -> str:
        response = bob.post(
            url("attack_create"),
            {"find": find_id, "influence": "business", "points": 1, "key": "a1"},
        )
        assert response.status_code == 400
        # The form's own error; the rest of the page carries per-response tokens.
        return str(response.context["attack_form"].errors)

    assert attack(early.pk) == attack(2**31 - 1)
    assert not InfluenceAttack.objects.exists()


def test_withdraw_after_the_deadline_is_refused(scene: dict[str, Any]) -> None:
    """DT-01 (review I5): no withdraw button once the downtime is closed, and a stale form's
    POST is refused with a message (never a 500), changing nothing."""
    from chronicle import services as chronicle_services

    world = scene["world"]
    search = svc.search_submit(
        character=scene["bob"],
        target_name="Somebody",
        influence="business",
        points=2,
        by=world.users["player_bob"],
        key="s1",
    )
    find = Find.objects.create(
        structure=scene["haven"],
        character=scene["bob"],
        cycle=world.game.cycle,
        found_at=scene["haven"].created_at,
    )
    bob = world.client("player_bob")
    bob.post(
        url("attack_create"), {"find": find.pk, "influence": "business", "points": 1, "key": "a"}
    )
    attack = InfluenceAttack.objects.get()
    assert "Withdraw" in bob.get(url("search_list")).content.decode()
    chronicle_services.cycle_close(cycle=world.game.cycle, by=world.users["storyteller"])
    assert "Withdraw" not in bob.get(url("search_list")).content.decode()
    for response in (
        bob.post(url("search_withdraw", search.pk), follow=True),
        bob.post(url("attack_withdraw", attack.pk), follow=True),
    ):
        assert response.status_code == 200
        assert "DT-01" in response.content.decode()
    search.refresh_from_db()
    attack.refresh_from_db()
    assert search.status == SearchStatus.SUBMITTED and attack.status == "submitted"


def test_double_posts_of_staff_forms_give_one_record(scene: dict[str, Any]) -> None:
    """HAV-25b / HID-02 (review I3, I4): the same form token twice records once."""
    st = scene["world"].client("storyteller")
    at_game = {
        "target": scene["alice"].pk,
        "searcher_1": scene["bob"].pk,
        "influence_1": "business",
        "points_1": 21,
        "key": "g1",
    }
    assert st.post(url("search_at_game", 1), at_game).status_code == 302
    assert st.post(url("search_at_game", 1), at_game).status_code == 302
    assert Search.objects.count() == 1
    hidden = {"searcher": scene["alice"].pk, "number": 4, "key": "h1"}
    first = st.post(url("hidden_search"), hidden)
    second = st.post(url("hidden_search"), hidden)
    assert first.status_code == second.status_code == 302
    assert first["Location"] == second["Location"]
    assert HiddenObjectSearch.objects.count() == 1

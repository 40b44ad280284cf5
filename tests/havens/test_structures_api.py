"""The havens API (HAV-01..24) for every persona: the same services as the pages, one error
shape, 404 for a haven the caller may not see, and hiding points for storytellers only."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from havens.models import (
    Attribute,
    Contribution,
    CryptVote,
    Ownership,
    OwnershipChange,
    Project,
    Structure,
    StructureStatus,
    TheftControl,
)

pytestmark = [pytest.mark.django_db]
NOW = dt.datetime(2024, 3, 12, 20, 0, tzinfo=dt.UTC)


@pytest.fixture
def api(world: Any, make_character: Any) -> dict[str, Any]:
    alice = make_character("Lucien", player="player_alice", business=5, mental=7)
    bob = make_character("Bastien", player="player_bob", clan="brujah", business=5)
    manor = Structure.objects.create(
        chronicle=world.chronicle,
        kind="outer",
        name="Manor",
        location="Hill",
        status=StructureStatus.STANDING,
        created_at=NOW,
    )
    Ownership.objects.create(structure=manor, character=alice, how="built", started_at=NOW)
    cellar = Structure.objects.create(
        chronicle=world.chronicle,
        kind="crypt",
        outer=manor,
        name="Cellar",
        location="Below",
        status=StructureStatus.STANDING,
        created_at=NOW,
    )
    Ownership.objects.create(structure=cellar, character=bob, how="built", started_at=NOW)
    lock = Attribute.objects.create(
        structure=manor, kind="two_way_lock", cost=2, state="destroyed", created_at=NOW
    )
    project = Project.objects.create(
        structure=manor,
        kind="attribute",
        attribute_kind="camera",
        quantity=3,
        cost=3,
        requested_by=alice,
        created_at=NOW,
    )
    return {
        "alice": alice,
        "bob": bob,
        "manor": manor,
        "cellar": cellar,
        "lock": lock,
        "project": project,
        "base": f"/api/chronicles/{world.chronicle.slug}/havens/",
        "world": world,
    }


def _post(api: dict[str, Any], persona: str, path: str, body: dict[str, Any]) -> Any:
    return (
        api["world"].client(persona).post(api["base"] + path, body, content_type="application/json")
    )


@pytest.mark.parametrize(
    ("persona", "names"),
    [
        ("admin", {"Manor", "Cellar"}),
        ("storyteller", {"Manor", "Cellar"}),
        ("player_alice", {"Manor"}),
        ("player_bob", {"Cellar"}),
    ],
)
def test_list_shows_what_each_may_see(api: dict[str, Any], persona: str, names: set[str]) -> None:
    response = api["world"].client(persona).get(api["base"])
    assert response.status_code == 200
    rows = response.json()
    assert {row["name"] for row in rows} == names
    staff = persona in ("admin", "storyteller")
    for row in rows:
        assert (row["hiding_points"] is not None) == staff
        if row["name"] == "Manor":
            assert row["ownership"] == "exclusive" and row["owners"][0]["name"] == "Lucien"


@pytest.mark.parametrize("persona", ["outsider", "other_storyteller"])
def test_strangers_get_404(api: dict[str, Any], persona: str) -> None:
    assert api["world"].client(persona).get(api["base"]).status_code == 404


def test_anonymous_is_refused(api: dict[str, Any]) -> None:
    assert api["world"].client(None).get(api["base"]).status_code in (401, 403)


@pytest.mark.parametrize("persona", ["player_bob", "outsider", "other_storyteller"])
def test_someone_elses_haven_is_404_before_input_is_read(api: dict[str, Any], persona: str) -> None:
    client = api["world"].client(persona)
    pk = api["manor"].pk
    assert client.get(f"{api['base']}{pk}/").status_code == 404
    for action in (
        "upgrade",
        "check",
        "contribute",
        "repair",
        "cancel-project",
        "transfer",
        "will",
        "forsake",
        "crypt-vote",
        "cancel-change",
        "theft-control",
    ):
        response = client.post(f"{api['base']}{pk}/{action}/", {}, content_type="application/json")
        assert response.status_code == 404, action
        assert response.json()["error"]["code"] == "not_found"


def test_retrieve_for_owner_and_staff(api: dict[str, Any]) -> None:
    pk = api["manor"].pk
    mine = api["world"].client("player_alice").get(f"{api['base']}{pk}/").json()
    assert mine["hiding_points"] is None and mine["attributes"][0]["kind"] == "two_way_lock"
    staff = api["world"].client("storyteller").get(f"{api['base']}{pk}/").json()
    assert staff["hiding_points"] == 2 * (7 + api["alice"].influence_total)


def test_create_and_check(api: dict[str, Any]) -> None:
    check = _post(
        api,
        "player_alice",
        "check/",
        {"kind": "outer", "attributes": [{"kind": "hiding"}, {"kind": "mobility"}]},
    )
    assert check.status_code == 200
    assert check.json()["total"] == 30 and "HAV-14" in check.json()["problems"][0]["message"]
    created = _post(
        api,
        "player_alice",
        "",
        {
            "character": api["alice"].pk,
            "kind": "crypt",
            "outer": api["manor"].pk,
            "name": "Vault",
            "location": "Deep",
            "attributes": [{"kind": "alarm", "trigger": "attack", "effect": "silent"}],
        },
    )
    assert created.status_code == 201, created.json()
    assert created.json()["status"] == "planned" and created.json()["projects"][0]["cost"] == 5
    refused = _post(
        api,
        "player_alice",
        "",
        {
            "character": api["alice"].pk,
            "kind": "outer",
            "name": "Bad",
            "location": "X",
            "attributes": [{"kind": "hiding"}, {"kind": "mobility"}],
        },
    )
    assert refused.status_code == 400
    assert "HAV-14" in refused.json()["error"]["fields"]["attributes"][0]
    assert not Structure.objects.filter(name="Bad").exists()


def test_bob_cannot_use_alices_character_or_a_crypt_outer_not_his(api: dict[str, Any]) -> None:
    body = {
        "character": api["alice"].pk,
        "kind": "outer",
        "name": "X",
        "location": "Y",
        "attributes": [{"kind": "camera"}],
    }
    response = _post(api, "player_bob", "", body)
    assert response.status_code == 400
    assert "No character you may act for" in str(response.json()["error"]["fields"])
    crypt = {**body, "character": api["bob"].pk, "kind": "crypt", "outer": api["manor"].pk}
    response = _post(api, "player_bob", "", crypt)
    missing = _post(api, "player_bob", "", {**crypt, "outer": 999999})
    assert response.status_code == missing.status_code == 400
    assert response.json() == missing.json()


def test_upgrade_and_its_check(api: dict[str, Any]) -> None:
    pk = api["manor"].pk
    check = _post(api, "player_alice", f"{pk}/check/", {"attributes": [{"kind": "seals"}]})
    assert check.json()["total"] == 10
    done = _post(
        api,
        "player_alice",
        f"{pk}/upgrade/",
        {"character": api["alice"].pk, "attributes": [{"kind": "seals"}], "version": 1},
    )
    assert done.status_code == 200 and done.json()["version"] == 2
    stale = _post(
        api,
        "player_alice",
        f"{pk}/upgrade/",
        {"character": api["alice"].pk, "attributes": [{"kind": "camera"}], "version": 1},
    )
    assert stale.status_code == 400 and "Someone changed" in str(stale.json())


def test_contribute_repair_and_cancel(api: dict[str, Any]) -> None:
    pk = api["manor"].pk
    body = {
        "project": api["project"].pk,
        "character": api["alice"].pk,
        "influence": "business",
        "points": 2,
        "key": "k1",
    }
    assert _post(api, "player_alice", f"{pk}/contribute/", body).status_code == 201
    # The same key again pays once: 200 with the first payment (issue 16).
    assert _post(api, "player_alice", f"{pk}/contribute/", body).status_code == 200
    assert Contribution.objects.count() == 1
    over = _post(api, "player_alice", f"{pk}/contribute/", {**body, "points": 4, "key": "k2"})
    assert over.status_code == 400 and "only 1 more" in str(over.json())
    repair = _post(
        api,
        "player_alice",
        f"{pk}/repair/",
        {"attribute": api["lock"].pk, "character": api["alice"].pk},
    )
    assert repair.status_code == 201 and repair.json()["cost"] == 1
    cancel = _post(
        api,
        "player_alice",
        f"{pk}/cancel-project/",
        {"project": repair.json()["id"], "character": api["alice"].pk},
    )
    assert cancel.status_code == 200 and cancel.json()["status"] == "cancelled"


def test_transfer_will_forsake_vote_and_cancel(api: dict[str, Any]) -> None:
    pk = api["manor"].pk
    me = {"character": api["alice"].pk}
    matched = _post(api, "player_alice", f"{pk}/transfer/", {**me, "to_name": "Bastien"})
    assert matched.status_code == 201
    assert set(matched.json()) == {"id", "kind", "status", "to_name", "note"}
    will = _post(api, "player_alice", f"{pk}/will/", {**me, "to_name": "Nobody"})
    assert will.status_code == 201
    staff_only = _post(api, "player_alice", f"{pk}/will/", {**me, "to_character": api["bob"].pk})
    assert staff_only.status_code == 403
    forsake = _post(api, "player_alice", f"{pk}/forsake/", me)
    assert forsake.status_code == 201
    vote = _post(api, "player_alice", f"{pk}/crypt-vote/", {**me, "crypt": api["cellar"].pk})
    assert vote.status_code == 201 and CryptVote.objects.count() == 1
    cancel = _post(api, "player_alice", f"{pk}/cancel-change/", {"change": forsake.json()["id"]})
    assert cancel.status_code == 200 and cancel.json()["status"] == "cancelled"
    assert OwnershipChange.objects.filter(status="pending").count() == 3


def test_theft_control_is_for_storytellers(api: dict[str, Any]) -> None:
    pk = api["manor"].pk
    body = {"game": api["world"].game.number, "thieves": [api["bob"].pk]}
    assert _post(api, "player_alice", f"{pk}/theft-control/", body).status_code == 403
    response = _post(api, "storyteller", f"{pk}/theft-control/", body)
    assert response.status_code == 201 and response.json()["thieves"] == [api["bob"].pk]
    assert TheftControl.objects.count() == 1
    bad = _post(api, "storyteller", f"{pk}/theft-control/", {**body, "game": 999})
    assert bad.status_code == 400


@pytest.mark.parametrize("count", [1, 60])
def test_list_query_count_is_fixed(
    api: dict[str, Any], django_assert_num_queries: Any, count: int
) -> None:
    for i in range(count - 1):
        s = Structure.objects.create(
            chronicle=api["world"].chronicle,
            kind="outer",
            name=f"H{i}",
            location="L",
            status="standing",
            created_at=NOW,
        )
        Ownership.objects.create(structure=s, character=api["alice"], how="built", started_at=NOW)
    client = api["world"].client("storyteller")
    client.get(api["base"])
    # session, user, membership, structures, owners, attributes, projects, hiding points'
    # owners and Hiding/Mobility kinds.
    with django_assert_num_queries(9):
        assert client.get(api["base"]).status_code == 200


def test_create_with_the_same_key_plans_once(api: dict[str, Any], make_character: Any) -> None:
    """An idempotency key, scoped to the chronicle and the caller: sending it again returns the
    haven it planned; another caller's same key is another key."""
    body = {
        "character": api["alice"].pk,
        "kind": "outer",
        "name": "Loft",
        "location": "Docks",
        "attributes": [{"kind": "camera"}],
        "key": "k" * 40,
    }
    first = _post(api, "player_alice", "", body)
    again = _post(api, "player_alice", "", body)
    # A replay answers 200 with what the first made (issue 16).
    assert first.status_code == 201 and again.status_code == 200, again.json()
    assert first.json()["id"] == again.json()["id"]
    assert Structure.objects.filter(name="Loft").count() == 1
    bobs = _post(api, "player_bob", "", {**body, "character": api["bob"].pk})
    assert bobs.status_code == 201 and bobs.json()["id"] != first.json()["id"]
    assert Structure.objects.get(pk=first.json()["id"]).key.startswith(
        f"design:api:{api['world'].chronicle.pk}:"
    )
    too_long = _post(api, "player_alice", "", {**body, "key": "k" * 41})
    assert too_long.status_code == 400 and "key" in too_long.json()["error"]["fields"]


def test_a_replayed_key_never_shows_a_haven_no_longer_yours(api: dict[str, Any]) -> None:
    body = {
        "character": api["bob"].pk,
        "kind": "outer",
        "name": "Loft",
        "location": "Docks",
        "attributes": [{"kind": "camera"}],
        "key": "mine",
    }
    first = _post(api, "player_bob", "", body)
    assert first.status_code == 201
    # It has since been paid for and taken by someone else (HAV-04: no owners, no attributes).
    loft = Structure.objects.get(pk=first.json()["id"])
    Structure.objects.filter(pk=loft.pk).update(status=StructureStatus.STANDING)
    Ownership.objects.create(structure=loft, character=api["alice"], how="theft", started_at=NOW)
    replay = _post(api, "player_bob", "", body)
    assert replay.status_code == 404


def test_a_co_owner_cannot_probe_anothers_pending_change(api: dict[str, Any]) -> None:
    """A change asked for by another owner answers exactly like a change that does not exist,
    whoever now owns the haven; the one who asked may cancel it."""
    manor = api["manor"]
    Ownership.objects.create(structure=manor, character=api["bob"], how="joined", started_at=NOW)
    forsake = _post(api, "player_alice", f"{manor.pk}/forsake/", {"character": api["alice"].pk})
    assert forsake.status_code == 201
    change = forsake.json()["id"]
    probe = _post(api, "player_bob", f"{manor.pk}/cancel-change/", {"change": change})
    missing = _post(api, "player_bob", f"{manor.pk}/cancel-change/", {"change": change + 999})
    assert probe.status_code == missing.status_code == 400
    assert probe.json() == missing.json()
    mine = _post(api, "player_alice", f"{manor.pk}/cancel-change/", {"change": change})
    assert mine.status_code == 200 and mine.json()["status"] == "cancelled"

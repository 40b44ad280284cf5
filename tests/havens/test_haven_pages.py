"""The havens pages for every persona (HAV-01..24, HAV-04): the list, design and upgrade with
their live costs, the detail page and each owner action. Someone else's haven is a 404; bad
input shows errors beside the fields and keeps what was typed; nothing is a 500."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from havens.models import (
    AlarmFiring,
    Attribute,
    ChangeKind,
    Contribution,
    CryptVote,
    LockTest,
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
def site(world: Any, make_character: Any) -> dict[str, Any]:
    alice = make_character("Lucien", player="player_alice", business=5)
    bob = make_character("Bastien", player="player_bob", clan="brujah", business=5)
    manor = Structure.objects.create(
        chronicle=world.chronicle,
        kind="outer",
        name="Manor Secret",
        location="Hill Secret",
        status=StructureStatus.STANDING,
        created_at=NOW,
    )
    Ownership.objects.create(structure=manor, character=alice, how="built", started_at=NOW)
    cellar = Structure.objects.create(
        chronicle=world.chronicle,
        kind="crypt",
        outer=manor,
        name="Cellar",
        location="Below the hill",
        status=StructureStatus.STANDING,
        created_at=NOW,
    )
    Ownership.objects.create(structure=cellar, character=bob, how="built", started_at=NOW)
    Attribute.objects.create(
        structure=cellar, kind="seals", cost=10, note="Bob's seal secret", created_at=NOW
    )
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
    slug = world.chronicle.slug
    return {
        "alice": alice,
        "bob": bob,
        "manor": manor,
        "cellar": cellar,
        "lock": lock,
        "project": project,
        "base": f"/c/{slug}/havens/",
        "world": world,
    }


VISIBLE = {"admin": 200, "storyteller": 200, "player_alice": 200}
HIDDEN = ["player_bob", "outsider", "other_storyteller"]


@pytest.mark.parametrize("persona", [*VISIBLE, *HIDDEN])
def test_detail_page_personas(site: dict[str, Any], persona: str) -> None:
    response = site["world"].client(persona).get(f"{site['base']}{site['manor'].pk}/")
    if persona in VISIBLE:
        assert response.status_code == 200
        body = response.content.decode()
        assert "Manor Secret" in body and "Lucien" in body
        # The crypt inside: name and location only, never its owner or attributes.
        assert "Cellar" in body and "seal secret" not in body
        if persona == "player_alice":
            assert "Bastien" not in body
        if persona == "player_alice":
            assert "Hiding points" not in body
        else:
            assert "Hiding points" in body
    else:
        assert response.status_code == 404
        assert "Manor Secret" not in response.content.decode()


def test_anonymous_is_sent_to_log_in(site: dict[str, Any]) -> None:
    for path in ("", f"{site['manor'].pk}/", "new/"):
        response = site["world"].client(None).get(site["base"] + path)
        assert response.status_code == 302 and "login" in response["Location"]


@pytest.mark.parametrize("persona", ["admin", "storyteller", "player_alice", "player_bob"])
def test_list_shows_only_ones_own(site: dict[str, Any], persona: str) -> None:
    body = site["world"].client(persona).get(site["base"]).content.decode()
    if persona == "player_bob":
        assert "Manor Secret" not in body and "Cellar" in body
    elif persona == "player_alice":
        assert "Manor Secret" in body and "Cellar" not in body
        assert "Hiding points" not in body
    else:
        assert "Manor Secret" in body and "Cellar" in body and "Hiding points" in body


def test_outsiders_get_404_on_the_list(site: dict[str, Any]) -> None:
    for persona in ("outsider", "other_storyteller"):
        assert site["world"].client(persona).get(site["base"]).status_code == 404


def test_staff_filters(site: dict[str, Any]) -> None:
    client = site["world"].client("storyteller")
    body = client.get(site["base"] + "?kind=crypt").content.decode()
    assert "Cellar" in body and "Manor Secret" not in body
    body = client.get(site["base"] + "?owner=lucien").content.decode()
    assert "Manor Secret" in body and ">Cellar<" not in body
    assert client.get(site["base"] + "?status=bogus").status_code == 200


def test_design_page_and_live_check(site: dict[str, Any]) -> None:
    client = site["world"].client("player_alice")
    assert client.get(site["base"] + "new/").status_code == 200
    check = client.post(
        site["base"] + "check/",
        {"kind": "outer", "q_hiding": "1", "q_mobility": "1", "q_camera": "2"},
        HTTP_HX_REQUEST="true",
    )
    body = check.content.decode()
    assert check.status_code == 200 and "HAV-14" in body and "<td>15</td>" in body
    assert "<html" not in body  # the partial only


def test_design_success_redirects_to_the_detail(site: dict[str, Any]) -> None:
    client = site["world"].client("player_alice")
    response = client.post(
        site["base"] + "new/",
        {
            "character": site["alice"].pk,
            "kind": "outer",
            "name": "Safehouse",
            "location": "Docks",
            "q_camera": "2",
            "alarm_trigger_0": "attack",
            "alarm_effect_0": "page",
        },
    )
    structure = Structure.objects.get(name="Safehouse")
    assert response.status_code == 302 and response["Location"].endswith(f"/{structure.pk}/")
    assert structure.projects.count() == 2


def test_design_errors_beside_fields_keep_what_was_typed(site: dict[str, Any]) -> None:
    client = site["world"].client("player_alice")
    response = client.post(
        site["base"] + "new/",
        {
            "character": site["alice"].pk,
            "kind": "crypt",
            "outer": site["cellar"].pk,  # not an outer haven of hers
            "name": "Typed name",
            "location": "Typed place",
            "q_hiding": "1",
            "q_mobility": "1",
        },
    )
    body = response.content.decode()
    assert response.status_code == 400
    assert 'value="Typed name"' in body and "HAV-14" in body
    assert not Structure.objects.filter(name="Typed name").exists()


def test_bob_cannot_design_for_alices_character(site: dict[str, Any]) -> None:
    response = (
        site["world"]
        .client("player_bob")
        .post(
            site["base"] + "new/",
            {"character": site["alice"].pk, "kind": "outer", "name": "X", "location": "Y"},
        )
    )
    assert response.status_code == 400
    assert not Structure.objects.filter(name="X").exists()


def test_upgrade_page_and_check(site: dict[str, Any]) -> None:
    client = site["world"].client("player_alice")
    url = f"{site['base']}{site['manor'].pk}/upgrade/"
    assert client.get(url).status_code == 200
    check = client.post(f"{site['base']}{site['manor'].pk}/check/", {"q_seals": "1"})
    assert "10" in check.content.decode()
    response = client.post(url, {"character": site["alice"].pk, "q_seals": "1", "version": "1"})
    assert response.status_code == 302
    stale = client.post(url, {"character": site["alice"].pk, "q_camera": "1", "version": "1"})
    assert stale.status_code == 400 and "Someone changed" in stale.content.decode()
    for persona in HIDDEN:
        assert site["world"].client(persona).get(url).status_code == 404


def test_contribute_from_the_detail_page(site: dict[str, Any]) -> None:
    client = site["world"].client("player_alice")
    project = site["project"]
    url = f"{site['base']}{site['manor'].pk}/projects/{project.pk}/contribute/"
    data = {
        f"p{project.pk}-character": site["alice"].pk,
        f"p{project.pk}-influence": "business",
        f"p{project.pk}-points": "2",
        f"p{project.pk}-key": "abc",
    }
    assert client.post(url, data).status_code == 302
    assert client.post(url, data).status_code == 302  # resubmitted: once
    assert Contribution.objects.count() == 1
    too_much = client.post(url, {**data, f"p{project.pk}-points": "5", f"p{project.pk}-key": "x"})
    assert too_much.status_code == 400
    assert "This needs only 1 more influence" in too_much.content.decode()
    assert site["world"].client("player_bob").post(url, data).status_code == 404


def test_owner_actions(site: dict[str, Any]) -> None:
    client = site["world"].client("player_alice")
    base = f"{site['base']}{site['manor'].pk}/"
    who = {"character": site["alice"].pk}
    assert client.post(f"{base}attributes/{site['lock'].pk}/repair/", who).status_code == 302
    assert Project.objects.filter(kind="repair").count() == 1
    assert client.post(f"{base}projects/{site['project'].pk}/cancel/", who).status_code == 302
    response = client.post(
        f"{base}transfer/", {"transfer-character": site["alice"].pk, "transfer-to_name": "Nobody"}
    )
    assert response.status_code == 302
    assert (
        client.post(f"{base}transfer/", {"transfer-character": site["alice"].pk}).status_code == 400
    )
    assert (
        client.post(
            f"{base}will/", {"will-character": site["alice"].pk, "will-to_name": "Bastien"}
        ).status_code
        == 302
    )
    assert client.post(f"{base}crypts/{site['cellar'].pk}/vote/", who).status_code == 302
    assert CryptVote.objects.count() == 1
    assert client.post(f"{base}forsake/", who).status_code == 302
    kinds = set(OwnershipChange.objects.values_list("kind", flat=True))
    assert kinds == {
        ChangeKind.TRANSFER,
        ChangeKind.WILL,
        ChangeKind.DESTROY_CRYPT,
        ChangeKind.FORSAKE,
    }
    change = OwnershipChange.objects.get(kind=ChangeKind.FORSAKE)
    assert client.post(f"{base}changes/{change.pk}/cancel/").status_code == 302
    change.refresh_from_db()
    assert change.status == "cancelled"
    # Not hers to record: the storytellers' forms.
    assert client.post(f"{base}theft-control/", {}).status_code == 403
    assert client.post(f"{base}destroy/", {"note": "x"}).status_code == 403


def test_staff_actions(site: dict[str, Any]) -> None:
    client = site["world"].client("storyteller")
    base = f"{site['base']}{site['manor'].pk}/"
    response = client.post(
        f"{base}theft-control/", {"game": site["world"].game.pk, "thieves": [site["bob"].pk]}
    )
    assert response.status_code == 302 and TheftControl.objects.count() == 1
    assert client.post(f"{base}destroy/", {"note": ""}).status_code == 400
    assert client.post(f"{base}destroy/", {"note": "Burnt"}).status_code == 302
    site["manor"].refresh_from_db()
    assert site["manor"].status == "destroyed"


@pytest.mark.parametrize("persona", HIDDEN)
def test_actions_on_a_haven_not_yours_are_404(site: dict[str, Any], persona: str) -> None:
    client = site["world"].client(persona)
    base = f"{site['base']}{site['manor'].pk}/"
    for path in (
        "upgrade/",
        "check/",
        "transfer/",
        "will/",
        "forsake/",
        f"projects/{site['project'].pk}/contribute/",
        f"attributes/{site['lock'].pk}/repair/",
        "theft-control/",
        "destroy/",
    ):
        assert client.post(base + path, {}).status_code == 404, path


def test_bad_ids_are_404(site: dict[str, Any]) -> None:
    client = site["world"].client("player_alice")
    base = f"{site['base']}{site['manor'].pk}/"
    assert client.get(f"{site['base']}99999999999/").status_code == 404
    assert client.post(f"{base}projects/999999/contribute/", {}).status_code == 404
    assert client.post(f"{base}crypts/{site['manor'].pk}/vote/", {}).status_code == 404


# --- Review fixes: HAV-04 between a crypt and its outer haven, and towards new owners --------


def test_crypt_owner_sees_only_that_destruction_was_ordered(
    site: dict[str, Any], make_character: Any
) -> None:
    """HAV-03/HAV-04: Bob (the crypt's owner) learns neither who voted nor how many own the
    outer haven; the storytellers see both."""
    from havens.services import ownership as services

    world = site["world"]
    partner = make_character("Hidden Partner", player=None)
    Ownership.objects.create(
        structure=site["manor"], character=partner, how="joined", started_at=NOW
    )
    services.crypt_destroy_vote(
        crypt=site["cellar"], voter=site["alice"], by=world.users["player_alice"]
    )
    services.crypt_destroy_vote(crypt=site["cellar"], voter=partner, by=world.users["storyteller"])
    url = f"{site['base']}{site['cellar'].pk}/"
    page = world.client("player_bob").get(url).content.decode()
    assert "Destruction ordered by the outer haven's owners." in page
    for secret in ("Lucien", "Hidden Partner", "of 2", "2 of", "Manor"):
        assert secret not in page, secret
    staff = world.client("storyteller").get(url).content.decode()
    assert "2 of 2 owners of the outer haven in favour: Hidden Partner, Lucien" in staff


def test_crypt_owner_does_not_learn_of_mobility_on_order(site: dict[str, Any]) -> None:
    """HAV-04/HAV-23: the crypt's live check answers the same before and after the outer
    haven's owners order Mobility (only built Mobility counts)."""
    from havens.services import ownership as services

    world = site["world"]
    url = f"{site['base']}{site['cellar'].pk}/check/"
    client = world.client("player_bob")
    before = client.post(url, {"character": site["bob"].pk, "q_exit": "1"}).content.decode()
    services.structure_upgrade(
        structure=site["manor"],
        character=site["alice"],
        by=world.users["player_alice"],
        attributes=[services.AttributeRequest("mobility")],
    )
    after = client.post(url, {"character": site["bob"].pk, "q_exit": "1"}).content.decode()
    assert "mobile" not in after.lower() and after == before


def test_mobility_refused_beside_an_unfit_crypt_without_saying_why(site: dict[str, Any]) -> None:
    Attribute.objects.create(
        structure=site["cellar"], kind="exit", quantity=2, cost=2, created_at=NOW
    )
    client = site["world"].client("player_alice")
    url = f"{site['base']}{site['manor'].pk}/upgrade/"
    response = client.post(url, {"character": site["alice"].pk, "q_mobility": "1"})
    body = response.content.decode()
    assert response.status_code == 400
    assert "A crypt inside this haven does not allow Mobility (HAV-23)" in body
    assert "Cellar" not in body and "exits" not in body.split("<form")[1].split("</form>")[0]


def test_a_thief_sees_nothing_of_the_havens_past(site: dict[str, Any], make_character: Any) -> None:
    """HAV-04/HAV-07: after a theft, the new owner does not learn who owned or paid into the
    haven before; the storytellers still see all of it."""
    from chronicle import services as chronicle_services
    from havens.services import ownership as services

    world = site["world"]
    st = world.users["storyteller"]
    master = make_character("Old Master", player=None, business=5)
    den = services.structure_design(
        character=master,
        by=st,
        kind="outer",
        name="Den",
        location="Docks",
        attributes=[services.AttributeRequest("camera", 2)],
    )
    services.project_contribute(
        project=den.projects.get(),
        character=master,
        influence="business",
        points=1,
        by=st,
        key="old",
    )
    services.structure_will_set(structure=den, from_character=master, by=st, to_name="Heir X")
    Structure.objects.filter(pk=den.pk).update(status=StructureStatus.STANDING)
    game2 = chronicle_services.game_create(chronicle=world.chronicle, date=dt.date(2024, 4, 13))
    for game in (world.game, game2):
        services.theft_control_record(structure=den, game=game, thieves=[site["bob"]], by=st)
    services.theft_resolve(cycle=game2.cycle)
    services.project_contribute(
        project=den.projects.get(),
        character=site["bob"],
        influence="business",
        points=1,
        by=world.users["player_bob"],
        key="new",
        cycle=world.game.cycle,
    )
    url = f"{site['base']}{den.pk}/"
    page = world.client("player_bob").get(url)
    body = page.content.decode()
    assert page.status_code == 200
    assert "Old Master" not in body and "Heir X" not in body
    assert "Bastien: Theft (HAV-07)" in body and "Bastien: 1 business" in body
    staff = world.client("storyteller").get(url).content.decode()
    assert "Old Master" in staff and "Heir X" in staff


def test_double_submitted_design_form_plans_one_haven(site: dict[str, Any]) -> None:
    client = site["world"].client("player_alice")
    form = client.get(site["base"] + "new/").content.decode()
    assert 'type="hidden" name="key"' in form
    data = {
        "character": site["alice"].pk,
        "kind": "outer",
        "name": "Loft",
        "location": "Docks",
        "q_camera": "1",
        "key": "token-1",
    }
    first = client.post(site["base"] + "new/", data)
    second = client.post(site["base"] + "new/", data)
    assert first.status_code == second.status_code == 302
    assert first["Location"] == second["Location"]
    assert Structure.objects.filter(name="Loft").count() == 1
    client.post(site["base"] + "new/", {**data, "key": "token-2"})
    assert Structure.objects.filter(name="Loft").count() == 2


def test_storyteller_records_a_lock_test_and_the_owner_sees_the_alarm(
    site: dict[str, Any],
) -> None:
    """HAV-16 / HAV-10: a failed opening of the two-way locks sets off the alarm whose trigger
    it is; the owner sees it on the haven's page. A double click records one test; only staff
    record, and a member who may not see the haven gets the same 404 as for no haven."""
    manor, world = site["manor"], site["world"]
    working = Attribute.objects.create(structure=manor, kind="two_way_lock", cost=2, created_at=NOW)
    Attribute.objects.create(
        structure=manor,
        kind="alarm",
        trigger="failed_lock",
        effect="audible",
        cost=5,
        created_at=NOW,
    )
    url = f"{site['base']}{manor.pk}/lock-test/"
    form = {
        "lock-lock": working.pk,
        "lock-game": world.game.pk,
        "lock-result": "lost",
        "lock-key": "once",
    }
    page = world.client("storyteller").get(f"{site['base']}{manor.pk}/").content.decode()
    assert "Lock test (HAV-16)" in page
    assert world.client("player_alice").post(url, form).status_code == 403
    assert world.client("player_bob").post(url, form).status_code == 404
    st = world.client("storyteller")
    assert st.post(url, form).status_code == 302
    assert st.post(url, form).status_code == 302
    assert LockTest.objects.count() == 1
    assert AlarmFiring.objects.get().cause == "failed_lock"
    owner_page = world.client("player_alice").get(f"{site['base']}{manor.pk}/").content.decode()
    assert "Failed opening of the two-way locks" in owner_page
    # A beaten lock destroyed: the only working lock is beaten, so the haven is penetrated.
    destroy = {**form, "lock-result": "destroy", "lock-key": "second"}
    assert st.post(url, destroy).status_code == 302
    working.refresh_from_db()
    assert working.state == "destroyed" and working.needs_repair
    bad = st.post(url, {**form, "lock-lock": working.pk, "lock-key": "third"})
    assert bad.status_code == 400  # no longer a working lock to test

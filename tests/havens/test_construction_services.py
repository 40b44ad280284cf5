"""Design, upgrade, contributions, repairs and cancelling (HAV-01, HAV-02, HAV-10..24, INF-03),
against the real database: every refusal names its rule and writes nothing."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from characters.models import InfluenceSpend
from characters.services.common import rule_ids
from chronicle.models import CycleStatus
from havens.models import (
    Attribute,
    AttributeState,
    Contribution,
    Ownership,
    OwnershipHow,
    Project,
    ProjectKind,
    ProjectStatus,
    Structure,
    StructureStatus,
)
from havens.services import ownership as services
from havens.services.ownership import AttributeRequest as Req

pytestmark = [pytest.mark.django_db]
NOW = dt.datetime(2024, 3, 12, 20, 0, tzinfo=dt.UTC)


def _counts() -> dict[str, int]:
    return {
        "structures": Structure.objects.count(),
        "projects": Project.objects.count(),
        "contributions": Contribution.objects.count(),
        "ownerships": Ownership.objects.count(),
        "spends": InfluenceSpend.objects.count(),
        "attributes": Attribute.objects.count(),
    }


@pytest.fixture
def cast(world: Any, make_character: Any) -> dict[str, Any]:
    alice = make_character("Lucien", player="player_alice", business=5, occult=4)
    alice2 = make_character("Mireille", player="player_alice", business=3, status="torpor")
    bob = make_character("Bastien", player="player_bob", clan="brujah", business=5)
    return {
        "alice": alice,
        "alice2": alice2,
        "bob": bob,
        "a": world.users["player_alice"],
        "b": world.users["player_bob"],
        "st": world.users["storyteller"],
        "cycle": world.game.cycle,
    }


def _design(cast: dict[str, Any], **extra: Any) -> Structure:
    kwargs: dict[str, Any] = {
        "character": cast["alice"],
        "by": cast["a"],
        "kind": "outer",
        "name": "The Vault",
        "location": "Under the old bridge",
        "attributes": [Req("two_way_lock", 2), Req("alarm", 1, "attack", "silent")],
        "now": NOW,
    }
    kwargs.update(extra)
    return services.structure_design(**kwargs)


def _standing(cast: dict[str, Any], owner: Any = None, **extra: Any) -> Structure:
    structure = Structure.objects.create(
        chronicle=cast["alice"].chronicle,
        kind=extra.pop("kind", "outer"),
        name=extra.pop("name", "Standing"),
        location="Somewhere",
        status=StructureStatus.STANDING,
        created_at=NOW,
        **extra,
    )
    Ownership.objects.create(
        structure=structure, character=owner or cast["alice"], how="built", started_at=NOW
    )
    return structure


# --- Design ----------------------------------------------------------------------------------


def test_design_plans_a_structure_with_one_project_per_line(cast: dict[str, Any]) -> None:
    structure = _design(cast)
    assert structure.status == StructureStatus.PLANNED
    assert structure.designed_by == cast["alice"]
    projects = list(structure.projects.order_by("attribute_kind"))
    assert [(p.attribute_kind, p.quantity, p.cost) for p in projects] == [
        ("alarm", 1, 5),
        ("two_way_lock", 2, 4),
    ]
    assert projects[0].trigger == "attack" and projects[0].effect == "silent"
    assert not Ownership.objects.filter(structure=structure).exists()


@pytest.mark.parametrize(
    ("attributes", "rule"),
    [
        pytest.param([Req("hiding"), Req("mobility")], "HAV-14", id="HAV-23-hiding-mobility"),
        pytest.param(
            [Req("mobility"), Req("reinforcement", 10)], "HAV-21", id="HAV-23-mobile-reinforced"
        ),
        pytest.param([Req("mobility"), Req("exit", 1)], "HAV-11", id="HAV-23-mobile-exits"),
        pytest.param([Req("influence_resistance", 4)], "HAV-15", id="HAV-15-steps-of-3"),
        pytest.param([Req("alarm", 1)], "HAV-10", id="HAV-10-alarm-needs-trigger"),
        pytest.param([Req("camera", 1, "attack", "")], "HAV-10", id="HAV-10-only-alarms"),
        pytest.param([], "HAV-02", id="HAV-02-nothing-to-pay-for"),
    ],
)
def test_design_refusals_cite_the_rule_and_write_nothing(
    cast: dict[str, Any], attributes: list[Req], rule: str
) -> None:
    before = _counts()
    with pytest.raises(ValidationError) as refused:
        _design(cast, attributes=attributes)
    assert any(rule in m for m in refused.value.messages), refused.value.messages
    assert _counts() == before


def test_design_lists_every_problem_at_once(cast: dict[str, Any]) -> None:
    with pytest.raises(ValidationError) as refused:
        _design(
            cast,
            name=" ",
            attributes=[Req("hiding"), Req("mobility"), Req("exit", 1)],
        )
    messages = refused.value.message_dict
    assert "name" in messages
    assert len(messages["attributes"]) >= 2


def test_sixth_exit_on_a_crypt_is_refused(cast: dict[str, Any]) -> None:
    outer = _standing(cast)
    with pytest.raises(ValidationError, match="HAV-11"):
        _design(cast, kind="crypt", outer=outer, attributes=[Req("exit", 6)])
    crypt = _design(cast, kind="crypt", outer=outer, attributes=[Req("exit", 5)])
    assert crypt.outer == outer


def test_crypt_in_a_mobile_outer_counts_as_mobile(cast: dict[str, Any]) -> None:
    outer = _standing(cast)
    Attribute.objects.create(structure=outer, kind="mobility", cost=15, created_at=NOW)
    with pytest.raises(ValidationError, match="mobile haven cannot also have Hiding"):
        _design(cast, kind="crypt", outer=outer, attributes=[Req("hiding")])


def test_crypt_needs_an_outer_haven_the_player_owns(cast: dict[str, Any]) -> None:
    bobs = _standing(cast, owner=cast["bob"])
    before = _counts()
    with pytest.raises(ValidationError) as refused:
        _design(cast, kind="crypt", outer=bobs, attributes=[Req("camera")])
    assert refused.value.message_dict["outer"] == [services.UNKNOWN_OUTER]
    with pytest.raises(ValidationError, match="HAV-01"):
        _design(cast, kind="crypt", outer=None, attributes=[Req("camera")])
    assert _counts() == before
    # A storyteller may place it anywhere in the chronicle.
    crypt = _design(cast, by=cast["st"], kind="crypt", outer=bobs, attributes=[Req("camera")])
    assert crypt.outer == bobs


def test_design_for_someone_elses_character_is_refused(cast: dict[str, Any]) -> None:
    before = _counts()
    with pytest.raises(ValidationError, match="your own characters"):
        _design(cast, by=cast["b"])
    assert _counts() == before


# --- Upgrade ---------------------------------------------------------------------------------


def test_upgrade_adds_projects_and_bumps_the_version(cast: dict[str, Any]) -> None:
    structure = _standing(cast)
    projects = services.structure_upgrade(
        structure=structure,
        character=cast["alice"],
        by=cast["a"],
        attributes=[Req("reinforcement", 20)],
        version=1,
        now=NOW,
    )
    assert [(p.attribute_kind, p.cost) for p in projects] == [("reinforcement", 2)]
    structure.refresh_from_db()
    assert structure.version == 2


def test_upgrade_checks_the_whole_design(cast: dict[str, Any]) -> None:
    structure = _standing(cast)
    Attribute.objects.create(structure=structure, kind="hiding", cost=15, created_at=NOW)
    services.structure_upgrade(
        structure=structure, character=cast["alice"], by=cast["a"], attributes=[Req("exit", 1)]
    )
    before = _counts()
    with pytest.raises(ValidationError, match="HAV-19"):
        services.structure_upgrade(
            structure=structure,
            character=cast["alice"],
            by=cast["a"],
            attributes=[Req("mobility")],
        )
    assert _counts() == before


def test_upgrade_by_a_non_owner_is_refused(cast: dict[str, Any]) -> None:
    structure = _standing(cast)
    before = _counts()
    with pytest.raises(ValidationError, match="HAV-02"):
        services.structure_upgrade(
            structure=structure, character=cast["bob"], by=cast["b"], attributes=[Req("camera")]
        )
    with pytest.raises(ValidationError, match="HAV-02"):
        # Alice's other character does not own it either.
        services.structure_upgrade(
            structure=structure, character=cast["alice2"], by=cast["a"], attributes=[Req("camera")]
        )
    assert _counts() == before


def test_upgrade_with_a_stale_version_is_refused(cast: dict[str, Any]) -> None:
    structure = _standing(cast)
    services.structure_upgrade(
        structure=structure, character=cast["alice"], by=cast["a"], attributes=[Req("camera")]
    )
    before = _counts()
    with pytest.raises(ValidationError, match="Someone changed this haven's design"):
        services.structure_upgrade(
            structure=structure,
            character=cast["alice"],
            by=cast["a"],
            attributes=[Req("camera")],
            version=1,
        )
    assert _counts() == before


def test_designers_other_character_may_upgrade_a_plan(cast: dict[str, Any]) -> None:
    structure = _design(cast)
    services.structure_upgrade(
        structure=structure, character=cast["alice2"], by=cast["a"], attributes=[Req("camera")]
    )
    assert structure.projects.count() == 3


# --- Contributions ---------------------------------------------------------------------------


def _contribute(cast: dict[str, Any], project: Project, points: int, key: str, **extra: Any):
    kwargs: dict[str, Any] = {
        "project": project,
        "character": cast["alice"],
        "influence": "business",
        "points": points,
        "by": cast["a"],
        "key": key,
        "now": NOW,
    }
    kwargs.update(extra)
    return services.project_contribute(**kwargs)


def test_first_contribution_makes_the_contributor_exclusive_owner(cast: dict[str, Any]) -> None:
    structure = _design(cast)
    lock = structure.projects.get(attribute_kind="two_way_lock")
    contribution = _contribute(cast, lock, 3, "k1", character=cast["alice2"], by=cast["a"])
    assert contribution.cycle == cast["cycle"]
    assert contribution.spend.points == 3 and contribution.spend.influence == "business"
    owners = list(Ownership.objects.filter(structure=structure, ended_at__isnull=True))
    assert [(o.character, o.how) for o in owners] == [(cast["alice2"], OwnershipHow.BUILT)]
    # Now only the owner may pay: Alice's first character is not one.
    with pytest.raises(ValidationError, match="HAV-02"):
        _contribute(cast, lock, 1, "k2")


def test_paying_the_whole_cost_marks_the_project_paid(cast: dict[str, Any]) -> None:
    structure = _design(cast)
    lock = structure.projects.get(attribute_kind="two_way_lock")
    _contribute(cast, lock, 3, "k1")
    lock.refresh_from_db()
    assert (lock.paid, lock.status) == (3, ProjectStatus.OPEN)
    _contribute(cast, lock, 1, "k2")
    lock.refresh_from_db()
    assert (lock.paid, lock.status, lock.paid_cycle) == (4, ProjectStatus.PAID, cast["cycle"])


def test_contribution_beyond_the_remaining_cost_is_refused(cast: dict[str, Any]) -> None:
    structure = _design(cast)
    lock = structure.projects.get(attribute_kind="two_way_lock")
    _contribute(cast, lock, 3, "k1")
    before = _counts()
    with pytest.raises(ValidationError, match="This needs only 1 more influence"):
        _contribute(cast, lock, 2, "k2")
    assert _counts() == before


def test_same_key_twice_gives_one_contribution(cast: dict[str, Any]) -> None:
    structure = _design(cast)
    lock = structure.projects.get(attribute_kind="two_way_lock")
    first = _contribute(cast, lock, 2, "same")
    again = _contribute(cast, lock, 2, "same")
    assert first.pk == again.pk
    lock.refresh_from_db()
    assert lock.paid == 2 and InfluenceSpend.objects.count() == 1


def test_contribution_beyond_the_rating_is_refused_by_inf03(cast: dict[str, Any]) -> None:
    structure = _design(cast, attributes=[Req("hiding")])
    project = structure.projects.get()
    before = _counts()
    with pytest.raises(ValidationError) as refused:
        _contribute(cast, project, 6, "k")
    assert "INF-03" in " ".join(refused.value.messages)
    assert _counts() == before


def test_contributions_refused_by_non_owner_closed_project_and_closed_cycle(
    cast: dict[str, Any],
) -> None:
    structure = _design(cast)
    lock = structure.projects.get(attribute_kind="two_way_lock")
    before = _counts()
    with pytest.raises(ValidationError, match="HAV-02"):
        _contribute(cast, lock, 1, "bob", character=cast["bob"], by=cast["b"])
    with pytest.raises(ValidationError, match="your own characters"):
        _contribute(cast, lock, 1, "bob2", by=cast["b"])
    Project.objects.filter(pk=lock.pk).update(status=ProjectStatus.CANCELLED)
    with pytest.raises(ValidationError, match="no longer collecting"):
        _contribute(cast, lock, 1, "k")
    alarm = structure.projects.get(attribute_kind="alarm")
    cycle = cast["cycle"]
    cycle.status, cycle.closed_at = CycleStatus.CLOSED, timezone.now()
    cycle.save()
    with pytest.raises(ValidationError, match="No downtime is open"):
        _contribute(cast, alarm, 1, "k")
    assert _counts() == before


# --- Repairs and cancelling ------------------------------------------------------------------


def test_repair_of_a_destroyed_lock_costs_half_rounded_up(cast: dict[str, Any]) -> None:
    structure = _standing(cast)
    lock = Attribute.objects.create(
        structure=structure,
        kind="two_way_lock",
        cost=2,
        state=AttributeState.DESTROYED,
        created_at=NOW,
    )
    wall = Attribute.objects.create(
        structure=structure,
        kind="reinforcement",
        quantity=50,
        cost=5,
        state=AttributeState.BREACHED,
        created_at=NOW,
    )
    repair = services.repair_request(attribute=lock, character=cast["alice"], by=cast["a"])
    assert (repair.kind, repair.cost, repair.repair_of) == (ProjectKind.REPAIR, 1, lock)
    repair = services.repair_request(attribute=wall, character=cast["alice"], by=cast["a"])
    assert repair.cost == 3
    before = _counts()
    with pytest.raises(ValidationError, match="already under way"):
        services.repair_request(attribute=lock, character=cast["alice"], by=cast["a"])
    assert _counts() == before


@pytest.mark.parametrize(
    ("kind", "state", "match"),
    [
        pytest.param("alarm", AttributeState.ACTIVE, "indestructible", id="HAV-24-indestructible"),
        pytest.param("two_way_lock", AttributeState.ACTIVE, "HAV-24", id="HAV-24-working"),
    ],
)
def test_repair_refusals(cast: dict[str, Any], kind: str, state: str, match: str) -> None:
    structure = _standing(cast)
    extra = {"trigger": "attack", "effect": "audible"} if kind == "alarm" else {}
    attribute = Attribute.objects.create(
        structure=structure, kind=kind, cost=2, state=state, created_at=NOW, **extra
    )
    before = _counts()
    with pytest.raises(ValidationError, match=match):
        services.repair_request(attribute=attribute, character=cast["alice"], by=cast["a"])
    with pytest.raises(ValidationError):
        services.repair_request(attribute=attribute, character=cast["bob"], by=cast["b"])
    assert _counts() == before


def test_repair_by_a_non_owner_is_refused(cast: dict[str, Any]) -> None:
    structure = _standing(cast)
    lock = Attribute.objects.create(
        structure=structure, kind="two_way_lock", cost=2, state="destroyed", created_at=NOW
    )
    with pytest.raises(ValidationError, match="HAV-02"):
        services.repair_request(attribute=lock, character=cast["bob"], by=cast["b"])


def test_cancel_an_unpaid_project_only(cast: dict[str, Any]) -> None:
    structure = _design(cast)
    alarm = structure.projects.get(attribute_kind="alarm")
    lock = structure.projects.get(attribute_kind="two_way_lock")
    _contribute(cast, lock, 1, "k")
    cancelled = services.project_cancel(project=alarm, character=cast["alice"], by=cast["a"])
    assert cancelled.status == ProjectStatus.CANCELLED
    with pytest.raises(ValidationError, match="already been paid"):
        services.project_cancel(project=lock, character=cast["alice"], by=cast["a"])
    with pytest.raises(ValidationError, match="HAV-02"):
        services.project_cancel(project=lock, character=cast["bob"], by=cast["b"])
    # Twice: the same answer, no error.
    assert services.project_cancel(project=alarm, character=cast["alice"], by=cast["a"])


def test_design_quote_prices_each_line(cast: dict[str, Any]) -> None:
    quote = services.design_quote(
        chronicle=cast["alice"].chronicle,
        kind="outer",
        attributes=[Req("reinforcement", 30), Req("seals"), Req("camera", 3)],
    )
    assert [line.cost for line in quote.lines] == [3, 10, 3]
    assert quote.total == 16 and quote.ok


# --- Review fixes: secrecy between a crypt and its outer haven, keys, rule IDs ----------------


def test_crypt_design_ignores_the_outers_mobility_on_order(cast: dict[str, Any]) -> None:
    """HAV-04/HAV-23: only built, working Mobility of the outer haven makes a crypt mobile; an
    order the outer haven's owners placed is theirs, and the crypt's owner must not learn it."""
    outer = _standing(cast, owner=cast["bob"])
    services.structure_upgrade(
        structure=outer, character=cast["bob"], by=cast["b"], attributes=[Req("mobility")]
    )
    crypt = _design(cast, by=cast["st"], kind="crypt", outer=outer, attributes=[Req("hiding")])
    Ownership.objects.create(structure=crypt, character=cast["alice"], how="built", started_at=NOW)
    quote = services.upgrade_quote(structure=crypt, attributes=[Req("exit", 1)])
    assert quote.ok and not any("mobile" in p.message for p in quote.problems)
    services.structure_upgrade(
        structure=crypt, character=cast["alice"], by=cast["a"], attributes=[Req("exit", 1)]
    )
    # Once built, it counts (the existing rule): a mobile haven has no exits.
    Attribute.objects.create(structure=outer, kind="mobility", cost=15, created_at=NOW)
    quote = services.upgrade_quote(structure=crypt, attributes=[Req("exit", 1)])
    assert any("crypt inside a mobile haven" in p.message.lower() for p in quote.problems)


@pytest.mark.parametrize(
    ("crypt_design", "ordered"),
    [
        pytest.param({"exit": 2}, False, id="built-exits"),
        pytest.param({"hiding": 1}, False, id="built-hiding"),
        pytest.param({"reinforcement": 10}, True, id="reinforcement-on-order"),
    ],
)
def test_mobility_on_an_outer_with_an_unfit_crypt_is_refused(
    cast: dict[str, Any], crypt_design: dict[str, int], ordered: bool
) -> None:
    """HAV-23 + INTERPRETATION (a crypt inside a mobile outer haven counts as mobile): the
    outer haven's owners may not make it mobile around a crypt with Hiding, reinforcement or
    exits; the refusal does not say which the crypt has (HAV-04)."""
    outer = _standing(cast)
    crypt = _standing(cast, owner=cast["bob"], kind="crypt", outer=outer, name="Crypt")
    for kind, quantity in crypt_design.items():
        if ordered:
            Project.objects.create(
                structure=crypt,
                kind=ProjectKind.ATTRIBUTE,
                attribute_kind=kind,
                quantity=quantity,
                cost=quantity,
                requested_by=cast["bob"],
                created_at=NOW,
            )
        else:
            Attribute.objects.create(
                structure=crypt, kind=kind, quantity=quantity, cost=1, created_at=NOW
            )
    before = _counts()
    quote = services.upgrade_quote(structure=outer, attributes=[Req("mobility")])
    assert [p.message for p in quote.problems] == [services.CRYPT_REFUSES_MOBILITY]
    with pytest.raises(ValidationError) as refused:
        services.structure_upgrade(
            structure=outer, character=cast["alice"], by=cast["a"], attributes=[Req("mobility")]
        )
    assert refused.value.messages == [services.CRYPT_REFUSES_MOBILITY]
    for secret in ("exit", "Hiding", "hiding", "reinforce", "Bastien", "Crypt"):
        assert secret not in services.CRYPT_REFUSES_MOBILITY
    assert _counts() == before
    # Other lines are not the crypt's business.
    services.structure_upgrade(
        structure=outer, character=cast["alice"], by=cast["a"], attributes=[Req("camera")]
    )


def test_mobility_next_to_a_fitting_crypt_or_when_the_setting_is_off(
    cast: dict[str, Any],
) -> None:
    outer = _standing(cast)
    crypt = _standing(cast, owner=cast["bob"], kind="crypt", outer=outer, name="Crypt")
    Attribute.objects.create(structure=crypt, kind="camera", cost=1, created_at=NOW)
    assert services.upgrade_quote(structure=outer, attributes=[Req("mobility")]).ok
    Attribute.objects.create(structure=crypt, kind="exit", quantity=1, cost=1, created_at=NOW)
    assert not services.upgrade_quote(structure=outer, attributes=[Req("mobility")]).ok
    chronicle = outer.chronicle
    chronicle.house_rule_overrides = {"crypt_in_mobile_haven_is_mobile": False}
    chronicle.save()
    outer.refresh_from_db()
    services.structure_upgrade(
        structure=outer, character=cast["alice"], by=cast["a"], attributes=[Req("mobility")]
    )


def test_long_contribution_keys_are_hashed_never_cut(cast: dict[str, Any]) -> None:
    """Two keys sharing their first 120 characters stay two keys (a cut made them one)."""
    one, two = "k" * 150 + "1", "k" * 150 + "2"
    assert services.contribution_key(one) != services.contribution_key(two)
    assert all(len(services.contribution_key(k)) <= 120 for k in (one, two, "short"))
    assert services.contribution_key("short") == "haven-contribution:short"
    structure = _design(cast, attributes=[Req("camera", 3)])
    project = structure.projects.get()
    for key in (one, two, one):
        services.project_contribute(
            project=project,
            character=cast["alice"],
            influence="business",
            points=1,
            by=cast["a"],
            key=key,
        )
    assert Contribution.objects.count() == 2
    project.refresh_from_db()
    assert project.paid == 2


def test_design_with_the_same_key_plans_one_structure(cast: dict[str, Any]) -> None:
    """A double-clicked design form (the same token twice) plans one haven."""
    first = _design(cast, key="page:1:token")
    before = _counts()
    again = _design(cast, key="page:1:token")
    assert again.pk == first.pk and _counts() == before
    assert first.key == "design:page:1:token"
    other = _design(cast, key="page:1:other")
    assert other.pk != first.pk
    # Without a key, each call plans one (the service's callers always send one).
    assert _design(cast).pk != _design(cast).pk


@pytest.mark.parametrize(
    ("call", "rule"),
    [
        pytest.param(lambda c: _design(c, name=" "), "HAV-01", id="name"),
        pytest.param(lambda c: _design(c, character=c["alice2"]), "HAV-02", id="inactive"),
        pytest.param(
            lambda c: services.structure_upgrade(
                structure=_standing(c), character=c["alice"], by=c["a"], attributes=[]
            ),
            "HAV-10",
            id="no-attributes",
        ),
    ],
)
def test_design_refusals_name_their_rule(cast: dict[str, Any], call: Any, rule: str) -> None:
    with pytest.raises(ValidationError) as refused:
        call(cast)
    assert all(rule_ids(m) for m in refused.value.messages), refused.value.messages
    assert any(rule in m for m in refused.value.messages)


def test_contribution_refusals_name_their_rule(cast: dict[str, Any]) -> None:
    structure = _design(cast, attributes=[Req("camera", 2)])
    project = structure.projects.get()

    def pay(points: int, key: str) -> Contribution:
        return services.project_contribute(
            project=project,
            character=cast["alice"],
            influence="business",
            points=points,
            by=cast["a"],
            key=key,
        )

    with pytest.raises(ValidationError, match=r"needs only 2 more influence \(HAV-02, INF-03\)"):
        pay(3, "too-much")
    pay(2, "all")
    with pytest.raises(ValidationError, match=r"no longer collecting influence.*\(HAV-02\)"):
        pay(1, "late")


@pytest.mark.django_db(transaction=True)
def test_two_racing_designs_with_one_key_plan_one_structure(
    postgres: None, cast: dict[str, Any]
) -> None:
    """The second submit waits for the first one's lock, then finds its structure: one haven,
    no IntegrityError (a 500 on a double click)."""
    import threading
    import time

    from django.db import connection, transaction

    out: dict[str, Any] = {}
    started, release = threading.Event(), threading.Event()

    def first() -> None:
        try:
            with transaction.atomic():
                out["a"] = _design(cast, key="page:race")
                started.set()
                release.wait(5)
        except Exception as exc:  # noqa: BLE001 - reported by the assertion below
            out["a"] = exc
            started.set()
        finally:
            connection.close()

    def second() -> None:
        started.wait(5)
        try:
            out["b"] = _design(cast, key="page:race")
        except Exception as exc:  # noqa: BLE001
            out["b"] = exc
        finally:
            connection.close()

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    started.wait(5)
    time.sleep(0.3)  # the second one is now blocked on the first one's lock
    release.set()
    for thread in threads:
        thread.join(10)
    assert isinstance(out["a"], Structure) and isinstance(out["b"], Structure), out
    assert out["a"].pk == out["b"].pk
    assert Structure.objects.filter(key="design:page:race").count() == 1

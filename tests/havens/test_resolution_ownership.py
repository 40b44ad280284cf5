"""The downtime's haven steps (DT-10 order): ownership changes (HAV-03/05/06), forsaking after
absence (HAV-06), theft (HAV-07) and construction (HAV-02, HAV-10..24). Each step run twice has
the effects of one run: the rows' digest does not change."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.core.exceptions import ValidationError

from characters.models import InfluenceSpend
from chronicle import services as chronicle_services
from chronicle.models import Attendance
from havens.models import (
    Attribute,
    AttributeState,
    ChangeKind,
    ChangeStatus,
    DestroyedBy,
    Find,
    Ownership,
    OwnershipChange,
    OwnershipHow,
    Project,
    ProjectKind,
    ProjectStatus,
    Structure,
    StructureStatus,
    TheftControl,
)
from havens.services import ownership as services

pytestmark = [pytest.mark.django_db]
NOW = dt.datetime(2024, 3, 20, 20, 0, tzinfo=dt.UTC)


def digest() -> list[Any]:
    return [
        list(Structure.objects.order_by("pk").values_list("pk", "status", "destroyed_by")),
        list(
            Ownership.objects.order_by("pk").values_list(
                "pk", "structure_id", "character_id", "how", "ended_at"
            )
        ),
        list(OwnershipChange.objects.order_by("pk").values_list("pk", "kind", "status", "outcome")),
        list(
            Attribute.objects.order_by("pk").values_list("pk", "kind", "quantity", "state", "cost")
        ),
        list(Project.objects.order_by("pk").values_list("pk", "status", "done_cycle")),
    ]


@pytest.fixture
def cast(world: Any, make_character: Any) -> dict[str, Any]:
    alice = make_character("Lucien", player="player_alice")
    bob = make_character("Bastien", player="player_bob", clan="brujah")
    carl = make_character("Carl", player=None, status="npc")

    def structure(name: str, *owners: Any, **extra: Any) -> Structure:
        s = Structure.objects.create(
            chronicle=world.chronicle,
            kind=extra.pop("kind", "outer"),
            name=name,
            location=name,
            status=extra.pop("status", StructureStatus.STANDING),
            created_at=NOW,
            **extra,
        )
        for owner in owners:
            Ownership.objects.create(structure=s, character=owner, how="built", started_at=NOW)
        return s

    return {
        "alice": alice,
        "bob": bob,
        "carl": carl,
        "structure": structure,
        "cycle": world.game.cycle,
        "world": world,
        "a": world.users["player_alice"],
        "b": world.users["player_bob"],
        "st": world.users["storyteller"],
    }


def _owners(structure: Structure) -> set[str]:
    return set(
        Ownership.objects.filter(structure=structure, ended_at__isnull=True).values_list(
            "character__name", flat=True
        )
    )


def _twice(step: Any, cycle: Any) -> dict[str, int]:
    first = step(cycle=cycle, now=NOW)
    before = digest()
    step(cycle=cycle, now=NOW + dt.timedelta(hours=1))
    assert digest() == before
    return first


# --- Ownership changes -----------------------------------------------------------------------


def test_transfer_applies_once(cast: dict[str, Any]) -> None:
    manor = cast["structure"]("Manor", cast["alice"])
    change = services.structure_transfer_request(
        structure=manor, from_character=cast["alice"], by=cast["a"], to_name="Bastien"
    )
    summary = _twice(services.ownership_changes_apply, cast["cycle"])
    assert summary["applied"] == 1
    assert _owners(manor) == {"Bastien"}
    change.refresh_from_db()
    assert change.status == ChangeStatus.APPLIED and "Bastien" in change.outcome
    new = Ownership.objects.get(structure=manor, ended_at__isnull=True)
    assert new.how == OwnershipHow.TRANSFER and new.started_cycle == cast["cycle"]


def test_transfer_without_a_linked_recipient_is_void(cast: dict[str, Any]) -> None:
    manor = cast["structure"]("Manor", cast["alice"])
    change = services.structure_transfer_request(
        structure=manor, from_character=cast["alice"], by=cast["a"], to_name="Nobody"
    )
    _twice(services.ownership_changes_apply, cast["cycle"])
    change.refresh_from_db()
    assert change.status == ChangeStatus.VOID and _owners(manor) == {"Lucien"}


def test_exclusive_owner_forsaking_destroys_the_outer_and_its_crypts(
    cast: dict[str, Any],
) -> None:
    manor = cast["structure"]("Manor", cast["alice"])
    cellar = cast["structure"]("Cellar", cast["bob"], kind="crypt", outer=manor)
    bobs = services.structure_transfer_request(
        structure=cellar, from_character=cast["bob"], by=cast["b"], to_name="Lucien"
    )
    services.structure_forsake_request(structure=manor, character=cast["alice"], by=cast["a"])
    # Bob asked first, so his transfer applies, then the forsaking destroys the crypt.
    OwnershipChange.objects.filter(pk=bobs.pk).update(requested_at=NOW - dt.timedelta(days=1))
    summary = _twice(services.ownership_changes_apply, cast["cycle"])
    manor.refresh_from_db()
    cellar.refresh_from_db()
    assert (manor.status, manor.destroyed_by) == ("destroyed", DestroyedBy.FORSAKEN)
    assert (cellar.status, cellar.destroyed_by) == ("destroyed", DestroyedBy.OUTER_FORSAKEN)
    assert summary["destroyed"] == 2
    assert not Ownership.objects.filter(ended_at__isnull=True).exists()


def test_partial_owner_forsaking_leaves_the_other_exclusive(cast: dict[str, Any]) -> None:
    manor = cast["structure"]("Manor", cast["alice"], cast["carl"])
    change = services.structure_forsake_request(
        structure=manor, character=cast["alice"], by=cast["a"]
    )
    _twice(services.ownership_changes_apply, cast["cycle"])
    change.refresh_from_db()
    assert "exclusive" in change.outcome
    assert _owners(manor) == {"Carl"}
    manor.refresh_from_db()
    assert manor.status == StructureStatus.STANDING


def test_crypt_vote_destroys_the_crypt(cast: dict[str, Any]) -> None:
    manor = cast["structure"]("Manor", cast["alice"])
    cellar = cast["structure"]("Cellar", cast["bob"], kind="crypt", outer=manor)
    services.crypt_destroy_vote(crypt=cellar, voter=cast["alice"], by=cast["a"])
    later = services.structure_forsake_request(
        structure=cellar, character=cast["bob"], by=cast["b"]
    )
    _twice(services.ownership_changes_apply, cast["cycle"])
    cellar.refresh_from_db()
    assert cellar.destroyed_by == DestroyedBy.CRYPT_VOTE
    later.refresh_from_db()
    assert later.status == ChangeStatus.VOID


def test_will_applies_on_death_and_dead_owners_without_a_will_forsake(
    cast: dict[str, Any],
) -> None:
    manor = cast["structure"]("Manor", cast["alice"])
    lair = cast["structure"]("Lair", cast["carl"])
    will = services.structure_will_set(
        structure=manor, from_character=cast["alice"], by=cast["a"], to_name="Bastien"
    )
    services.ownership_changes_apply(cycle=cast["cycle"], now=NOW)
    will.refresh_from_db()
    assert will.status == ChangeStatus.PENDING  # Alice lives
    cast["alice"].status = "dead"
    cast["alice"].save()
    cast["carl"].died_on = dt.date(2024, 3, 15)
    cast["carl"].save()
    summary = _twice(services.ownership_changes_apply, cast["cycle"])
    assert summary["died_without_will"] == 1
    assert _owners(manor) == {"Bastien"}
    lair.refresh_from_db()
    assert lair.status == StructureStatus.DESTROYED
    assert OwnershipChange.objects.get(structure=lair).kind == ChangeKind.FORSAKE


# --- Forsaking after absence -----------------------------------------------------------------


def _games(world: Any, count: int) -> list[Any]:
    games = [world.game]
    for i in range(1, count):
        games.append(
            chronicle_services.game_create(
                chronicle=world.chronicle, date=world.game.date + dt.timedelta(days=28 * i)
            )
        )
    return games


BEFORE_THE_FIRST_GAME = dt.datetime(2024, 3, 1, tzinfo=dt.UTC)


def test_absent_for_six_games_forsakes(cast: dict[str, Any]) -> None:
    world = cast["world"]
    games = _games(world, 6)
    manor = cast["structure"]("Manor", cast["alice"])
    shared = cast["structure"]("Shared", cast["alice"], cast["bob"])
    Ownership.objects.update(started_at=BEFORE_THE_FIRST_GAME)
    Attendance.objects.create(
        game=games[3], player=world.users["player_bob"], recorded_by=cast["st"], recorded_at=NOW
    )
    summary = _twice(services.forsaking_resolve, games[-1].cycle)
    assert summary == {"forsaken": 2, "destroyed": 1}
    assert _owners(shared) == {"Bastien"}
    manor.refresh_from_db()
    assert manor.status == StructureStatus.DESTROYED
    assert set(OwnershipChange.objects.values_list("kind", flat=True)) == {ChangeKind.ABSENCE}


def test_games_before_the_ownership_do_not_count(cast: dict[str, Any]) -> None:
    """HAV-06: six games absent in a row, but the haven was built after the first one: only
    five count, so it is not forsaken yet; one more absence and it is."""
    world = cast["world"]
    games = _games(world, 7)
    manor = cast["structure"]("Manor", cast["alice"])  # built 2024-03-20, after game 1
    assert services.forsaking_resolve(cycle=games[5].cycle, now=NOW)["forsaken"] == 0
    assert services.forsaking_resolve(cycle=games[6].cycle, now=NOW)["forsaken"] == 1
    manor.refresh_from_db()
    assert manor.status == StructureStatus.DESTROYED


def test_attending_resets_the_count(cast: dict[str, Any]) -> None:
    world = cast["world"]
    games = _games(world, 6)
    manor = cast["structure"]("Manor", cast["alice"])
    Ownership.objects.update(started_at=BEFORE_THE_FIRST_GAME)
    Attendance.objects.create(
        game=games[3], player=world.users["player_alice"], recorded_by=cast["st"], recorded_at=NOW
    )
    assert services.forsaking_resolve(cycle=games[-1].cycle, now=NOW)["forsaken"] == 0
    assert _owners(manor) == {"Lucien"}


# --- Theft -----------------------------------------------------------------------------------


def test_two_games_of_control_make_the_thieves_owners(cast: dict[str, Any]) -> None:
    world = cast["world"]
    games = _games(world, 2)
    manor = cast["structure"]("Manor", cast["alice"])
    alarm = Attribute.objects.create(
        structure=manor, kind="alarm", cost=5, trigger="attack", effect="silent", created_at=NOW
    )
    seals = Attribute.objects.create(structure=manor, kind="seals", cost=10, created_at=NOW)
    services.theft_control_record(
        structure=manor, game=games[0], thieves=[cast["bob"]], by=cast["st"]
    )
    assert services.theft_resolve(cycle=games[0].cycle, now=NOW)["stolen"] == 0
    services.theft_control_record(
        structure=manor, game=games[1], thieves=[cast["bob"]], by=cast["st"]
    )
    summary = _twice(services.theft_resolve, games[1].cycle)
    assert summary == {"stolen": 1, "attributes_disabled": 1, "void": 0}
    assert _owners(manor) == {"Bastien"}
    alarm.refresh_from_db()
    seals.refresh_from_db()
    assert alarm.state == AttributeState.INOPERATIVE and seals.state == AttributeState.ACTIVE
    assert Ownership.objects.get(structure=manor, ended_at__isnull=True).how == "theft"


def test_theft_needs_consecutive_games_up_to_the_latest(cast: dict[str, Any]) -> None:
    world = cast["world"]
    games = _games(world, 3)
    manor = cast["structure"]("Manor", cast["alice"])
    for game in (games[0], games[2]):
        TheftControl.objects.create(
            structure=manor, game=game, recorded_by=cast["st"], recorded_at=NOW
        ).thieves.set([cast["bob"]])
    assert services.theft_resolve(cycle=games[2].cycle, now=NOW)["stolen"] == 0


# --- Construction ----------------------------------------------------------------------------


def _paid(structure: Structure, kind: str, quantity: int, cost: int, by: Any, **extra: Any):
    return Project.objects.create(
        structure=structure,
        kind=extra.pop("project_kind", ProjectKind.ATTRIBUTE),
        attribute_kind=kind,
        quantity=quantity,
        cost=cost,
        paid=cost,
        status=ProjectStatus.PAID,
        paid_cycle=extra.pop("paid_cycle", None)
        or structure.chronicle.cycles.earliest("deadline_at"),
        requested_by=by,
        created_at=NOW,
        **extra,
    )


def test_paid_projects_are_built_once(cast: dict[str, Any]) -> None:
    alice = cast["alice"]
    plan = cast["structure"]("Plan", alice, status=StructureStatus.PLANNED)
    orphan = cast["structure"]("Orphan", status=StructureStatus.PLANNED)
    manor = cast["structure"]("Manor", alice)
    wall = Attribute.objects.create(
        structure=manor, kind="reinforcement", quantity=20, cost=2, created_at=NOW
    )
    lock = Attribute.objects.create(
        structure=manor, kind="two_way_lock", cost=2, state="destroyed", created_at=NOW
    )
    _paid(plan, "two_way_lock", 3, 6, alice)
    _paid(plan, "alarm", 1, 5, alice, trigger="penetration", effect="page")
    _paid(plan, "influence_resistance", 9, 3, alice)
    _paid(manor, "reinforcement", 30, 3, alice)
    _paid(manor, "two_way_lock", 1, 1, alice, project_kind=ProjectKind.REPAIR, repair_of=lock)
    open_one = Project.objects.create(
        structure=manor,
        kind=ProjectKind.ATTRIBUTE,
        attribute_kind="camera",
        cost=1,
        requested_by=alice,
        created_at=NOW,
    )
    summary = _twice(services.construction_resolve, cast["cycle"])
    assert summary == {
        "projects_done": 5,
        "attributes_built": 6,
        "repaired": 1,
        "structures_built": 1,
        "held": 0,
    }
    plan.refresh_from_db()
    orphan.refresh_from_db()
    assert (plan.status, plan.built_cycle) == (StructureStatus.STANDING, cast["cycle"])
    assert orphan.status == StructureStatus.PLANNED
    built = list(plan.attributes.values_list("kind", "quantity", "cost", "trigger"))
    assert sorted(built) == [
        ("alarm", 1, 5, "penetration"),
        ("influence_resistance", 9, 3, ""),
        ("two_way_lock", 1, 2, ""),
        ("two_way_lock", 1, 2, ""),
        ("two_way_lock", 1, 2, ""),
    ]
    wall.refresh_from_db()
    lock.refresh_from_db()
    assert (wall.quantity, wall.cost) == (50, 5)
    assert lock.state == AttributeState.ACTIVE
    open_one.refresh_from_db()
    assert open_one.status == ProjectStatus.OPEN
    assert set(Project.objects.exclude(pk=open_one.pk).values_list("status", flat=True)) == {
        ProjectStatus.DONE
    }


# --- Review fixes: a crypt keeps one owner (HAV-01); the crypt vote stays secret (HAV-04) ----


def test_crypt_vote_applied_tells_only_the_storytellers_the_count(cast: dict[str, Any]) -> None:
    manor = cast["structure"]("Manor", cast["alice"], cast["carl"])
    cellar = cast["structure"]("Cellar", cast["bob"], kind="crypt", outer=manor)
    services.crypt_destroy_vote(crypt=cellar, voter=cast["alice"], by=cast["a"])
    services.crypt_destroy_vote(crypt=cellar, voter=cast["carl"], by=cast["st"])
    summary = _twice(services.ownership_changes_apply, cast["cycle"])
    assert summary["applied"] == 1 and summary["destroyed"] == 1
    cellar.refresh_from_db()
    assert cellar.destroyed_by == DestroyedBy.CRYPT_VOTE
    assert cellar.destroyed_note == services.CRYPT_DESTRUCTION  # the crypt's owner reads it
    change = OwnershipChange.objects.get(structure=cellar)
    assert change.from_character is None and change.note == services.CRYPT_DESTRUCTION
    assert change.outcome == (
        "Destroyed by the outer haven's owners (HAV-03). 2 of 2 owners of the outer haven in "
        "favour: Carl, Lucien (HAV-03)."
    )


def test_several_thieves_of_a_crypt_never_make_it_shared(cast: dict[str, Any]) -> None:
    """HAV-01: controls recorded before the one-thief check (or by hand) void the theft with a
    reason, once; the crypt keeps its one owner and later steps still run."""
    games = _games(cast["world"], 2)
    manor = cast["structure"]("Manor", cast["carl"])
    cellar = cast["structure"]("Cellar", cast["carl"], kind="crypt", outer=manor)
    for game in games:
        control = TheftControl.objects.create(
            structure=cellar, game=game, recorded_by=cast["st"], recorded_at=NOW
        )
        control.thieves.set([cast["alice"], cast["bob"]])
    summary = _twice(services.theft_resolve, games[1].cycle)
    assert summary == {"stolen": 0, "attributes_disabled": 0, "void": 1}
    assert _owners(cellar) == {"Carl"}
    change = OwnershipChange.objects.get(structure=cellar)
    assert change.status == ChangeStatus.VOID and "HAV-01" in change.outcome
    services.structure_forsake_request(structure=cellar, character=cast["carl"], by=cast["st"])
    services.ownership_changes_apply(cycle=games[1].cycle, now=NOW)
    cellar.refresh_from_db()
    assert cellar.status == StructureStatus.DESTROYED


def test_a_crypt_with_two_owners_from_bad_data_does_not_stop_the_step(
    cast: dict[str, Any], make_character: Any
) -> None:
    dora = make_character("Dora", player=None)
    manor = cast["structure"]("Manor", cast["carl"])
    cellar = cast["structure"]("Cellar", cast["alice"], cast["bob"], kind="crypt", outer=manor)
    forsake = services.structure_forsake_request(
        structure=cellar, character=cast["alice"], by=cast["a"]
    )
    transfer = services.structure_transfer_request(
        structure=cellar, from_character=cast["bob"], by=cast["b"], to_name="Dora"
    )
    assert transfer.to_character == dora
    _twice(services.ownership_changes_apply, cast["cycle"])
    forsake.refresh_from_db()
    transfer.refresh_from_db()
    assert forsake.status == ChangeStatus.VOID and "HAV-01" in forsake.outcome
    assert transfer.status == ChangeStatus.VOID and "HAV-01" in transfer.outcome
    assert _owners(cellar) == {"Lucien", "Bastien"}


def test_a_transferred_crypt_has_one_owner(cast: dict[str, Any]) -> None:
    manor = cast["structure"]("Manor", cast["carl"])
    cellar = cast["structure"]("Cellar", cast["alice"], kind="crypt", outer=manor)
    services.structure_transfer_request(
        structure=cellar, from_character=cast["alice"], by=cast["a"], to_name="Bastien"
    )
    _twice(services.ownership_changes_apply, cast["cycle"])
    assert _owners(cellar) == {"Bastien"}


def test_mobility_and_crypt_exits_paid_in_one_downtime_hold_the_mobility(
    cast: dict[str, Any],
) -> None:
    """HAV-23 at construction: the crypt's owner could not see the outer haven's Mobility
    order (HAV-04), so when both are paid the crypt's exits are built and the Mobility is held,
    with a reason the outer haven's owners read; a second run holds it again, builds nothing."""
    alice, bob = cast["alice"], cast["bob"]
    outer = cast["structure"]("Barge", alice)
    crypt = cast["structure"]("Hold", bob, kind="crypt", outer=outer)
    mobility = _paid(outer, "mobility", 1, 15, alice)
    exits = _paid(crypt, "exit", 2, 10, bob)
    summary = _twice(services.construction_resolve, cast["cycle"])
    assert summary["held"] == 1
    mobility.refresh_from_db()
    exits.refresh_from_db()
    assert mobility.status == ProjectStatus.PAID
    assert "does not allow Mobility (HAV-23)" in mobility.held_reason
    assert exits.status == ProjectStatus.DONE
    assert not Attribute.objects.filter(structure=outer, kind="mobility").exists()
    assert Attribute.objects.filter(structure=crypt, kind="exit").count() == 2


def test_a_crypt_build_inside_a_mobile_haven_is_held(cast: dict[str, Any]) -> None:
    alice, bob = cast["alice"], cast["bob"]
    outer = cast["structure"]("Barge", alice)
    Attribute.objects.create(structure=outer, kind="mobility", cost=15, created_at=NOW)
    crypt = cast["structure"]("Hold", bob, kind="crypt", outer=outer)
    hiding = _paid(crypt, "hiding", 1, 15, bob)
    seals = _paid(crypt, "seals", 1, 10, bob)
    assert services.construction_resolve(cycle=cast["cycle"], now=NOW)["held"] == 1
    hiding.refresh_from_db()
    seals.refresh_from_db()
    assert hiding.held_reason.startswith("A crypt inside a mobile haven cannot have this (HAV-23)")
    assert seals.status == ProjectStatus.DONE


def test_a_project_paid_in_a_later_downtime_waits_for_it(cast: dict[str, Any]) -> None:
    """An attribute takes effect in the downtime in which it is fully paid: resolving an
    earlier downtime late does not build what was paid in the next one."""
    world = cast["world"]
    later = chronicle_services.game_create(
        chronicle=world.chronicle, date=world.game.date + dt.timedelta(days=28)
    )
    manor = cast["structure"]("Manor", cast["alice"])
    project = _paid(manor, "camera", 1, 1, cast["alice"], paid_cycle=later.cycle)
    assert services.construction_resolve(cycle=cast["cycle"], now=NOW)["projects_done"] == 0
    assert services.construction_resolve(cycle=later.cycle, now=NOW)["projects_done"] == 1
    project.refresh_from_db()
    assert project.done_cycle == later.cycle


# --- Held builds, breaches, thefts and finds (second review) ---------------------------------


def test_a_held_mobility_waits_for_the_storytellers_who_give_the_influence_back(
    cast: dict[str, Any],
) -> None:
    """A held build never shapes the design nor gets built by a later downtime on its own; an
    ST cancels it and every contribution's influence comes back (HAV-23)."""
    alice, bob = cast["alice"], cast["bob"]
    outer = cast["structure"]("Barge", alice)
    cast["structure"]("Hold", bob, kind="crypt", outer=outer)
    crypt = Structure.objects.get(name="Hold")
    Attribute.objects.create(structure=crypt, kind="exit", cost=5, created_at=NOW)
    mobility = Project.objects.create(
        structure=outer,
        kind=ProjectKind.ATTRIBUTE,
        attribute_kind="mobility",
        cost=2,
        requested_by=alice,
        created_at=NOW,
    )
    for influence in ("business", "herd"):
        services.project_contribute(
            project=mobility,
            character=alice,
            influence=influence,
            points=1,
            by=cast["a"],
            key=f"pay-{influence}",
        )
    assert services.construction_resolve(cycle=cast["cycle"], now=NOW)["held"] == 1
    # Held, it no longer stands in the way of what a static haven may have.
    services.structure_upgrade(
        structure=outer,
        character=alice,
        by=cast["a"],
        attributes=[services.AttributeRequest("reinforcement", 10)],
    )
    assert services.construction_resolve(cycle=cast["cycle"], now=NOW)["held"] == 0
    mobility.refresh_from_db()
    assert mobility.status == ProjectStatus.PAID
    with pytest.raises(ValidationError, match="storytellers"):
        services.project_release_held(project=mobility, by=cast["a"])
    services.project_release_held(project=mobility, by=cast["st"])
    services.project_release_held(project=mobility, by=cast["st"])  # twice: once
    mobility.refresh_from_db()
    assert mobility.status == ProjectStatus.CANCELLED
    refunds = InfluenceSpend.objects.filter(character=alice, points__lt=0)
    assert sorted(refunds.values_list("influence", "points")) == [("business", -1), ("herd", -1)]


def test_reinforcement_over_a_breach_is_refused_then_held(cast: dict[str, Any]) -> None:
    """HAV-24: new points on breached reinforcement would be breached with it: ordering more is
    refused until the repair, and points ordered before the breach wait for the STs."""
    alice = cast["alice"]
    manor = cast["structure"]("Manor", alice)
    Attribute.objects.create(
        structure=manor, kind="reinforcement", quantity=10, cost=1, state="breached", created_at=NOW
    )
    with pytest.raises(ValidationError, match=r"repair it before adding to it \(HAV-24\)"):
        services.structure_upgrade(
            structure=manor,
            character=alice,
            by=cast["a"],
            attributes=[services.AttributeRequest("reinforcement", 20)],
        )
    earlier = _paid(manor, "reinforcement", 20, 2, alice)
    assert services.construction_resolve(cycle=cast["cycle"], now=NOW)["held"] == 1
    earlier.refresh_from_db()
    assert "breached" in earlier.held_reason
    assert Attribute.objects.get(structure=manor, kind="reinforcement").quantity == 10


def test_a_theft_cancels_the_old_owners_lock_and_alarm_orders(cast: dict[str, Any]) -> None:
    """HAV-07: every alarm and lock becomes inoperative and the thieves may replace them: what
    the old owners ordered of them, or a lock's repair, is not built for the thieves."""
    world = cast["world"]
    games = _games(world, 2)
    manor = cast["structure"]("Manor", cast["alice"])
    broken = Attribute.objects.create(
        structure=manor, kind="two_way_lock", cost=2, state="destroyed", created_at=NOW
    )
    alarm = _paid(manor, "alarm", 1, 5, cast["alice"], trigger="attack", effect="silent")
    repair = _paid(
        manor,
        "two_way_lock",
        1,
        1,
        cast["alice"],
        project_kind=ProjectKind.REPAIR,
        repair_of=broken,
    )
    seals = _paid(manor, "seals", 1, 10, cast["alice"])
    for game in games:
        services.theft_control_record(
            structure=manor, game=game, thieves=[cast["bob"]], by=cast["st"]
        )
    services.theft_resolve(cycle=games[1].cycle, now=NOW)
    services.construction_resolve(cycle=games[1].cycle, now=NOW)
    for project in (alarm, repair, seals):
        project.refresh_from_db()
    assert alarm.status == repair.status == ProjectStatus.CANCELLED
    assert seals.status == ProjectStatus.DONE
    assert not Attribute.objects.filter(structure=manor, kind="alarm").exists()
    broken.refresh_from_db()
    assert broken.state != "active"


@pytest.mark.parametrize("how", ["ruling", "forsaken"])
def test_a_destroyed_haven_leaves_its_finders_lists(cast: dict[str, Any], how: str) -> None:
    """HAV-25b: however a haven is destroyed, its finds end with it."""
    manor = cast["structure"]("Manor", cast["alice"])
    find = Find.objects.create(
        structure=manor, character=cast["bob"], cycle=cast["cycle"], found_at=NOW
    )
    if how == "ruling":
        services.structure_destroy(structure=manor, by=cast["st"], note="Burnt down")
    else:
        services.structure_forsake_request(structure=manor, character=cast["alice"], by=cast["a"])
        services.ownership_changes_apply(cycle=cast["cycle"], now=NOW)
    find.refresh_from_db()
    manor.refresh_from_db()
    assert manor.status == StructureStatus.DESTROYED
    assert find.cleared_at is not None


def test_a_crypt_destruction_needs_its_majority_when_it_takes_effect(
    cast: dict[str, Any],
) -> None:
    """HAV-03 holds in downtime, not only at the vote: the exclusive owner's vote no longer
    decides once a second owner shares the outer haven."""
    alice, bob, carl = cast["alice"], cast["bob"], cast["carl"]
    outer = cast["structure"]("Warehouse", alice)
    crypt = cast["structure"]("Cell", bob, kind="crypt", outer=outer)
    services.crypt_destroy_vote(crypt=crypt, voter=alice, by=cast["a"])
    change = OwnershipChange.objects.get(kind=ChangeKind.DESTROY_CRYPT)
    Ownership.objects.create(structure=outer, character=carl, how="joined", started_at=NOW)
    summary = _twice(services.ownership_changes_apply, cast["cycle"])
    assert summary["void"] == 1
    change.refresh_from_db()
    crypt.refresh_from_db()
    assert change.status == ChangeStatus.VOID
    assert "majority no longer holds (HAV-03)" in change.outcome
    assert crypt.status == StructureStatus.STANDING

"""HAV-25c through the services: influence attacks on found havens, their resolution (every
SPEC example) and idempotence; secrecy of the refusals."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from characters.models import InfluenceSpend
from havens.models import (
    AttackStatus,
    Attribute,
    ChangeKind,
    ChangeStatus,
    DestroyedBy,
    Find,
    InfluenceAttack,
    Ownership,
    OwnershipChange,
    Structure,
    StructureStatus,
)
from havens.services import searches as svc

pytestmark = pytest.mark.django_db


@pytest.fixture
def scene(world: Any, make_character: Any, make_npc: Any, make_haven: Any) -> dict[str, Any]:
    owner = make_npc("Victor Kane", mental=7)
    alice = make_character("Lucien", player="player_alice", business=25, herd=25)
    bob = make_character("Marta", player="player_bob", business=25)
    return {
        "world": world,
        "owner": owner,
        "alice": alice,
        "bob": bob,
        "make_haven": make_haven,
    }


def _found(scene: dict[str, Any], structure: Structure, who: str = "alice") -> Find:
    # A find made at the game (no search result): released at once.
    return Find.objects.create(
        structure=structure,
        character=scene[who],
        cycle=scene["world"].game.cycle,
        found_at=structure.created_at,
    )


def _attack(scene: dict[str, Any], structure: Structure, points: int, *, key: str, **kw: Any):
    return svc.influence_attack_submit(
        attacker=scene["alice"],
        structure=structure,
        influence=kw.get("influence", "business"),
        points=points,
        by=scene["world"].users["player_alice"],
        key=key,
    )


@pytest.mark.parametrize(
    ("resistance", "points", "destroyed", "left"),
    [
        pytest.param(18, 18, False, 0, id="HAV-25c-18-by-18-stands"),
        pytest.param(18, 19, True, 0, id="HAV-25c-18-by-19-destroyed"),
        pytest.param(None, 1, True, 0, id="HAV-25c-none-by-1-destroyed"),
        pytest.param(18, 5, False, 13, id="HAV-25c-18-by-5-13-left"),
    ],
)
def test_attack_examples(
    scene: dict[str, Any], resistance: int | None, points: int, destroyed: bool, left: int
) -> None:
    attributes = {"influence_resistance": resistance} if resistance else {}
    haven = scene["make_haven"](scene["owner"], attributes=attributes)
    crypt = scene["make_haven"](scene["owner"], name="Crypt", outer=haven)
    _found(scene, haven)
    attack = _attack(scene, haven, points, key="a1")
    summary = svc.influence_attacks_resolve(cycle=scene["world"].game.cycle)
    assert summary == {"attacks": 1, "destroyed": int(destroyed)}
    attack.refresh_from_db()
    haven.refresh_from_db()
    crypt.refresh_from_db()
    assert attack.status == AttackStatus.RESOLVED
    assert attack.resistance_before == (resistance or 0)
    assert attack.resistance_after == left
    assert attack.destroyed is destroyed
    assert (haven.status == StructureStatus.DESTROYED) is destroyed
    assert (crypt.status == StructureStatus.DESTROYED) is destroyed
    if destroyed:
        assert haven.destroyed_by == DestroyedBy.INFLUENCE_ATTACK
        assert "crypt" in attack.explanation
        assert not Find.objects.filter(cleared_at__isnull=True).exists()
    elif resistance:
        assert Attribute.objects.get(kind="influence_resistance").quantity == left
    # Idempotent: a re-run changes nothing.
    assert svc.influence_attacks_resolve(cycle=scene["world"].game.cycle)["attacks"] == 0


def test_attacks_in_order_share_the_resistance(scene: dict[str, Any]) -> None:
    haven = scene["make_haven"](scene["owner"], attributes={"influence_resistance": 18})
    _found(scene, haven)
    _found(scene, haven, who="bob")
    first = _attack(scene, haven, 10, key="a1")
    second = svc.influence_attack_submit(
        attacker=scene["bob"],
        structure=haven,
        influence="business",
        points=9,
        by=scene["world"].users["player_bob"],
        key="b1",
    )
    svc.influence_attacks_resolve(cycle=scene["world"].game.cycle)
    first.refresh_from_db()
    second.refresh_from_db()
    assert (first.resistance_before, first.resistance_after) == (18, 8)
    assert (second.resistance_before, second.destroyed) == (8, True)


def test_not_found_refused_like_unknown(scene: dict[str, Any]) -> None:
    haven = scene["make_haven"](scene["owner"])
    with pytest.raises(ValidationError) as unfound:
        _attack(scene, haven, 1, key="a1")
    with pytest.raises(ValidationError) as unknown:
        _attack(scene, 2**31 - 1, 1, key="a2")
    assert unfound.value.message_dict == unknown.value.message_dict
    assert not InfluenceSpend.objects.exists()


def test_mobile_haven_immune(scene: dict[str, Any]) -> None:
    wagon = scene["make_haven"](scene["owner"], attributes={"mobility": 1})
    _found(scene, wagon)
    with pytest.raises(ValidationError) as exc:
        _attack(scene, wagon, 1, key="a1")
    assert "HAV-25c" in exc.value.message_dict["structure"][0]
    assert "mobile" in exc.value.message_dict["structure"][0]


def test_unreleased_find_answers_like_unknown(scene: dict[str, Any]) -> None:
    """HAV-25b/HAV-04 (review S2): a downtime search's find is no find until its results are
    released; before that the refusal is the very one for an unknown haven, so the attacker
    can't learn what (or which ids) the search found."""
    world = scene["world"]
    haven = scene["make_haven"](scene["owner"], location="Warehouse 9")
    svc.search_submit(
        character=scene["alice"],
        target_name="Victor Kane",
        influence="herd",
        points=21,
        by=world.users["player_alice"],
        key="s1",
    )
    svc.searches_resolve(cycle=world.game.cycle)
    assert Find.objects.filter(character=scene["alice"], structure=haven).exists()
    with pytest.raises(ValidationError) as found_early:
        _attack(scene, haven, 1, key="a1")
    with pytest.raises(ValidationError) as unknown:
        _attack(scene, 2**31 - 1, 1, key="a2")
    assert found_early.value.message_dict == unknown.value.message_dict
    assert found_early.value.message_dict == {"structure": [svc.UNKNOWN_HAVEN]}
    assert not InfluenceSpend.objects.filter(key__startswith="haven-attack").exists()
    svc.search_results_release(cycle=world.game.cycle)
    attack = _attack(scene, haven, 1, key="a1")
    assert attack.status == AttackStatus.SUBMITTED


def test_found_later_than_submission_refused(scene: dict[str, Any]) -> None:
    """HAV-25c INTERPRETATION (`attack_needs_earlier_find`): found before this submission."""
    haven = scene["make_haven"](scene["owner"])
    find = _found(scene, haven)
    find.found_at = timezone.now() + dt.timedelta(hours=1)
    find.save()
    with pytest.raises(ValidationError) as exc:
        _attack(scene, haven, 1, key="a1")
    assert "HAV-25c" in exc.value.message_dict["structure"][0]


def test_inf03_and_key(scene: dict[str, Any]) -> None:
    haven = scene["make_haven"](scene["owner"])
    _found(scene, haven)
    with pytest.raises(ValidationError) as exc:
        _attack(scene, haven, 26, key="a1")
    assert "INF-03" in exc.value.message_dict["points"][0]
    first = _attack(scene, haven, 3, key="a2")
    assert _attack(scene, haven, 3, key="a2").pk == first.pk
    assert InfluenceAttack.objects.count() == 1


def test_withdraw_refunds_once(scene: dict[str, Any]) -> None:
    haven = scene["make_haven"](scene["owner"])
    _found(scene, haven)
    attack = _attack(scene, haven, 3, key="a1")
    user = scene["world"].users["player_alice"]
    svc.influence_attack_withdraw(attack=attack, by=user)
    svc.influence_attack_withdraw(attack=attack, by=user)
    assert InfluenceSpend.objects.count() == 2
    assert svc.influence_attacks_resolve(cycle=scene["world"].game.cycle)["attacks"] == 0


def test_release_reaches_the_attacker(scene: dict[str, Any]) -> None:
    haven = scene["make_haven"](scene["owner"], attributes={"influence_resistance": 3})
    _found(scene, haven)
    attack = _attack(scene, haven, 1, key="a1")
    cycle = scene["world"].game.cycle
    svc.influence_attacks_resolve(cycle=cycle)
    assert svc.search_results_release(cycle=cycle) == {"searches": 0, "attacks": 1}
    attack.refresh_from_db()
    assert attack.released_at is not None


def test_withdraw_refused_once_the_cycle_is_closed(scene: dict[str, Any]) -> None:
    """DT-01 (review I5): no withdrawal after the deadline; nothing is written."""
    from chronicle import services as chronicle_services

    world = scene["world"]
    haven = scene["make_haven"](scene["owner"])
    _found(scene, haven)
    attack = _attack(scene, haven, 3, key="a1")
    chronicle_services.cycle_close(cycle=world.game.cycle, by=world.users["storyteller"])
    with pytest.raises(ValidationError) as exc:
        svc.influence_attack_withdraw(attack=attack, by=world.users["player_alice"])
    assert "DT-01" in exc.value.messages[0]
    attack.refresh_from_db()
    assert attack.status == AttackStatus.SUBMITTED
    assert InfluenceSpend.objects.count() == 1


def test_destroyed_haven_ends_ownerships_and_voids_changes(
    scene: dict[str, Any], make_npc: Any
) -> None:
    """HAV-25c (review R5): a haven destroyed by an influence attack, and the crypt inside it,
    end their current ownerships and void pending ownership changes, like every other
    destruction."""
    world = scene["world"]
    haven = scene["make_haven"](scene["owner"])
    crypt_owner = make_npc("Crypt owner")
    crypt = scene["make_haven"](crypt_owner, name="Crypt", outer=haven)
    pending = [
        OwnershipChange.objects.create(
            structure=s,
            kind=ChangeKind.FORSAKE,
            cycle=world.game.cycle,
            from_character=o,
            requested_at=s.created_at,
        )
        for s, o in ((haven, scene["owner"]), (crypt, crypt_owner))
    ]
    _found(scene, haven)
    _attack(scene, haven, 1, key="a1")
    svc.influence_attacks_resolve(cycle=world.game.cycle)
    crypt.refresh_from_db()
    assert crypt.status == StructureStatus.DESTROYED
    assert crypt.destroyed_by == DestroyedBy.OUTER_DESTROYED
    assert not Ownership.objects.filter(
        structure__in=[haven, crypt], ended_at__isnull=True
    ).exists()
    ended = Ownership.objects.filter(structure__in=[haven, crypt])
    assert {(o.ended_cycle_id, o.ended_why) for o in ended} == {
        (world.game.cycle.pk, "The haven was destroyed.")
    }
    for change in pending:
        change.refresh_from_db()
        assert change.status == ChangeStatus.VOID and change.outcome
    # A re-run changes nothing.
    assert svc.influence_attacks_resolve(cycle=world.game.cycle) == {"attacks": 0, "destroyed": 0}


def test_refusals_cite_their_rule(scene: dict[str, Any]) -> None:
    haven = scene["make_haven"](scene["owner"])
    _found(scene, haven)
    attack = _attack(scene, haven, 1, key="a1")
    svc.influence_attacks_resolve(cycle=scene["world"].game.cycle)
    with pytest.raises(ValidationError) as exc:
        svc.influence_attack_withdraw(attack=attack, by=scene["world"].users["player_alice"])
    assert "HAV-25c" in exc.value.messages[0]
    scene["alice"].status = "dead"
    scene["alice"].save()
    with pytest.raises(ValidationError) as exc:
        _attack(scene, haven, 1, key="a2")
    assert "HAV-25c" in exc.value.message_dict["character"][0]

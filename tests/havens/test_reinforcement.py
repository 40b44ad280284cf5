"""HAV-26 / HAV-10 through the services: the preview (99 against 100), recording a
reinforcement attack, penetration, breaching and alarms."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.core import mail
from django.core.exceptions import PermissionDenied, ValidationError

from chronicle.rules import house_rules_from
from havens.models import AlarmFiring, Attribute, AttributeState, LockTest, ReinforcementAttack
from havens.services import searches as svc
from havens.services.searches import AttackerEntry

pytestmark = pytest.mark.django_db

L1A, L2A, L3A = 1, 3, 5


@pytest.fixture
def fort(world: Any, make_character: Any, make_haven: Any) -> Any:
    owner = make_character("Lucien", player="player_alice")
    return make_haven(
        owner,
        attributes={"reinforcement": 100},
        alarms=[("attack", "audible"), ("penetration", "silent"), ("failed_lock", "page")],
    )


def test_hav26_example_reads_99_against_100(world: Any, fort: Any) -> None:
    preview = svc.reinforcement_attack_preview(
        structure=fort, potence_levels=[L3A, L2A, L2A], house_rules=world.chronicle.house_rules
    )
    assert preview["bid"] == 99
    assert preview["points_to_hold"] == 100
    assert preview["influences_to_hold"] == 10
    assert preview["reinforcement"] == 100
    assert preview["tie_winner"] == "structure"
    assert preview["ratio_class"] == "wins_ties"


@pytest.mark.parametrize(
    ("levels", "bid", "adds"),
    [
        pytest.param([L3A, L2A, L2A, L1A], 99, 4, id="HAV-26-strongest-three"),
        pytest.param([L1A], 9, 4, id="HAV-26-1a-bids-9"),
        pytest.param([0, 0], 8, 4, id="HAV-26-no-potence-adds-4"),
        pytest.param([0, 0], 0, 0, id="HAV-26-no-potence-adds-0-setting"),
    ],
)
def test_bids(world: Any, fort: Any, levels: list[int], bid: int, adds: int) -> None:
    house = house_rules_from({"no_potence_attacker_adds": adds})
    preview = svc.reinforcement_attack_preview(
        structure=fort, potence_levels=levels, house_rules=house
    )
    assert preview["bid"] == bid


def test_bad_level_refused(world: Any, fort: Any) -> None:
    with pytest.raises(ValidationError) as exc:
        svc.reinforcement_attack_preview(
            structure=fort, potence_levels=[6], house_rules=world.chronicle.house_rules
        )
    assert "attackers" in exc.value.message_dict


def _record(world: Any, fort: Any, results: list[bool], levels: list[int], key: str = "r1"):
    return svc.reinforcement_attack_record(
        structure=fort,
        game=world.game,
        attackers=[
            AttackerEntry(character=None, name=f"Brute {i}", potence=lv)
            for i, lv in enumerate(levels)
        ],
        results=results,
        by=world.users["storyteller"],
        key=key,
        note="at the docks",
    )


def test_held_fires_attack_alarm_only(world: Any, fort: Any) -> None:
    attack = _record(world, fort, [False], [L2A])
    assert not attack.penetrated and attack.bid == 25 and attack.reinforcement == 100
    assert list(AlarmFiring.objects.values_list("cause", flat=True)) == ["attack"]
    assert Attribute.objects.get(kind="reinforcement").state == AttributeState.ACTIVE


def test_penetration_breaches_and_fires_both(
    world: Any, fort: Any, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        attack = _record(world, fort, [False, True], [L2A])
    assert attack.penetrated
    assert sorted(AlarmFiring.objects.values_list("cause", flat=True)) == ["attack", "penetration"]
    assert Attribute.objects.get(kind="reinforcement").state == AttributeState.BREACHED
    assert len(mail.outbox) == 2  # one per firing, to the one owner
    # Keyed: recording again changes nothing.
    with django_capture_on_commit_callbacks(execute=True):
        assert _record(world, fort, [False, True], [L2A]).pk == attack.pk
    assert AlarmFiring.objects.count() == 2 and len(mail.outbox) == 2


@pytest.mark.parametrize(
    ("results", "penetrated"),
    [
        pytest.param([False], False, id="HAV-26-3a-one-failed-test-holds"),
        pytest.param([False, False], True, id="HAV-26-3a-breached-after-2nd-failure"),
    ],
)
def test_potence_3a_breaches(world: Any, fort: Any, results: list[bool], penetrated: bool) -> None:
    assert _record(world, fort, results, [L3A]).penetrated is penetrated


def test_staff_only(world: Any, fort: Any) -> None:
    with pytest.raises(PermissionDenied):
        svc.reinforcement_attack_record(
            structure=fort,
            game=world.game,
            attackers=[AttackerEntry(character=None, name="x", potence=1)],
            results=[True],
            by=world.users["player_alice"],
            key="r9",
        )
    assert not ReinforcementAttack.objects.exists()


def test_lock_tests(world: Any, make_character: Any, make_haven: Any) -> None:
    owner = make_character("Marta", player="player_bob")
    haven = make_haven(
        owner,
        attributes={"two_way_lock": 1},
        alarms=[("failed_lock", "audible"), ("penetration", "silent")],
    )
    lock = Attribute.objects.get(structure=haven, kind="two_way_lock")
    st = world.users["storyteller"]
    failed = svc.lock_test_record(
        lock=lock, game=world.game, attacker_won=False, outcome=None, by=st, key="l1"
    )
    assert failed == {"fired": 1, "penetrated": False, "repeat": False}
    again = svc.lock_test_record(
        lock=lock, game=world.game, attacker_won=False, outcome=None, by=st, key="l1"
    )
    assert again["repeat"] and AlarmFiring.objects.count() == 1
    with pytest.raises(ValidationError) as exc:
        svc.lock_test_record(
            lock=lock, game=world.game, attacker_won=True, outcome=None, by=st, key="l2"
        )
    assert "HAV-16" in exc.value.message_dict["outcome"][0]
    beaten = svc.lock_test_record(
        lock=lock, game=world.game, attacker_won=True, outcome="destroy", by=st, key="l3"
    )
    assert beaten == {"fired": 1, "penetrated": True, "repeat": False}
    lock.refresh_from_db()
    assert lock.state == AttributeState.DESTROYED
    # The same record sent twice (a double click) is recognised, not refused as a test of a
    # destroyed lock, and fires nothing more.
    replay = svc.lock_test_record(
        lock=lock, game=world.game, attacker_won=True, outcome="destroy", by=st, key="l3"
    )
    assert replay == {"fired": 0, "penetrated": True, "repeat": True}
    assert AlarmFiring.objects.count() == 2
    assert LockTest.objects.count() == 2
    with pytest.raises(ValidationError):
        svc.lock_test_record(
            lock=lock, game=world.game, attacker_won=False, outcome=None, by=st, key="l4"
        )


def test_bypassed_lock_stays_intact(world: Any, make_character: Any, make_haven: Any) -> None:
    """HAV-16 (review R3): bypass is not destroy. A bypassed lock stays working (no repair,
    `rules.needs_repair`), the bypass is recorded in the test only, and the lock is tested
    again at the next game."""
    from chronicle import services as chronicle_services

    owner = make_character("Marta", player="player_bob")
    haven = make_haven(owner, attributes={"two_way_lock": 1}, alarms=[("penetration", "silent")])
    lock = Attribute.objects.get(structure=haven, kind="two_way_lock")
    st = world.users["storyteller"]
    beaten = svc.lock_test_record(
        lock=lock, game=world.game, attacker_won=True, outcome="bypass", by=st, key="l1"
    )
    assert beaten == {"fired": 1, "penetrated": True, "repeat": False}
    lock.refresh_from_db()
    assert lock.state == AttributeState.ACTIVE and not lock.needs_repair
    assert LockTest.objects.get(key="l1").outcome == "bypass"
    game2 = chronicle_services.game_create(chronicle=world.chronicle, date=dt.date(2024, 4, 13))
    held = svc.lock_test_record(
        lock=lock, game=game2, attacker_won=False, outcome=None, by=st, key="l2"
    )
    assert held == {"fired": 0, "penetrated": False, "repeat": False}
    lock.refresh_from_db()
    assert lock.state == AttributeState.ACTIVE


def test_penetration_needs_every_lock_beaten_at_this_game(
    world: Any, make_character: Any, make_haven: Any
) -> None:
    """HAV-16: all two-way locks beaten → penetrated; a bypass counts at its own game only, a
    destroyed lock until it is repaired. Penetration alarms fire once per game (HAV-10)."""
    from chronicle import services as chronicle_services

    owner = make_character("Marta", player="player_bob")
    haven = make_haven(owner, attributes={"two_way_lock": 1}, alarms=[("penetration", "silent")])
    first = Attribute.objects.get(structure=haven, kind="two_way_lock")
    second = Attribute.objects.create(
        structure=haven, kind="two_way_lock", quantity=1, cost=2, created_at=haven.created_at
    )
    st = world.users["storyteller"]

    def test(lock: Attribute, game: Any, key: str, outcome: str | None = "bypass") -> Any:
        return svc.lock_test_record(
            lock=lock, game=game, attacker_won=outcome is not None, outcome=outcome, by=st, key=key
        )

    assert test(first, world.game, "a")["penetrated"] is False
    assert test(second, world.game, "b", "destroy") == {
        "fired": 1,
        "penetrated": True,
        "repeat": False,
    }
    # Beating a lock again at the same game: still penetrated, no second alarm.
    assert test(first, world.game, "c") == {"fired": 0, "penetrated": True, "repeat": False}
    game2 = chronicle_services.game_create(chronicle=world.chronicle, date=dt.date(2024, 4, 13))
    # The second lock is still destroyed; the first must be beaten again at this game.
    assert test(first, game2, "d", None)["penetrated"] is False
    assert test(first, game2, "e") == {"fired": 1, "penetrated": True, "repeat": False}
    assert AlarmFiring.objects.filter(cause="penetration").count() == 2

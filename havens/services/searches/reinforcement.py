"""Reinforcement attacks, lock tests and alarms (HAV-26, HAV-10)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from characters.models import Character
from characters.services.common import refusal
from characters.services.notify import notify
from chronicle.models import Game
from chronicle.rules import HouseRules, ratio_class, settings_for

from ... import rules, selectors, words
from ...models import (
    AlarmFiring,
    AlarmTrigger,
    Attribute,
    AttributeState,
    LockTest,
    ReinforcementAttack,
    Structure,
    StructureStatus,
)
from .common import (
    _require_staff,
)

# --- Reinforcement attacks and alarms (HAV-26, HAV-10) -----------------------------------------


@dataclass(frozen=True)
class AttackerEntry:
    """One attacker of a reinforcement attack: a character (or None for an NPC named in
    words), and their Potence level 0 (none) .. 5 (3a)."""

    character: Character | None
    name: str
    potence: int


def _reinforcement(structure: Structure | int) -> int:
    return sum(
        Attribute.objects.filter(
            structure=structure, kind="reinforcement", state=AttributeState.ACTIVE
        ).values_list("quantity", flat=True)
    )


def _bid(potence_levels: Sequence[int], house_rules: HouseRules) -> int:
    try:
        return rules.reinforcement_attack_bid(
            list(potence_levels), potence_zero_adds=int(house_rules.no_potence_attacker_adds)
        )
    except ValueError as exc:
        raise refusal(exc, "attackers") from None


def reinforcement_attack_preview(
    *, structure: Structure, potence_levels: Sequence[int], house_rules: HouseRules
) -> dict[str, Any]:
    """HAV-26, writing nothing: the attackers' bid, the structure's reinforcement now, the
    influences (and points) it would need to win ties, who wins ties, and the TST-01 class.
    3a + 2a + 2a bids 99; holding on ties takes 10 influences, 100 points."""
    bid = _bid(potence_levels, house_rules)
    reinforcement = _reinforcement(structure)
    influences = rules.min_influences_to_win_ties(bid)
    high, low = max(bid, reinforcement), min(bid, reinforcement)
    return {
        "bid": bid,
        "reinforcement": reinforcement,
        "influences_to_hold": influences,
        "points_to_hold": influences * rules.REINFORCEMENT_POINTS_PER_INFLUENCE,
        "tie_winner": rules.reinforcement_tie_winner(reinforcement=reinforcement, attack_bid=bid),
        "ratio_class": ratio_class(high, low, **settings_for(ratio_class, house_rules)),
        "any_potence_3a": any(level == rules.MAX_LEVEL for level in potence_levels),
    }


def _alarm_subject(structure: Structure) -> str:
    return _("An alarm went off at %(haven)s") % {"haven": structure.name}


def _alarm_body(structure: Structure, firing: AlarmFiring) -> str:
    return _("An alarm of %(haven)s (%(effect)s) went off: %(cause)s.") % {
        "haven": structure.name,
        "effect": firing.alarm.get_effect_display(),
        "cause": firing.get_cause_display().lower(),
    }


def _alarm_mail(structure: Structure, firings: Sequence[AlarmFiring], *, now: dt.datetime) -> int:
    """HAV-10: each owner's player hears of each firing once (keyed per firing and owner)."""
    owners = selectors.current_owners([structure])[structure.pk]
    sent = 0
    for firing in firings:
        for owner in owners:
            # Worded by the mail service in the owner's player's language (callables), whoever
            # recorded the attack.
            sent += notify(
                character=owner,
                key=f"alarm-firing:{firing.pk}:{owner.pk}",
                subject=partial(_alarm_subject, structure),
                body=partial(_alarm_body, structure, firing),
                now=now,
            )
    return sent


def _fire(
    structure: Structure,
    causes: Sequence[str],
    *,
    game: Game,
    attack: ReinforcementAttack | None,
    note: str,
    now: dt.datetime,
    key: str = "",
) -> list[AlarmFiring]:
    alarms = Attribute.objects.filter(
        structure=structure, kind="alarm", state=AttributeState.ACTIVE, trigger__in=list(causes)
    ).order_by("pk")
    firings = AlarmFiring.objects.bulk_create(
        [
            AlarmFiring(
                alarm=alarm,
                game=game,
                cause=alarm.trigger,
                reinforcement_attack=attack,
                note=note[:300],
                fired_at=now,
                key=key,
            )
            for alarm in alarms
        ]
    )
    _alarm_mail(structure, firings, now=now)
    return firings


@transaction.atomic
def reinforcement_attack_record(
    *,
    structure: Structure,
    game: Game,
    attackers: Sequence[AttackerEntry],
    results: Sequence[bool],
    by: User,
    key: str,
    note: str = "",
    now: dt.datetime | None = None,
) -> ReinforcementAttack:
    """HAV-26, recorded by an ST at a game: the bid, the reinforcement then, each 5-minute
    test's result (oldest first, True when the attackers won). Winning once penetrates; with an
    attacker at Potence 3a it is breached after `potence_3a_breach_after_tests` failed tests.
    Penetration breaches the reinforcement (repair, HAV-24). Alarms set off by attack fire;
    those set off by penetration fire when it is penetrated (HAV-10). Keyed."""
    now = now or timezone.now()
    _require_staff(by, structure.chronicle_id)
    structure = Structure.objects.select_for_update().get(pk=structure.pk)
    existing = ReinforcementAttack.objects.filter(key=key).first()
    if existing is not None:
        return existing
    if structure.status != StructureStatus.STANDING:
        raise ValidationError(
            {"structure": _("Only a standing structure can be attacked (HAV-26).")}
        )
    if game.chronicle_id != structure.chronicle_id:
        raise ValidationError({"game": _("Pick a game of this chronicle.")})
    if not attackers:
        raise ValidationError({"attackers": _("Give at least one attacker (HAV-26).")})
    house = structure.chronicle.house_rules
    levels = [a.potence for a in attackers]
    bid = _bid(levels, house)
    try:
        penetrated = rules.structure_breached(
            list(results),
            any_attacker_has_potence_3a=any(level == rules.MAX_LEVEL for level in levels),
            **settings_for(rules.structure_breached, house),
        )
    except ValueError as exc:
        raise refusal(exc, "results") from None
    attack = ReinforcementAttack.objects.create(
        structure=structure,
        game=game,
        attackers=[
            {
                "character": a.character.pk if a.character else None,
                "name": a.name or (a.character.name if a.character else ""),
                "potence": a.potence,
            }
            for a in attackers
        ],
        bid=bid,
        reinforcement=_reinforcement(structure),
        results=list(results),
        penetrated=penetrated,
        note=note,
        recorded_by=by,
        recorded_at=now,
        key=key,
    )
    if penetrated:
        Attribute.objects.filter(
            structure=structure, kind="reinforcement", state=AttributeState.ACTIVE
        ).update(state=AttributeState.BREACHED)
    causes = [AlarmTrigger.ATTACK] + ([AlarmTrigger.PENETRATION] if penetrated else [])
    note = words.ALARM_ATTACK % {"game": game}
    _fire(structure, causes, game=game, attack=attack, note=note, now=now)
    return attack


LOCK_OUTCOMES: tuple[str, ...] = ("bypass", "destroy")
# A two-way lock that keeps people out; a bypassed one stays so (HAV-16), only LockTest says so.
WORKING_LOCK: tuple[str, ...] = (AttributeState.ACTIVE,)


@transaction.atomic
def lock_test_record(
    *,
    lock: Attribute,
    game: Game,
    attacker_won: bool,
    outcome: str | None,
    by: User,
    key: str,
    now: dt.datetime | None = None,
) -> dict[str, Any]:
    """HAV-16, recorded by an ST: one static test against a two-way lock (the attacker wins
    ties; the app records the result). A failed opening fires the alarms set off by failed
    locks. A beaten lock is bypassed or destroyed: a destroyed one lets anyone in until it is
    repaired (HAV-24); a bypassed one stays intact and working (`rules.needs_repair`), so the
    bypass lives only in the LockTest row and the lock can be tested again. Once every working
    two-way lock of the structure is beaten at this game (destroyed, or bypassed in a test of
    this game) it is penetrated and its penetration alarms fire, once per game (HAV-10).
    Keyed: a second call with the same key does nothing."""
    now = now or timezone.now()
    structure = Structure.objects.select_for_update().get(pk=lock.structure_id)
    _require_staff(by, structure.chronicle_id)
    lock = Attribute.objects.select_for_update().get(pk=lock.pk)
    earlier = LockTest.objects.filter(key=key).first()
    if earlier is not None:
        return {"fired": 0, "penetrated": earlier.penetrated, "repeat": True}
    if lock.kind != "two_way_lock":
        raise ValidationError({"lock": _("Only a two-way lock is tested (HAV-16).")})
    if game.chronicle_id != structure.chronicle_id:
        raise ValidationError({"game": _("Pick a game of this chronicle.")})
    if lock.state not in WORKING_LOCK:
        raise ValidationError({"lock": _("This lock is not working; it needs no test (HAV-16).")})
    fired: list[AlarmFiring] = []
    penetrated = False
    if not attacker_won:
        fired = _fire(
            structure,
            [AlarmTrigger.FAILED_LOCK],
            game=game,
            attack=None,
            note=words.ALARM_FAILED_OPENING % {"game": game},
            now=now,
            key=key,
        )
    else:
        if outcome not in LOCK_OUTCOMES:
            raise ValidationError(
                {"outcome": _("The attacker chooses to bypass or destroy the lock (HAV-16).")}
            )
        if outcome == "destroy":
            lock.state = AttributeState.DESTROYED
            lock.save(update_fields=["state"])
        tests_here = LockTest.objects.filter(lock__structure=structure, game=game)
        penetrated = (
            not Attribute.objects.filter(
                structure=structure, kind="two_way_lock", state__in=WORKING_LOCK
            )
            .exclude(pk=lock.pk)
            .exclude(pk__in=tests_here.filter(attacker_won=True).values("lock_id"))
            .exists()
        )
        if penetrated and not tests_here.filter(penetrated=True).exists():
            fired = _fire(
                structure,
                [AlarmTrigger.PENETRATION],
                game=game,
                attack=None,
                note=words.ALARM_LOCKS_BEATEN % {"game": game},
                now=now,
                key=key,
            )
    LockTest.objects.create(
        lock=lock,
        game=game,
        attacker_won=attacker_won,
        outcome=outcome or "",
        penetrated=penetrated,
        recorded_by=by,
        recorded_at=now,
        key=key,
    )
    return {"fired": len(fired), "penetrated": penetrated, "repeat": False}


def alarm_firings_of(attack: ReinforcementAttack) -> list[AlarmFiring]:
    return list(AlarmFiring.objects.filter(reinforcement_attack=attack).select_related("alarm"))

"""Influence attacks on havens (HAV-25c) and their resolution."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext as _

from characters.models import Character
from characters.services.common import refusal
from characters.services.influence import influence_refund, influence_spend
from chronicle.models import Cycle, CycleStatus
from chronicle.rules import HouseRules, settings_for

from ... import rules, selectors, words
from ...models import (
    AttackStatus,
    Attribute,
    AttributeState,
    ChangeStatus,
    DestroyedBy,
    Find,
    InfluenceAttack,
    OwnershipChange,
    Structure,
    StructureStatus,
)
from ..ownership import _destroy as destroy_structures
from .common import (
    CLOSED_CYCLE,
    UNKNOWN_HAVEN,
    _current_cycle,
    _require_active,
    _require_player,
)

# --- Influence attacks (HAV-25c) ---------------------------------------------------------------


def _current_find(attacker: Character, structure_id: int) -> Find | None:
    """The attacker's current find of a standing structure, on the condition
    `access.finds_visible_to` shows it: a downtime search's find only once released (HAV-25b).
    Before that the attacker must not learn what the search found, so an unreleased find is
    no find at all."""
    return (
        Find.objects.filter(
            Q(result__isnull=True) | Q(result__search__released_at__isnull=False),
            character=attacker,
            structure_id=structure_id,
            cleared_at__isnull=True,
            structure__status=StructureStatus.STANDING,
        )
        .select_related("result__search")
        .first()
    )


@transaction.atomic
def influence_attack_submit(
    *,
    attacker: Character,
    structure: Structure | int,
    influence: str,
    points: int,
    by: User,
    key: str,
    now: dt.datetime | None = None,
) -> InfluenceAttack:
    """HAV-25c: a downtime influence attack on a haven the attacker found. The find must be
    current and released (HAV-25b); setting `attack_needs_earlier_find`: made before this
    submission. Mobile havens are immune. A haven not found, or found by a search whose
    results are not yet released, is refused exactly like an unknown one (HAV-04)."""
    now = now or timezone.now()
    _require_player(by, attacker)
    _require_active(attacker, "HAV-25c")
    structure_id = structure if isinstance(structure, int) else structure.pk
    find = _current_find(attacker, structure_id)
    if find is None:
        raise ValidationError({"structure": _(UNKNOWN_HAVEN)})
    target = Structure.objects.get(pk=structure_id)
    house = attacker.chronicle.house_rules
    mobile = selectors.mobile_structures([target], house_rules=house)[target.pk]
    try:
        rules.check_influence_attack_target(
            mobile=mobile,
            found_before_submission=find.found_at <= now,
            **settings_for(rules.check_influence_attack_target, house),
        )
    except ValueError as exc:
        raise refusal(exc, "structure") from None
    cycle = _current_cycle(attacker.chronicle_id)
    spend, created = influence_spend(
        character=attacker,
        cycle=cycle,
        influence=influence,
        points=points,
        reason=words.SPEND_ATTACK,
        key=f"haven-attack:{key}",
        actor=by,
        now=now,
    )
    if not created:
        attack = InfluenceAttack.objects.filter(spend=spend).first()
        if attack is None:
            raise ValidationError(_("That attack request was withdrawn; file a new one (HAV-25c)."))
        return attack
    return InfluenceAttack.objects.create(
        cycle=cycle,
        attacker=attacker,
        structure=target,
        influence=influence,
        points=points,
        spend=spend,
        created_at=now,
    )


@transaction.atomic
def influence_attack_withdraw(
    *, attack: InfluenceAttack, by: User, now: dt.datetime | None = None
) -> InfluenceAttack:
    """HAV-25c: withdraw an attack before resolution, refunding its influence; twice is once.
    Only while its downtime is open (DT-01)."""
    now = now or timezone.now()
    attack = (
        # The cycle is read, not locked: withdrawals of one downtime don't queue on it.
        InfluenceAttack.objects.select_for_update(of=("self", "attacker", "spend"))
        .select_related("attacker", "spend", "cycle")
        .get(pk=attack.pk)
    )
    _require_player(by, attack.attacker)
    if attack.status == AttackStatus.WITHDRAWN:
        return attack
    if attack.status != AttackStatus.SUBMITTED:
        raise ValidationError(
            _("This attack is already resolved; it cannot be withdrawn (HAV-25c).")
        )
    if attack.cycle.status != CycleStatus.OPEN:
        raise ValidationError(_(CLOSED_CYCLE))
    influence_refund(spend=attack.spend, reason=words.REFUND_ATTACK, actor=by, now=now)
    attack.status = AttackStatus.WITHDRAWN
    attack.save(update_fields=["status"])
    return attack


def attack_outcome_for_attacker(attack: InfluenceAttack) -> str:
    """HAV-25c: what an attacker learns once the outcome is released: whether the haven fell,
    never its resistance (HAV-04)."""
    if attack.status == AttackStatus.WITHDRAWN:
        return _("Withdrawn; the influence was given back.")
    if attack.released_at is None:
        return _("The outcome comes at the next game.")
    if attack.destroyed:
        return _("The haven was destroyed.")
    return _("The haven still stands.")


def _resistance(attributes: Iterable[Attribute]) -> int:
    return sum(
        a.quantity
        for a in attributes
        if a.kind == "influence_resistance" and a.state == AttributeState.ACTIVE
    )


def influence_attack_preview(
    attacks: Sequence[InfluenceAttack], *, house_rules: HouseRules
) -> dict[int, str]:
    """The desk's arithmetic for submitted attacks, in order per structure, writing nothing
    (HAV-25c)."""
    structure_ids = {a.structure_id for a in attacks}
    attributes = selectors.built_attributes(structure_ids)
    left = {pk: _resistance(attributes[pk]) for pk in structure_ids}
    lines: dict[int, str] = {}
    for attack in sorted(attacks, key=lambda a: (a.created_at, a.pk)):
        before = left[attack.structure_id]
        if before < 0:
            lines[attack.pk] = _("the haven would already be destroyed")
            continue
        after, destroyed = rules.influence_attack(resistance=before, spent=attack.points)
        left[attack.structure_id] = -1 if destroyed else after
        figures = {"points": attack.points, "before": before, "after": after}
        lines[attack.pk] = (
            _("%(points)s influence against %(before)s resistance: would destroy the haven")
            if destroyed
            else _("%(points)s influence against %(before)s resistance: %(after)s left")
        ) % figures
    return lines


@transaction.atomic
def influence_attacks_resolve(*, cycle: Cycle, now: dt.datetime | None = None) -> dict[str, int]:
    """HAV-25c (DT-10 "influence attacks"): each submitted attack of the cycle, oldest first
    per structure, permanently removes its points of influence resistance; below zero the
    haven is destroyed, with the crypts inside it (they stand within it), and every find of
    them is cleared. A mobile haven is immune. Idempotent: resolved attacks are skipped."""
    now = now or timezone.now()
    attacks = list(
        InfluenceAttack.objects.select_for_update()
        .filter(cycle=cycle, status=AttackStatus.SUBMITTED)
        .order_by("created_at", "pk")
    )
    if not attacks:
        return {"attacks": 0, "destroyed": 0}
    structure_ids = sorted({a.structure_id for a in attacks})
    structures = {
        s.pk: s for s in Structure.objects.select_for_update().filter(pk__in=structure_ids)
    }
    resistance_rows = {
        a.structure_id: a
        for a in Attribute.objects.select_for_update().filter(
            structure_id__in=structure_ids,
            kind="influence_resistance",
            state=AttributeState.ACTIVE,
        )
    }
    mobile = selectors.mobile_structures(
        structures.values(), house_rules=cycle.chronicle.house_rules_for(cycle)
    )
    left = {pk: (r.quantity if (r := resistance_rows.get(pk)) else 0) for pk in structure_ids}
    destroyed: set[int] = set()
    for attack in attacks:
        structure = structures[attack.structure_id]
        before = left[structure.pk]
        attack.status = AttackStatus.RESOLVED
        attack.resolved_at = now
        attack.resistance_before = before
        if structure.status != StructureStatus.STANDING or structure.pk in destroyed:
            attack.resistance_after, attack.destroyed = 0, False
            attack.explanation = words.ATTACK_ALREADY_DESTROYED
            continue
        if mobile[structure.pk]:
            attack.resistance_after, attack.destroyed = before, False
            attack.explanation = words.ATTACK_MOBILE
            continue
        after, gone = rules.influence_attack(resistance=before, spent=attack.points)
        left[structure.pk] = after
        attack.resistance_after, attack.destroyed = after, gone
        if gone:
            destroyed.add(structure.pk)
            attack.explanation = words.ATTACK_DESTROYS % {
                "points": attack.points,
                "before": before,
            }
        else:
            attack.explanation = words.ATTACK_LEAVES % {
                "points": attack.points,
                "before": before,
                "after": after,
            }
    InfluenceAttack.objects.bulk_update(
        attacks,
        [
            "status",
            "resolved_at",
            "resistance_before",
            "resistance_after",
            "destroyed",
            "explanation",
        ],
    )
    changed = [
        row for pk, row in resistance_rows.items() if row.quantity != left[pk] and pk in left
    ]
    for row in changed:
        row.quantity = left[row.structure_id]
    if changed:
        Attribute.objects.bulk_update(changed, ["quantity"])
    if destroyed:
        _destroy_havens(destroyed, cycle=cycle, now=now)
    return {"attacks": len(attacks), "destroyed": len(destroyed)}


def _destroy_havens(destroyed: set[int], *, cycle: Cycle, now: dt.datetime) -> None:
    """HAV-25c: like every other destruction, the havens and the crypts inside them end their
    current ownerships and void their pending ownership changes; every find of them is
    cleared (by `destroy_structures`). Set-based: a fixed number of statements."""
    destroy_structures(
        destroyed,
        how=DestroyedBy.INFLUENCE_ATTACK,
        note=words.RESISTANCE_BELOW_ZERO,
        cycle=cycle,
        now=now,
    )
    crypts = list(
        Structure.objects.filter(outer_id__in=destroyed)
        .exclude(status=StructureStatus.DESTROYED)
        .values_list("pk", flat=True)
    )
    destroy_structures(
        crypts,
        how=DestroyedBy.OUTER_DESTROYED,
        note=words.OUTER_DESTROYED_ATTACK,
        cycle=cycle,
        now=now,
    )
    gone = [*destroyed, *crypts]
    OwnershipChange.objects.filter(structure_id__in=gone, status=ChangeStatus.PENDING).update(
        status=ChangeStatus.VOID, outcome=words.NO_LONGER_STANDS_ATTACKED, applied_at=now
    )

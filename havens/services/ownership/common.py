"""Havens' ownership and construction: the shared constants, value types and helpers."""

from __future__ import annotations

import datetime as dt
import hashlib
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db.models import F
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from characters.models import Character
from characters.services.common import rule_ids
from chronicle.access import STAFF_ROLES
from chronicle.models import Chronicle, Cycle, Membership
from chronicle.rules import settings_for
from chronicle.services import current_downtime

from ... import rules, selectors
from ...models import (
    ATTRIBUTE_CHOICES,
    AlarmEffect,
    AlarmTrigger,
    Ownership,
    Project,
    ProjectKind,
    Structure,
    StructureKind,
    StructureStatus,
)
from ...words import BREACHED_HELD as BREACHED_HELD
from ...words import CRYPT_BUILD_HELD as CRYPT_BUILD_HELD
from ...words import CRYPT_DESTRUCTION as CRYPT_DESTRUCTION
from ...words import CRYPT_REFUSES_MOBILITY as CRYPT_REFUSES_MOBILITY
from ...words import THEFT_CANCELS as THEFT_CANCELS

MAX_QUANTITY = 100  # a form's bound, not a rule: nobody buys 100 cameras by mistake twice
NAME_MAX = 120

COUNTABLE_KINDS = frozenset(rules.ATTRIBUTE_KINDS) - frozenset(rules.POINTS_PER_UNIT)
# Whole sentences per thing that waits for a downtime (translators need whole sentences).
NO_OPEN_CYCLE = {
    "transfer": gettext_noop("No downtime is open; a transfer waits for the next one (HAV-05)."),
    "forsake": gettext_noop("No downtime is open; forsaking waits for the next one (HAV-06)."),
    "destroy_crypt": gettext_noop(
        "No downtime is open; destroying a crypt waits for the next one (HAV-03)."
    ),
    "build": gettext_noop("No downtime is open; building waits for the next one (INF-03)."),
}
UNKNOWN_OUTER = gettext_noop("No outer haven you may build a crypt in has that id (HAV-01).")
VERSION_CONFLICT = gettext_noop(
    "Someone changed this haven's design while you were editing; here is the current design "
    "(HAV-02)."
)
NOT_YOURS = gettext_noop("You may act only for your own characters (HAV-02).")
KEY_MAX = 120  # Structure.key and InfluenceSpend.key


@dataclass(frozen=True)
class AttributeRequest:
    """One line of a design: `quantity` of `kind` (points for influence resistance and
    reinforcement); an alarm also has a trigger and an effect (HAV-10)."""

    kind: str
    quantity: int = 1
    trigger: str = ""
    effect: str = ""


@dataclass(frozen=True)
class Problem:
    """One reason a design cannot go ahead, beside `field` (None: the design as a whole)."""

    field: str | None
    message: str


@dataclass(frozen=True)
class QuoteLine:
    kind: str
    quantity: int
    trigger: str
    effect: str
    cost: int | None

    @property
    def label(self) -> str:
        """What the design form calls this line, with its rule: "Two way lock (HAV-16)"."""
        name = str(dict(ATTRIBUTE_CHOICES).get(self.kind, self.kind))
        rule = rules.ATTRIBUTE_RULE_IDS.get(self.kind)
        if self.trigger:
            trigger = dict(AlarmTrigger.choices).get(self.trigger, self.trigger)
            effect = dict(AlarmEffect.choices).get(self.effect, self.effect)
            name = _("%(attribute)s (%(trigger)s, %(effect)s)") % {
                "attribute": name,
                "trigger": trigger,
                "effect": effect,
            }
        return f"{name} ({rule})" if rule else name


@dataclass
class DesignQuote:
    """The live preview of a design or an upgrade: a cost per line, the total and every rule
    problem (HAV-10..23). Nothing is written to make one."""

    lines: list[QuoteLine] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    @property
    def total(self) -> int:
        return sum(line.cost or 0 for line in self.lines)

    @property
    def ok(self) -> bool:
        return not self.problems

    def add(self, field_name: str | None, message: str) -> None:
        problem = Problem(field_name, message)
        if problem not in self.problems:
            self.problems.append(problem)

    def error(self) -> ValidationError:
        by_field: dict[str, list[str]] = {}
        for problem in self.problems:
            by_field.setdefault(problem.field or "__all__", []).append(problem.message)
        return ValidationError(by_field)


# --- Helpers -----------------------------------------------------------------------------------


def _now(now: dt.datetime | None) -> dt.datetime:
    return now or timezone.now()


def _cited(message: str, rule_id: str) -> str:
    return message if rule_ids(message) else f"{message.rstrip('.')} ({rule_id})."


def _require_current_downtime(chronicle: Chronicle | int, what: str) -> Cycle:
    """`what` names the sentence of `NO_OPEN_CYCLE` that refuses it."""
    cycle = current_downtime(chronicle)
    if cycle is None:
        raise ValidationError(_(NO_OPEN_CYCLE[what]))
    return cycle


def _is_staff(user: User, chronicle_id: int) -> bool:
    return Membership.objects.filter(
        chronicle_id=chronicle_id, user=user, role__in=STAFF_ROLES
    ).exists()


def _require_staff(user: User, chronicle_id: int) -> None:
    if not _is_staff(user, chronicle_id):
        raise ValidationError(_("Only the chronicle's storytellers may do this (HAV-05)."))


def _acts_for(by: User, character: Character) -> None:
    """A player acts for their own characters; storytellers for any of the chronicle's."""
    if character.player_id == by.pk:
        return
    if not _is_staff(by, character.chronicle_id):
        raise ValidationError({"character": [_(NOT_YOURS)]})


def _lock_structure(structure: Structure | int) -> Structure:
    pk = structure if isinstance(structure, int) else structure.pk
    return Structure.objects.select_for_update().get(pk=pk)


def _owner_ids(structure: Structure | int) -> set[int]:
    return set(
        Ownership.objects.filter(structure=structure, ended_at__isnull=True).values_list(
            "character_id", flat=True
        )
    )


def _may_build(structure: Structure, character: Character, owners: set[int]) -> bool:
    """HAV-02: only owners change a design; before anyone has paid, the plan is its designer's
    player's, so any character of theirs may add to it or pay into it."""
    if owners:
        return character.pk in owners
    designer = structure.designed_by
    if structure.status != StructureStatus.PLANNED or designer is None:
        return False
    if character.pk == designer.pk:  # an NPC's plan has no player: only the NPC pays
        return True
    return (
        character.player_id is not None
        and character.player_id == designer.player_id
        and character.chronicle_id == structure.chronicle_id
    )


def _require_standing(structure: Structure, *, crypt: bool = False) -> None:
    if structure.status == StructureStatus.DESTROYED:
        raise ValidationError(
            _("This crypt has been destroyed; nothing more can be done to it (HAV-01).")
            if crypt
            else _("This haven has been destroyed; nothing more can be done to it (HAV-01).")
        )


def _lines(requests: Sequence[AttributeRequest]) -> dict[str, int]:
    totals: dict[str, int] = defaultdict(int)
    for request in requests:
        if request.kind in rules.ATTRIBUTE_COSTS and isinstance(request.quantity, int):
            totals[request.kind] += request.quantity
    return dict(totals)


def _bounded_key(prefix: str, key: str) -> str:
    """A stored idempotency key of at most KEY_MAX characters. A long key is hashed, never cut:
    two different keys sharing their first characters must stay two keys. The two forms use
    different separators, so a short key can never equal a hashed one."""
    raw = f"{prefix}:{key}"
    if len(raw) <= KEY_MAX:
        return raw
    return f"{prefix}#{hashlib.sha256(key.encode()).hexdigest()}"


def _outer_is_mobile(outer: Structure | None) -> bool:
    """HAV-23: whether the outer haven a crypt is in is mobile, for the crypt's design: only
    BUILT, working Mobility counts. Its projects on order belong to the outer haven's owners,
    which the crypt's owner must not learn of (HAV-04)."""
    if outer is None:
        return False
    return selectors.mobile_structures([outer], house_rules=outer.chronicle.house_rules)[outer.pk]


def _crypts_refuse_mobility(structure: Structure, attributes: Sequence[AttributeRequest]) -> bool:
    """HAV-23 (INTERPRETATION: a crypt inside a mobile outer haven counts as mobile): whether
    adding these lines would give the outer haven Mobility while a crypt inside has a design
    (built or on order) that a mobile haven may not have. Only the rules decide which."""
    if structure.kind != StructureKind.OUTER or not any(
        r.kind == "mobility" and isinstance(r.quantity, int) and r.quantity > 0 for r in attributes
    ):
        return False
    crypts = list(
        Structure.objects.filter(outer=structure)
        .exclude(status=StructureStatus.DESTROYED)
        .values_list("pk", flat=True)
    )
    if not crypts:
        return False
    settings = settings_for(rules.design_problems, structure.chronicle.house_rules)
    for design in selectors.designs(crypts).values():
        alone = rules.design_problems(structure=StructureKind.CRYPT, attributes=design, **settings)
        inside = rules.design_problems(
            structure=StructureKind.CRYPT, attributes=design, inside_mobile_haven=True, **settings
        )
        if set(inside) - set(alone):
            return True
    return False


def design_quote(
    *,
    chronicle: Chronicle,
    kind: str,
    attributes: Sequence[AttributeRequest],
    outer: Structure | None = None,
    existing: Mapping[str, int] | None = None,
) -> DesignQuote:
    """HAV-10..23: the cost of each requested line and every problem of the whole design
    (`existing` plus the requested lines), writing nothing. Used by the services and by the
    pages' and the API's live check."""
    quote = DesignQuote()
    if kind not in StructureKind.values:
        quote.add("kind", _("Choose an outer haven or a crypt (HAV-01)."))
        return quote
    if kind == StructureKind.CRYPT and outer is None:
        quote.add("outer", _("A crypt is built inside an outer haven; choose one (HAV-01)."))
    if kind == StructureKind.OUTER and outer is not None:
        quote.add("outer", _("Only a crypt is inside another haven (HAV-01)."))
    for request in attributes:
        cost: int | None = None
        rule_id = rules.ATTRIBUTE_RULE_IDS.get(request.kind, "HAV-23")
        try:
            cost = rules.attribute_cost(request.kind, request.quantity)
        except ValueError as exc:
            quote.add("attributes", _cited(str(exc), rule_id))
        if request.kind == "alarm":
            if request.trigger not in AlarmTrigger.values:
                quote.add("attributes", _("Each alarm needs a trigger (HAV-10)."))
            if request.effect not in AlarmEffect.values:
                quote.add("attributes", _("Each alarm needs an effect (HAV-10)."))
        elif request.trigger or request.effect:
            quote.add("attributes", _("Only an alarm has a trigger and an effect (HAV-10)."))
        quote.lines.append(
            QuoteLine(request.kind, request.quantity, request.trigger, request.effect, cost)
        )
    if not attributes and not existing:
        # A plan with nothing to pay for could never gain an owner (HAV-02).
        quote.add("attributes", _("Add at least one attribute to pay for (HAV-02)."))
    design = dict(existing or {})
    for kind_name, quantity in _lines(attributes).items():
        design[kind_name] = design.get(kind_name, 0) + quantity
    inside_mobile = kind == StructureKind.CRYPT and _outer_is_mobile(outer)
    try:
        problems = rules.design_problems(
            structure=kind,
            attributes=design,
            inside_mobile_haven=inside_mobile,
            **settings_for(rules.design_problems, chronicle.house_rules),
        )
    except ValueError as exc:
        problems = [str(exc)]
    for problem in problems:
        quote.add("attributes", _cited(problem, "HAV-23"))
    return quote


def _projects_for(
    structure: Structure, requests: Sequence[AttributeRequest], by: Character, now: dt.datetime
) -> list[Project]:
    return Project.objects.bulk_create(
        Project(
            structure=structure,
            kind=ProjectKind.ATTRIBUTE,
            attribute_kind=request.kind,
            quantity=request.quantity,
            trigger=request.trigger if request.kind == "alarm" else "",
            effect=request.effect if request.kind == "alarm" else "",
            cost=rules.attribute_cost(request.kind, request.quantity),
            requested_by=by,
            created_at=now,
        )
        for request in requests
    )


def _bump_version(structure: Structure) -> None:
    Structure.objects.filter(pk=structure.pk).update(version=F("version") + 1)
    structure.refresh_from_db(fields=["version"])


BREACHED_REFUSED = gettext_noop(
    "The reinforcement is breached: repair it before adding to it (HAV-24)."
)

"""Ownership and construction of havens (HAV-01..07, HAV-10..24): designs, upgrades,
contributions, repairs, transfers, wills, forsaking, crypt destruction by the outer haven's
owners, theft control; and their downtime resolution (DT-10 order: the pipeline calls
`ownership_changes_apply`, `forsaking_resolve`, `theft_resolve`, `construction_resolve`).

Lock order, everywhere here: the Structure row (the lock for its design, its projects and its
owner list), then the project row, then the character row (taken by `influence_spend`).

Secrecy (HAV-04): callers pass only structures and characters they got through
`havens.access`; refusals never name another player's character or haven.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Exists, F, OuterRef, Q
from django.utils import timezone

from characters.models import Approval, Character
from characters.models import Status as CharacterStatus
from characters.services.common import rule_ids
from characters.services.influence import influence_refund, influence_spend
from chronicle.access import STAFF_ROLES
from chronicle.models import Attendance, Chronicle, Cycle, Game, Membership
from chronicle.rules import settings_for
from chronicle.services import current_downtime

from .. import rules, selectors
from ..models import (
    ATTRIBUTE_CHOICES,
    AlarmEffect,
    AlarmTrigger,
    Attribute,
    AttributeState,
    ChangeKind,
    ChangeStatus,
    Contribution,
    CryptVote,
    DestroyedBy,
    Find,
    Ownership,
    OwnershipChange,
    OwnershipHow,
    Project,
    ProjectKind,
    ProjectStatus,
    Structure,
    StructureKind,
    StructureStatus,
    TheftControl,
)

MAX_QUANTITY = 100  # a form's bound, not a rule: nobody buys 100 cameras by mistake twice
NAME_MAX = 120

COUNTABLE_KINDS = frozenset(rules.ATTRIBUTE_KINDS) - frozenset(rules.POINTS_PER_UNIT)
NO_OPEN_CYCLE = "No downtime is open; {what} waits for the next one ({rule})."
UNKNOWN_OUTER = "No outer haven you may build a crypt in has that id (HAV-01)."
VERSION_CONFLICT = (
    "Someone changed this haven's design while you were editing; here is the current design "
    "(HAV-02)."
)
NOT_YOURS = "You may act only for your own characters (HAV-02)."
KEY_MAX = 120  # Structure.key and InfluenceSpend.key
# HAV-03/HAV-04: all the crypt's owner may learn of a destruction vote: never who voted, nor
# how many owners the outer haven has.
CRYPT_DESTRUCTION = "Destruction ordered by the outer haven's owners (HAV-03)."
# HAV-23/HAV-04: the outer haven's owners learn that a crypt objects, never which attribute.
CRYPT_REFUSES_MOBILITY = (
    "A crypt inside this haven does not allow Mobility (HAV-23); the storytellers can tell its "
    "owner."
)


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
        name = dict(ATTRIBUTE_CHOICES).get(self.kind, self.kind)
        rule = rules.ATTRIBUTE_RULE_IDS.get(self.kind)
        if self.trigger:
            trigger = dict(AlarmTrigger.choices).get(self.trigger, self.trigger)
            effect = dict(AlarmEffect.choices).get(self.effect, self.effect)
            name += f" ({trigger}, {effect})"
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


def _require_current_downtime(chronicle: Chronicle | int, what: str, rule: str) -> Cycle:
    cycle = current_downtime(chronicle)
    if cycle is None:
        raise ValidationError(NO_OPEN_CYCLE.format(what=what, rule=rule))
    return cycle


def _is_staff(user: User, chronicle_id: int) -> bool:
    return Membership.objects.filter(
        chronicle_id=chronicle_id, user=user, role__in=STAFF_ROLES
    ).exists()


def _require_staff(user: User, chronicle_id: int) -> None:
    if not _is_staff(user, chronicle_id):
        raise ValidationError("Only the chronicle's storytellers may do this (HAV-05).")


def _acts_for(by: User, character: Character) -> None:
    """A player acts for their own characters; storytellers for any of the chronicle's."""
    if character.player_id == by.pk:
        return
    if not _is_staff(by, character.chronicle_id):
        raise ValidationError({"character": [NOT_YOURS]})


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


def _require_standing(structure: Structure, what: str = "This haven") -> None:
    if structure.status == StructureStatus.DESTROYED:
        raise ValidationError(
            f"{what} has been destroyed; nothing more can be done to it (HAV-01)."
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
        quote.add("kind", "Choose an outer haven or a crypt (HAV-01).")
        return quote
    if kind == StructureKind.CRYPT and outer is None:
        quote.add("outer", "A crypt is built inside an outer haven; choose one (HAV-01).")
    if kind == StructureKind.OUTER and outer is not None:
        quote.add("outer", "Only a crypt is inside another haven (HAV-01).")
    for request in attributes:
        cost: int | None = None
        rule_id = rules.ATTRIBUTE_RULE_IDS.get(request.kind, "HAV-23")
        try:
            cost = rules.attribute_cost(request.kind, request.quantity)
        except ValueError as exc:
            quote.add("attributes", _cited(str(exc), rule_id))
        if request.kind == "alarm":
            if request.trigger not in AlarmTrigger.values:
                quote.add("attributes", "Each alarm needs a trigger (HAV-10).")
            if request.effect not in AlarmEffect.values:
                quote.add("attributes", "Each alarm needs an effect (HAV-10).")
        elif request.trigger or request.effect:
            quote.add("attributes", "Only an alarm has a trigger and an effect (HAV-10).")
        quote.lines.append(
            QuoteLine(request.kind, request.quantity, request.trigger, request.effect, cost)
        )
    if not attributes and not existing:
        # A plan with nothing to pay for could never gain an owner (HAV-02).
        quote.add("attributes", "Add at least one attribute to pay for (HAV-02).")
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


# --- Design, upgrade, contributions, repairs --------------------------------------------------


def crypt_outer_allowed(*, outer: Structure, by: User) -> bool:
    """HAV-01: a crypt goes inside a standing outer haven; a player only inside one that a
    character of theirs owns (storytellers anywhere in the chronicle)."""
    if outer.kind != StructureKind.OUTER or outer.status != StructureStatus.STANDING:
        return False
    if _is_staff(by, outer.chronicle_id):
        return True
    return Ownership.objects.filter(
        structure=outer, ended_at__isnull=True, character__player=by
    ).exists()


@transaction.atomic
def structure_design(
    *,
    character: Character,
    by: User,
    kind: str,
    name: str,
    location: str,
    description: str = "",
    outer: Structure | None = None,
    attributes: Sequence[AttributeRequest],
    key: str = "",
    now: dt.datetime | None = None,
) -> Structure:
    """HAV-01/HAV-23: a planned structure designed by `character`, with one project per
    requested attribute. Nobody owns it until the first contribution (HAV-02). Refused with
    every problem at once; nothing is written then.

    `key` (the form's token or the API's idempotency key, already scoped by the caller to its
    user) makes a double submit plan one structure: the same key returns the first one."""
    now = _now(now)
    _acts_for(by, character)
    chronicle = character.chronicle
    if outer is not None:
        # Locked so a crypt is not planned inside an outer haven being destroyed right now;
        # first, as everywhere (the Structure row before the character row).
        outer = _lock_structure(outer)
    if key:
        key = _bounded_key("design", key)
        # Two racing submits of one form wait here for each other, so the second one finds
        # the first one's structure instead of failing on the unique key.
        Character.objects.select_for_update().filter(pk=character.pk).first()
        existing = Structure.objects.filter(chronicle=chronicle, key=key).first()
        if existing is not None:
            return existing
    quote = DesignQuote()
    # Storytellers build for their NPCs too (the Prince's Elysium); players for their PCs.
    playable = character.status == CharacterStatus.ACTIVE or (
        character.status == CharacterStatus.NPC and _is_staff(by, chronicle.pk)
    )
    if not playable or character.approval != Approval.APPROVED:
        quote.add("character", "Only an active, approved character may design a haven (HAV-02).")
    if not name.strip():
        quote.add("name", "Give the haven a name (HAV-01).")
    if not location.strip():
        quote.add("location", "Say where it is: a search that finds it reveals this (HAV-25b).")
    outer_refused = False
    if outer is not None and (
        outer.chronicle_id != chronicle.pk or not crypt_outer_allowed(outer=outer, by=by)
    ):
        quote.add("outer", UNKNOWN_OUTER)
        outer, outer_refused = None, True
    checked = design_quote(chronicle=chronicle, kind=kind, attributes=attributes, outer=outer)
    for problem in checked.problems:
        # The refused outer haven is already said; don't add "choose one" on top of it.
        if not (outer_refused and problem.field == "outer"):
            quote.add(problem.field, problem.message)
    if quote.problems:
        raise quote.error()
    structure = Structure.objects.create(
        chronicle=chronicle,
        kind=kind,
        outer=outer,
        name=name.strip()[:NAME_MAX],
        location=location.strip()[:300],
        description=description.strip(),
        status=StructureStatus.PLANNED,
        designed_by=character,
        created_at=now,
        key=key,
    )
    _projects_for(structure, attributes, character, now)
    return structure


@transaction.atomic
def structure_upgrade(
    *,
    structure: Structure,
    character: Character,
    by: User,
    attributes: Sequence[AttributeRequest],
    version: int | None = None,
    now: dt.datetime | None = None,
) -> list[Project]:
    """HAV-02/HAV-23: more attributes on an existing structure, by one of its owners (the
    designer's player's characters while a plan has no owner). The whole design, built and on
    order, plus the new lines must pass the rules. `version` is the design the editor saw."""
    now = _now(now)
    _acts_for(by, character)
    structure = _lock_structure(structure)
    _require_standing(structure)
    if version is not None and version != structure.version:
        raise ValidationError({"version": [VERSION_CONFLICT]})
    if not _may_build(structure, character, _owner_ids(structure)):
        raise ValidationError({"character": ["Only a structure's owners may change it (HAV-02)."]})
    if not attributes:
        raise ValidationError({"attributes": ["Add at least one attribute (HAV-10..22)."]})
    quote = upgrade_quote(structure=structure, attributes=attributes)
    if quote.problems:
        raise quote.error()
    projects = _projects_for(structure, attributes, character, now)
    _bump_version(structure)
    return projects


def upgrade_quote(*, structure: Structure, attributes: Sequence[AttributeRequest]) -> DesignQuote:
    """The live check of an upgrade: the current design plus these lines, and, for Mobility on
    an outer haven, the crypts inside it (HAV-23; writes nothing)."""
    quote = design_quote(
        chronicle=structure.chronicle,
        kind=structure.kind,
        attributes=attributes,
        outer=structure.outer,
        existing=selectors.designs([structure])[structure.pk],
    )
    if _crypts_refuse_mobility(structure, attributes):
        quote.add("attributes", CRYPT_REFUSES_MOBILITY)
    if (
        any(r.kind == "reinforcement" for r in attributes)
        and structure.attributes.filter(
            kind="reinforcement", state=AttributeState.BREACHED
        ).exists()
    ):
        quote.add("attributes", BREACHED_REFUSED)
    return quote


def contribution_key(key: str) -> str:
    """The influence spend's key of a contribution (InfluenceSpend.key, at most 120)."""
    return _bounded_key("haven-contribution", key)


@transaction.atomic
def project_contribute(
    *,
    project: Project,
    character: Character,
    influence: str,
    points: int,
    by: User,
    key: str,
    cycle: Cycle | None = None,
    now: dt.datetime | None = None,
) -> Contribution:
    """HAV-02/INF-03: `points` of `influence` towards a project, spent in the current open
    cycle. The first contribution to a planned structure makes its contributor the exclusive
    owner. The same `key` twice gives one contribution."""
    now = _now(now)
    _acts_for(by, character)
    structure = _lock_structure(project.structure_id)
    spend_key = contribution_key(key)
    existing = Contribution.objects.filter(spend__key=spend_key, spend__character=character).first()
    if existing is not None:
        return existing
    project = Project.objects.select_for_update().get(pk=project.pk)
    _require_standing(structure)
    owners = _owner_ids(structure)
    if not _may_build(structure, character, owners):
        raise ValidationError(
            {"character": ["Only a structure's owners may pay into its projects (HAV-02)."]}
        )
    if project.status != ProjectStatus.OPEN:
        raise ValidationError(
            "This project is no longer collecting influence: it is "
            f"{project.get_status_display().lower()} (HAV-02)."
        )
    if not isinstance(points, int) or points < 1:
        raise ValidationError({"points": ["Give at least 1 point of influence (INF-03)."]})
    remaining = project.cost - project.paid
    if points > remaining:
        raise ValidationError(
            {"points": [f"This needs only {remaining} more influence (HAV-02, INF-03)."]}
        )
    if cycle is None:
        cycle = _require_current_downtime(structure.chronicle_id, "building", "INF-03")
    spend, _ = influence_spend(
        character=character,
        cycle=cycle,
        influence=influence,
        points=points,
        reason=f"Haven {structure.name}: {project.get_kind_display().lower()}",
        key=spend_key,
        actor=by,
        now=now,
    )
    contribution = Contribution.objects.create(
        project=project,
        character=character,
        cycle=cycle,
        influence=influence,
        points=points,
        spend=spend,
        created_at=now,
    )
    Project.objects.filter(pk=project.pk).update(paid=F("paid") + points)
    Project.objects.filter(pk=project.pk, paid=F("cost"), status=ProjectStatus.OPEN).update(
        status=ProjectStatus.PAID, paid_cycle=cycle
    )
    if not owners:
        Ownership.objects.create(
            structure=structure,
            character=character,
            how=OwnershipHow.BUILT,
            started_at=now,
            started_cycle=cycle,
        )
    return contribution


@transaction.atomic
def repair_request(
    *, attribute: Attribute, character: Character, by: User, now: dt.datetime | None = None
) -> Project:
    """HAV-24: a repair project for a destroyed (or bypassed) two-way lock or breached
    reinforcement, costing half the original construction cost, rounded up."""
    now = _now(now)
    _acts_for(by, character)
    structure = _lock_structure(attribute.structure_id)
    _require_standing(structure)
    if character.pk not in _owner_ids(structure):
        raise ValidationError(
            {"character": ["Only a structure's owners may repair it (HAV-02, HAV-24)."]}
        )
    attribute = Attribute.objects.get(pk=attribute.pk)
    if not rules.needs_repair(attribute.kind, attribute.state):
        if not rules.is_destructible(attribute.kind):
            raise ValidationError(
                f"A {attribute.get_kind_display().lower()} is indestructible: it never needs "
                "repair (HAV-24)."
            )
        raise ValidationError(
            f"This {attribute.get_kind_display().lower()} is "
            f"{attribute.get_state_display().lower()}; only a destroyed lock or breached "
            "reinforcement is repaired (HAV-24)."
        )
    under_way = [ProjectStatus.OPEN, ProjectStatus.PAID]
    if Project.objects.filter(repair_of=attribute, status__in=under_way).exists():
        raise ValidationError("A repair of this attribute is already under way (HAV-24).")
    project = Project.objects.create(
        structure=structure,
        kind=ProjectKind.REPAIR,
        attribute_kind=attribute.kind,
        quantity=attribute.quantity,
        repair_of=attribute,
        cost=rules.repair_cost(attribute.cost),
        requested_by=character,
        created_at=now,
    )
    _bump_version(structure)
    return project


@transaction.atomic
def project_cancel(*, project: Project, character: Character, by: User) -> Project:
    """An owner takes back an open project nobody has paid into yet (nothing to refund)."""
    _acts_for(by, character)
    structure = _lock_structure(project.structure_id)
    project = Project.objects.select_for_update().get(pk=project.pk)
    if project.status == ProjectStatus.CANCELLED:
        return project
    if not _may_build(structure, character, _owner_ids(structure)):
        raise ValidationError(
            {"character": ["Only a structure's owners may change its projects (HAV-02)."]}
        )
    if project.status != ProjectStatus.OPEN:
        raise ValidationError(
            "Only a project still collecting influence can be cancelled (HAV-02)."
        )
    if project.paid or project.contributions.exists():
        raise ValidationError(
            "Influence has already been paid into this project; it can no longer be cancelled "
            "(HAV-02)."
        )
    project.status = ProjectStatus.CANCELLED
    project.save(update_fields=["status"])
    _bump_version(structure)
    return project


@transaction.atomic
def project_release_held(*, project: Project, by: User, now: dt.datetime | None = None) -> Project:
    """The storytellers settle a paid project that construction holds (HAV-23, HAV-24): it is
    cancelled and every contribution's influence given back, so it no longer shapes the
    design. Releasing twice changes nothing."""
    now = _now(now)
    structure = _lock_structure(project.structure_id)
    _require_staff(by, structure.chronicle_id)
    project = Project.objects.select_for_update().get(pk=project.pk)
    if project.status == ProjectStatus.CANCELLED:
        return project
    if project.status != ProjectStatus.PAID or not project.held_reason:
        raise ValidationError("Only a paid project that construction holds is released (HAV-23).")
    for contribution in project.contributions.select_related("spend"):
        influence_refund(
            spend=contribution.spend,
            reason=f"Held project released: {project}",
            actor=by,
            now=now,
        )
    project.status = ProjectStatus.CANCELLED
    project.save(update_fields=["status"])
    _bump_version(structure)
    return project


# --- Ownership changes asked for now, applied in downtime (HAV-03, HAV-05, HAV-06) ------------


def link_by_name(*, chronicle: Chronicle | int, name: str) -> Character | None:
    """The one active character of the chronicle with exactly this name, or None (none or
    several): an ST links it then. Callers must answer the same either way."""
    matches = list(
        Character.objects.filter(
            chronicle=chronicle, name__iexact=name.strip(), status=CharacterStatus.ACTIVE
        )[:2]
    )
    return matches[0] if len(matches) == 1 else None


def _require_owner(structure: Structure, character: Character, rule: str) -> None:
    if character.pk not in _owner_ids(structure):
        raise ValidationError({"from_character": [f"Only a current owner can do this ({rule})."]})


def _recipient(
    *, structure: Structure, by: User, to_character: Character | None, to_name: str
) -> tuple[Character | None, str]:
    if to_character is not None:
        _require_staff(by, structure.chronicle_id)
        if (
            to_character.chronicle_id != structure.chronicle_id
            or to_character.status != CharacterStatus.ACTIVE
        ):
            raise ValidationError(
                {"to_character": ["Choose an active character of this chronicle (HAV-05)."]}
            )
        return to_character, to_character.name
    name = to_name.strip()
    if not name or len(name) > NAME_MAX:
        raise ValidationError(
            {
                "to_name": [
                    f"Give the recipient's character name (at most {NAME_MAX} letters, HAV-05)."
                ]
            }
        )
    return link_by_name(chronicle=structure.chronicle_id, name=name), name


@transaction.atomic
def structure_transfer_request(
    *,
    structure: Structure,
    from_character: Character,
    by: User,
    to_character: Character | None = None,
    to_name: str = "",
    note: str = "",
    now: dt.datetime | None = None,
) -> OwnershipChange:
    """HAV-05: `from_character` gives its ownership to another character; it takes effect in
    the downtime of the current open cycle. A crypt goes whole (it has one owner, HAV-01).
    Players name the recipient in words; the answer is the same whether the name matched."""
    now = _now(now)
    _acts_for(by, from_character)
    structure = _lock_structure(structure)
    _require_standing(structure)
    _require_owner(structure, from_character, "HAV-05")
    recipient, name = _recipient(
        structure=structure, by=by, to_character=to_character, to_name=to_name
    )
    if recipient is not None and recipient.pk == from_character.pk:
        raise ValidationError({"to_name": ["A character cannot give a haven to itself (HAV-05)."]})
    cycle = _require_current_downtime(structure.chronicle_id, "a transfer", "HAV-05")
    pending = OwnershipChange.objects.filter(
        structure=structure,
        kind=ChangeKind.TRANSFER,
        from_character=from_character,
        status=ChangeStatus.PENDING,
    ).first()
    note = note.strip()
    if pending is not None:
        if (
            pending.to_character_id == (recipient.pk if recipient else None)
            and pending.to_name == name
            and pending.note == note
        ):
            return pending
        raise ValidationError(
            "A transfer of this haven by this character is already waiting for the downtime; "
            "cancel it first (HAV-05)."
        )
    return OwnershipChange.objects.create(
        structure=structure,
        kind=ChangeKind.TRANSFER,
        cycle=cycle,
        from_character=from_character,
        to_character=recipient,
        to_name=name,
        note=note,
        requested_by=by,
        requested_at=now,
    )


def _any_cycle(chronicle_id: int) -> Cycle:
    cycle = current_downtime(chronicle_id) or (
        Cycle.objects.filter(chronicle_id=chronicle_id).order_by("-deadline_at").first()
    )
    if cycle is None:
        raise ValidationError("The chronicle has no game yet; a will waits for one (HAV-05).")
    return cycle


@transaction.atomic
def structure_will_set(
    *,
    structure: Structure,
    from_character: Character,
    by: User,
    to_character: Character | None = None,
    to_name: str = "",
    note: str = "",
    now: dt.datetime | None = None,
) -> OwnershipChange:
    """HAV-05: the heir of `from_character`'s ownership, applied only when it dies. A new will
    replaces the previous one."""
    now = _now(now)
    _acts_for(by, from_character)
    structure = _lock_structure(structure)
    _require_standing(structure)
    _require_owner(structure, from_character, "HAV-05")
    recipient, name = _recipient(
        structure=structure, by=by, to_character=to_character, to_name=to_name
    )
    if recipient is not None and recipient.pk == from_character.pk:
        raise ValidationError({"to_name": ["A character cannot leave a haven to itself (HAV-05)."]})
    note = note.strip()
    previous = OwnershipChange.objects.filter(
        structure=structure,
        kind=ChangeKind.WILL,
        from_character=from_character,
        status=ChangeStatus.PENDING,
    )
    same = previous.filter(to_character=recipient, to_name=name, note=note).first()
    if same is not None:
        return same
    previous.update(status=ChangeStatus.CANCELLED, outcome="Replaced by a newer will (HAV-05).")
    return OwnershipChange.objects.create(
        structure=structure,
        kind=ChangeKind.WILL,
        cycle=_any_cycle(structure.chronicle_id),
        from_character=from_character,
        to_character=recipient,
        to_name=name,
        note=note,
        requested_by=by,
        requested_at=now,
    )


@transaction.atomic
def structure_forsake_request(
    *, structure: Structure, character: Character, by: User, now: dt.datetime | None = None
) -> OwnershipChange:
    """HAV-06: `character` gives up its ownership in this downtime. An exclusive owner
    forsaking an outer haven destroys it and every crypt in it; a crypt's owner destroys it."""
    now = _now(now)
    _acts_for(by, character)
    structure = _lock_structure(structure)
    _require_standing(structure)
    _require_owner(structure, character, "HAV-06")
    cycle = _require_current_downtime(structure.chronicle_id, "forsaking", "HAV-06")
    change, _ = OwnershipChange.objects.get_or_create(
        structure=structure,
        kind=ChangeKind.FORSAKE,
        from_character=character,
        status=ChangeStatus.PENDING,
        defaults={"cycle": cycle, "requested_by": by, "requested_at": now},
    )
    return change


@transaction.atomic
def crypt_destroy_vote(
    *, crypt: Structure, voter: Character, by: User, now: dt.datetime | None = None
) -> CryptVote:
    """HAV-03: an owner of the outer haven votes to destroy a crypt inside it. With the
    exclusive owner's vote, or more than half of the partial owners', one destruction is
    queued for the downtime. Voting is the only change they may make to the crypt."""
    now = _now(now)
    _acts_for(by, voter)
    crypt = _lock_structure(crypt)
    if crypt.kind != StructureKind.CRYPT or crypt.outer_id is None:
        raise ValidationError("Only a crypt can be destroyed this way (HAV-03).")
    _require_standing(crypt, "This crypt")
    outer_owners = _owner_ids(crypt.outer_id)
    if voter.pk not in outer_owners:
        raise ValidationError(
            {"voter": ["Only an owner of the outer haven may vote to destroy a crypt (HAV-03)."]}
        )
    cycle = _require_current_downtime(crypt.chronicle_id, "destroying a crypt", "HAV-03")
    vote, _ = CryptVote.objects.get_or_create(
        crypt=crypt, voter=voter, cycle=cycle, defaults={"created_at": now}
    )
    in_favour = CryptVote.objects.filter(
        crypt=crypt, cycle=cycle, voter_id__in=outer_owners
    ).count()
    if (
        rules.crypt_destruction_allowed(outer_owners=len(outer_owners), in_favour=in_favour)
        and not OwnershipChange.objects.filter(
            structure=crypt, kind=ChangeKind.DESTROY_CRYPT, status=ChangeStatus.PENDING
        ).exists()
    ):
        # The change is on the crypt, whose owner sees it: no voter and no count there (HAV-04).
        # The storytellers read both in `outcome` (never shown to players).
        voters = Character.objects.filter(
            pk__in=CryptVote.objects.filter(
                crypt=crypt, cycle=cycle, voter_id__in=outer_owners
            ).values("voter_id")
        ).order_by("name", "pk")
        OwnershipChange.objects.create(
            structure=crypt,
            kind=ChangeKind.DESTROY_CRYPT,
            cycle=cycle,
            note=CRYPT_DESTRUCTION,
            outcome=(
                f"{in_favour} of {len(outer_owners)} owners of the outer haven in favour: "
                f"{', '.join(v.name for v in voters)} (HAV-03)."
            ),
            requested_by=by,
            requested_at=now,
        )
    return vote


@transaction.atomic
def change_cancel(*, change: OwnershipChange, by: User) -> OwnershipChange:
    """Take back a pending change of one's own (storytellers: any)."""
    change = (
        OwnershipChange.objects.select_for_update(of=("self",))
        .select_related("from_character")
        .get(pk=change.pk)
    )
    own = change.requested_by_id == by.pk or (
        change.from_character is not None and change.from_character.player_id == by.pk
    )
    if not own:
        _require_staff(by, change.structure.chronicle_id)
    if change.status == ChangeStatus.CANCELLED:
        return change
    if change.status != ChangeStatus.PENDING:
        raise ValidationError(
            "Only a change still waiting for the downtime can be cancelled (HAV-05)."
        )
    change.status = ChangeStatus.CANCELLED
    change.save(update_fields=["status"])
    if change.kind == ChangeKind.DESTROY_CRYPT:
        CryptVote.objects.filter(crypt=change.structure_id, cycle=change.cycle_id).delete()
    return change


# --- Storytellers' rulings ---------------------------------------------------------------------


@transaction.atomic
def theft_control_record(
    *,
    structure: Structure,
    game: Game,
    thieves: Sequence[Character],
    by: User,
    now: dt.datetime | None = None,
) -> TheftControl:
    """HAV-07: at `game`, these thieves controlled the structure. Recording the same game again
    replaces its list of thieves."""
    now = _now(now)
    _require_staff(by, structure.chronicle_id)
    structure = _lock_structure(structure)
    _require_standing(structure)
    if game.chronicle_id != structure.chronicle_id:
        raise ValidationError({"game": ["Choose a game of this chronicle (HAV-07)."]})
    if not thieves:
        raise ValidationError({"thieves": ["Name at least one thief (HAV-07)."]})
    if any(t.chronicle_id != structure.chronicle_id for t in thieves):
        raise ValidationError(
            {"thieves": ["Thieves must be characters of this chronicle (HAV-07)."]}
        )
    if structure.kind == StructureKind.CRYPT and len({t.pk for t in thieves}) != 1:
        # Thieves who keep it would own it (HAV-07), and a crypt has one owner.
        raise ValidationError(
            {"thieves": ["A crypt has exactly one owner (HAV-01): name one thief."]}
        )
    control, _ = TheftControl.objects.get_or_create(
        structure=structure, game=game, defaults={"recorded_by": by, "recorded_at": now}
    )
    control.thieves.set(thieves)
    return control


def _destroy(
    structure_ids: Iterable[int],
    *,
    how: str,
    note: str,
    cycle: Cycle | None,
    now: dt.datetime,
) -> int:
    ids = list(structure_ids)
    done = (
        Structure.objects.filter(pk__in=ids)
        .exclude(status=StructureStatus.DESTROYED)
        .update(
            status=StructureStatus.DESTROYED,
            destroyed_at=now,
            destroyed_cycle=cycle,
            destroyed_by=how,
            destroyed_note=note,
        )
    )
    Ownership.objects.filter(structure_id__in=ids, ended_at__isnull=True).update(
        ended_at=now, ended_cycle=cycle, ended_why="The haven was destroyed."
    )
    _forget(ids, now)
    return done


def _forget(structure_ids: Sequence[int], now: dt.datetime) -> None:
    """A destroyed haven is nowhere to be found: its finders' finds end with it, so their
    list of havens never shows a place that is gone (HAV-25b)."""
    Find.objects.filter(structure_id__in=structure_ids, cleared_at__isnull=True).update(
        cleared_at=now
    )


@transaction.atomic
def structure_destroy(
    *, structure: Structure, by: User, note: str, now: dt.datetime | None = None
) -> Structure:
    """A storyteller's ruling: the structure (and any crypt inside) is destroyed now."""
    now = _now(now)
    _require_staff(by, structure.chronicle_id)
    structure = _lock_structure(structure)
    if structure.status == StructureStatus.DESTROYED:
        return structure
    if not note.strip():
        raise ValidationError({"note": ["Say why, for the record (HAV-05)."]})
    cycle = current_downtime(structure.chronicle_id)
    crypts = list(
        Structure.objects.filter(outer=structure)
        .exclude(status=StructureStatus.DESTROYED)
        .values_list("pk", flat=True)
    )
    _destroy([structure.pk], how=DestroyedBy.STORYTELLER, note=note.strip(), cycle=cycle, now=now)
    _destroy(
        crypts,
        how=DestroyedBy.STORYTELLER,
        note="Its outer haven was destroyed by a storyteller's ruling.",
        cycle=cycle,
        now=now,
    )
    OwnershipChange.objects.filter(
        structure_id__in=[structure.pk, *crypts], status=ChangeStatus.PENDING
    ).exclude(kind=ChangeKind.WILL).update(
        status=ChangeStatus.VOID, outcome="The haven was destroyed (HAV-05).", applied_at=now
    )
    structure.refresh_from_db()
    return structure


@transaction.atomic
def structure_owner_set(
    *,
    structure: Structure,
    characters: Sequence[Character],
    by: User,
    note: str,
    now: dt.datetime | None = None,
) -> list[Ownership]:
    """A storyteller's ruling: these characters own the structure from now."""
    now = _now(now)
    _require_staff(by, structure.chronicle_id)
    structure = _lock_structure(structure)
    _require_standing(structure)
    if structure.kind == StructureKind.CRYPT and len(characters) != 1:
        raise ValidationError({"characters": ["A crypt has exactly one owner (HAV-01)."]})
    if not characters:
        raise ValidationError({"characters": ["Name at least one owner (HAV-01)."]})
    wanted = {c.pk for c in characters}
    current = _owner_ids(structure)
    cycle = current_downtime(structure.chronicle_id)
    Ownership.objects.filter(
        structure=structure, ended_at__isnull=True, character_id__in=current - wanted
    ).update(ended_at=now, ended_cycle=cycle, ended_why=f"Storyteller ruling: {note}"[:200])
    return Ownership.objects.bulk_create(
        Ownership(
            structure=structure,
            character_id=pk,
            how=OwnershipHow.STORYTELLER,
            started_at=now,
            started_cycle=cycle,
        )
        for pk in sorted(wanted - current)
    )


# --- Resolution (DT-10): each step idempotent, set-based, returns counts ----------------------


class _OwnerBook:
    """The owner lists of many structures, changed in memory in the order the changes were
    asked for, then written in a few bulk statements. Changes of one structure depend on each
    other (two partial owners forsaking in one downtime), so they are applied in order, but
    nothing is queried per change."""

    def __init__(self, *, cycle: Cycle, now: dt.datetime, structure_ids: Iterable[int]) -> None:
        self.cycle = cycle
        self.now = now
        ids = set(structure_ids)
        # Crypts follow their outer haven when it is destroyed (HAV-06).
        self.structures = {
            s.pk: s
            for s in Structure.objects.select_for_update().filter(
                Q(pk__in=ids) | Q(outer_id__in=ids)
            )
        }
        self.owners: dict[int, dict[int, int]] = defaultdict(dict)  # structure → char → row
        for row in Ownership.objects.filter(
            structure_id__in=self.structures, ended_at__isnull=True
        ).values("pk", "structure_id", "character_id"):
            self.owners[row["structure_id"]][row["character_id"]] = row["pk"]
        self.ended: dict[str, list[int]] = defaultdict(list)  # why → ownership ids
        self.started: list[Ownership] = []
        self.unwritten: dict[tuple[int, int], Ownership] = {}
        self.destroyed: dict[int, tuple[str, str]] = {}

    def standing(self, structure_id: int) -> bool:
        structure = self.structures.get(structure_id)
        return (
            structure is not None
            and structure.status != StructureStatus.DESTROYED
            and structure_id not in self.destroyed
        )

    def end(self, structure_id: int, character_id: int, why: str) -> None:
        row = self.owners[structure_id].pop(character_id, None)
        if row == 0:
            # Gained and lost in this same downtime (a transfer, then the haven destroyed):
            # the history keeps both.
            unwritten = self.unwritten.pop((structure_id, character_id))
            unwritten.ended_at, unwritten.ended_cycle = self.now, self.cycle
            unwritten.ended_why = why[:200]
        elif row is not None:
            self.ended[why[:200]].append(row)

    def start(self, structure_id: int, character_id: int, how: str) -> None:
        if character_id in self.owners[structure_id]:
            return
        self.owners[structure_id][character_id] = 0  # written by flush
        row = Ownership(
            structure_id=structure_id,
            character_id=character_id,
            how=how,
            started_at=self.now,
            started_cycle=self.cycle,
        )
        self.started.append(row)
        self.unwritten[(structure_id, character_id)] = row

    def destroy(self, structure_id: int, how: str, note: str) -> None:
        self.destroyed[structure_id] = (how, note)
        for character_id in list(self.owners[structure_id]):
            self.end(structure_id, character_id, "The haven was destroyed.")

    def forsake(self, structure_id: int, character_id: int, why: str) -> str:
        """HAV-06: one owner forsakes; returns the outcome sentence."""
        structure = self.structures[structure_id]
        outcome = rules.forsake_outcome(
            structure=structure.kind, owners=max(len(self.owners[structure_id]), 1)
        )
        if outcome == "destroy_with_crypts":
            self.destroy(structure_id, DestroyedBy.FORSAKEN, why)
            crypts = [s.pk for s in self.structures.values() if s.outer_id == structure_id]
            for crypt_id in crypts:
                if self.standing(crypt_id):
                    self.destroy(crypt_id, DestroyedBy.OUTER_FORSAKEN, why)
            return (
                f"Forsaken by its exclusive owner: destroyed, with {len(crypts)} "
                "crypt(s) inside (HAV-06)."
            )
        if outcome == "destroy":
            self.destroy(structure_id, DestroyedBy.FORSAKEN, why)
            return "Forsaken by its owner: the crypt is destroyed (HAV-06)."
        self.end(structure_id, character_id, why)
        if outcome == "remaining_owner_becomes_exclusive":
            return "A partial owner forsook it; the one owner left is now exclusive (HAV-06)."
        return "A partial owner forsook it; the other owners keep it (HAV-06)."

    def flush(self) -> None:
        for why, rows in self.ended.items():
            Ownership.objects.filter(pk__in=rows, ended_at__isnull=True).update(
                ended_at=self.now, ended_cycle=self.cycle, ended_why=why
            )
        Ownership.objects.bulk_create(self.started)
        by_cause: dict[tuple[str, str], list[int]] = defaultdict(list)
        for pk, cause in self.destroyed.items():
            by_cause[cause].append(pk)
        for (how, note), ids in by_cause.items():
            Structure.objects.filter(pk__in=ids).exclude(status=StructureStatus.DESTROYED).update(
                status=StructureStatus.DESTROYED,
                destroyed_at=self.now,
                destroyed_cycle=self.cycle,
                destroyed_by=how,
                destroyed_note=note,
            )
        if self.destroyed:
            _forget(list(self.destroyed), self.now)


def _dead(character: Character) -> bool:
    return character.status == CharacterStatus.DEAD or character.died_on is not None


@transaction.atomic
def ownership_changes_apply(*, cycle: Cycle, now: dt.datetime | None = None) -> dict[str, int]:
    """HAV-03/05/06: apply the pending transfers, forsakings and crypt destructions of this
    cycle or earlier, and the wills of owners who have died; owners who died without a will
    forsake. Each change is marked applied (with the outcome the STs read) or void."""
    now = _now(now)
    chronicle_id = cycle.chronicle_id
    # Structures before their changes, in the order every owner's service locks them (a will
    # set while this runs must wait, not deadlock).
    list(
        Structure.objects.select_for_update()
        .filter(chronicle_id=chronicle_id)
        .exclude(status=StructureStatus.DESTROYED)
        .values_list("pk", flat=True)
    )
    pending = list(
        OwnershipChange.objects.select_for_update(of=("self",))
        .filter(structure__chronicle_id=chronicle_id, status=ChangeStatus.PENDING)
        .filter(
            Q(
                kind__in=[ChangeKind.TRANSFER, ChangeKind.FORSAKE, ChangeKind.DESTROY_CRYPT],
                cycle__deadline_at__lte=cycle.deadline_at,
            )
            | Q(kind=ChangeKind.WILL)
        )
        .select_related("from_character", "to_character")
        .order_by("requested_at", "pk")
    )
    wills = [c for c in pending if c.kind == ChangeKind.WILL]
    pending = [c for c in pending if c.kind != ChangeKind.WILL]
    # Wills apply only once their owner has died, before that owner would forsake.
    due_wills = [c for c in wills if c.from_character and _dead(c.from_character)]
    dead_owner_rows = list(
        Ownership.objects.filter(structure__chronicle_id=chronicle_id, ended_at__isnull=True)
        .filter(Q(character__status=CharacterStatus.DEAD) | Q(character__died_on__isnull=False))
        .values_list("structure_id", "character_id")
    )
    crypt_votes = [c for c in pending if c.kind == ChangeKind.DESTROY_CRYPT]
    outers = dict(
        Structure.objects.filter(pk__in=[c.structure_id for c in crypt_votes]).values_list(
            "pk", "outer_id"
        )
    )
    votes: dict[tuple[int, int], set[int]] = defaultdict(set)  # (crypt, cycle) → voters
    for crypt_id, cycle_id, voter_id in CryptVote.objects.filter(
        crypt_id__in=list(outers)
    ).values_list("crypt_id", "cycle_id", "voter_id"):
        votes[(crypt_id, cycle_id)].add(voter_id)
    book = _OwnerBook(
        cycle=cycle,
        now=now,
        structure_ids={c.structure_id for c in [*pending, *due_wills]}
        | {s for s, _ in dead_owner_rows}
        | {o for o in outers.values() if o},
    )
    counts = {"applied": 0, "void": 0, "died_without_will": 0}
    done: list[OwnershipChange] = []

    def close(change: OwnershipChange, status: str, outcome: str) -> None:
        change.status = status
        change.outcome = outcome
        change.applied_at = now
        done.append(change)
        counts["applied" if status == ChangeStatus.APPLIED else "void"] += 1

    def hand_over(change: OwnershipChange, how: str, verb: str) -> None:
        sid, giver, heir = change.structure_id, change.from_character_id, change.to_character
        if heir is None:
            close(change, ChangeStatus.VOID, "No recipient was linked to a character (HAV-05).")
        elif _dead(heir) or heir.status != CharacterStatus.ACTIVE:
            close(change, ChangeStatus.VOID, f"{heir.name} can no longer receive it (HAV-05).")
        elif book.structures[sid].kind == StructureKind.CRYPT and (
            set(book.owners[sid]) - {giver, heir.pk}
        ):
            # A crypt goes whole, never shared (HAV-01, HAV-05).
            close(change, ChangeStatus.VOID, "A crypt has exactly one owner (HAV-01, HAV-05).")
        else:
            book.end(sid, giver or 0, f"{verb} to {heir.name} (HAV-05).")
            book.start(sid, heir.pk, how)
            close(change, ChangeStatus.APPLIED, f"{verb} to {heir.name} (HAV-05).")

    for change in [*due_wills, *pending]:
        sid = change.structure_id
        if not book.standing(sid):
            close(change, ChangeStatus.VOID, "The haven no longer stands (HAV-05).")
            continue
        if change.kind == ChangeKind.DESTROY_CRYPT:
            # HAV-03 holds when it takes effect: the outer haven's owners may have changed
            # since the vote (a transfer or a forsaking applied just before).
            outer_owners = set(book.owners[outers.get(sid) or 0])
            in_favour = len(votes[(sid, change.cycle_id)] & outer_owners)
            if not outer_owners or not rules.crypt_destruction_allowed(
                outer_owners=len(outer_owners), in_favour=in_favour
            ):
                close(
                    change,
                    ChangeStatus.VOID,
                    "The outer haven's owners changed: the majority no longer holds (HAV-03).",
                )
                continue
            book.destroy(sid, DestroyedBy.CRYPT_VOTE, CRYPT_DESTRUCTION)
            tally = f" {change.outcome}" if change.outcome else ""
            close(
                change,
                ChangeStatus.APPLIED,
                f"Destroyed by the outer haven's owners (HAV-03).{tally}",
            )
            continue
        if change.from_character_id not in book.owners[sid]:
            close(change, ChangeStatus.VOID, "The character no longer owns it (HAV-05).")
            continue
        if change.kind == ChangeKind.TRANSFER:
            hand_over(change, OwnershipHow.TRANSFER, "Transferred")
        elif change.kind == ChangeKind.WILL:
            hand_over(change, OwnershipHow.WILL, "Left by will")
        else:
            try:
                outcome = book.forsake(sid, change.from_character_id or 0, "Forsaken (HAV-06).")
            except ValueError as exc:  # bad data (a crypt with two owners): an ST decides
                close(change, ChangeStatus.VOID, _cited(str(exc), "HAV-01"))
                continue
            close(change, ChangeStatus.APPLIED, outcome)
    # HAV-06: an owner who died without a (working) will forsakes.
    for sid, character_id in dead_owner_rows:
        if book.standing(sid) and character_id in book.owners[sid]:
            try:
                outcome = book.forsake(sid, character_id, "Died without a will (HAV-06).")
            except ValueError:  # bad data (a crypt with two owners): left for an ST
                continue
            done.append(
                OwnershipChange(
                    structure_id=sid,
                    kind=ChangeKind.FORSAKE,
                    cycle=cycle,
                    from_character_id=character_id,
                    status=ChangeStatus.APPLIED,
                    note="The owner died without a will (HAV-06).",
                    requested_at=now,
                    applied_at=now,
                    outcome=outcome,
                )
            )
            counts["died_without_will"] += 1
    book.flush()
    _void_changes_of_destroyed(book, now)
    OwnershipChange.objects.bulk_update(
        [c for c in done if c.pk], ["status", "outcome", "applied_at"]
    )
    OwnershipChange.objects.bulk_create([c for c in done if not c.pk])
    counts["destroyed"] = len(book.destroyed)
    return counts


def _void_changes_of_destroyed(book: _OwnerBook, now: dt.datetime) -> None:
    if book.destroyed:
        OwnershipChange.objects.filter(
            structure_id__in=list(book.destroyed), status=ChangeStatus.PENDING
        ).update(
            status=ChangeStatus.VOID,
            outcome="The haven no longer stands (HAV-05).",
            applied_at=now,
        )


def _games_up_to(cycle: Cycle) -> list[Game]:
    game = cycle.game
    return list(
        Game.objects.filter(chronicle_id=cycle.chronicle_id)
        .filter(Q(date__lt=game.date) | Q(date=game.date, number__lte=game.number))
        .order_by("date", "number")
    )


@transaction.atomic
def forsaking_resolve(*, cycle: Cycle, now: dt.datetime | None = None) -> dict[str, int]:
    """HAV-06: owners whose player missed the last `forsake_after_absent_games` games of the
    chronicle in a row, up to this cycle's game and since they became owners, forsake what
    they own (applied at once)."""
    now = _now(now)
    games = _games_up_to(cycle)
    house = cycle.chronicle.house_rules
    owned = list(
        Ownership.objects.filter(
            structure__chronicle_id=cycle.chronicle_id,
            ended_at__isnull=True,
            character__player__isnull=False,
        )
        .exclude(structure__status=StructureStatus.DESTROYED)
        .values_list("structure_id", "character_id", "character__player_id", "started_at")
    )
    players = {player for _, _, player, _ in owned}
    attended: dict[int, set[int]] = defaultdict(set)
    for player_id, game_id in Attendance.objects.filter(
        player_id__in=players, game__in=games
    ).values_list("player_id", "game_id"):
        attended[player_id].add(game_id)
    tz = cycle.chronicle.tz
    forsake_settings = settings_for(rules.forsaken_by_absence, house)
    # Only the games since the ownership began count: games a player missed before they
    # owned the haven (or joined the chronicle) say nothing about forsaking it.
    leaving = [
        (sid, character_id)
        for sid, character_id, player, started_at in owned
        if rules.forsaken_by_absence(
            [g.pk in attended[player] for g in games if g.date >= started_at.astimezone(tz).date()],
            **forsake_settings,
        )
    ]
    book = _OwnerBook(cycle=cycle, now=now, structure_ids={s for s, _ in leaving})
    changes = []
    for sid, character_id in sorted(leaving):
        if not (book.standing(sid) and character_id in book.owners[sid]):
            continue
        try:
            outcome = book.forsake(sid, character_id, "Forsaken after absence (HAV-06).")
        except ValueError:  # bad data (a crypt with two owners): left for an ST
            continue
        changes.append(
            OwnershipChange(
                structure_id=sid,
                kind=ChangeKind.ABSENCE,
                cycle=cycle,
                from_character_id=character_id,
                status=ChangeStatus.APPLIED,
                note="The owner's player was absent from play too long (HAV-06).",
                requested_at=now,
                applied_at=now,
                outcome=outcome,
            )
        )
    book.flush()
    _void_changes_of_destroyed(book, now)
    OwnershipChange.objects.bulk_create(changes)
    return {"forsaken": len(changes), "destroyed": len(book.destroyed)}


@transaction.atomic
def theft_resolve(*, cycle: Cycle, now: dt.datetime | None = None) -> dict[str, int]:
    """HAV-07: thieves who controlled a structure for the last `theft_control_games` games up
    to this cycle's game own it; the previous owners lose it and every alarm and lock becomes
    inoperative. Once per structure and theft: a structure its thieves already own is skipped."""
    now = _now(now)
    games = _games_up_to(cycle)
    house = cycle.chronicle.house_rules
    controls = list(
        TheftControl.objects.filter(structure__chronicle_id=cycle.chronicle_id, game__in=games)
        .exclude(structure__status=StructureStatus.DESTROYED)
        .prefetch_related("thieves")
    )
    by_structure: dict[int, dict[int, TheftControl]] = defaultdict(dict)
    for control in controls:
        by_structure[control.structure_id][control.game_id] = control
    latest_game = games[-1].pk if games else None
    taken: dict[int, set[int]] = {}
    for sid, per_game in by_structure.items():
        if latest_game not in per_game:
            continue
        if rules.theft_completes(
            [g.pk in per_game for g in games], **settings_for(rules.theft_completes, house)
        ):
            taken[sid] = {t.pk for t in per_game[latest_game].thieves.all()}
    book = _OwnerBook(cycle=cycle, now=now, structure_ids=taken)
    already_void = set(
        OwnershipChange.objects.filter(
            structure_id__in=list(taken),
            kind=ChangeKind.THEFT,
            cycle=cycle,
            status=ChangeStatus.VOID,
        ).values_list("structure_id", flat=True)
    )
    changes = []
    stolen = []
    void = 0
    for sid, thieves in sorted(taken.items()):
        if not book.standing(sid) or set(book.owners[sid]) == thieves or not thieves:
            continue
        if book.structures[sid].kind == StructureKind.CRYPT and len(thieves) != 1:
            # HAV-01: a crypt is never divided. Recorded controls predating that check; once
            # per cycle, so a re-run adds nothing.
            if sid not in already_void:
                void += 1
                changes.append(
                    OwnershipChange(
                        structure_id=sid,
                        kind=ChangeKind.THEFT,
                        cycle=cycle,
                        status=ChangeStatus.VOID,
                        note="Controlled by thieves (HAV-07).",
                        requested_at=now,
                        applied_at=now,
                        outcome=(
                            f"{len(thieves)} thieves controlled this crypt, but a crypt has "
                            "exactly one owner (HAV-01): the owners are unchanged; a "
                            "storyteller rules."
                        ),
                    )
                )
            continue
        for owner in list(book.owners[sid]):
            if owner not in thieves:
                book.end(sid, owner, "Taken by theft (HAV-07).")
        for thief in sorted(thieves):
            book.start(sid, thief, OwnershipHow.THEFT)
        stolen.append(sid)
        changes.append(
            OwnershipChange(
                structure_id=sid,
                kind=ChangeKind.THEFT,
                cycle=cycle,
                status=ChangeStatus.APPLIED,
                note="Controlled by thieves (HAV-07).",
                requested_at=now,
                applied_at=now,
                outcome=(
                    f"Taken by {len(thieves)} thief/thieves; every alarm and lock is "
                    "inoperative (HAV-07)."
                ),
            )
        )
    book.flush()
    disabled = (
        Attribute.objects.filter(
            structure_id__in=stolen, kind__in=sorted(rules.ATTRIBUTES_DISABLED_BY_THEFT)
        )
        .exclude(state=AttributeState.INOPERATIVE)
        .update(state=AttributeState.INOPERATIVE)
    )
    # HAV-07: the thieves replace alarms and locks; what the old owners ordered of them (or a
    # lock's repair) is not built for the thieves.
    Project.objects.filter(
        Q(kind=ProjectKind.ATTRIBUTE, attribute_kind__in=sorted(rules.ATTRIBUTES_DISABLED_BY_THEFT))
        | Q(
            kind=ProjectKind.REPAIR, repair_of__kind__in=sorted(rules.ATTRIBUTES_DISABLED_BY_THEFT)
        ),
        structure_id__in=stolen,
        status__in=[ProjectStatus.OPEN, ProjectStatus.PAID],
    ).update(status=ProjectStatus.CANCELLED, held_reason=THEFT_CANCELS)
    OwnershipChange.objects.bulk_create(changes)
    return {"stolen": len(stolen), "attributes_disabled": disabled, "void": void}


THEFT_CANCELS = "Cancelled by the theft: the new owners replace alarms and locks (HAV-07)."
BREACHED_REFUSED = "The reinforcement is breached: repair it before adding to it (HAV-24)."
BREACHED_HELD = (
    "The reinforcement was breached before this was built: the storytellers give the influence "
    "back, and it can be ordered again once repaired (HAV-24)."
)
CRYPT_BUILD_HELD = (
    "A crypt inside a mobile haven cannot have this (HAV-23); it waits for the storytellers."
)


def _held_builds(builds: Sequence[Project], cycle: Cycle) -> dict[int, str]:
    """Paid builds that must not take effect as things now stand (project pk → the reason its
    structure's owners read); they wait for the storytellers (`project_release_held`).

    - HAV-24: reinforcement points bought before a breach would be breached with it.
    - HAV-23: two designs each valid when ordered can clash once both are built, since a
      crypt's owner never learns of the outer haven's orders (HAV-04). Existing and crypt-side
      builds win: a crypt build inside an outer haven already mobile, and a Mobility build
      over a crypt whose built-plus-new design a mobile haven forbids, are held. The rules
      decide what clashes."""
    settings = settings_for(rules.design_problems, cycle.chronicle.house_rules)

    def clashes(design: Mapping[str, int]) -> bool:
        alone = rules.design_problems(structure=StructureKind.CRYPT, attributes=design, **settings)
        inside = rules.design_problems(
            structure=StructureKind.CRYPT, attributes=design, inside_mobile_haven=True, **settings
        )
        return bool(set(inside) - set(alone))

    structures = Structure.objects.in_bulk({p.structure_id for p in builds})
    outers = {s.outer_id for s in structures.values() if s.outer_id}
    mobile_now = set(
        Attribute.objects.filter(
            structure_id__in=outers, kind="mobility", state=AttributeState.ACTIVE
        ).values_list("structure_id", flat=True)
    )
    held: dict[int, str] = {}
    # HAV-24: new points on a breached reinforcement would be breached with it.
    breached = set(
        Attribute.objects.filter(
            structure_id__in=list(structures),
            kind="reinforcement",
            state=AttributeState.BREACHED,
        ).values_list("structure_id", flat=True)
    )
    for p in builds:
        if p.attribute_kind == "reinforcement" and p.structure_id in breached:
            held[p.pk] = BREACHED_HELD
    for p in builds:
        outer_id = structures[p.structure_id].outer_id
        if outer_id in mobile_now and clashes({p.attribute_kind: p.quantity}):
            held[p.pk] = CRYPT_BUILD_HELD
    gaining = [p for p in builds if p.attribute_kind == "mobility" and p.pk not in held]
    if not gaining:
        return held
    crypts = dict(
        Structure.objects.filter(outer_id__in={p.structure_id for p in gaining})
        .exclude(status=StructureStatus.DESTROYED)
        .values_list("pk", "outer_id")
    )
    designs: dict[int, dict[str, int]] = {pk: defaultdict(int) for pk in crypts}
    for attribute in Attribute.objects.filter(structure_id__in=list(crypts)):
        designs[attribute.structure_id][attribute.kind] += attribute.quantity
    for p in builds:
        if p.structure_id in designs and p.pk not in held:
            designs[p.structure_id][p.attribute_kind] += p.quantity
    refusing = {crypts[pk] for pk, design in designs.items() if clashes(design)}
    for p in gaining:
        if p.structure_id in refusing:
            held[p.pk] = CRYPT_REFUSES_MOBILITY
    return held


@transaction.atomic
def construction_resolve(*, cycle: Cycle, now: dt.datetime | None = None) -> dict[str, int]:
    """HAV-02/HAV-10..24: every fully paid project takes effect in this downtime: attributes
    are built (one row per unit of a countable kind; points added to the structure's one
    resistance or reinforcement row), repairs make their attribute work again, and planned
    structures that have an owner stand. A build that would clash with a crypt or its outer
    haven (HAV-23) is held with its reason instead."""
    now = _now(now)
    # Paid in this downtime or an earlier one: a project paid in a later cycle (a late
    # resolution) takes effect in its own downtime.
    projects = list(
        Project.objects.select_for_update()
        .filter(
            structure__chronicle_id=cycle.chronicle_id,
            status=ProjectStatus.PAID,
            paid_cycle__deadline_at__lte=cycle.deadline_at,
            held_reason="",  # held once, it waits for the storytellers
        )
        .exclude(structure__status=StructureStatus.DESTROYED)
        .order_by("pk")
    )
    held = _held_builds([p for p in projects if p.kind == ProjectKind.ATTRIBUTE], cycle)
    for reason in set(held.values()):
        Project.objects.filter(pk__in=[pk for pk, why in held.items() if why == reason]).update(
            held_reason=reason
        )
    projects = [p for p in projects if p.pk not in held]
    builds = [p for p in projects if p.kind == ProjectKind.ATTRIBUTE]
    repairs = [p for p in projects if p.kind == ProjectKind.REPAIR]
    new_rows: list[Attribute] = []
    points_rows = {
        (a.structure_id, a.kind): a
        for a in Attribute.objects.filter(
            structure_id__in={p.structure_id for p in builds},
            kind__in=list(rules.POINTS_PER_UNIT),
        ).order_by("pk")
    }
    grown: dict[int, Attribute] = {}
    for project in builds:
        kind = project.attribute_kind
        if kind in COUNTABLE_KINDS:
            unit = rules.attribute_cost(kind, 1)
            new_rows.extend(
                Attribute(
                    structure_id=project.structure_id,
                    kind=kind,
                    quantity=1,
                    cost=unit,
                    trigger=project.trigger,
                    effect=project.effect,
                    built_cycle=cycle,
                    created_at=now,
                )
                for _ in range(project.quantity)
            )
            continue
        row = points_rows.get((project.structure_id, kind))
        if row is None:
            row = Attribute(
                structure_id=project.structure_id,
                kind=kind,
                quantity=0,
                cost=0,
                built_cycle=cycle,
                created_at=now,
            )
            points_rows[(project.structure_id, kind)] = row
            new_rows.append(row)
        row.quantity += project.quantity
        row.cost += project.cost
        if row.pk:
            grown[row.pk] = row
    Attribute.objects.bulk_create(new_rows)
    Attribute.objects.bulk_update(list(grown.values()), ["quantity", "cost"])
    repaired = Attribute.objects.filter(pk__in=[p.repair_of_id for p in repairs]).update(
        state=AttributeState.ACTIVE
    )
    done = Project.objects.filter(
        pk__in=[p.pk for p in projects], status=ProjectStatus.PAID
    ).update(status=ProjectStatus.DONE, done_at=now, done_cycle=cycle, held_reason="")
    owned = Ownership.objects.filter(structure=OuterRef("pk"), ended_at__isnull=True)
    standing = Structure.objects.filter(
        Exists(owned), chronicle_id=cycle.chronicle_id, status=StructureStatus.PLANNED
    ).update(status=StructureStatus.STANDING, built_cycle=cycle)
    return {
        "projects_done": done,
        "attributes_built": len(new_rows) + len(grown),
        "repaired": repaired,
        "structures_built": standing,
        "held": len(held),
    }

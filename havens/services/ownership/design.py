"""Havens' design, upgrades, contributions and repairs (HAV-01, HAV-10..24)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import F
from django.utils import translation
from django.utils.translation import gettext as _

from characters.models import Approval, Character
from characters.models import Status as CharacterStatus
from characters.services.influence import influence_refund, influence_spend
from chronicle.models import Cycle

from ... import rules, selectors, words
from ...models import (
    Attribute,
    AttributeState,
    Contribution,
    Ownership,
    OwnershipHow,
    Project,
    ProjectKind,
    ProjectStatus,
    Structure,
    StructureKind,
    StructureStatus,
)
from .common import (
    BREACHED_REFUSED,
    CRYPT_REFUSES_MOBILITY,
    NAME_MAX,
    UNKNOWN_OUTER,
    VERSION_CONFLICT,
    AttributeRequest,
    DesignQuote,
    _acts_for,
    _bounded_key,
    _bump_version,
    _crypts_refuse_mobility,
    _is_staff,
    _lock_structure,
    _may_build,
    _now,
    _owner_ids,
    _projects_for,
    _require_current_downtime,
    _require_staff,
    _require_standing,
    design_quote,
)

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
        quote.add("character", _("Only an active, approved character may design a haven (HAV-02)."))
    if not name.strip():
        quote.add("name", _("Give the haven a name (HAV-01)."))
    if not location.strip():
        quote.add("location", _("Say where it is: a search that finds it reveals this (HAV-25b)."))
    outer_refused = False
    if outer is not None and (
        outer.chronicle_id != chronicle.pk or not crypt_outer_allowed(outer=outer, by=by)
    ):
        quote.add("outer", _(UNKNOWN_OUTER))
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
        raise ValidationError({"version": [_(VERSION_CONFLICT)]})
    if not _may_build(structure, character, _owner_ids(structure)):
        raise ValidationError(
            {"character": [_("Only a structure's owners may change it (HAV-02).")]}
        )
    if not attributes:
        raise ValidationError({"attributes": [_("Add at least one attribute (HAV-10..22).")]})
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
        quote.add("attributes", _(CRYPT_REFUSES_MOBILITY))
    if (
        any(r.kind == "reinforcement" for r in attributes)
        and structure.attributes.filter(
            kind="reinforcement", state=AttributeState.BREACHED
        ).exists()
    ):
        quote.add("attributes", _(BREACHED_REFUSED))
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
            {"character": [_("Only a structure's owners may pay into its projects (HAV-02).")]}
        )
    if project.status != ProjectStatus.OPEN:
        raise ValidationError(
            _("This project is no longer collecting influence: it is %(status)s (HAV-02).")
            % {"status": project.get_status_display().lower()}
        )
    if not isinstance(points, int) or points < 1:
        raise ValidationError({"points": [_("Give at least 1 point of influence (INF-03).")]})
    remaining = project.cost - project.paid
    if points > remaining:
        raise ValidationError(
            {
                "points": [
                    _("This needs only %(remaining)s more influence (HAV-02, INF-03).")
                    % {"remaining": remaining}
                ]
            }
        )
    if cycle is None:
        cycle = _require_current_downtime(structure.chronicle_id, "build")
    spend, _created = influence_spend(
        character=character,
        cycle=cycle,
        influence=influence,
        points=points,
        reason=(words.SPEND_REPAIR if project.kind == ProjectKind.REPAIR else words.SPEND_ATTRIBUTE)
        % {"haven": structure.name},
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
            {"character": [_("Only a structure's owners may repair it (HAV-02, HAV-24).")]}
        )
    attribute = Attribute.objects.get(pk=attribute.pk)
    if not rules.needs_repair(attribute.kind, attribute.state):
        if not rules.is_destructible(attribute.kind):
            raise ValidationError(
                _("A %(attribute)s is indestructible: it never needs repair (HAV-24).")
                % {"attribute": attribute.get_kind_display().lower()}
            )
        raise ValidationError(
            _(
                "This %(attribute)s is %(state)s; only a destroyed lock or breached "
                "reinforcement is repaired (HAV-24)."
            )
            % {
                "attribute": attribute.get_kind_display().lower(),
                "state": attribute.get_state_display().lower(),
            }
        )
    under_way = [ProjectStatus.OPEN, ProjectStatus.PAID]
    if Project.objects.filter(repair_of=attribute, status__in=under_way).exists():
        raise ValidationError(_("A repair of this attribute is already under way (HAV-24)."))
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
            {"character": [_("Only a structure's owners may change its projects (HAV-02).")]}
        )
    if project.status != ProjectStatus.OPEN:
        raise ValidationError(
            _("Only a project still collecting influence can be cancelled (HAV-02).")
        )
    if project.paid or project.contributions.exists():
        raise ValidationError(
            _(
                "Influence has already been paid into this project; it can no longer be "
                "cancelled (HAV-02)."
            )
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
        raise ValidationError(
            _("Only a paid project that construction holds is released (HAV-23).")
        )
    with translation.override("en"):  # the ledger keeps its reasons in English
        reason = words.REFUND_HELD % {"project": project}
    for contribution in project.contributions.select_related("spend"):
        influence_refund(
            spend=contribution.spend,
            reason=reason,
            actor=by,
            now=now,
        )
    project.status = ProjectStatus.CANCELLED
    project.save(update_fields=["status"])
    _bump_version(structure)
    return project

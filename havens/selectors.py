"""Reads of havens shared by services, pages and the API. Callers pass structures they already
got through `havens.access`; nothing here checks who is asking.

Every function takes a batch and runs a fixed number of queries, so a list of 200 structures
costs what a list of 1 does.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from characters.models import Character
from chronicle.rules import HouseRules

from . import rules
from .models import Attribute, Ownership, Project, ProjectKind, ProjectStatus, Structure


def _ids(structures: Iterable[Structure | int]) -> list[int]:
    return [s if isinstance(s, int) else s.pk for s in structures]


def current_owners(structures: Iterable[Structure | int]) -> dict[int, list[Character]]:
    """HAV-02: each structure's current owners (one query). One owner is exclusive, two or
    more are partial (`ownership_label`)."""
    ids = _ids(structures)
    owners: dict[int, list[Character]] = {pk: [] for pk in ids}
    rows = (
        Ownership.objects.filter(structure_id__in=ids, ended_at__isnull=True)
        .select_related("character")
        .order_by("started_at", "pk")
    )
    for row in rows:
        owners[row.structure_id].append(row.character)
    return owners


def ownership_label(owner_count: int) -> str:
    """HAV-02: "exclusive" with one owner, "partial" with two or more, "none" before the first
    contribution."""
    if owner_count == 0:
        return "none"
    return "exclusive" if owner_count == 1 else "partial"


def built_attributes(structures: Iterable[Structure | int]) -> dict[int, list[Attribute]]:
    """Each structure's built attributes, in any state (one query)."""
    ids = _ids(structures)
    attributes: dict[int, list[Attribute]] = {pk: [] for pk in ids}
    for attribute in Attribute.objects.filter(structure_id__in=ids).order_by("kind", "pk"):
        attributes[attribute.structure_id].append(attribute)
    return attributes


def designs(structures: Iterable[Structure | int]) -> dict[int, dict[str, int]]:
    """HAV-23: each structure's design as the rules see it: kind → quantity of everything
    built (in any state: a destroyed lock is still part of the design until repaired) plus
    every attribute project not cancelled nor held (two queries)."""
    ids = _ids(structures)
    totals: dict[int, dict[str, int]] = {pk: defaultdict(int) for pk in ids}
    for attribute in Attribute.objects.filter(structure_id__in=ids).only(
        "structure_id", "kind", "quantity"
    ):
        totals[attribute.structure_id][attribute.kind] += attribute.quantity
    # A project construction holds will not be built as things stand (HAV-23/24): it does not
    # shape the design until the storytellers settle it.
    projects = Project.objects.filter(
        structure_id__in=ids,
        kind=ProjectKind.ATTRIBUTE,
        status__in=[ProjectStatus.OPEN, ProjectStatus.PAID],
        held_reason="",
    ).only("structure_id", "attribute_kind", "quantity")
    for project in projects:
        totals[project.structure_id][project.attribute_kind] += project.quantity
    return {pk: dict(design) for pk, design in totals.items()}


def _active_kinds(structure_ids: list[int]) -> dict[int, set[str]]:
    kinds: dict[int, set[str]] = {pk: set() for pk in structure_ids}
    rows = Attribute.objects.filter(
        structure_id__in=structure_ids, state="active", kind__in=["hiding", "mobility"]
    ).values_list("structure_id", "kind")
    for structure_id, kind in rows:
        kinds[structure_id].add(kind)
    return kinds


def mobile_structures(
    structures: Iterable[Structure], *, house_rules: HouseRules
) -> dict[int, bool]:
    """HAV-19 / HAV-23: whether each structure is mobile: it has Mobility, or it is a crypt
    inside a mobile outer haven (setting `crypt_in_mobile_haven_is_mobile`)."""
    structures = list(structures)
    ids = {s.pk for s in structures} | {s.outer_id for s in structures if s.outer_id}
    kinds = _active_kinds(list(ids))
    mobile = {}
    for s in structures:
        own = "mobility" in kinds[s.pk]
        inherited = bool(s.outer_id) and "mobility" in kinds[s.outer_id or 0]
        mobile[s.pk] = own or (inherited and house_rules.crypt_in_mobile_haven_is_mobile)
    return mobile


def hiding_points_for(
    structures: Iterable[Structure], *, house_rules: HouseRules
) -> dict[int, int | None]:
    """HAV-25: each structure's hiding points now: (mental + all 5 influences) × 2 of its
    strongest owner, doubled by Hiding. A crypt is found through its outer haven, with the
    outer haven's owners and Hiding (INTERPRETATION). None for a structure without owners.
    Three queries whatever the number of structures."""
    structures = list(structures)
    hiders = {s.pk: s.outer_id or s.pk for s in structures}
    hider_ids = sorted(set(hiders.values()))
    owners = current_owners(hider_ids)
    kinds = _active_kinds(hider_ids)
    crypt_mobile = house_rules.crypt_in_mobile_haven_is_mobile
    points: dict[int, int | None] = {}
    for s in structures:
        hider = hiders[s.pk]
        standing = [
            rules.OwnerStanding(
                owner=str(c.pk), mental_traits=c.mental, influences=c.influence_total
            )
            for c in owners[hider]
        ]
        if not standing:
            points[s.pk] = None
            continue
        mobile = "mobility" in kinds[hider] and (hider == s.pk or crypt_mobile)
        points[s.pk] = rules.haven_hiding_points(
            standing,
            hidden="hiding" in kinds[hider] and not mobile,
            mobile=mobile,
            mobile_havens_hiding_doubled=house_rules.mobile_havens_hiding_doubled,
        )
    return points

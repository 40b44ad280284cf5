"""Reads of the influence desk as a work queue (issues 5 and 12), for the storytellers only: the
views check the role first. Each read is one query whatever the number of items, so the desk
costs the same with ten items or a thousand.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from django.db import connection
from django.db.models import Case, Count, IntegerField, Q, QuerySet, Value, When
from django.utils.translation import gettext

from characters.models import INFLUENCE_CHOICES, Approval, Character, Status
from chronicle.models import Cycle
from havens.models import Structure

from .models import ActionKind, DeskItem, DeskStatus, ItemKind

SUGGESTIONS = 10
# A picked suggestion reads "Lucien #12": the id after the name tells two Luciens apart.
PICKED = re.compile(r"#\s*(\d+)\s*$")


def character_label(character: Character) -> str:
    """What the character type-ahead puts in its field once a character is picked."""
    return f"{character.name} #{character.pk}"


def character_matches(
    *, chronicle_id: int, text: str, active_only: bool = False, limit: int = SUGGESTIONS
) -> list[Character]:
    """At most `limit` characters of the chronicle whose name contains `text` (a picked
    "Name #id" searches by its name), names starting with it first. One query."""
    words = PICKED.sub("", text).strip()
    if not words:
        return []
    found = Character.objects.filter(chronicle_id=chronicle_id, name__icontains=words)
    if active_only:
        found = found.filter(status=Status.ACTIVE, approval=Approval.APPROVED)
    ranked = found.annotate(
        rank=Case(
            When(name__istartswith=words, then=Value(0)),
            default=Value(1),
            output_field=IntegerField(),
        )
    )
    return list(ranked.select_related("player").order_by("rank", "name", "pk")[:limit])


def status_counts(items: QuerySet[DeskItem]) -> list[tuple[str, str, int]]:
    """(status, label, how many) for every status, zeros included: one GROUP BY."""
    counted = dict(
        items.order_by().values_list("status").annotate(n=Count("pk")).values_list("status", "n")
    )
    return [(value, str(label), counted.get(value, 0)) for value, label in DeskStatus.choices]


def neighbours(items: QuerySet[DeskItem], item: DeskItem) -> tuple[int | None, int | None]:
    """The ids of the items before and after `item` in the desk's order (created, then id)
    among `items` (the filtered list), whether or not `item` itself still matches the
    filters: after "Save and next" moved it out of them, the next one is still the next."""
    after = Q(created_at__gt=item.created_at) | Q(created_at=item.created_at, pk__gt=item.pk)
    before = Q(created_at__lt=item.created_at) | Q(created_at=item.created_at, pk__lt=item.pk)
    previous = (
        items.filter(before).order_by("-created_at", "-pk").values_list("pk", flat=True).first()
    )
    following = (
        items.filter(after).order_by("created_at", "pk").values_list("pk", flat=True).first()
    )
    return previous, following


# --- Conflicts -------------------------------------------------------------------------------


@dataclass
class Conflict:
    """Items of one cycle touching the same structure, character, or influence of a
    character; `label` names it for the storytellers only."""

    kind: str  # "structure", "character" or "influence"
    label: str
    item_ids: list[int] = field(default_factory=list)


# Each live item gives a key per thing it touches: the structure it targets; the character it
# targets (an attack on an influence keys that influence instead); and, for an influence use,
# that influence of its own character, so the attacks on it meet it. The database groups the
# keys (GROUP BY ... HAVING two items or more; an influence group needs an attack in it: a
# character's own uses alone do not clash) and returns one row per conflict with its items'
# ids aggregated, so neither the items nor the keys come back to Python. The groups are not
# joined back to the keys: with 1,000 items that join cost more than the grouping itself.
_CONFLICTS_SQL = """
WITH live AS (
    SELECT id, kind, action, influence, character_id, target_character_id, target_structure_id
    FROM {item} WHERE cycle_id = %s AND withdrawn_at IS NULL
), keyed AS (
    SELECT 'structure' AS topic, target_structure_id AS ref, '' AS inf, 0 AS attack, id
    FROM live WHERE target_structure_id IS NOT NULL
    UNION ALL
    SELECT 'character', target_character_id, '', 0, id FROM live
    WHERE target_character_id IS NOT NULL AND NOT (action = %s AND influence <> '')
    UNION ALL
    SELECT 'influence', target_character_id, influence, 1, id FROM live
    WHERE target_character_id IS NOT NULL AND action = %s AND influence <> ''
    UNION ALL
    SELECT 'influence', character_id, influence, 0, id FROM live
    WHERE kind = %s AND influence <> ''
), clashing AS (
    SELECT topic, ref, inf, {ids} AS ids FROM keyed GROUP BY topic, ref, inf
    HAVING COUNT(DISTINCT id) > 1 AND (topic <> 'influence' OR MAX(attack) = 1)
)
SELECT g.topic, g.ref, g.inf, g.ids, c.name, s.name
FROM clashing g
LEFT JOIN {character} c ON g.topic <> 'structure' AND c.id = g.ref
LEFT JOIN {structure} s ON g.topic = 'structure' AND s.id = g.ref
"""
# The group's item ids as "12,40,41": both databases aggregate text (SQLite has no arrays).
_IDS_SQL = {
    "postgresql": "STRING_AGG(DISTINCT CAST(id AS TEXT), ',')",
    "sqlite": "GROUP_CONCAT(DISTINCT id)",
}


def _conflict_label(topic: str, influence: str, character: str, structure: str) -> str:
    if topic == "structure":
        return gettext("Structure %(name)s") % {"name": structure}
    if topic == "influence":
        return gettext("%(name)s's %(influence)s influence") % {
            "name": character,
            "influence": str(dict(INFLUENCE_CHOICES).get(influence, influence.title())),
        }
    return gettext("Character %(name)s") % {"name": character}


def desk_conflicts(*, cycle: Cycle | int) -> list[Conflict]:
    """Groups (two items or more) of the cycle's live items that touch the same structure,
    the same target character, or the same influence of one character: an attack on a
    character's Business meets the other attacks on it and that character's own Business
    actions. One aggregate query: a row per conflict, whatever the number of items."""
    cycle_id = cycle if isinstance(cycle, int) else cycle.pk
    sql = _CONFLICTS_SQL.format(
        item=connection.ops.quote_name(DeskItem._meta.db_table),
        character=connection.ops.quote_name(Character._meta.db_table),
        structure=connection.ops.quote_name(Structure._meta.db_table),
        ids=_IDS_SQL.get(connection.vendor, _IDS_SQL["postgresql"]),
    )
    params: list[int | str] = [
        cycle_id,
        ActionKind.ATTACK_INFLUENCE.value,
        ActionKind.ATTACK_INFLUENCE.value,
        ItemKind.INFLUENCE.value,
    ]
    groups: list[Conflict] = []
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        for topic, _ref, influence, ids, character, structure in cursor.fetchall():
            label = _conflict_label(topic, influence, character or "", structure or "")
            item_ids = sorted(int(pk) for pk in str(ids).split(","))
            groups.append(Conflict(kind=topic, label=label, item_ids=item_ids))
    return sorted(groups, key=lambda c: (c.kind, c.label, c.item_ids))


def conflicts_by_item(conflicts: list[Conflict]) -> dict[int, list[str]]:
    """Each conflicting item's id with the labels of its conflicts (for the list's rows)."""
    labels: dict[int, list[str]] = {}
    for conflict in conflicts:
        for pk in conflict.item_ids:
            labels.setdefault(pk, []).append(conflict.label)
    return labels

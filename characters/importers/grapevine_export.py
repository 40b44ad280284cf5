"""A chronicle's characters and XP histories written back as Grapevine 3 XML.

Importing the result into an empty chronicle gives the same characters and ledgers (tested as a
round trip): the sheet's columns are written as the trait lists the importer reads, each ledger
entry as an XP entry of the type that moves the balance the same way, and what the import kept
as text (the lists Chronicle has no place for, unmapped influences and disciplines, XP entries
that moved no balance) comes back from `Character.imported_data` as the file had it.

Five queries, whatever the number of characters: characters with their players, discipline
levels, rituals, disadvantages, ledger entries.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from decimal import Decimal
from typing import Any
from xml.etree.ElementTree import Element, SubElement, indent, tostring

from chronicle.models import Chronicle

from .. import rules
from ..models import Character, Creature, Disadvantage, DisciplineLevel, Ritual, XpEntry
from . import grapevine

ELEMENTS: dict[str, str] = {
    Creature.KINDRED: "vampire",
    Creature.GHOUL: "ghoul",
    Creature.ANIMAL_GHOUL: "ghoul",
    Creature.KINE: "mortal",
}
STATUS_NAMES = {
    "active": "Active",
    "retired": "Retired",
    "dead": "Dead",
    "torpor": "Torpor",
    "staked": "Staked",
    "npc": "Active",
}
SECT_NAMES = {
    "camarilla": "Camarilla",
    "sabbat": "Sabbat",
    "independent": "Independent",
    "anarch": "Anarch",
}
CATEGORY_NOTES = {1: ("basic", "3"), 2: ("int.", "6"), 3: ("adv.", "9")}
# Lists the export writes from the sheet; the file's other lists come back as they were.
OWN_LISTS = grapevine.PLACED_LISTS - {"health levels"}


def _trait(parent: Element, name: str, val: str = "", note: str = "") -> None:
    attrs = {"name": name}
    if val and val != "1":
        attrs["val"] = val
    if note:
        attrs["note"] = note
    SubElement(parent, "trait", attrs)


def _traitlist(parent: Element, name: str, **attrs: str) -> Element:
    return SubElement(parent, "traitlist", {"name": name, "abc": "yes", "display": "1", **attrs})


def _number(value: Decimal) -> str:
    return f"{value.normalize():f}" if value != value.to_integral() else str(int(value))


def _stored_lists(character: Character) -> dict[str, dict[str, Any]]:
    return {
        str(tl.get("name", "")).lower(): tl
        for tl in (character.imported_data or {}).get("lists", [])
    }


def _area(parent: Element, name: str, value: int, stored: dict[str, Any] | None) -> None:
    """A trait area: the file's own trait names while they still add up, else its number."""
    element = _traitlist(parent, name)
    traits = [grapevine.GvTrait(**t) for t in (stored or {}).get("traits", [])]
    if traits and sum(t.count for t in traits) == value:
        for t in traits:
            _trait(element, t.name, t.val, t.note)
    elif value:
        _trait(element, name, str(value))


def _player_name(character: Character) -> str:
    if character.player is None:
        return ""
    return character.player.get_full_name().strip() or character.player.username


def _experience(parent: Element, character: Character, entries: list[XpEntry], tz: Any) -> None:
    data = character.imported_data or {}
    rows: list[tuple[dt.datetime, dict[str, str], Decimal, bool]] = []
    for entry in entries:
        amount = Decimal(entry.amount)
        if amount > 0:
            kind = grapevine.EARN if entry.kind == "award" else grapevine.UNSPEND
        elif entry.kind in ("penalty", "purchase"):
            kind = grapevine.LOSE if entry.kind == "penalty" else grapevine.SPEND
        else:
            # A correction downwards: Grapevine's "set unspent to", which a later import reads
            # back as a correction (its change is the balance after it, set below).
            kind = grapevine.SET_UNSPENT
        rows.append(
            (
                entry.created_at,
                {
                    "date": grapevine.format_date(entry.created_at.astimezone(tz)),
                    "change": _number(abs(amount)),
                    "type": str(kind),
                    "reason": entry.reason,
                },
                amount,
                kind == grapevine.EARN or kind == grapevine.LOSE,
            )
        )
    for kept in data.get("kept_entries", []):
        kind = int(kept.get("type", grapevine.COMMENT))
        reason = str(kept.get("reason", ""))
        if kind in (grapevine.SET_EARNED, grapevine.SET_UNSPENT):
            # It moved no balance where it stood; written as a comment so that it cannot move
            # one where a later import finds it.
            reason = f"{grapevine.default_reason(kind)} {kept.get('change', '')}: {reason}"
            kind = grapevine.COMMENT
        when = dt.datetime.fromisoformat(str(kept["when"]))
        rows.append(
            (
                when,
                {
                    "date": str(kept.get("date", "")),
                    "change": str(kept.get("change", "0")),
                    "type": str(kind),
                    "reason": reason,
                },
                Decimal(0),
                False,
            )
        )
    rows.sort(key=lambda row: row[0])
    ledger_player = character.player_id is not None
    unspent = sum((row[2] for row in rows), Decimal(0))
    earned = sum((row[2] for row in rows if row[3]), Decimal(0))
    stored = data.get("experience", {})
    attrs = {
        "unspent": _number(unspent) if ledger_player else str(stored.get("unspent", "0")),
        "earned": _number(earned) if ledger_player else str(stored.get("earned", "0")),
    }
    experience = SubElement(parent, "experience", attrs)
    running_unspent = running_earned = Decimal(0)
    for _when, entry_attrs, amount, counts_earned in rows:
        running_unspent += amount
        if counts_earned:
            running_earned += amount
        if entry_attrs["type"] == str(grapevine.SET_UNSPENT) and amount:
            entry_attrs = {**entry_attrs, "change": _number(running_unspent)}
        SubElement(
            experience,
            "entry",
            {
                **entry_attrs,
                "earned": _number(running_earned),
                "unspent": _number(running_unspent),
            },
        )


def export_chronicle(chronicle: Chronicle) -> str:
    """Every character of the chronicle as a Grapevine 3 exchange file."""
    characters = list(
        Character.objects.filter(chronicle=chronicle).select_related("player").order_by("pk")
    )
    ids = [c.pk for c in characters]
    levels: dict[int, list[int]] = defaultdict(list)
    tops: dict[int, dict[str, int]] = defaultdict(dict)
    for character_id, discipline, level in DisciplineLevel.objects.filter(
        character_id__in=ids
    ).values_list("character_id", "discipline", "level"):
        levels[character_id].append(level)
        tops[character_id][discipline] = tops[character_id].get(discipline, 0) + 1
    rituals: dict[int, list[str]] = defaultdict(list)
    for character_id, name in (
        Ritual.objects.filter(character_id__in=ids)
        .order_by("pk")
        .values_list("character_id", "name")
    ):
        rituals[character_id].append(name)
    disadvantages: dict[int, list[tuple[str, bool, bool]]] = defaultdict(list)
    for character_id, name, major, derangement in (
        Disadvantage.objects.filter(character_id__in=ids)
        .order_by("pk")
        .values_list("character_id", "name", "major", "derangement")
    ):
        disadvantages[character_id].append((name, major, derangement))
    entries: dict[int, list[XpEntry]] = defaultdict(list)
    for entry in XpEntry.objects.filter(chronicle=chronicle, character_id__in=ids).order_by(
        "created_at", "pk"
    ):
        entries[entry.character_id or 0].append(entry)

    root = Element("grapevine", {"version": "3", "chronicle": chronicle.name})
    tz = chronicle.tz
    for character in characters:
        data = character.imported_data or {}
        stored_attrs = {str(k): str(v) for k, v in (data.get("attrs") or {}).items()}
        attrs: dict[str, str] = {
            k: v
            for k, v in stored_attrs.items()
            if k not in grapevine.PLACED_ATTRS or k in ("startdate", "lastmodified")
        }
        attrs["name"] = character.name
        if character.clan:
            attrs["clan"] = rules.CLANS[character.clan].title
        elif stored_attrs.get("clan") and grapevine.map_value("clan", stored_attrs["clan"]) is None:
            attrs["clan"] = stored_attrs["clan"]
        if character.sect:
            attrs["sect"] = SECT_NAMES.get(character.sect, character.sect.title())
        elif stored_attrs.get("sect") and grapevine.map_value("sect", stored_attrs["sect"]) is None:
            attrs["sect"] = stored_attrs["sect"]
        if character.creature == Creature.KINDRED:
            attrs["generation"] = str(character.generation)
        attrs["willpower"] = str(character.willpower)
        player = _player_name(character)
        if player:
            attrs["player"] = player
        attrs["status"] = STATUS_NAMES.get(character.status, "Active")
        attrs["npc"] = "yes" if character.status == "npc" else "no"
        if character.grapevine_key.startswith("id:"):
            attrs["id"] = character.grapevine_key.removeprefix("id:")
        element = SubElement(root, ELEMENTS.get(str(character.creature), "mortal"), attrs)
        _experience(element, character, entries.get(character.pk, []), tz)

        stored = _stored_lists(character)
        for area in ("Physical", "Social", "Mental"):
            _area(element, area, getattr(character, area.lower()), stored.get(area.lower()))
        originals = {
            grapevine.normalize(t["name"]): t["name"]
            for t in stored.get("abilities", {}).get("traits", [])
        }
        abilities = _traitlist(element, "Abilities")
        for key, value in sorted((character.abilities or {}).items()):
            if value:
                _trait(abilities, originals.get(key, key.title()), str(value))
        influences = _traitlist(element, "Influences")
        for influence in rules.INFLUENCE_TYPES:
            value = getattr(character, influence)
            if value:
                _trait(influences, influence.title(), str(value))
        for kept in data.get("kept_influences", []):
            _trait(influences, kept["name"], kept.get("val", ""), kept.get("note", ""))
        disciplines = _traitlist(element, "Disciplines", abc="no", atomic="yes", display="5")
        for discipline, count in sorted(tops.get(character.pk, {}).items()):
            for code in rules.LEVELS[: min(count, len(rules.LEVELS))]:
                note, val = CATEGORY_NOTES[rules.level_category(code)]
                title = rules.DISCIPLINE_TITLES[discipline]
                _trait(disciplines, f"{title}: {rules.level_name(discipline, code)}", val, note)
        for kept in data.get("kept_disciplines", []):
            _trait(disciplines, kept["name"], kept.get("val", ""), kept.get("note", ""))
        ritual_list = _traitlist(element, "Rituals", abc="no", atomic="yes", display="5")
        for name in rituals.get(character.pk, []):
            _trait(ritual_list, name)
        derangements = _traitlist(element, "Derangements", atomic="yes", negative="yes")
        flaws = _traitlist(element, "Flaws", atomic="yes", negative="yes")
        for name, major, derangement in disadvantages.get(character.pk, []):
            if derangement:
                _trait(derangements, name)
            else:
                _trait(flaws, name, "3" if major else "1")
        for key, stored_list in stored.items():
            if key in OWN_LISTS:
                continue
            kept_list = SubElement(
                element, "traitlist", {"name": stored_list["name"], **stored_list.get("attrs", {})}
            )
            for t in stored_list.get("traits", []):
                _trait(kept_list, t["name"], t.get("val", ""), t.get("note", ""))
        if character.background_story:
            SubElement(element, "biography").text = character.background_story
        if data.get("notes"):
            SubElement(element, "notes").text = str(data["notes"])
    indent(root, space="  ")
    return '<?xml version="1.0"?>\n' + tostring(root, encoding="unicode") + "\n"

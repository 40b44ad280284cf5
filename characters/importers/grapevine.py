"""Grapevine 3 exchange files: parse, map onto the house rules, and plan the import.

Nothing here touches the database. `read_file` parses one file with defusedxml (no entity
expansion, no external entities) and refuses a damaged or binary one with its line and column;
`plan_file` turns each character into a `CharacterPlan` (the sheet's columns, discipline
levels, rituals, disadvantages, ledger entries, the text kept on the sheet, warnings and the
values that do not map), given the storytellers' choices for those values. The service
`characters.services.imports` matches plans with the chronicle and writes them.

The real world's names meet the house rules' through one table, `MAPPINGS`; what it lacks is
listed as unmapped, and `DEFAULTS` says what happens to it when nobody chooses.

Grapevine's XP entry types (its own `Experience` model): 0 earn, 1 lose, 2 set earned to,
3 spend, 4 unspend, 5 set unspent to, 6 comment. Only the ones that move the unspent balance
become ledger entries; the others are kept as text (the ledger refuses an entry of 0, and
"set earned to" changes no balance).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any
from xml.etree.ElementTree import Element, ParseError, TreeBuilder
from zoneinfo import ZoneInfo

from defusedxml.common import DefusedXmlException
from defusedxml.ElementTree import DefusedXMLParser
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from .. import rules
from .grapevine_values import (  # noqa: F401  (re-exported: the importer's one namespace)
    CHARACTER_ELEMENTS,
    COMMENT,
    DEFAULTS,
    EARN,
    HALF,
    LOSE,
    MAPPINGS,
    MAX_ENTRY,
    NPC_MARK,
    SET_EARNED,
    SET_UNSPENT,
    SPEND,
    TARGETS,
    UNSPEND,
    XP_KINDS,
    ZERO_DAY,
    ParsedDate,
    choice_key,
    decimal_or_none,
    default_reason,
    format_date,
    guess_day_first,
    map_value,
    normalize,
    npc_name,
    parse_date,
    xp_effect,
)

# --- Refusals -------------------------------------------------------------------------------------


class GrapevineRefused(Exception):
    """A file that cannot be imported at all: damaged, binary, or not Grapevine's. Nothing of an
    import that meets one is written."""

    def __init__(
        self, message: str, *, file: str, line: int | None = None, column: int | None = None
    ):
        self.message = message
        self.file = file
        self.line = line
        self.column = column
        super().__init__(str(self))

    def __str__(self) -> str:
        if self.line is not None:
            return _("%(file)s, line %(line)s, column %(column)s: %(message)s") % {
                "file": self.file,
                "line": self.line,
                "column": self.column or 1,
                "message": self.message,
            }
        return f"{self.file}: {self.message}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "line": self.line,
            "column": self.column,
            "message": self.message,
        }


BINARY_MESSAGE = gettext_noop(
    "This is a file in Grapevine's binary format, which Chronicle cannot read. Open it in "
    "Grapevine, export the characters as XML (File, Export, XML), and import that file."
)

# --- Parsing --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GvTrait:
    name: str
    val: str = ""
    note: str = ""

    @property
    def count(self) -> int:
        """A trait's number ("Stalwart x3"): its whole-number `val`, else 1."""
        match = re.match(r"^\s*(\d+)", self.val or "")
        return int(match.group(1)) if match else 1

    def as_dict(self) -> dict[str, str]:
        return {"name": self.name, "val": self.val, "note": self.note}


@dataclass(frozen=True)
class GvTraitList:
    name: str
    attrs: dict[str, str]
    traits: tuple[GvTrait, ...]


@dataclass(frozen=True)
class GvEntry:
    date: str
    type: int
    change: Decimal
    reason: str
    line: int


@dataclass(frozen=True)
class GvCharacter:
    element: str
    attrs: dict[str, str]
    lists: tuple[GvTraitList, ...]
    experience: dict[str, str]
    entries: tuple[GvEntry, ...]
    biography: str
    notes: str
    line: int

    @property
    def name(self) -> str:
        return self.attrs.get("name", "")

    def traits(self, list_name: str) -> tuple[GvTrait, ...]:
        wanted = list_name.lower()
        return tuple(t for tl in self.lists if tl.name.lower() == wanted for t in tl.traits)


@dataclass(frozen=True)
class GvFile:
    name: str
    characters: tuple[GvCharacter, ...]
    players: tuple[str, ...]
    warnings: tuple[str, ...]
    day_first: bool


class _LineBuilder(TreeBuilder):
    """A tree builder that remembers where each element starts (ElementTree keeps no lines)."""

    def __init__(self) -> None:
        super().__init__()
        self.lines: dict[int, tuple[int, int]] = {}
        self.parser: DefusedXMLParser | None = None

    def start(self, tag: str, attrs: dict[str, str]) -> Element:  # type: ignore[override]
        element = super().start(tag, attrs)
        if self.parser is not None:
            expat = self.parser.parser
            self.lines[id(element)] = (expat.CurrentLineNumber, expat.CurrentColumnNumber + 1)
        return element


def is_binary(data: bytes) -> bool:
    """Grapevine's binary files start with a two-byte length and "GVBE" (exchange) or "GVBG"
    (game); anything with NUL bytes near the start is not XML either."""
    head = data[:16]
    return b"GVBE" in head or b"GVBG" in head or b"\x00" in data[:1024]


def decode_legacy(data: bytes) -> tuple[str, bool]:
    """The file's text: UTF-8, else Windows-1252 (what Grapevine writes on most machines), and
    whether it was the latter."""
    try:
        return data.decode("utf-8-sig"), False
    except UnicodeDecodeError:
        return data.decode("cp1252", errors="replace"), True


def decode(data: bytes) -> str:
    return decode_legacy(data)[0]


def _text(element: Element | None) -> str:
    if element is None:
        return ""
    return "".join(element.itertext()).strip()


def read_file(data: bytes, *, filename: str) -> GvFile:
    """Parse one Grapevine 3 XML file. Refused (GrapevineRefused, with line and column where
    there are any): an empty file, a binary one, text that is not XML or not Grapevine's, XML
    with entities (defusedxml refuses their expansion), an XP entry that is not a number."""
    if not data.strip():
        raise GrapevineRefused(_("The file is empty."), file=filename)
    if is_binary(data):
        raise GrapevineRefused(_(BINARY_MESSAGE), file=filename)
    text, legacy = decode_legacy(data)
    if not text.lstrip().startswith("<"):
        raise GrapevineRefused(
            _("This is not a Grapevine XML file: it does not start with XML."), file=filename
        )
    builder = _LineBuilder()
    parser = DefusedXMLParser(target=builder, forbid_dtd=False)
    builder.parser = parser
    try:
        parser.feed(text)
        root = parser.close()
    except ParseError as exc:
        line, column = exc.position
        reason = str(exc).split(":")[0]
        raise GrapevineRefused(
            _("the file is damaged (%(reason)s).") % {"reason": reason},
            file=filename,
            line=line,
            column=column + 1,
        ) from None
    except DefusedXmlException:
        expat = parser.parser
        raise GrapevineRefused(
            _("the file declares XML entities, which Chronicle refuses to expand."),
            file=filename,
            line=expat.CurrentLineNumber,
            column=expat.CurrentColumnNumber + 1,
        ) from None

    def where(element: Element) -> tuple[int, int]:
        return builder.lines.get(id(element), (0, 0))

    if root.tag != "grapevine":
        raise GrapevineRefused(
            _("This is XML but not a Grapevine file (it starts with <%(tag)s>).")
            % {"tag": root.tag},
            file=filename,
            line=where(root)[0],
            column=where(root)[1],
        )
    warnings: list[str] = []
    if legacy:
        warnings.append(
            _("%(file)s is not UTF-8; it was read as Windows-1252.") % {"file": filename}
        )
    if root.get("version", "3") != "3":
        warnings.append(
            _("%(file)s says it is Grapevine version %(version)s; it was read as version 3.")
            % {"file": filename, "version": root.get("version")}
        )
    characters: list[GvCharacter] = []
    players: list[str] = []
    skipped: set[str] = set()
    for child in root:
        tag = str(child.tag).lower()
        if tag == "player":
            if (child.get("name") or "").strip():
                players.append(child.get("name", "").strip())
        elif tag in CHARACTER_ELEMENTS:
            characters.append(_read_character(child, tag, filename, where))
        else:
            skipped.add(tag)
    if skipped:
        warnings.append(
            _("%(file)s also holds %(what)s, which Chronicle does not import.")
            % {"file": filename, "what": ", ".join(sorted(skipped))}
        )
    dates = [c.attrs.get(a, "") for c in characters for a in ("startdate", "lastmodified")]
    dates += [e.date for c in characters for e in c.entries]
    return GvFile(
        name=filename,
        characters=tuple(characters),
        players=tuple(players),
        warnings=tuple(warnings),
        day_first=guess_day_first(dates),
    )


def _read_character(element: Element, tag: str, filename: str, where: Any) -> GvCharacter:
    line, column = where(element)
    attrs = {str(k): str(v) for k, v in element.attrib.items()}
    if not attrs.get("name", "").strip():
        raise GrapevineRefused(
            _("a <%(tag)s> has no name.") % {"tag": tag}, file=filename, line=line, column=column
        )
    lists: list[GvTraitList] = []
    for traitlist in element.findall("traitlist"):
        traits = tuple(
            GvTrait(
                name=(t.get("name") or "").strip(),
                val=(t.get("val") or "").strip(),
                note=(t.get("note") or "").strip(),
            )
            for t in traitlist.findall("trait")
            if (t.get("name") or "").strip()
        )
        lists.append(
            GvTraitList(
                name=(traitlist.get("name") or "").strip(),
                attrs={str(k): str(v) for k, v in traitlist.attrib.items() if k != "name"},
                traits=traits,
            )
        )
    experience_element = element.find("experience")
    experience: dict[str, str] = {}
    entries: list[GvEntry] = []
    if experience_element is not None:
        experience = {str(k): str(v) for k, v in experience_element.attrib.items()}
        for entry in experience_element.findall("entry"):
            entry_line, entry_column = where(entry)
            raw_type = (entry.get("type") or "0").strip()
            if not raw_type.isdigit() or int(raw_type) > COMMENT:
                raise GrapevineRefused(
                    _("an XP entry of %(name)s has type %(type)r; Grapevine's types are 0 to 6.")
                    % {"name": attrs["name"], "type": raw_type},
                    file=filename,
                    line=entry_line,
                    column=entry_column,
                )
            change = decimal_or_none(entry.get("change") or "0")
            if change is None:
                raise GrapevineRefused(
                    _("an XP entry of %(name)s changes XP by %(change)r, which is not a number.")
                    % {"name": attrs["name"], "change": entry.get("change")},
                    file=filename,
                    line=entry_line,
                    column=entry_column,
                )
            entries.append(
                GvEntry(
                    date=(entry.get("date") or "").strip(),
                    type=int(raw_type),
                    change=change,
                    reason=(entry.get("reason") or "").strip(),
                    line=entry_line,
                )
            )
    return GvCharacter(
        element=tag,
        attrs=attrs,
        lists=tuple(lists),
        experience=experience,
        entries=tuple(entries),
        biography=_text(element.find("biography")),
        notes=_text(element.find("notes")),
        line=line,
    )


# --- The plan -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Unmapped:
    what: str
    value: str
    character: str

    @property
    def key(self) -> str:
        return choice_key(self.what, self.value)


@dataclass(frozen=True)
class LedgerLine:
    key: str
    when: dt.datetime
    amount: Decimal
    kind: str
    reason: str


@dataclass(frozen=True)
class DisadvantageLine:
    name: str
    major: bool = False
    derangement: bool = False


@dataclass
class CharacterPlan:
    """One character as Chronicle will hold it, before it meets the chronicle's rows."""

    file: str
    line: int
    key: str
    name: str
    kind: str
    creature: str
    clan: str
    sect: str
    generation: int
    player_name: str
    npc: bool
    status: str
    physical: int
    social: int
    mental: int
    willpower: int
    abilities: dict[str, int]
    influences: dict[str, int]
    disciplines: dict[str, int]
    rituals: list[str]
    disadvantages: list[DisadvantageLine]
    background_story: str
    notes: str
    data: dict[str, Any]
    ledger: list[LedgerLine]
    xp_earned_file: Decimal | None
    xp_unspent_file: Decimal | None
    warnings: list[str] = field(default_factory=list)
    unmapped: list[Unmapped] = field(default_factory=list)

    @property
    def clan_title(self) -> str:
        return rules.CLANS[self.clan].title if self.clan in rules.CLANS else ""

    @property
    def ledger_total(self) -> Decimal:
        return sum((line.amount for line in self.ledger), Decimal(0))

    def written(self) -> dict[str, Any]:
        """What the import writes on the sheet, kept so that a later import can tell what the
        storytellers changed since (`snapshot` of the character must equal it)."""
        return {
            "name": self.name,
            "creature": self.creature,
            "clan": self.clan,
            "sect": self.sect,
            "generation": self.generation,
            "status": self.status,
            "physical": self.physical,
            "social": self.social,
            "mental": self.mental,
            "willpower": self.willpower,
            "abilities": dict(sorted(self.abilities.items())),
            **{name: self.influences.get(name, 0) for name in rules.INFLUENCE_TYPES},
            "disciplines": dict(sorted(self.disciplines.items())),
            "rituals": sorted(self.rituals),
            "disadvantages": sorted([d.name, d.major, d.derangement] for d in self.disadvantages),
            "background_story": self.background_story,
        }


# Trait lists the sheet has a place for; every other list is kept as text.
PLACED_LISTS = frozenset(
    {
        "physical",
        "social",
        "mental",
        "abilities",
        "influences",
        "disciplines",
        "rituals",
        "derangements",
        "flaws",
        "health levels",
    }
)
# Attributes the sheet has a place for; the others (nature, blood, path, ...) are kept as text.
PLACED_ATTRS = frozenset(
    {
        "name",
        "clan",
        "sect",
        "generation",
        "willpower",
        "player",
        "npc",
        "status",
        "id",
        "startdate",
        "lastmodified",
    }
)


def _trait_text(traits: Iterable[GvTrait]) -> str:
    parts = []
    for trait in traits:
        text = trait.name
        if trait.val and trait.val != "1":
            text += f" x{trait.val}" if trait.val.isdigit() else f" ({trait.val})"
        if trait.note:
            text += f" [{trait.note}]"
        parts.append(text)
    return ", ".join(parts)


def character_key(gv: GvCharacter, name: str) -> str:
    """A character's key in the chronicle: the file's own id, else its name."""
    own = gv.attrs.get("id", "").strip()
    return f"id:{own}"[:160] if own else f"name:{normalize(name)}"[:160]


def _mapped(
    what: str,
    value: str,
    *,
    plan_unmapped: list[Unmapped],
    character: str,
    choices: Mapping[str, str],
) -> str:
    found = map_value(what, value)
    if found is not None:
        return found
    plan_unmapped.append(Unmapped(what, value.strip(), character))
    chosen = choices.get(choice_key(what, value))
    if chosen is not None and chosen in TARGETS[what]:
        return chosen
    return DEFAULTS[what]


def _int(text: str | None) -> int | None:
    match = re.match(r"^\s*(-?\d+)\s*$", text or "")
    return int(match.group(1)) if match else None


def plan_character(
    gv: GvCharacter,
    *,
    file: str,
    tz: ZoneInfo,
    day_first: bool,
    now: dt.datetime,
    choices: Mapping[str, str] | None = None,
) -> CharacterPlan:
    """Map one Grapevine character onto the house rules. Pure: the storytellers' `choices`
    decide the unmapped values (`DEFAULTS` when they say nothing)."""
    choices = choices or {}
    warnings: list[str] = []
    unmapped: list[Unmapped] = []
    name, npc_in_name = npc_name(gv.name)
    npc = npc_in_name or gv.attrs.get("npc", "").strip().lower() in ("yes", "true", "1")

    def say(message: str) -> None:
        warnings.append(f"{name}: {message}")

    kind = gv.element
    creature = _mapped("kind", kind, plan_unmapped=unmapped, character=name, choices=choices)
    clan = ""
    if gv.attrs.get("clan", "").strip():
        mapped_clan = _mapped(
            "clan", gv.attrs["clan"], plan_unmapped=unmapped, character=name, choices=choices
        )
        if creature == "kindred":
            clan = mapped_clan
    sect = ""
    if gv.attrs.get("sect", "").strip():
        sect = _mapped(
            "sect", gv.attrs["sect"], plan_unmapped=unmapped, character=name, choices=choices
        )
    generation = 13
    raw_generation = gv.attrs.get("generation", "").strip()
    if raw_generation and creature == "kindred":
        number = _int(raw_generation)
        if number is not None and 1 <= number <= 15:
            generation = number
        else:
            say(
                _("generation %(value)r is not one from 1 to 15; the sheet says 13.")
                % {"value": raw_generation}
            )
    raw_status = gv.attrs.get("status", "").strip() or "Active"
    status = _mapped("status", raw_status, plan_unmapped=unmapped, character=name, choices=choices)
    player_name = " ".join(gv.attrs.get("player", "").split())
    if npc and status == "active":
        status = "npc"

    def total(list_name: str) -> int:
        return sum(t.count for t in gv.traits(list_name))

    abilities: dict[str, int] = {}
    for trait in gv.traits("Abilities"):
        key = normalize(trait.name)
        abilities[key] = abilities.get(key, 0) + trait.count
    influences = {name: 0 for name in rules.INFLUENCE_TYPES}
    kept_influences: list[GvTrait] = []
    for trait in gv.traits("Influences"):
        target = _mapped(
            "influence", trait.name, plan_unmapped=unmapped, character=name, choices=choices
        )
        if target:
            influences[target] += trait.count
        else:
            kept_influences.append(trait)
    powers: dict[str, int] = {}
    kept_disciplines: list[GvTrait] = []
    for trait in gv.traits("Disciplines"):
        parts = [p.strip() for p in trait.name.split(":")]
        discipline_name = ": ".join(parts[:2]) if len(parts) > 2 else parts[0]
        found = map_value("discipline", discipline_name)
        if found is None and len(parts) > 2:
            found = map_value("discipline", parts[0])
        if found is None:
            found = _mapped(
                "discipline",
                discipline_name,
                plan_unmapped=unmapped,
                character=name,
                choices=choices,
            )
        target = found
        if target:
            powers[target] = powers.get(target, 0) + 1
        else:
            kept_disciplines.append(trait)
    disciplines: dict[str, int] = {}
    for discipline, count in powers.items():
        # DIS-02: levels are owned in order, so n powers are the first n levels.
        disciplines[discipline] = min(count, len(rules.LEVELS))
        if count > len(rules.LEVELS):
            say(
                _("%(count)s powers of %(discipline)s; the house rules stop at 3a.")
                % {"count": count, "discipline": rules.DISCIPLINE_TITLES[discipline]}
            )
    rituals = [t.name for t in gv.traits("Rituals")]
    disadvantages = [DisadvantageLine(t.name, derangement=True) for t in gv.traits("Derangements")]
    disadvantages += [
        DisadvantageLine(t.name, major=(_int(re.sub(r"\D.*$", "", t.val)) or 0) >= 3)
        for t in gv.traits("Flaws")
    ]
    willpower = max(0, _int(gv.attrs.get("willpower")) or 0)

    # The XP history.
    start = parse_date(gv.attrs.get("startdate", ""), day_first=day_first).value
    ledger: list[LedgerLine] = []
    kept_entries: list[dict[str, Any]] = []
    has_ledger = not npc and bool(player_name)
    balance = Decimal(0)
    previous: dt.datetime | None = None
    seen: dict[str, int] = {}
    undated = 0
    key = character_key(gv, name)
    for entry in gv.entries:
        parsed = parse_date(entry.date, day_first=day_first)
        naive = parsed.value or previous or start
        if parsed.value is None:
            undated += 1
        elif parsed.note:
            say(
                _("XP entry on line %(line)s: %(note)s.")
                % {"line": entry.line, "note": parsed.note}
            )
        when = (naive.replace(tzinfo=tz) if naive is not None else now).astimezone(dt.UTC)
        previous = naive or previous
        effect = xp_effect(entry.type, entry.change, balance)
        reason = entry.reason or default_reason(entry.type)
        if effect == 0 or not has_ledger:
            kept_entries.append(
                {
                    "date": entry.date,
                    "type": entry.type,
                    "change": str(entry.change),
                    "reason": entry.reason,
                    "when": when.isoformat(),
                }
            )
            balance += effect
            continue
        rounded = (effect / HALF).quantize(Decimal(1)) * HALF
        if rounded != effect:
            say(
                _(
                    "XP entry on line %(line)s of %(amount)s XP is recorded as %(rounded)s "
                    "(XP comes in steps of 0.5)."
                )
                % {"line": entry.line, "amount": effect, "rounded": rounded}
            )
        if rounded == 0 or abs(rounded) > MAX_ENTRY:
            kept_entries.append(
                {
                    "date": entry.date,
                    "type": entry.type,
                    "change": str(entry.change),
                    "reason": entry.reason,
                    "when": when.isoformat(),
                }
            )
            balance += effect
            continue
        if len(reason) > 300:
            say(
                _(
                    "the reason of the XP entry on line %(line)s is cut to 300 characters; "
                    "the whole text is kept on the sheet."
                )
                % {"line": entry.line}
            )
            kept_entries.append(
                {
                    "date": entry.date,
                    "type": COMMENT,
                    "change": "0",
                    "reason": reason,
                    "when": when.isoformat(),
                    "note": "full reason",
                }
            )
            reason = reason[:299] + "…"
        material = f"{key}|{when.isoformat()}|{rounded}|{reason}"
        seen[material] = seen.get(material, 0) + 1
        digest = hashlib.sha256(f"{material}|{seen[material]}".encode()).hexdigest()[:40]
        ledger.append(
            LedgerLine(
                key=f"gv:{digest}",
                when=when,
                amount=rounded,
                kind=XP_KINDS[entry.type],
                reason=reason,
            )
        )
        balance += effect
    if undated:
        say(
            _(
                "%(count)s XP entries have no date in the file (such as 12:00:00 AM); each is "
                "dated like the entry before it, or the character's start date."
            )
            % {"count": undated}
        )
    earned_file = decimal_or_none(gv.experience.get("earned"))
    unspent_file = decimal_or_none(gv.experience.get("unspent"))
    if not has_ledger and any(e.get("note") != "full reason" for e in kept_entries):
        say(
            _(
                "has no player, and the ledger is per player (XP-07): its XP history "
                "(%(unspent)s unspent in the file) is kept as text on the sheet."
            )
            % {"unspent": unspent_file if unspent_file is not None else 0}
        )

    # Text kept on the sheet.
    lines: list[str] = []
    attrs_text = [
        f"{k}: {v}"
        for k, v in gv.attrs.items()
        if k not in PLACED_ATTRS and v.strip() and k != "physicalmax"
    ]
    if player_name and not has_ledger:
        attrs_text.insert(0, _("player in Grapevine: %(name)s") % {"name": player_name})
    if attrs_text:
        lines.append(" · ".join(attrs_text))
    for list_name in ("Physical", "Social", "Mental"):
        if gv.traits(list_name):
            lines.append(f"{list_name}: {_trait_text(gv.traits(list_name))}")
    for traitlist in gv.lists:
        if traitlist.name.lower() not in PLACED_LISTS and traitlist.traits:
            lines.append(f"{traitlist.name}: {_trait_text(traitlist.traits)}")
    if kept_influences:
        lines.append(_("Influences kept as text") + f": {_trait_text(kept_influences)}")
    if kept_disciplines:
        lines.append(_("Disciplines kept as text") + f": {_trait_text(kept_disciplines)}")
    if gv.traits("Flaws"):
        lines.append(f"Flaws: {_trait_text(gv.traits('Flaws'))}")
    if kept_entries:
        lines.append(_("XP entries kept as text:"))
        for kept in kept_entries:
            lines.append(
                f"  {kept['date'] or '-'} · {_(default_reason(int(kept['type'])))} "
                f"{kept['change']} · {kept['reason']}".rstrip(" ·")
            )
    if gv.notes:
        lines.append(_("Notes:"))
        lines.append(gv.notes)

    data = {
        "element": gv.element,
        "attrs": dict(gv.attrs),
        "lists": [
            {"name": tl.name, "attrs": tl.attrs, "traits": [t.as_dict() for t in tl.traits]}
            for tl in gv.lists
        ],
        "experience": dict(gv.experience),
        "kept_entries": kept_entries,
        "kept_influences": [t.as_dict() for t in kept_influences],
        "kept_disciplines": [t.as_dict() for t in kept_disciplines],
        "biography": gv.biography,
        "notes": gv.notes,
    }
    plan = CharacterPlan(
        file=file,
        line=gv.line,
        key=key,
        name=name[:120],
        kind=kind,
        creature=creature,
        clan=clan,
        sect=sect,
        generation=generation,
        player_name=player_name if has_ledger else "",
        npc=npc,
        status=status,
        physical=total("Physical"),
        social=total("Social"),
        mental=total("Mental"),
        willpower=willpower,
        abilities=abilities,
        influences=influences,
        disciplines=disciplines,
        rituals=rituals,
        disadvantages=disadvantages,
        background_story=gv.biography,
        notes="\n".join(lines),
        data=data,
        ledger=ledger,
        xp_earned_file=earned_file,
        xp_unspent_file=unspent_file,
        warnings=warnings,
        unmapped=list(dict.fromkeys(unmapped)),
    )
    if len(name) > 120:
        say(_("the name is cut to 120 characters."))
    if has_ledger and unspent_file is not None and plan.ledger_total != unspent_file:
        say(
            _("the file says %(file)s XP unspent and the imported ledger adds up to %(ledger)s.")
            % {"file": unspent_file, "ledger": plan.ledger_total}
        )
    return plan


def plan_file(
    gv_file: GvFile,
    *,
    tz: ZoneInfo,
    now: dt.datetime,
    choices: Mapping[str, str] | None = None,
) -> list[CharacterPlan]:
    return [
        plan_character(
            gv, file=gv_file.name, tz=tz, day_first=gv_file.day_first, now=now, choices=choices
        )
        for gv in gv_file.characters
    ]

"""Grapevine 3's values as Chronicle reads them: the one mapping table from the real world's
names to the house rules', the dates real files hold, and what each kind of XP entry does to
the balance. Pure functions, tested by table; `grapevine` parses files with them.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from chronicle.stored_text import stored_sentences

from .. import rules

# --- The one mapping table ------------------------------------------------------------------------

# Grapevine's character elements. The house rules know kindred, ghouls and kine; the others are
# imported as the kind the storytellers choose (kine when nobody does).
CHARACTER_ELEMENTS: tuple[str, ...] = (
    "vampire",
    "ghoul",
    "mortal",
    "werewolf",
    "mage",
    "changeling",
    "wraith",
    "mummy",
    "kueijin",
    "fera",
    "hunter",
    "demon",
    "various",
)

MAPPINGS: Mapping[str, Mapping[str, str]] = {
    "kind": {"vampire": "kindred", "kindred": "kindred", "ghoul": "ghoul", "mortal": "kine"},
    "clan": {
        "assamite": "assamite",
        "assamites": "assamite",
        "brujah": "brujah",
        "caitiff": "caitiff",
        "gangrel": "gangrel",
        "gargoyle": "gargoyle",
        "gargoyles": "gargoyle",
        "lasombra": "lasombra",
        "lasombra antitribu": "lasombra",
        "malkavian": "malkavian",
        "malkavians": "malkavian",
        "nosferatu": "nosferatu",
        "followers of set": "setite",
        "follower of set": "setite",
        "setite": "setite",
        "setites": "setite",
        "toreador": "toreador",
        "tremere": "tremere",
        "tzimisce": "tzimisce",
        "ventrue": "ventrue",
    },
    "sect": {
        "camarilla": "camarilla",
        "sabbat": "sabbat",
        "anarch": "anarch",
        "anarchs": "anarch",
        "anarch movement": "anarch",
        "independent": "independent",
        "independents": "independent",
    },
    # The part of a discipline trait before its power ("Auspex: Heightened Senses"); a path of
    # Thaumaturgy is named by its first two parts ("Thaumaturgy: Path of Blood: Inquisition").
    "discipline": {
        "animalism": "animalism",
        "auspex": "auspex",
        "celerity": "celerity",
        "dominate": "dominate",
        "fortitude": "fortitude",
        "obfuscate": "obfuscate",
        "obtenebration": "obtenebration",
        "potence": "potence",
        "presence": "presence",
        "protean": "protean",
        "quietus": "quietus",
        "serpentis": "serpentis",
        "vicissitude": "vicissitude",
        "visceratika": "visceratika",
        "thaumaturgy: blood": "thaumaturgy_blood",
        "thaumaturgy: path of blood": "thaumaturgy_blood",
        "thaumaturgy: the path of blood": "thaumaturgy_blood",
        "thaumaturgy: fire": "thaumaturgy_fire",
        "thaumaturgy: lure of flames": "thaumaturgy_fire",
        "thaumaturgy: the lure of flames": "thaumaturgy_fire",
        "thaumaturgy: mind": "thaumaturgy_mind",
        "thaumaturgy: movement of the mind": "thaumaturgy_mind",
        "thaumaturgy: the movement of the mind": "thaumaturgy_mind",
    },
    # INF-01 has five types; Grapevine's fifteen meet them where the meaning is the same.
    "influence": {
        "business": "business",
        "finance": "business",
        "industry": "business",
        "government": "government",
        "bureaucracy": "government",
        "political": "government",
        "politics": "government",
        "herd": "herd",
        "occult": "occult",
        "underworld": "underworld",
    },
    "status": {
        "active": "active",
        "inactive": "retired",
        "retired": "retired",
        "dead": "dead",
        "deceased": "dead",
        "destroyed": "dead",
        "final death": "dead",
        "torpor": "torpor",
        "staked": "staked",
        "npc": "npc",
    },
}

# What an unmapped value becomes when nobody chooses: "" keeps it as text on the sheet (no
# clan, no sect, no discipline level, no influence rating).
DEFAULTS: Mapping[str, str] = {
    "kind": "kine",
    "clan": "",
    "sect": "",
    "discipline": "",
    "influence": "",
    "status": "active",
}

# The targets a storyteller may choose for each kind of unmapped value ("" = keep as text).
TARGETS: Mapping[str, tuple[str, ...]] = {
    "kind": ("kindred", "ghoul", "kine", "animal_ghoul"),
    "clan": ("", *rules.CLANS),
    "sect": ("", "camarilla", "sabbat", "independent", "anarch"),
    "discipline": ("", *rules.DISCIPLINES),
    "influence": ("", *rules.INFLUENCE_TYPES),
    "status": ("active", "retired", "dead", "torpor", "staked", "npc"),
}

NPC_MARK = re.compile(r"\s*\(\s*npc\s*\)\s*", re.IGNORECASE)


def normalize(value: str) -> str:
    return " ".join(value.replace("\u00a0", " ").split()).strip(" .").lower()


def map_value(what: str, value: str) -> str | None:
    """The house rules' name for a Grapevine value, or None when the table has none. A clan
    "X Antitribu" is clan X (the sect says which side it is on)."""
    key = normalize(value)
    table = MAPPINGS[what]
    if key in table:
        return table[key]
    if what == "clan" and key.endswith(" antitribu"):
        return table.get(key.removesuffix(" antitribu").strip())
    return None


def choice_key(what: str, value: str) -> str:
    """How a storyteller's choice for an unmapped value is named in forms and in `choices`."""
    return f"{what}:{normalize(value)}"


def npc_name(name: str) -> tuple[str, bool]:
    """ "Amber Bradbury (NPC)" is the NPC Amber Bradbury."""
    cleaned = NPC_MARK.sub(" ", name).strip()
    return (cleaned or name.strip()), cleaned != name.strip()


# --- Dates ----------------------------------------------------------------------------------------

_DATE = re.compile(
    r"^(?P<a>\d{1,4})[/.\-](?P<b>\d{1,2})[/.\-](?P<c>\d{1,4})"
    r"(?:[ T]+(?P<h>\d{1,2}):(?P<mi>\d{2})(?::(?P<s>\d{2}))?\s*(?P<ap>[AaPp]\.?[Mm]\.?)?)?$"
)
_TIME = re.compile(r"^\d{1,2}:\d{2}(?::\d{2})?\s*(?:[AaPp]\.?[Mm]\.?)?$")
# Grapevine's empty date: Visual Basic's day zero, shown as a time alone.
ZERO_DAY = dt.date(1899, 12, 30)


@dataclass(frozen=True)
class ParsedDate:
    """A date read from a file: `value` (naive, in the chronicle's time) or None, and `note`,
    the reason it is None or was read in an unusual way ("" when nothing needs saying)."""

    value: dt.datetime | None
    note: str = ""


def _year(text: str) -> int:
    year = int(text)
    if len(text) <= 2:
        year += 2000 if year < 70 else 1900
    return year


def _day_month(a: int, b: int, *, day_first: bool) -> tuple[int, int, bool] | None:
    """(day, month, swapped) in the preferred order, or the other when only that one exists."""
    first = (a, b) if day_first else (b, a)
    for swapped, (day, month) in ((False, first), (True, first[::-1])):
        if 1 <= month <= 12 and 1 <= day <= 31:
            return day, month, swapped
    return None


def parse_date(text: str, *, day_first: bool = False) -> ParsedDate:
    """Read the date forms real Grapevine files hold: US dates ("8/5/2003"), day-first ones
    ("29/10/2008"), either with a time ("5:53:01 PM", "18:06:11", even "18:21:12 PM"), ISO
    dates, a time alone ("12:00:00 AM": Grapevine's empty date) and nothing at all. Never
    raises: what it cannot read is None with a note."""
    text = (text or "").strip()
    if not text:
        return ParsedDate(None, _("no date"))
    if _TIME.match(text):
        return ParsedDate(None, _("a time without a date (%(text)s)") % {"text": text})
    match = _DATE.match(text)
    if match is None:
        return ParsedDate(None, _("an unreadable date (%(text)s)") % {"text": text})
    a, b, c = match.group("a"), match.group("b"), match.group("c")
    note = ""
    if len(a) == 4:
        year, month, day = int(a), int(b), int(c)
    else:
        found = _day_month(int(a), int(b), day_first=day_first)
        if found is None:
            return ParsedDate(None, _("an impossible date (%(text)s)") % {"text": text})
        day, month, swapped = found
        year = _year(c)
        if swapped:
            note = (
                _("%(text)s read as month first") if day_first else _("%(text)s read as day first")
            ) % {"text": text}
    hour = int(match.group("h") or 0)
    minute = int(match.group("mi") or 0)
    second = int(match.group("s") or 0)
    meridiem = (match.group("ap") or "").replace(".", "").upper()
    if meridiem == "PM" and hour < 12:
        hour += 12
    elif meridiem == "AM" and hour == 12:
        hour = 0
    try:
        value = dt.datetime(year, month, day, hour, minute, second)
    except ValueError:
        return ParsedDate(None, _("an impossible date (%(text)s)") % {"text": text})
    if value.date() == ZERO_DAY:
        return ParsedDate(None, _("Grapevine's empty date (%(text)s)") % {"text": text})
    return ParsedDate(value, note)


def guess_day_first(texts: Iterable[str]) -> bool:
    """Whether a file writes its dates day first: more of its dates can only be read that way
    than only the US way (Grapevine writes the dates of the Windows locale it ran under)."""
    day_only = month_only = 0
    for text in texts:
        match = _DATE.match((text or "").strip())
        if match is None or len(match.group("a")) == 4:
            continue
        a, b = int(match.group("a")), int(match.group("b"))
        if a > 12 >= b:
            day_only += 1
        elif b > 12 >= a:
            month_only += 1
    return day_only > month_only


def format_date(value: dt.datetime) -> str:
    """A date as Grapevine writes it (US, 12-hour clock)."""
    hour = value.hour % 12 or 12
    meridiem = "PM" if value.hour >= 12 else "AM"
    return (
        f"{value.month}/{value.day}/{value.year} "
        f"{hour}:{value.minute:02d}:{value.second:02d} {meridiem}"
    )


# --- XP -------------------------------------------------------------------------------------------

EARN, LOSE, SET_EARNED, SPEND, UNSPEND, SET_UNSPENT, COMMENT = range(7)
HALF = Decimal("0.5")
MAX_ENTRY = Decimal("999999.5")


def xp_effect(entry_type: int, change: Decimal, balance: Decimal) -> Decimal:
    """What a Grapevine XP entry does to the unspent balance (`balance` before it)."""
    if entry_type in (EARN, UNSPEND):
        return change
    if entry_type in (LOSE, SPEND):
        return -change
    if entry_type == SET_UNSPENT:
        return change - balance
    return Decimal(0)  # SET_EARNED, COMMENT


XP_KINDS: Mapping[int, str] = {
    EARN: "award",
    LOSE: "penalty",
    SPEND: "purchase",
    UNSPEND: "correction",
    SET_UNSPENT: "correction",
}


# What an XP entry of each Grapevine type says when the file gives no reason: stored in English
# on the ledger (and in a file exported back), shown in each reader's language
# (chronicle.stored_text).
DEFAULT_REASONS: Mapping[int, str] = {
    EARN: gettext_noop("XP earned"),
    LOSE: gettext_noop("XP lost"),
    SET_EARNED: gettext_noop("Earned XP set"),
    SPEND: gettext_noop("XP spent"),
    UNSPEND: gettext_noop("XP given back"),
    SET_UNSPENT: gettext_noop("Unspent XP set"),
    COMMENT: gettext_noop("Comment"),
}
OTHER_REASON = gettext_noop("XP")
stored_sentences(*DEFAULT_REASONS.values(), OTHER_REASON)


def default_reason(entry_type: int) -> str:
    """The English reason (translate it with gettext where a person reads it)."""
    return DEFAULT_REASONS.get(entry_type, OTHER_REASON)


def decimal_or_none(text: str | None) -> Decimal | None:
    if text is None or not text.strip():
        return None
    try:
        value = Decimal(text.strip().replace(",", "."))
    except InvalidOperation:
        return None
    return value if value.is_finite() else None

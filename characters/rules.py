"""Character house rules: clans, creation, disciplines, control, blood, bonds, XP, items, sewers.

Pure Python: standard library only, no clock (callers pass dates in). Every public function
cites the SPEC.md rule it implements. Illegal input raises `ValueError` (or `RuleViolation`, a
subclass listing every problem) with a message a player or ST can act on.

Every INTERPRETATION number of SPEC.md is a keyword parameter whose default is SPEC's value;
where `chronicle.rules.HouseRules` has a setting for it, the parameter has the same name, so a
service can pass the chronicle's setting straight through.
"""

from __future__ import annotations

import calendar
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal

from chronicle.rules import _, ngettext, pgettext, whole_number

# --- Validation helpers ------------------------------------------------------------------------


class RuleViolation(ValueError):
    """Several rule problems found at once; `problems` lists each one as a sentence, and
    `topics`, where the rule knows it, the part of the input each is about (a parallel list:
    "abilities", "willpower" …), so a form puts it beside its field in any language."""

    def __init__(self, problems: Sequence[str], topics: Sequence[str] = ()) -> None:
        self.problems = list(problems)
        self.topics = list(topics)
        super().__init__(" ".join(self.problems))


def _int(name: str, value: object, *, minimum: int | None = 0, maximum: int | None = None) -> int:
    """A count of these rules: zero or more unless said otherwise (chronicle.rules checks)."""
    return whole_number(name, value, minimum=minimum, maximum=maximum)


HALF = Decimal("0.5")


def _xp(name: str, value: object) -> Decimal:
    """XP is a Decimal in 0.5 steps (SPEC conventions); floats are refused because 0.1-style
    binary fractions would turn into wrong ledger amounts."""
    if isinstance(value, bool) or not isinstance(value, Decimal | int):
        raise ValueError(f"{name} must be a Decimal such as Decimal('2.5'), got {value!r}.")
    amount = Decimal(value)
    if not amount.is_finite() or amount < 0:
        raise ValueError(
            _("%(name)s must be zero or more, got %(value)s.") % {"name": name, "value": value}
        )
    if amount % HALF != 0:
        raise ValueError(
            _("%(name)s must be in steps of 0.5 XP, got %(value)s.")
            % {"name": name, "value": value}
        )
    return amount


def _round_to_half(amount: Decimal, rounding: str) -> Decimal:
    return (amount * 2).to_integral_value(rounding=rounding) / 2


def _date(name: str, value: object) -> date:
    if isinstance(value, datetime) or not isinstance(value, date):
        raise ValueError(f"{name} must be a date (without a time), got {value!r}.")
    return value


def add_months(day: date, months: int) -> date:
    """Calendar months later; a day that does not exist in the target month becomes its last
    day (2024-11-30 + 3 months = 2025-02-28), so a timer never runs past the month it names."""
    _int("months", months, minimum=None)
    index = day.month - 1 + months
    year, month = day.year + index // 12, index % 12 + 1
    return date(year, month, min(day.day, calendar.monthrange(year, month)[1]))


def black_veins_show(diableries: Iterable[tuple[date, date]], *, on: date) -> bool:
    """XP-04: whether a diablerist's black veins show on day `on`: from a diablerie's day until
    they fade six months later (its `until` day, `add_months(occurred_on, 6)`, no longer shows).
    `diableries` holds one (occurred_on, until) pair per diablerie. "Character may not enter
    the game with black veins except with explicit storyteller permission" (the sign-in sheet).
    """
    on = _date("on", on)
    return any(
        _date("occurred_on", start) <= on < _date("until", until) for start, until in diableries
    )


# --- Disciplines: levels and names (DIS-01, DIS-02) ---------------------------------------------

LEVELS: tuple[str, ...] = ("1a", "1b", "2a", "2b", "3a")
LEVEL_NUMBERS: Mapping[str, int] = {code: number for number, code in enumerate(LEVELS, start=1)}
ORDER_TEXT = " → ".join(LEVELS)


def level_number(level: str) -> int:
    """DIS-01 conventions: "1a"=1, "1b"=2, "2a"=3, "2b"=4, "3a"=5 (case-insensitive)."""
    if not isinstance(level, str) or level.strip().lower() not in LEVEL_NUMBERS:
        raise ValueError(
            _("Unknown discipline level %(level)s; use one of %(levels)s.")
            % {"level": repr(level), "levels": ", ".join(LEVELS)}
        )
    return LEVEL_NUMBERS[level.strip().lower()]


def level_code(number: int) -> str:
    """The level string for a level number 1..5 (inverse of `level_number`)."""
    return LEVELS[_int("level number", number, minimum=1, maximum=len(LEVELS)) - 1]


def level_category(level: str) -> int:
    """Category 1 is basic (1a, 1b), 2 intermediate (2a, 2b), 3 advanced (3a)."""
    return (level_number(level) + 1) // 2


THAUMATURGY_PATHS: frozenset[str] = frozenset(
    {"thaumaturgy_blood", "thaumaturgy_fire", "thaumaturgy_mind"}
)

DISCIPLINE_TITLES: Mapping[str, str] = {
    "animalism": "Animalism",
    "auspex": "Auspex",
    "celerity": "Celerity",
    "dominate": "Dominate",
    "fortitude": "Fortitude",
    "obfuscate": "Obfuscate",
    "obtenebration": "Obtenebration",
    "potence": "Potence",
    "presence": "Presence",
    "protean": "Protean",
    "quietus": "Quietus",
    "serpentis": "Serpentis",
    "thaumaturgy_blood": "Thaumaturgy: Blood",
    "thaumaturgy_fire": "Thaumaturgy: Fire",
    "thaumaturgy_mind": "Thaumaturgy: Mind",
    "vicissitude": "Vicissitude",
    "visceratika": "Visceratika",
}
DISCIPLINES: tuple[str, ...] = tuple(DISCIPLINE_TITLES)

# DIS-01: names listed 1a / 1b / 2a / 2b / 3a. Celerity, Fortitude and Potence have no names in
# the source, so their level is named by the bid bonus it gives. The source's discipline blocks
# lost their headings (SRC-03): each block is matched to its discipline by the table of contents'
# order and its content, as SPEC rebuilt them.
DISCIPLINE_LEVEL_NAMES: Mapping[str, tuple[str, str, str, str, str]] = {
    "animalism": (
        "Beast Within",
        "Overcome the Beast",
        "Song of Serenity",
        "Embrace the Beast",
        "Control the Beast",
    ),
    "auspex": (
        "Heightened Senses",
        "Aura Perception",
        "Senses of the Enlightened",
        "Telepathy",
        "Projection",
    ),
    "celerity": ("bid +3", "bid +6", "bid +12", "bid +18", "bid +27"),
    "dominate": ("Command", "Forgetful Mind", "Mesmerism", "Mastery-Conditioning", "Possession"),
    "fortitude": ("bid +1", "bid +3", "bid +5", "bid +8", "bid +12"),
    "obfuscate": ("Unseen Presence", "Mask of 1000 Faces", "Vanish", "Cloak", "Soul Mask"),
    "obtenebration": ("Shadow Meld", "Stab", "Darkness", "Arms of the Abyss", "Shadow Mastery"),
    "potence": ("bid +1", "bid +2", "bid +4", "bid +6", "bid +9, Sunder"),
    "presence": ("Dread Gaze", "Anathema", "Summoning", "Enthrallment", "Majesty"),
    "protean": (
        "Wolf Claws",
        "Earth Meld",
        "Beast Within (Wolf or Bat)",
        "Form of Mist",
        "Aspect of the Wolf",
    ),
    "quietus": (
        "Taste of Blood",
        "Cloud of Silence",
        "Blood Spit",
        "Blood Sweat",
        "Blood Sweatier",
    ),
    "serpentis": ("Fangs", "Earth Meld", "Snake Form", "Mist Form", "Aspect of the Serpent"),
    "thaumaturgy_blood": (
        "Inquisition",
        "Blood Mastery",
        "Potency of the Blood",
        "Blood Destruction",
        "Cauldron",
    ),
    "thaumaturgy_fire": ("Hand of Flame", "Flame Bolt", "Engulf", "Fire Shield", "Firestorm"),
    "thaumaturgy_mind": ("Stab", "Flight", "Mind Shield", "Telekinesis", "Control"),
    "vicissitude": ("Bone Shards", "Earth Meld", "Fleshcraft", "Mist Form", "Horrid Form"),
    "visceratika": (
        "Claws",
        "Stone Meld",
        "Minor Gargoyle",
        "Whispers of the Chamber",
        "Major Gargoyle",
    ),
}

# CLN-02 (and, by INTERPRETATION, DIS-07's "restricted and derived" disciplines).
RESTRICTED_DISCIPLINES: frozenset[str] = THAUMATURGY_PATHS | {
    "protean",
    "quietus",
    "visceratika",
    "obtenebration",
    "serpentis",
    "vicissitude",
}
NON_RESTRICTED_DISCIPLINES: frozenset[str] = frozenset(DISCIPLINES) - RESTRICTED_DISCIPLINES


def _discipline(discipline: object) -> str:
    if not isinstance(discipline, str) or discipline not in DISCIPLINE_TITLES:
        raise ValueError(
            _("Unknown discipline %(discipline)s; use one of %(disciplines)s.")
            % {"discipline": repr(discipline), "disciplines": ", ".join(DISCIPLINES)}
        )
    return discipline


def level_name(discipline: str, level: str) -> str:
    """DIS-01: the name of one level of a discipline, e.g. ("auspex", "1a") → Heightened Senses."""
    return DISCIPLINE_LEVEL_NAMES[_discipline(discipline)][level_number(level) - 1]


def is_restricted(discipline: str) -> bool:
    """CLN-02: Thaumaturgy (all paths), Protean, Quietus, Visceratika, Obtenebration, Serpentis
    and Vicissitude are restricted."""
    return _discipline(discipline) in RESTRICTED_DISCIPLINES


def _purchase_levels(levels: Sequence[str]) -> list[int]:
    """The level numbers of one purchase, which DIS-02 requires to be consecutive."""
    if isinstance(levels, str):
        raise ValueError(f"Pass the levels as a list such as [{levels!r}], not a single string.")
    numbers = [level_number(level) for level in levels]
    if not numbers:
        raise ValueError(_("Name at least one discipline level to buy."))
    if any(b != a + 1 for a, b in zip(numbers, numbers[1:], strict=False)):
        raise ValueError(
            _(
                "Levels must be bought in the order %(order)s without gaps or repeats "
                "(DIS-02); got %(levels)s."
            )
            % {"order": ORDER_TEXT, "levels": ", ".join(level_code(n) for n in numbers)}
        )
    return numbers


def check_level_order(levels: Sequence[str], *, owned: str | None = None) -> None:
    """DIS-02: a purchase must continue from the highest level owned (`owned`, None for a
    discipline not yet owned), in the order 1a → 1b → 2a → 2b → 3a."""
    numbers = _purchase_levels(levels)
    owned_number = 0 if owned is None else level_number(owned)
    if owned_number == len(LEVELS):
        raise ValueError(_("This discipline is already at 3a, the highest level."))
    if numbers[0] != owned_number + 1:
        shown = {
            "owned": level_code(owned_number) if owned_number else "",
            "next": level_code(owned_number + 1),
            "asked": level_code(numbers[0]),
            "order": ORDER_TEXT,
        }
        if owned is None:
            message = _(
                "With no level owned, the next level to buy is %(next)s, not %(asked)s "
                "(DIS-02: %(order)s)."
            )
        else:
            message = _(
                "With up to %(owned)s owned, the next level to buy is %(next)s, not %(asked)s "
                "(DIS-02: %(order)s)."
            )
        raise ValueError(message % shown)


# --- Clans (CLN-01, CLN-02, CLN-04) -------------------------------------------------------------


@dataclass(frozen=True)
class Clan:
    """One row of the CLN-01 table: in-clan disciplines and the modifiers the app applies."""

    key: str
    title: str
    in_clan: frozenset[str]
    # Caitiff choose 3 non-restricted disciplines; Tremere choose 1 Thaumaturgy path.
    chosen_in_clan: int = 0
    chosen_from: frozenset[str] = frozenset()
    control_adjustment: int = 0
    control_cap: int = 10
    starting_influence: int = 3
    # Exactly one of these is chosen at creation (may exceed the generation maximum).
    creation_bonus_choices: tuple[str, ...] = ()
    fixed_bonuses: tuple[str, ...] = ()
    out_of_clan_level_surcharge: int = 0
    free_basic_rituals: int = 0
    stored_blood_for_tremere_lord: int = 0
    gains_from_kindred_blood: bool = True
    haven_needs_embrace_earth: bool = False
    needs_feeding_demographic: bool = False
    herd_costs_double: bool = False
    in_character_vote_weight: int = 1
    notes: tuple[str, ...] = ()


CLANS: Mapping[str, Clan] = {
    clan.key: clan
    for clan in (
        Clan(
            "assamite",
            "Assamite",
            frozenset({"celerity", "obfuscate", "quietus"}),
            gains_from_kindred_blood=False,
            notes=("Gains nothing from drinking kindred blood; diablerie still benefits.",),
        ),
        Clan(
            "brujah",
            "Brujah",
            frozenset({"celerity", "potence", "presence"}),
            control_adjustment=-1,
            control_cap=8,
        ),
        Clan(
            "caitiff",
            "Caitiff",
            frozenset(),
            chosen_in_clan=3,
            chosen_from=NON_RESTRICTED_DISCIPLINES,
            out_of_clan_level_surcharge=1,
        ),
        Clan(
            "gangrel",
            "Gangrel",
            frozenset({"animalism", "fortitude", "protean"}),
            control_cap=7,
            fixed_bonuses=("survival",),
        ),
        Clan(
            "gargoyle",
            "Gargoyle",
            frozenset({"fortitude", "potence", "visceratika"}),
            stored_blood_for_tremere_lord=2,
        ),
        Clan("lasombra", "Lasombra", frozenset({"dominate", "potence", "obtenebration"})),
        Clan(
            "malkavian",
            "Malkavian",
            frozenset({"auspex", "dominate", "obfuscate"}),
            notes=("Needs 2 major or 3 minor disadvantages, at least 1 non-physical (CRE-02).",),
        ),
        Clan(
            "nosferatu",
            "Nosferatu",
            frozenset({"animalism", "potence", "obfuscate"}),
            creation_bonus_choices=("sewer_lore", "physical"),
            notes=("Needs 2 major physical, or 1 major + 2 minor; one is hideously ugly.",),
        ),
        Clan("setite", "Setite", frozenset({"obfuscate", "presence", "serpentis"})),
        Clan(
            "toreador",
            "Toreador",
            frozenset({"auspex", "celerity", "presence"}),
            creation_bonus_choices=("herd", "social"),
            in_character_vote_weight=2,
        ),
        Clan(
            "tremere",
            "Tremere",
            frozenset({"auspex", "dominate"}),
            chosen_in_clan=1,
            chosen_from=THAUMATURGY_PATHS,
            starting_influence=2,
            free_basic_rituals=1,
        ),
        Clan(
            "tzimisce",
            "Tzimisce",
            frozenset({"animalism", "auspex", "vicissitude"}),
            haven_needs_embrace_earth=True,
        ),
        Clan(
            "ventrue",
            "Ventrue",
            frozenset({"dominate", "fortitude", "presence"}),
            creation_bonus_choices=("leadership", "physical"),
            needs_feeding_demographic=True,
            herd_costs_double=True,
        ),
    )
}


def get_clan(clan: str) -> Clan:
    """CLN-01: the clan row for a lowercase English clan name ("brujah")."""
    if not isinstance(clan, str) or clan not in CLANS:
        raise ValueError(
            _("Unknown clan %(clan)s; use one of %(clans)s.")
            % {"clan": repr(clan), "clans": ", ".join(CLANS)}
        )
    return CLANS[clan]


def in_clan_disciplines(clan: str | None, *, chosen: Sequence[str] = ()) -> frozenset[str]:
    """CLN-01: the in-clan disciplines of a clan, including the ones chosen at creation: exactly
    3 distinct non-restricted disciplines for a Caitiff, exactly 1 Thaumaturgy path for a
    Tremere, none for anyone else. `clan=None` (ghouls and kine) has no in-clan disciplines."""
    if isinstance(chosen, str):
        raise ValueError(f"Pass the chosen disciplines as a list such as [{chosen!r}].")
    picks = [_discipline(d) for d in chosen]
    if clan is None:
        if picks:
            raise ValueError(_("Only Caitiff and Tremere choose in-clan disciplines."))
        return frozenset()
    row = get_clan(clan)
    if row.chosen_in_clan == 0:
        if picks:
            raise ValueError(
                _("%(clan)s do not choose in-clan disciplines; pass none.") % {"clan": row.title}
            )
        return row.in_clan
    if len(set(picks)) != len(picks) or len(picks) != row.chosen_in_clan:
        raise ValueError(
            ngettext(
                "%(clan)s choose exactly %(count)s different in-clan discipline(s) (CLN-01); "
                "got %(got)s.",
                "%(clan)s choose exactly %(count)s different in-clan discipline(s) (CLN-01); "
                "got %(got)s.",
                row.chosen_in_clan,
            )
            % {"clan": row.title, "count": row.chosen_in_clan, "got": len(picks)}
        )
    outside = sorted(set(picks) - row.chosen_from)
    if outside:
        if clan == "caitiff":
            message = _("%(clan)s may only choose non-restricted disciplines; not %(names)s.")
        else:
            message = _("%(clan)s may only choose Thaumaturgy paths; not %(names)s.")
        raise ValueError(message % {"clan": row.title, "names": ", ".join(outside)})
    return row.in_clan | frozenset(picks)


def is_in_clan(
    discipline: str,
    *,
    clan: str | None,
    chosen: Sequence[str] = (),
    ghoul_disciplines_out_of_clan: bool = True,
) -> bool:
    """CLN-01 / CRE-03: whether a discipline is in-clan for a character. Ghouls and kine pass
    `clan=None`; INTERPRETATION (setting `ghoul_disciplines_out_of_clan`): a ghoul has no clan,
    so its disciplines are out-of-clan."""
    _discipline(discipline)
    if clan is None and not ghoul_disciplines_out_of_clan:
        return True
    return discipline in in_clan_disciplines(clan, chosen=chosen)


def starting_influence(clan: str, *, herd_bonus: bool = False) -> int:
    """CLN-04: Tremere start with 2 influences, Toreador with 3, or 4 if they take the Herd
    bonus, everyone else with 3."""
    row = get_clan(clan)
    if herd_bonus and "herd" not in row.creation_bonus_choices:
        raise ValueError(
            _("Only Toreador may take the +1 Herd bonus, not %(clan)s.") % {"clan": row.title}
        )
    return row.starting_influence + (1 if herd_bonus else 0)


def check_open_drafts(open_drafts: int, *, open_drafts_per_player: int = 3) -> None:
    """GEN (house setting, not a SPEC rule): a player may keep at most
    `open_drafts_per_player` characters in creation at once (drafts and characters returned
    by a storyteller); submitting one frees its place. `open_drafts` counts the player's open
    drafts before the new one. Storytellers making NPCs are not counted (the caller skips
    this check for them)."""
    if open_drafts < 0:
        raise ValueError(f"open_drafts must be 0 or more, got {open_drafts!r}.")
    if open_drafts >= open_drafts_per_player:
        raise ValueError(
            ngettext(
                "You already have %(count)s character in creation, the most a player may have "
                "open at once. Submit it or delete it before you start another.",
                "You already have %(count)s characters in creation, the most a player may have "
                "open at once. Submit or delete one before you start another.",
                open_drafts,
            )
            % {"count": open_drafts}
        )


def check_clan_bonus(clan: str, choice: str | None) -> None:
    """CLN-01: Nosferatu choose Sewer Lore 1 or +1 physical, Toreador +1 Herd or +1 social,
    Ventrue +1 Leadership or +1 physical; other clans choose nothing (`None`)."""
    row = get_clan(clan)
    if not row.creation_bonus_choices:
        if choice is not None:
            raise ValueError(_("%(clan)s have no creation bonus to choose.") % {"clan": row.title})
        return
    if choice not in row.creation_bonus_choices:
        first, second = row.creation_bonus_choices  # CLN-01: always one of two
        raise ValueError(
            _("%(clan)s must choose one creation bonus: %(first)s or %(second)s; got %(got)s.")
            % {"clan": row.title, "first": first, "second": second, "got": repr(choice)}
        )


INFLUENCE_TYPES: tuple[str, ...] = ("business", "government", "herd", "occult", "underworld")
VENTRUE_HERD_MODES: tuple[str, ...] = ("double_cost", "half_yield")


def _influence_type(influence: object) -> str:
    if not isinstance(influence, str) or influence not in INFLUENCE_TYPES:
        raise ValueError(
            _("Unknown influence %(influence)s; use one of %(influences)s.")
            % {"influence": repr(influence), "influences": ", ".join(INFLUENCE_TYPES)}
        )
    return influence


def influence_title(influence: str) -> str:
    """INF-01: an influence as a player reads it, in the active language (the same words as
    characters.models.INFLUENCE_LABELS: "Business" the influence, not a firm)."""
    titles = {
        "business": pgettext("influence", "Business"),
        "government": pgettext("influence", "Government"),
        "herd": pgettext("influence", "Herd"),
        "occult": pgettext("influence", "Occult"),
        "underworld": pgettext("influence", "Underworld"),
    }
    return titles[_influence_type(influence)]


def trait_area_title(area: str) -> str:
    """CRE-01: a trait area (physical, social, mental) as a player reads it."""
    titles = {
        "physical": pgettext("trait area", "Physical"),
        "social": pgettext("trait area", "Social"),
        "mental": pgettext("trait area", "Mental"),
    }
    return titles.get(area, area.title())


def _herd_mode(mode: str) -> str:
    if mode not in VENTRUE_HERD_MODES:
        raise ValueError(f"ventrue_herd_mode must be one of {', '.join(VENTRUE_HERD_MODES)}.")
    return mode


UNIT_KINDS: tuple[str, ...] = ("trait", "ability", "willpower", "sewer_lore")


def unit_cost(
    kind: str,
    quantity: int = 1,
    *,
    trait_cost: int = 1,
    ability_cost: int = 1,
    willpower_cost: int = 3,
) -> int:
    """CRE-06: freebies or XP for `quantity` traits, abilities, willpower or Sewer Lore levels.
    INTERPRETATION (settings): trait 1, ability 1, willpower 3; Sewer Lore is priced as an
    ability, since the source lists it under ABILITIES (SEW-01) and gives no price."""
    if kind not in UNIT_KINDS:
        raise ValueError(
            _("Unknown kind %(kind)s; use one of %(kinds)s.")
            % {"kind": repr(kind), "kinds": ", ".join(UNIT_KINDS)}
        )
    _int("quantity", quantity)
    per_unit = {
        "trait": trait_cost,
        "ability": ability_cost,
        "willpower": willpower_cost,
        "sewer_lore": ability_cost,
    }[kind]
    return _int(f"{kind} cost", per_unit) * quantity


def influence_point_cost(
    influence: str, *, clan: str | None, ventrue_herd_mode: str = "double_cost"
) -> int:
    """INF-01 / CLN-03: XP or freebies for one permanent influence point: 1, but Ventrue Herd
    costs 2. INTERPRETATION (setting `ventrue_herd_mode`): "double_cost" (default) or
    "half_yield" (Herd costs 1 and yields half, see `herd_blood_yield`)."""
    _influence_type(influence)
    _herd_mode(ventrue_herd_mode)
    doubled = clan is not None and get_clan(clan).herd_costs_double
    if doubled and influence == "herd" and ventrue_herd_mode == "double_cost":
        return 2
    return 1


def influence_available(*, rating: int, spent: int, borrowed: int = 0, lent: int = 0) -> int:
    """INF-03: points of one influence type a character may still spend this cycle: its
    permanent rating, plus what it borrowed for the cycle, minus what it lent and what it has
    already spent this cycle, at the game or in downtime. INTERPRETATION (setting
    `influence_lapses_each_cycle`): unspent points lapse, so nothing carries over."""
    left = _int("rating", rating) + _int("borrowed", borrowed) - _int("lent", lent)
    return max(0, left - _int("spent", spent))


def check_influence_spend(
    influence: str, points: int, *, rating: int, spent: int, borrowed: int = 0, lent: int = 0
) -> None:
    """INF-03: refuse spending more of one type in a cycle than the character has left."""
    _influence_type(influence)
    if isinstance(points, bool) or not isinstance(points, int) or points < 1:
        raise ValueError(_("Spend at least 1 point of influence (INF-03)."))
    left = influence_available(rating=rating, spent=spent, borrowed=borrowed, lent=lent)
    if points > left:
        raise ValueError(
            ngettext(
                "Only %(left)s point of %(influence)s is left to spend this cycle, not "
                "%(points)s (INF-03).",
                "Only %(left)s points of %(influence)s are left to spend this cycle, not "
                "%(points)s (INF-03).",
                left,
            )
            % {"left": left, "influence": influence_title(influence), "points": points}
        )


def herd_blood_yield(
    herd: int, *, clan: str | None, herd_yield: int = 3, ventrue_herd_mode: str = "double_cost"
) -> int:
    """BLD-04 / CLN-03: blood from spending Herd: `herd_yield` (3, lowered by STs after
    masquerade breaches) per point. Under the "half_yield" alternative a Ventrue gets half,
    rounded down, because blood comes in whole points."""
    _int("herd", herd)
    _int("herd_yield", herd_yield)
    _herd_mode(ventrue_herd_mode)
    blood = herd * herd_yield
    doubled = clan is not None and get_clan(clan).herd_costs_double
    if doubled and ventrue_herd_mode == "half_yield":
        return blood // 2
    return blood


# --- Influence uses (INF-02, BLD-04) -------------------------------------------------------------

# INF-02: what each influence action kind (downtimes.models.ActionKind's values) may be paid
# with. The text: "All influence types may be used to build or attack havens, attack others'
# influences, or investigate"; "Business, Government, Underworld, and Occult (to a lesser extent)
# may be used to acquire items" (INTERPRETATION: "to a lesser extent" still allows Occult; the
# storytellers judge how much it buys); "Herd may be used as sources of blood"; "Occult may be
# used for research and development of new rituals". Repairing is building again, searching
# (HAV-25b: "total influences spent") and leaving the city (INF-04: "an influence request") name
# no type, and "other" is the storytellers' to judge: any type.
INFLUENCE_USES: dict[str, tuple[str, ...]] = {
    "build": INFLUENCE_TYPES,
    "repair": INFLUENCE_TYPES,
    "search": INFLUENCE_TYPES,
    "attack_haven": INFLUENCE_TYPES,
    "attack_influence": INFLUENCE_TYPES,
    "investigate": INFLUENCE_TYPES,
    "acquire": ("business", "government", "occult", "underworld"),
    "herd": ("herd",),
    "research": ("occult",),
    "leave_city": INFLUENCE_TYPES,
    "other": INFLUENCE_TYPES,
}
INFLUENCE_ACTIONS: tuple[str, ...] = tuple(INFLUENCE_USES)


def influence_action_title(action: str) -> str:
    """INF-02: an influence action kind as a player reads it (the same words as
    downtimes.models.ActionKind's labels, so one translation serves both)."""
    titles = {
        "build": _("Contribute to building or upgrading a haven"),
        "repair": _("Repair a haven"),
        "search": _("Search for a character's havens"),
        "attack_haven": _("Attack a found haven"),
        "attack_influence": _("Attack another's influence"),
        "investigate": _("Investigate"),
        "acquire": _("Acquire an item"),
        "herd": _("Herd blood"),
        "research": _("Occult research"),
        "leave_city": _("Leave the city (INF-04)"),
        "other": _("Other"),
    }
    return titles[_influence_action(action)]


def _influence_action(action: object) -> str:
    if not isinstance(action, str) or action not in INFLUENCE_USES:
        raise ValueError(
            _("Unknown influence action %(action)s; use one of %(actions)s.")
            % {"action": repr(action), "actions": ", ".join(INFLUENCE_ACTIONS)}
        )
    return action


def influence_types_for(action: str) -> tuple[str, ...]:
    """INF-02: the influence types `action` accepts, in INF-01's order."""
    return INFLUENCE_USES[_influence_action(action)]


def influence_use_allowed(action: str, influence: str) -> bool:
    """INF-02: whether points of `influence` may pay for `action` (Herd blood takes only
    Herd, occult research only Occult, acquiring an item any type but Herd)."""
    return _influence_type(influence) in influence_types_for(action)


def _or_list(words: Sequence[str]) -> str:
    if len(words) == 1:
        return words[0]
    return _("%(some)s or %(last)s") % {"some": ", ".join(words[:-1]), "last": words[-1]}


def check_influence_use(action: str, influence: str) -> None:
    """INF-02: refuse an action paid with a type it does not accept, naming the types it
    does ("Herd blood can be paid only with Herd influence, not Business (INF-02).")."""
    if influence_use_allowed(action, influence):
        return
    allowed = [influence_title(name) for name in influence_types_for(action)]
    raise ValueError(
        _("“%(action)s” can be paid only with %(allowed)s influence, not %(influence)s (INF-02).")
        % {
            "action": influence_action_title(action),
            "allowed": _or_list(allowed),
            "influence": influence_title(influence),
        }
    )


def herd_blood_stored(
    herd: int,
    *,
    clan: str | None,
    herd_yield: int = 3,
    ventrue_herd_mode: str = "double_cost",
    hunting_excess_becomes_stored: bool = True,
) -> int:
    """BLD-04 / INF-02: the stored blood a downtime spend of `herd` points of Herd for blood
    gives once released: `herd_blood_yield` (points × `herd_yield`), all of it, since in
    downtime Herd "can collect blood over the normal blood pool" and the app keeps no in-body
    pool between games. INTERPRETATION (setting `hunting_excess_becomes_stored`, default on):
    off, nothing is stored and the STs hand the blood out as pool at the next game (0)."""
    blood = herd_blood_yield(
        herd, clan=clan, herd_yield=herd_yield, ventrue_herd_mode=ventrue_herd_mode
    )
    return blood if hunting_excess_becomes_stored else 0


# --- Discipline purchases (DIS-03 .. DIS-08, CRE-03, CRE-04) -------------------------------------

BASIC_LEVEL_COST = 3  # DIS-03, from the document's examples
CREATION_PATH_FEE = 3  # DIS-04
CREATION_LEVEL_SURCHARGE = 2  # DIS-04, flat per level
PLAY_LEVEL_SURCHARGE = 1  # DIS-05, flat per level
CAITIFF_LEVEL_SURCHARGE = CLANS["caitiff"].out_of_clan_level_surcharge  # DIS-06
GHOUL_DISCIPLINES: frozenset[str] = frozenset({"celerity", "fortitude", "potence"})
KINDS: tuple[str, ...] = ("kindred", "ghoul", "kine")


def discipline_cost(
    levels: Sequence[str],
    *,
    in_clan: bool,
    at_creation: bool,
    path_owned: bool = False,
    caitiff: bool = False,
    discipline_cost_intermediate: int = 6,
    discipline_cost_advanced: int = 9,
    caitiff_surcharge_at_creation: bool = True,
) -> int:
    """DIS-03..06: the cost of buying these consecutive levels (e.g. ["1a", "1b"]) of one
    discipline in one purchase.

    - DIS-03: base cost 3 per basic level; INTERPRETATION (settings): 6 per 2a/2b
      (`discipline_cost_intermediate`), 9 for 3a (`discipline_cost_advanced`). In-clan pays
      the base only.
    - DIS-04: out-of-clan at creation adds 3 for the path (unless `path_owned`) and a flat 2 per
      level.
    - DIS-05: out-of-clan in play adds nothing for the path and a flat 1 per level.
    - DIS-06: a Caitiff pays 1 more per out-of-clan level; INTERPRETATION (setting
      `caitiff_surcharge_at_creation`): at creation too.

    `path_owned` only decides the path fee; whether the levels follow those owned is
    `check_level_order`, and the DIS-08 monthly limit is `check_purchase_timing`.
    """
    numbers = _purchase_levels(levels)
    _int("discipline_cost_intermediate", discipline_cost_intermediate)
    _int("discipline_cost_advanced", discipline_cost_advanced)
    base_by_category = {1: BASIC_LEVEL_COST, 2: discipline_cost_intermediate}
    base = sum(base_by_category.get((n + 1) // 2, discipline_cost_advanced) for n in numbers)
    if in_clan:
        return base
    if at_creation:
        path_fee = 0 if path_owned else CREATION_PATH_FEE
        per_level = CREATION_LEVEL_SURCHARGE
    else:
        path_fee, per_level = 0, PLAY_LEVEL_SURCHARGE
    if caitiff and (caitiff_surcharge_at_creation or not at_creation):
        per_level += CAITIFF_LEVEL_SURCHARGE
    return path_fee + base + per_level * len(numbers)


def check_discipline_allowed(
    discipline: str,
    *,
    kind: str,
    clan: str | None = None,
    chosen: Sequence[str] = (),
    at_creation: bool,
) -> None:
    """Who may buy a discipline at all.

    - CRE-04: kine buy no disciplines.
    - CRE-03: ghouls buy only Celerity, Fortitude and Potence.
    - DIS-04: at creation, a restricted discipline cannot be bought out-of-clan, except a
      Tremere buying the other Thaumaturgy paths.
    """
    _discipline(discipline)
    if kind not in KINDS:
        raise ValueError(
            _("Unknown character kind %(kind)s; use one of %(kinds)s.")
            % {"kind": repr(kind), "kinds": ", ".join(KINDS)}
        )
    if kind == "kine":
        raise ValueError(_("Kine may not buy disciplines (CRE-04)."))
    if kind == "ghoul":
        if clan is not None:
            raise ValueError("Ghouls have no clan; pass clan=None.")
        if discipline not in GHOUL_DISCIPLINES:
            raise ValueError(
                _(
                    "Ghouls may only buy Celerity, Fortitude and Potence, not %(discipline)s "
                    "(CRE-03)."
                )
                % {"discipline": DISCIPLINE_TITLES[discipline]}
            )
        return
    if clan is None:
        raise ValueError(_("A kindred needs a clan."))
    in_clan = discipline in in_clan_disciplines(clan, chosen=chosen)
    tremere_path = clan == "tremere" and discipline in THAUMATURGY_PATHS
    if at_creation and not in_clan and discipline in RESTRICTED_DISCIPLINES and not tremere_path:
        raise ValueError(
            _(
                "%(discipline)s is restricted and cannot be bought out-of-clan at creation "
                "(DIS-04); it can be learned in play from a teacher."
            )
            % {"discipline": DISCIPLINE_TITLES[discipline]}
        )


def _teacher_level_needed(discipline: str) -> int:
    # DIS-07: restricted disciplines need an advanced (3a) teacher, others intermediate (2a+).
    return LEVEL_NUMBERS["3a"] if discipline in RESTRICTED_DISCIPLINES else LEVEL_NUMBERS["2a"]


@dataclass(frozen=True)
class Teacher:
    """DIS-07: the teacher's clan (and chosen in-clan disciplines, for a Caitiff or Tremere) and
    their level in the discipline taught."""

    clan: str
    level: str
    chosen: tuple[str, ...] = ()


def teacher_required(
    discipline: str,
    level: str,
    *,
    student_clan: str | None,
    student_chosen: Sequence[str] = (),
) -> bool:
    """DIS-07: whether learning this level in play needs a teacher.

    Out-of-clan 1a and 1b need one; 2a, 2b and 3a do not; a Tremere learning another
    Thaumaturgy path needs none. INTERPRETATION: in-clan purchases need no teacher.
    """
    _discipline(discipline)
    number = level_number(level)
    if discipline in in_clan_disciplines(student_clan, chosen=student_chosen):
        return False
    if student_clan == "tremere" and discipline in THAUMATURGY_PATHS:
        return False
    return number <= LEVEL_NUMBERS["1b"]


def check_teacher(
    discipline: str,
    level: str,
    *,
    student_clan: str | None,
    student_chosen: Sequence[str] = (),
    teacher: Teacher | None,
    caitiff_chosen_count_in_clan_for_teaching: bool = True,
) -> None:
    """DIS-07: reject a lesson whose teacher cannot teach it.

    The teacher must have the discipline in-clan (for a Tremere only the chosen path counts)
    at 2a or higher, or at 3a for a restricted discipline. Nobody teaches a discipline they
    have only out-of-clan. INTERPRETATION (setting
    `caitiff_chosen_count_in_clan_for_teaching`): a Caitiff's chosen 3 count as in-clan.
    When no teacher is needed, any `teacher` (or None) is accepted.
    """
    if not teacher_required(
        discipline, level, student_clan=student_clan, student_chosen=student_chosen
    ):
        return
    title = DISCIPLINE_TITLES[discipline]
    needed = level_code(_teacher_level_needed(discipline))
    shown = {"discipline": title, "level": level, "needed": needed}
    if teacher is None:
        raise ValueError(
            _(
                "Out-of-clan %(discipline)s %(level)s must be taught by someone who has "
                "%(discipline)s in-clan at %(needed)s or higher (DIS-07)."
            )
            % shown
        )
    teacher_in_clan = discipline in in_clan_disciplines(teacher.clan, chosen=teacher.chosen)
    if teacher.clan == "caitiff" and not caitiff_chosen_count_in_clan_for_teaching:
        teacher_in_clan = False
    if not teacher_in_clan:
        raise ValueError(
            _(
                "The teacher has %(discipline)s only out-of-clan and cannot teach it (DIS-07); "
                "find a teacher who has it in-clan at %(needed)s or higher."
            )
            % shown
        )
    if level_number(teacher.level) < _teacher_level_needed(discipline):
        if discipline in RESTRICTED_DISCIPLINES:
            message = _(
                "To teach %(discipline)s (a restricted discipline) the teacher needs it in-clan "
                "at %(needed)s or higher, and has %(has)s (DIS-07)."
            )
        else:
            message = _(
                "To teach %(discipline)s the teacher needs it in-clan at %(needed)s or higher, "
                "and has %(has)s (DIS-07)."
            )
        raise ValueError(message % {**shown, "has": teacher.level})


PURCHASE_MOMENTS: tuple[str, ...] = ("creation", "downtime", "game")


class PurchaseMomentError(ValueError):
    """A purchase refused for *when* it is made (XP-01, DIS-08), not for what it buys: the
    refusal belongs beside the "when" field."""


def check_before_play(asked_at: datetime, *, play_starts: datetime | None) -> None:
    """XP-01: XP may be spent "at the game before play starts". An at-game purchase asked at
    `asked_at` is accepted strictly before `play_starts`, the game's start as an aware moment
    in the chronicle's zone (the refusal names it in that zone), and refused from then on.

    `play_starts=None` is a game with no start time: then the whole game day counts, as the
    caller's choice of "today's game" already ensures, and nothing more is checked here."""
    if not isinstance(asked_at, datetime) or asked_at.utcoffset() is None:
        raise ValueError(f"asked_at must be an aware moment, got {asked_at!r}.")
    if play_starts is None:
        return
    if not isinstance(play_starts, datetime) or play_starts.utcoffset() is None:
        raise ValueError(f"play_starts must be an aware moment, got {play_starts!r}.")
    if asked_at >= play_starts:
        raise PurchaseMomentError(
            _("Play started at %(start)s; buy it in your downtime instead (XP-01).")
            % {"start": play_starts.strftime("%H:%M")}
        )


def check_purchase_timing(
    levels: Sequence[str],
    *,
    when: str,
    in_clan: bool,
    levels_bought_this_cycle: int = 0,
    discipline_levels_per_cycle: int = 1,
    tremere_path: bool = False,
    tremere_paths_any_time: bool = True,
) -> None:
    """DIS-08 / XP-01: when discipline levels may be bought.

    `when` is "creation", "downtime" or "game" (at the game, before play starts).
    - No monthly limit at creation.
    - In play at most `discipline_levels_per_cycle` levels per cycle; INTERPRETATION (setting):
      1 per character per cycle, across all disciplines (`levels_bought_this_cycle` counts
      those already approved this cycle).
    - Out-of-clan levels only in downtime (DIS-08), refused with `PurchaseMomentError`.
    - CLN-01 (Tremere): the other two Thaumaturgy paths "may be bought any time at out-of-clan
      cost" (`tremere_path`: a Tremere buying one of them). The clan's text is the more
      specific, so by default (setting `tremere_paths_any_time`) they may be bought at the game
      too; off, DIS-08's reading holds for them as well: in downtime only.
    """
    numbers = _purchase_levels(levels)
    if when not in PURCHASE_MOMENTS:
        raise ValueError(f"when must be one of {', '.join(PURCHASE_MOMENTS)}, got {when!r}.")
    _int("levels_bought_this_cycle", levels_bought_this_cycle)
    _int("discipline_levels_per_cycle", discipline_levels_per_cycle, minimum=1)
    if when == "creation":
        return
    any_time = tremere_path and tremere_paths_any_time
    if not in_clan and when != "downtime" and not any_time:
        raise PurchaseMomentError(
            _("Out-of-clan discipline levels can only be bought in downtime (DIS-08).")
        )
    if levels_bought_this_cycle + len(numbers) > discipline_levels_per_cycle:
        raise ValueError(
            ngettext(
                "Only %(limit)s discipline level(s) per month in play (DIS-08); %(bought)s "
                "already bought this cycle, %(asked)s more asked. Buy the next level next month.",
                "Only %(limit)s discipline level(s) per month in play (DIS-08); %(bought)s "
                "already bought this cycle, %(asked)s more asked. Buy the next level next month.",
                discipline_levels_per_cycle,
            )
            % {
                "limit": discipline_levels_per_cycle,
                "bought": levels_bought_this_cycle,
                "asked": len(numbers),
            }
        )


# --- Character creation (CRE-01, CRE-02, CRE-05) -----------------------------------------------


@dataclass(frozen=True)
class Package:
    """CRE-01: what a new character of one kind gets before freebies."""

    kind: str
    trait_areas: tuple[int, int, int]
    abilities: int
    min_distinct_abilities: int
    willpower: int
    influences: int
    free_basic_levels: int
    freebies: int


PACKAGES: Mapping[str, Package] = {
    "kindred": Package("kindred", (7, 5, 3), 5, 3, 2, 3, 3, 10),
    "ghoul": Package("ghoul", (7, 5, 3), 5, 3, 1, 3, 0, 19),
    "kine": Package("kine", (7, 5, 3), 5, 3, 1, 3, 0, 16),
}
TRAIT_AREAS: tuple[str, ...] = ("physical", "social", "mental")


def creation_package(kind: str) -> Package:
    """CRE-01: the package of a kindred, ghoul or kine."""
    if kind not in PACKAGES:
        raise ValueError(
            _("Unknown character kind %(kind)s; use one of %(kinds)s.")
            % {"kind": repr(kind), "kinds": ", ".join(KINDS)}
        )
    return PACKAGES[kind]


def check_creation_package(
    *,
    kind: str,
    trait_areas: Mapping[str, int],
    abilities: Mapping[str, int],
    willpower: int,
    influences: Mapping[str, int],
    free_disciplines: Mapping[str, Sequence[str]] | None = None,
    clan: str | None = None,
    chosen: Sequence[str] = (),
    free_basic_discipline_levels: int = 3,
) -> None:
    """CRE-01: validate the package allocation before freebies and clan bonuses are applied.

    - trait areas are 7, 5 and 3 in some order over physical, social and mental;
    - 5 ability points over at least 3 distinct abilities;
    - willpower 2 (kindred) or 1 (ghoul, kine);
    - influences add up to 3, or 2 for a Tremere (CLN-04; the Toreador Herd bonus comes on top);
    - kindred only: `free_basic_discipline_levels` (INTERPRETATION, setting, 3) free levels of
      in-clan disciplines, each 1a or 1a + 1b.

    Raises `RuleViolation` listing every problem.
    """
    package = creation_package(kind)
    problems: list[str] = []
    topics: list[str] = []

    def about(topic: str) -> None:
        topics.extend([topic] * (len(problems) - len(topics)))

    if kind == "kindred":
        if clan is None:
            raise ValueError(_("A kindred needs a clan."))
        in_clan = in_clan_disciplines(clan, chosen=chosen)
    elif clan is not None or chosen:
        raise ValueError(f"A {kind} has no clan; pass clan=None.")
    else:
        in_clan = frozenset()

    if set(trait_areas) != set(TRAIT_AREAS):
        problems.append(_("Give exactly the three trait areas physical, social and mental."))
    elif sorted(trait_areas.values(), reverse=True) != list(package.trait_areas):
        problems.append(_("The trait areas must be 7, 5 and 3, one each (CRE-01)."))
    about("trait_areas")

    ability_problems = []
    for name, rating in abilities.items():
        if not isinstance(name, str) or not name.strip():
            ability_problems.append(_("Every ability needs a name."))
        if isinstance(rating, bool) or not isinstance(rating, int) or rating < 1:
            ability_problems.append(
                _("Ability %(name)s must have a rating of 1 or more.") % {"name": repr(name)}
            )
    problems += ability_problems
    if not ability_problems:
        total = sum(abilities.values())
        if total != package.abilities:
            problems.append(
                ngettext(
                    "Spread exactly %(count)s ability points; got %(got)s.",
                    "Spread exactly %(count)s ability points; got %(got)s.",
                    package.abilities,
                )
                % {"count": package.abilities, "got": total}
            )
        if len(abilities) < package.min_distinct_abilities:
            problems.append(
                ngettext(
                    "Use at least %(count)s different abilities; got %(got)s.",
                    "Use at least %(count)s different abilities; got %(got)s.",
                    package.min_distinct_abilities,
                )
                % {"count": package.min_distinct_abilities, "got": len(abilities)}
            )
    about("abilities")

    if isinstance(willpower, bool) or willpower != package.willpower:
        new_kind = {
            "kindred": _("A new kindred has %(count)s willpower; got %(got)s."),
            "ghoul": _("A new ghoul has %(count)s willpower; got %(got)s."),
            "kine": _("A new kine has %(count)s willpower; got %(got)s."),
        }[kind]
        problems.append(new_kind % {"count": package.willpower, "got": repr(willpower)})
    about("willpower")

    expected_influence = package.influences
    if kind == "kindred" and clan is not None:
        expected_influence = starting_influence(clan)
    unknown = [name for name in influences if name not in INFLUENCE_TYPES]
    if unknown:
        problems.append(
            ngettext(
                "Unknown influence(s) %(names)s; use %(influences)s.",
                "Unknown influence(s) %(names)s; use %(influences)s.",
                len(unknown),
            )
            % {"names": ", ".join(map(repr, unknown)), "influences": ", ".join(INFLUENCE_TYPES)}
        )
    elif any(isinstance(v, bool) or not isinstance(v, int) or v < 0 for v in influences.values()):
        problems.append(_("Influence ratings must be whole numbers of 0 or more."))
    elif sum(influences.values()) != expected_influence:
        problems.append(
            ngettext(
                "Spread exactly %(count)s starting influence(s); got %(got)s (CLN-04).",
                "Spread exactly %(count)s starting influence(s); got %(got)s (CLN-04).",
                expected_influence,
            )
            % {"count": expected_influence, "got": sum(influences.values())}
        )
    about("influences")

    free_disciplines = dict(free_disciplines or {})
    if kind != "kindred":
        if free_disciplines:
            problems.append(
                _("A ghoul gets no free disciplines (CRE-01).")
                if kind == "ghoul"
                else _("A kine gets no free disciplines (CRE-01).")
            )
    else:
        count, well_formed = 0, True
        for discipline, levels in free_disciplines.items():
            _discipline(discipline)
            if discipline not in in_clan:
                problems.append(
                    _("Free levels must be in-clan; %(discipline)s is not.")
                    % {"discipline": DISCIPLINE_TITLES[discipline]}
                )
            if isinstance(levels, str) or list(levels) not in (["1a"], ["1a", "1b"]):
                problems.append(
                    _(
                        "Free %(discipline)s levels must be 1a, or 1a and 1b (basic only, 1b "
                        "requires 1a); got %(got)s."
                    )
                    % {"discipline": DISCIPLINE_TITLES[discipline], "got": repr(levels)}
                )
                well_formed = False
            else:
                count += len(levels)
        if well_formed and count != free_basic_discipline_levels:
            problems.append(
                ngettext(
                    "Take exactly %(count)s free basic in-clan levels; got %(got)s.",
                    "Take exactly %(count)s free basic in-clan levels; got %(got)s.",
                    free_basic_discipline_levels,
                )
                % {"count": free_basic_discipline_levels, "got": count}
            )
    about("free_disciplines")
    if problems:
        raise RuleViolation(problems, topics)


@dataclass(frozen=True)
class Disadvantage:
    """CRE-02: one disadvantage or derangement, tagged major/minor and physical/non-physical."""

    name: str
    major: bool
    physical: bool
    hideously_ugly: bool = False


def check_disadvantages(disadvantages: Sequence[Disadvantage], *, clan: str | None) -> None:
    """CRE-02: the disadvantages a new PC must take.

    - Everyone: 2 minor or 1 major (a major counts as 2 minor).
    - Malkavian, instead: 2 major or 3 minor, taken literally (1 major + 1 minor is not
      enough), and at least one non-physical.
    - Nosferatu, instead: 2 major physical, or 1 major physical + 2 minor physical, and one
      major is "hideously ugly". The source sentence is about physical disadvantages, so the
      minor ones must be physical too (its parenthesis never closes, SRC-05: this is the
      reading of the damaged sentence).

    INTERPRETATION: the clan rules replace the general minimum; they don't add to it.
    """
    if isinstance(clan, str):
        get_clan(clan)
    for item in disadvantages:
        if item.hideously_ugly and not item.physical:
            raise ValueError(
                _("%(name)s: hideously ugly is a physical disadvantage.")
                % {"name": repr(item.name)}
            )
    majors = [d for d in disadvantages if d.major]
    minors = [d for d in disadvantages if not d.major]
    if clan == "malkavian":
        if not (len(majors) >= 2 or len(minors) >= 3):
            raise ValueError(_("A Malkavian needs 2 major or 3 minor disadvantages (CRE-02)."))
        if all(d.physical for d in disadvantages):
            raise ValueError(
                _("A Malkavian needs at least one non-physical disadvantage (CRE-02).")
            )
        return
    if clan == "nosferatu":
        physical_majors = sum(1 for d in majors if d.physical)
        physical_minors = sum(1 for d in minors if d.physical)
        if not (physical_majors >= 2 or (physical_majors >= 1 and physical_minors >= 2)):
            raise ValueError(
                _(
                    "A Nosferatu needs 2 major physical disadvantages, or 1 major and 2 minor "
                    "physical ones (CRE-02)."
                )
            )
        if not any(d.hideously_ugly for d in majors):
            raise ValueError(
                _("One of a Nosferatu's major disadvantages is hideously ugly (CRE-02).")
            )
        return
    if 2 * len(majors) + len(minors) < 2:
        raise ValueError(_("Every PC takes 2 minor disadvantages or 1 major (CRE-02)."))


PROTEAN_FORMS: tuple[str, ...] = ("wolf", "bat")  # CRE-08, Protean 2a "Beast Within"


def creation_flag_problems(
    *,
    clan: str | None,
    protean_form: str = "",
    feeding_demographic: str = "",
    embrace_earth: bool = False,
    gangrel_only_choose_form_at_creation: bool = True,
) -> dict[str, str]:
    """CRE-08 / CLN-01: the flags a new character settles at creation, as {field: problem}.

    A Gangrel chooses Wolf or Bat form (CRE-08), once. INTERPRETATION (setting
    `gangrel_only_choose_form_at_creation`): anyone else chooses when it first gains 2a, so
    choosing at creation is refused while the setting is on. A Ventrue stores a feeding
    demographic (CLN-01); a Tzimisce confirms the earth of its embrace (CLN-01). A flag that
    belongs to another clan is refused, so no sheet carries a rule that does not apply to it.
    """
    row = CLANS.get(clan) if clan else None
    problems: dict[str, str] = {}
    if protean_form and protean_form not in PROTEAN_FORMS:
        problems["protean_form"] = _("Choose Wolf or Bat form (CRE-08).")
    elif clan == "gangrel" and not protean_form:
        problems["protean_form"] = _(
            "A Gangrel chooses Wolf or Bat form for Protean 2a at creation (CRE-08)."
        )
    elif clan != "gangrel" and protean_form and gangrel_only_choose_form_at_creation:
        problems["protean_form"] = _(
            "Only a Gangrel chooses Wolf or Bat form at creation; others choose when they "
            "first gain Protean 2a (CRE-08)."
        )
    needs_demographic = row is not None and row.needs_feeding_demographic
    if needs_demographic and not feeding_demographic.strip():
        problems["feeding_demographic"] = _(
            # "20%" is text, not a placeholder: nothing is interpolated into this sentence.
            # xgettext:no-python-format
            "A Ventrue names the feeding demographic, a group under 20% of people (CLN-01)."
        )
    elif not needs_demographic and feeding_demographic.strip():
        problems["feeding_demographic"] = _("Only a Ventrue has a feeding demographic (CLN-01).")
    needs_earth = row is not None and row.haven_needs_embrace_earth
    if needs_earth and not embrace_earth:
        problems["embrace_earth"] = _(
            "A Tzimisce keeps at least 1 m³ of earth from the place of its embrace; confirm "
            "it (CLN-01)."
        )
    elif not needs_earth and embrace_earth:
        problems["embrace_earth"] = _("Only a Tzimisce keeps the earth of its embrace (CLN-01).")
    return problems


CAITIFF_LOWEST_CREATION_GENERATION = 10  # CRE-05, from the document


def check_creation_generation(
    generation: int,
    *,
    caitiff: bool,
    starting_generation: int = 13,
    lowest_creation_generation: int = 8,
) -> None:
    """CRE-05: the generation a new character may have. Caitiff: 13th to 10th.
    INTERPRETATION (settings): everyone starts at 13th (`starting_generation`); others may buy
    down to 8th (`lowest_creation_generation`)."""
    _int("generation", generation, minimum=1)
    lowest = CAITIFF_LOWEST_CREATION_GENERATION if caitiff else lowest_creation_generation
    if not lowest <= generation <= starting_generation:
        if caitiff:
            message = _(
                "A Caitiff starts between generation %(start)s and %(lowest)s, got %(got)s "
                "(CRE-05)."
            )
        else:
            message = _(
                "A new character starts between generation %(start)s and %(lowest)s, got "
                "%(got)s (CRE-05)."
            )
        raise ValueError(
            message % {"start": starting_generation, "lowest": lowest, "got": generation}
        )


@dataclass(frozen=True)
class GenerationMaximums:
    """CRE-07: one row of the generation table."""

    traits: int  # per trait area (physical, social, mental)
    willpower: int
    blood_pool: int  # BLD-05


def generation_maximums(
    generation: int, *, generation_table_base: int = 10, starting_generation: int = 13
) -> GenerationMaximums:
    """CRE-07: the trait maximum per area, the willpower maximum and the blood pool of a
    generation. The source table is lost (SRC-01). INTERPRETATION (settings): every column is
    `generation_table_base` (10) at `starting_generation` (13th) and 1 more for each lower
    generation; a higher generation than the start has 1 less per step, never below 1. Clan
    bonus points (CLN-01) may exceed the trait maximum: callers leave them out."""
    _int("generation", generation, minimum=1)
    _int("generation_table_base", generation_table_base, minimum=1)
    _int("starting_generation", starting_generation, minimum=1)
    value = max(generation_table_base + starting_generation - generation, 1)
    return GenerationMaximums(traits=value, willpower=value, blood_pool=value)


DIABLERIE_STEP_SURCHARGE = 1  # XP-05: "a Brujah ... pays 3 XP, a Caitiff pays 4 XP"


def generation_cost(
    steps: int,
    *,
    caitiff: bool = False,
    diablerie: bool = False,
    generation_step_cost: int = 2,
    caitiff_generation_step_cost: int = 3,
) -> int:
    """CRE-05 / XP-03 / XP-05: XP or freebies to lower the generation by `steps`.

    Caitiff pay 3 per step (doc). INTERPRETATION (setting `generation_step_cost`): everyone
    else pays 2, inferred from "a Brujah who diablerizes pays 3". A drop after diablerie costs
    1 more per step. The one-step-per-downtime limit of XP-05 is the caller's to schedule.
    """
    _int("steps", steps)
    _int("generation_step_cost", generation_step_cost)
    _int("caitiff_generation_step_cost", caitiff_generation_step_cost)
    per_step = caitiff_generation_step_cost if caitiff else generation_step_cost
    if diablerie:
        per_step += DIABLERIE_STEP_SURCHARGE
    return steps * per_step


# --- Control and blood (CTL-01, BLD-01, BLD-03) -------------------------------------------------

ANIMALISM_1B_CONTROL_BONUS = 3  # CTL-01 / Animalism 1b, always on


def control_traits(
    *,
    clan: str,
    generation: int,
    discipline_levels: int,
    childer: int = 0,
    diableries: int = 0,
    extra_control: int = 0,
    willpower: int,
    animalism_1b: bool = False,
) -> int:
    """CTL-01: permanent control rating.

    `max(gen - levels - childer - diableries + extra + willpower, extra + willpower)`, then −1
    for Brujah and +3 for Animalism 1b or higher, then capped at 10 (Brujah 8, Gangrel 7).
    INTERPRETATION: the adjustments come before the cap. A result below 1 makes the character
    an NPC (CTL-02); it is returned as is, not clamped.
    """
    row = get_clan(clan)
    _int("generation", generation, minimum=1)
    for name, value in (
        ("discipline_levels", discipline_levels),
        ("childer", childer),
        ("diableries", diableries),
        ("extra_control", extra_control),
        ("willpower", willpower),
    ):
        _int(name, value)
    if animalism_1b and discipline_levels < LEVEL_NUMBERS["1b"]:
        raise ValueError(_("Animalism 1b means at least 2 discipline levels are owned."))
    floor = extra_control + willpower
    base = max(generation - discipline_levels - childer - diableries + floor, floor)
    adjusted = base + row.control_adjustment
    if animalism_1b:
        adjusted += ANIMALISM_1B_CONTROL_BONUS
    return min(adjusted, row.control_cap)


def becomes_npc(control: int) -> bool:
    """CTL-02: control below 1 turns the character into an NPC."""
    return _int("control", control, minimum=None) < 1


MAX_CONTROL = 10


def on_body_blood_limit(control: int) -> int:
    """BLD-01: at most floor(control / 2) stored blood carried on the body. INTERPRETATION: uses
    the permanent control rating (0..10)."""
    return _int("control", control, minimum=0, maximum=MAX_CONTROL) // 2


DONOR_TYPES: tuple[str, ...] = ("kine", "kindred", "mixed_kindred")


def stored_blood_unusable_from(
    *,
    donor_type: str,
    collected_on: date,
    kine_blood_months: int = 3,
    mixed_kindred_blood_expires: bool = False,
) -> date | None:
    """BLD-03: the first day stored blood can no longer be used, or None if it never expires.

    Kine blood is unusable `kine_blood_months` (3) months after collection; blood from a single
    kindred never expires. INTERPRETATION (setting `mixed_kindred_blood_expires`): mixed kindred
    blood doesn't expire either.
    """
    if donor_type not in DONOR_TYPES:
        raise ValueError(
            _("Unknown donor type %(donor_type)s; use one of %(donor_types)s.")
            % {"donor_type": repr(donor_type), "donor_types": ", ".join(DONOR_TYPES)}
        )
    _date("collected_on", collected_on)
    _int("kine_blood_months", kine_blood_months, minimum=1)
    if donor_type == "kindred" or (
        donor_type == "mixed_kindred" and not mixed_kindred_blood_expires
    ):
        return None
    return add_months(collected_on, kine_blood_months)


# --- Blood bonds (BND-01 .. BND-07, BND-09) -----------------------------------------------------


@dataclass(frozen=True)
class Drink:
    """BND: one drink of kindred blood: the night, the kindred donor(s), and whether the blood
    was mixed (a shared-bond drink). Unmixed blood has exactly one donor."""

    night: date
    donors: tuple[str, ...]
    mixed: bool = False


@dataclass(frozen=True)
class BondBreak:
    """BND-03 / BND-06: a ritual that removed the bond (and partial levels) to one kindred."""

    night: date
    donor: str


@dataclass(frozen=True)
class BondState:
    """BND: a drinker's bonds on a given date.

    `pure_levels` and `share_counts` hold only partial progress (levels 1..2, counts 1..5) that
    has not lapsed; bonds in force are `pure_regnant` and `share_bonds` (donor → first day the
    bond is no longer in force).
    """

    pure_regnant: str | None = None
    pure_since: date | None = None
    pure_ends: date | None = None
    pure_levels: Mapping[str, int] = field(default_factory=dict)
    share_bonds: Mapping[str, date] = field(default_factory=dict)
    share_counts: Mapping[str, int] = field(default_factory=dict)


PURE_BOND_LEVELS = 3  # BND-01: "over three nights"


def bond_state(
    drinks: Iterable[Drink],
    *,
    on: date,
    deaths: Mapping[str, date] | None = None,
    rituals: Iterable[BondBreak] = (),
    embraced_on: date | None = None,
    pure_bond_months: int = 12,
    shared_bond_months: int = 6,
    shared_bond_drinks: int = 6,
    bond_months_after_death: int = 1,
    regnant_drink_refreshes_bond: bool = True,
) -> BondState:
    """BND-01..07 (and CRE-04): the bonds of one drinker on date `on`, from their drink history.

    - BND-01: with no bond in force, an unmixed drink raises that kindred's pure level by 1,
      at most once per night; level 3 binds.
    - BND-02: while a pure bond is in force other drinks have no effect. INTERPRETATION
      (setting `regnant_drink_refreshes_bond`): the regnant's own blood refreshes its timer.
    - BND-03: a pure bond ends `pure_bond_months` (12) after the last drink, at a ritual, or
      `bond_months_after_death` (1) after the regnant's death. INTERPRETATION: partial levels
      lapse 12 months after that kindred's last drink.
    - BND-04: a mixed drink counts 1 per donor; `shared_bond_drinks` (6) share-bind.
    - BND-05: while a share bond is in force, every drink, unmixed included, counts as a donor
      drink.
    - BND-06: a share bond ends `shared_bond_months` (6) after that donor's last drink, at a
      ritual, or a month after the donor's death; partial counts lapse after 6 months too.
    - BND-07: a pure bond forms only with no share bond in force (ensured by BND-05), and a
      share bond only with no pure bond in force (ensured by BND-02).
    - CRE-04: the embrace of a ghoul or kine breaks every bond and partial level.

    End dates are exclusive: the bond is in force before that day. Events after `on` are
    ignored, so a full history answers for any date. On one night, endings come first, then
    rituals and the embrace, then the drinks in the order given.
    """
    _date("on", on)
    for name, value in (
        ("pure_bond_months", pure_bond_months),
        ("shared_bond_months", shared_bond_months),
        ("shared_bond_drinks", shared_bond_drinks),
        ("bond_months_after_death", bond_months_after_death),
    ):
        _int(name, value, minimum=1)
    death_dates = {kindred: _date("death date", died) for kindred, died in (deaths or {}).items()}
    known_deaths = {kindred: died for kindred, died in death_dates.items() if died <= on}

    drink_list: list[Drink] = []
    for drink in drinks:
        _date("drink night", drink.night)
        if isinstance(drink.donors, str) or not drink.donors:
            raise ValueError("Each drink needs a tuple of one or more donor ids.")
        donors = tuple(drink.donors)
        if not drink.mixed and len(donors) != 1:
            raise ValueError(
                _("An unmixed drink has exactly one donor; mark blood of several mixed.")
            )
        if len(set(donors)) != len(donors):
            raise ValueError(_("List each donor of a mixed drink once."))
        if drink.night <= on:
            drink_list.append(Drink(drink.night, donors, drink.mixed))
    drink_list.sort(key=lambda d: d.night)
    breaks: dict[date, list[str]] = {}
    for ritual in rituals:
        if _date("ritual night", ritual.night) <= on:
            breaks.setdefault(ritual.night, []).append(ritual.donor)
    if embraced_on is not None and _date("embraced_on", embraced_on) > on:
        embraced_on = None

    pure_regnant: str | None = None
    pure_since: date | None = None
    pure_last: date | None = None
    pure_levels: dict[str, int] = {}
    pure_last_night: dict[str, date] = {}
    share_counts: dict[str, int] = {}
    share_last: dict[str, date] = {}
    share_bound: dict[str, date] = {}  # donor -> night bound

    def after_death(kindred: str) -> date | None:
        died = known_deaths.get(kindred)
        return None if died is None else add_months(died, bond_months_after_death)

    def pure_end() -> date:
        assert pure_regnant is not None and pure_last is not None
        ends = [add_months(pure_last, pure_bond_months), after_death(pure_regnant)]
        return min(d for d in ends if d is not None)

    def share_end(donor: str) -> date:
        ends = [add_months(share_last[donor], shared_bond_months), after_death(donor)]
        return min(d for d in ends if d is not None)

    def expire(today: date) -> None:
        nonlocal pure_regnant, pure_since, pure_last
        if pure_regnant is not None and today >= pure_end():
            pure_regnant = pure_since = pure_last = None
        for kindred in list(pure_levels):
            if today >= add_months(pure_last_night[kindred], pure_bond_months):
                del pure_levels[kindred], pure_last_night[kindred]
        for donor in list(share_counts):
            ended = share_end(donor) if donor in share_bound else None
            lapsed = add_months(share_last[donor], shared_bond_months)
            if today >= (ended or lapsed):
                del share_counts[donor], share_last[donor]
                share_bound.pop(donor, None)

    def break_bonds(donor: str | None) -> None:
        nonlocal pure_regnant, pure_since, pure_last
        if donor is None or pure_regnant == donor:
            pure_regnant = pure_since = pure_last = None
        for table in (pure_levels, pure_last_night, share_counts, share_last, share_bound):
            for kindred in list(table):
                if donor is None or kindred == donor:
                    del table[kindred]

    nights = sorted({d.night for d in drink_list} | set(breaks) | {on})
    if embraced_on is not None:
        nights = sorted(set(nights) | {embraced_on})
    for night in nights:
        expire(night)
        for donor in breaks.get(night, []):
            break_bonds(donor)
        if night == embraced_on:
            break_bonds(None)
        for drink in (d for d in drink_list if d.night == night):
            if pure_regnant is not None:
                if regnant_drink_refreshes_bond and drink.donors == (pure_regnant,):
                    pure_last = night
                continue
            if share_bound or drink.mixed:
                for donor in drink.donors:
                    share_counts[donor] = share_counts.get(donor, 0) + 1
                    share_last[donor] = night
                    if share_counts[donor] >= shared_bond_drinks and donor not in share_bound:
                        share_bound[donor] = night
                continue
            (kindred,) = drink.donors
            if pure_last_night.get(kindred) == night:
                continue  # BND-01: at most one level per night
            pure_levels[kindred] = pure_levels.get(kindred, 0) + 1
            pure_last_night[kindred] = night
            if pure_levels[kindred] >= PURE_BOND_LEVELS:
                pure_regnant, pure_since, pure_last = kindred, night, night
                del pure_levels[kindred], pure_last_night[kindred]

    return BondState(
        pure_regnant=pure_regnant,
        pure_since=pure_since,
        pure_ends=pure_end() if pure_regnant is not None else None,
        pure_levels=dict(pure_levels),
        share_bonds={donor: share_end(donor) for donor in share_bound},
        share_counts={d: n for d, n in share_counts.items() if d not in share_bound},
    )


MAX_ACTIVE_REQUESTS = 4  # BND-09


def check_new_request(*, bound: bool, active_requests: int) -> None:
    """BND-09: a regnant may set a request only on a bound thrall, and have at most 4 in force
    on that thrall; a 5th is rejected."""
    _int("active_requests", active_requests)
    if not bound:
        raise ValueError(_("Only a bound thrall can be given requests (BND-09)."))
    if active_requests >= MAX_ACTIVE_REQUESTS:
        raise ValueError(
            ngettext(
                "A regnant may have at most %(count)s requests in force per thrall (BND-09); "
                "drop one first.",
                "A regnant may have at most %(count)s requests in force per thrall (BND-09); "
                "drop one first.",
                MAX_ACTIVE_REQUESTS,
            )
            % {"count": MAX_ACTIVE_REQUESTS}
        )


def request_can_be_ignored(set_at: str) -> bool:
    """BND-09: a request set at a game can be ignored with 1 willpower (the regnant may
    counter-spend); one set in downtime cannot."""
    if set_at not in ("game", "downtime"):
        raise ValueError(f"set_at must be 'game' or 'downtime', got {set_at!r}.")
    return set_at == "game"


# --- XP (XP-06, GEN-02) ------------------------------------------------------------------------


def retirement_points(*, spent: Decimal, unspent: Decimal) -> Decimal:
    """XP-06: on death or retirement the player gets 50% of the spent XP plus all unspent XP
    for the new character. Half of an odd half-step (e.g. 45.5 → 22.75) is rounded up to the
    next 0.5 step, in the player's favour, so the ledger stays in 0.5 steps."""
    total = _xp("spent", spent) / 2 + _xp("unspent", unspent)
    return _round_to_half(total, ROUND_CEILING)


# --- Rebuilding a character (XP-07, CRE-04; issue 14) ---------------------------------------------


def spent_since_rebuild(*, spent: Decimal, spent_before_rebuild: Decimal) -> Decimal:
    """XP-07a: a character that returns (XP-07) or is embraced (CRE-04) is rebuilt from scratch,
    and its player was already credited for what the old build spent (XP-06 at retirement; the
    embrace refund). A later death or retirement therefore counts only the XP spent since the
    rebuild: e.g. 60 spent in all, 40 of them before the rebuild → 20."""
    total = _xp("spent", spent)
    before = _xp("spent_before_rebuild", spent_before_rebuild)
    return max(total - before, Decimal(0))


EMBRACEABLE = ("ghoul", "kine")


def check_embrace(creature: str) -> None:
    """CRE-04: a ghoul or kine embraced in play is rebuilt as kindred. CRE-03: an animal ghoul
    cannot be embraced; a kindred already is one."""
    if creature == "animal_ghoul":
        raise ValueError(_("Animals cannot be embraced (CRE-03)."))
    if creature == "kindred":
        raise ValueError(
            _("This character is already kindred; only a ghoul or kine is embraced (CRE-04).")
        )
    if creature not in EMBRACEABLE:
        raise ValueError(
            _("Only a ghoul or kine can be embraced, not %(creature)s (CRE-04).")
            % {"creature": creature}
        )


def embrace_xp_refund(*, spent: Decimal, embrace_refunds_spent_xp: bool = True) -> Decimal:
    """CRE-04: "that character must be recreated from scratch as a kindred with the same XP".
    INTERPRETATION (setting `embrace_refunds_spent_xp`, default on): the XP spent on the ghoul
    or kine comes back to the player's ledger, so with the unspent XP already there the kindred
    is rebuilt with all of it (e.g. 30 spent, 5 unspent → 35 to rebuild with). Off: only the
    player's current balance, as for a return (XP-07)."""
    amount = _xp("spent", spent)
    return amount if embrace_refunds_spent_xp else Decimal(0)


@dataclass(frozen=True)
class CheatingPenalty:
    """GEN-02: what the n-th offense brings: "warning", "halve_xp" or "ban", and the XP ledger
    change (negative for a debit)."""

    action: str
    xp_change: Decimal


def cheating_penalty(
    *,
    offense: int,
    lifetime_earned_xp: Decimal,
    cheating_second_offense_fraction: Decimal = Decimal("0.5"),
) -> CheatingPenalty:
    """GEN-02: 1st offense a warning, 2nd halves earned XP, 3rd (and later) a ban.
    INTERPRETATION (setting `cheating_second_offense_fraction`): the 2nd offense debits 50% of
    the lifetime earned XP, rounded down to a 0.5 step, in the player's favour."""
    _int("offense", offense, minimum=1)
    earned = _xp("lifetime_earned_xp", lifetime_earned_xp)
    fraction = Decimal(cheating_second_offense_fraction)
    if not Decimal(0) <= fraction <= Decimal(1):
        raise ValueError("cheating_second_offense_fraction must be between 0 and 1.")
    if offense == 1:
        return CheatingPenalty("warning", Decimal(0))
    if offense == 2:
        return CheatingPenalty("halve_xp", -_round_to_half(earned * fraction, ROUND_FLOOR))
    return CheatingPenalty("ban", Decimal(0))


# --- Items (ITM-02, ITM-03) --------------------------------------------------------------------

CONCEALABILITY: tuple[str, ...] = ("blue", "yellow", "red")  # most to least concealable


MIN_ITEM_COST = 1  # ITM-01: an item costs at least 1 (issue 14: no free items)


def check_item_cost(purchase_cost: int) -> int:
    """ITM-01: an item's purchase cost (with reinforcement and attachments) is at least 1."""
    if isinstance(purchase_cost, bool) or not isinstance(purchase_cost, int):
        raise ValueError(f"purchase_cost must be a whole number, got {purchase_cost!r}.")
    if purchase_cost < MIN_ITEM_COST:
        raise ValueError(
            _("An item costs at least %(minimum)s (ITM-01); got %(cost)s.")
            % {"minimum": MIN_ITEM_COST, "cost": purchase_cost}
        )
    return purchase_cost


def item_repair_cost(
    purchase_cost: int,
    *,
    item_repair_fraction: Decimal = Decimal("0.5"),
    item_repair_free_at_cost_one: bool = True,
) -> int:
    """ITM-02: repairing refreshes the expiry date and "will always be cheaper than buying a
    new item". INTERPRETATION (setting `item_repair_fraction`): half the cost, rounded up,
    minimum 1 (cost 2 → 1, 3 → 2, 4 → 2, 5 → 3) and never less than 1 below the cost, whatever
    the fraction. An item of cost 1 cannot be repaired for less than 1 and more than 0: setting
    `item_repair_free_at_cost_one` (ITM-02) makes that repair free (default) or cost 1. An item
    costs at least 1 (ITM-01), so cost 0 is refused."""
    check_item_cost(purchase_cost)
    fraction = Decimal(item_repair_fraction)
    if not Decimal(0) < fraction < Decimal(1):
        raise ValueError("item_repair_fraction must be above 0 and below 1.")
    if purchase_cost == 1:
        return 0 if item_repair_free_at_cost_one else 1
    return min(purchase_cost - 1, max(1, math.ceil(purchase_cost * fraction)))


CONCEALMENT_DOWNGRADE_FACTOR = 3  # ITM-03


def concealment_downgrade_cost(purchase_cost: int) -> int:
    """ITM-03: a concealment downgrade costs 3 x the original purchase cost, including
    reinforcement and attachments (pass that total)."""
    return CONCEALMENT_DOWNGRADE_FACTOR * _int("purchase_cost", purchase_cost)


def downgraded_concealability(concealability: str, *, already_downgraded: bool) -> str:
    """ITM-03: once per item, one step: red → yellow or yellow → blue."""
    if concealability not in CONCEALABILITY:
        raise ValueError(
            _("Unknown concealability %(concealability)s; use %(choices)s.")
            % {"concealability": repr(concealability), "choices": ", ".join(CONCEALABILITY)}
        )
    if already_downgraded:
        raise ValueError(_("An item's concealment can be downgraded only once (ITM-03)."))
    if concealability == "blue":
        raise ValueError(_("A blue (jacket) item is already as concealable as items get."))
    return CONCEALABILITY[CONCEALABILITY.index(concealability) - 1]


# --- Sewer lore (SEW-02, SEW-04) ---------------------------------------------------------------

MAX_SEWER_LORE = 8  # SEW-01
NOSFERATU_SLOTS_PER_LORE = 4  # SEW-02
SEWER_SEARCH_FACTOR = 3  # SEW-04


def sewer_location_slots(lore: int, *, nosferatu: bool) -> int:
    """SEW-02: sewer locations a character can know: 4 per lore for Nosferatu, 1 for others."""
    _int("lore", lore, maximum=MAX_SEWER_LORE)
    return lore * (NOSFERATU_SLOTS_PER_LORE if nosferatu else 1)


def sewer_search_succeeds(searchers: Sequence[int], defenders: Sequence[int]) -> bool:
    """SEW-04: a group search finds a location if the searchers' lore adds up to at least 3 x
    the defenders' lore (≥, unlike HAV-25b's strict >). INTERPRETATION: the defenders are the
    characters who created or own the location; with none, any search finds it."""
    if not searchers:
        raise ValueError(_("A sewer search needs at least one searcher."))
    for lore in (*searchers, *defenders):
        _int("sewer lore", lore, maximum=MAX_SEWER_LORE)
    return sum(searchers) >= SEWER_SEARCH_FACTOR * sum(defenders)


# --- Torpor (TOR-01) ---------------------------------------------------------------------------


def check_torpor_hold(*, consecutive_downtimes_held: int, torpor_hold_cycles: int = 1) -> None:
    """TOR-01: a holder may keep a controlled character in torpor for at most one month: a hold
    in the downtime right after a held one is rejected. `consecutive_downtimes_held` counts the
    downtimes immediately before this one in which the same hold was made."""
    _int("consecutive_downtimes_held", consecutive_downtimes_held)
    _int("torpor_hold_cycles", torpor_hold_cycles, minimum=1)
    if consecutive_downtimes_held >= torpor_hold_cycles:
        raise ValueError(
            ngettext(
                "A torpor hold lasts at most %(count)s month(s) (TOR-01); the character "
                "recovers overnight and may act this downtime.",
                "A torpor hold lasts at most %(count)s month(s) (TOR-01); the character "
                "recovers overnight and may act this downtime.",
                torpor_hold_cycles,
            )
            % {"count": torpor_hold_cycles}
        )

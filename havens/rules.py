"""Haven house rules: ownership, attributes and their costs, hiding and searching, influence and
reinforcement attacks, theft, and objects hidden on site.

Pure Python: standard library only, no clock. Every public function cites the SPEC.md rule it
implements. Illegal input raises `ValueError` (or `RuleViolation`, a subclass listing every
problem) with a message a player or ST can act on. Every INTERPRETATION number of SPEC.md is a
keyword parameter with SPEC's default, named like its `chronicle.rules.HouseRules` setting.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

# RuleViolation is shared so callers catch one type for every app's multi-problem checks.
from characters.rules import LEVEL_NUMBERS, RuleViolation
from chronicle.rules import _, pgettext, whole_number


def _int(name: str, value: object, *, minimum: int | None = 0, maximum: int | None = None) -> int:
    """A count of these rules: zero or more unless said otherwise (chronicle.rules checks)."""
    return whole_number(name, value, minimum=minimum, maximum=maximum)


def _bools(name: str, values: Sequence[bool]) -> list[bool]:
    if isinstance(values, str) or not all(isinstance(v, bool) for v in values):
        raise ValueError(
            _("%(name)s must be a list of true/false values, one per game.") % {"name": name}
        )
    return list(values)


# --- Ownership (HAV-01, HAV-03, HAV-06, HAV-07) -------------------------------------------------

STRUCTURES: tuple[str, ...] = ("outer", "crypt")


def _structure(structure: str) -> str:
    if structure not in STRUCTURES:
        raise ValueError(
            _("Unknown structure %(structure)r; use 'outer' (outer haven) or 'crypt'.")
            % {"structure": structure}
        )
    return structure


def crypt_destruction_allowed(*, outer_owners: int, in_favour: int) -> bool:
    """HAV-03: the exclusive owner of a communal haven's outer haven, or a simple majority (more
    than half) of its partial owners, may destroy any crypt inside."""
    _int("outer_owners", outer_owners, minimum=1)
    _int("in_favour", in_favour, maximum=outer_owners)
    return 2 * in_favour > outer_owners


def consecutive_absences(attended: Sequence[bool]) -> int:
    """HAV-06: games in a row, up to the latest, that an owner was absent from play.
    `attended` is one entry per game, oldest first."""
    run = 0
    for present in reversed(_bools("attended", attended)):
        if present:
            break
        run += 1
    return run


def forsaken_by_absence(attended: Sequence[bool], *, forsake_after_absent_games: int = 6) -> bool:
    """HAV-06: an owner absent from 6 games in a row forsakes their structures, in the downtime
    after the 6th game. Attending any game resets the count."""
    _int("forsake_after_absent_games", forsake_after_absent_games, minimum=1)
    return consecutive_absences(attended) >= forsake_after_absent_games


FORSAKE_OUTCOMES: tuple[str, ...] = (
    "destroy_with_crypts",
    "destroy",
    "remaining_owner_becomes_exclusive",
    "owner_removed",
)


def forsake_outcome(*, structure: str, owners: int) -> str:
    """HAV-06: what happens when one owner forsakes a structure that has `owners` owners.

    - the exclusive owner of an outer haven: it and every crypt in it are destroyed;
    - the owner of a crypt (crypts have exactly one owner, HAV-01): the crypt is destroyed;
    - a partial owner leaving exactly one other: that one becomes the exclusive owner;
    - a partial owner leaving several others: only their ownership ends.
    """
    _structure(structure)
    _int("owners", owners, minimum=1)
    if structure == "crypt":
        if owners != 1:
            raise ValueError(_("A crypt has exactly one owner (HAV-01)."))
        return "destroy"
    if owners == 1:
        return "destroy_with_crypts"
    if owners == 2:
        return "remaining_owner_becomes_exclusive"
    return "owner_removed"


def theft_completes(thief_controlled: Sequence[bool], *, theft_control_games: int = 2) -> bool:
    """HAV-07: thieves who control a haven for 2 games own it. INTERPRETATION (setting
    `theft_control_games`): 2 consecutive games recorded by an ST, up to the latest game, mobile
    havens included; the transfer happens in the next downtime. `thief_controlled` is one entry
    per game, oldest first."""
    _int("theft_control_games", theft_control_games, minimum=1)
    run = 0
    for controlled in reversed(_bools("thief_controlled", thief_controlled)):
        if not controlled:
            break
        run += 1
    return run >= theft_control_games


# HAV-07: on a theft every alarm and lock becomes inoperative; a timelock is a lock too.
ATTRIBUTES_DISABLED_BY_THEFT: frozenset[str] = frozenset(
    {"alarm", "two_way_lock", "one_way_lock", "timelock"}
)


# --- Attributes (HAV-10 .. HAV-24) -------------------------------------------------------------

# Influence per unit; for the two "points" kinds the unit is 3 resistance or 10 reinforcement.
ATTRIBUTE_COSTS: Mapping[str, int] = {
    "alarm": 5,  # HAV-10
    "exit": 5,  # HAV-11
    "camera": 1,  # HAV-12; what cameras, recorders and monitors do is lost (SRC-04)
    "recorder": 1,  # HAV-13
    "hiding": 15,  # HAV-14
    "influence_resistance": 1,  # HAV-15, per 3 points
    "two_way_lock": 2,  # HAV-16
    "one_way_lock": 2,  # HAV-17
    "timelock": 2,  # HAV-18
    "mobility": 15,  # HAV-19
    "monitor": 1,  # HAV-20
    "reinforcement": 1,  # HAV-21, per 10 points
    "seals": 10,  # HAV-22
}
ATTRIBUTE_KINDS: tuple[str, ...] = tuple(ATTRIBUTE_COSTS)
# The row of SPEC's attribute table each kind comes from, so every refusal names its rule.
ATTRIBUTE_RULE_IDS: Mapping[str, str] = {
    "alarm": "HAV-10",
    "exit": "HAV-11",
    "camera": "HAV-12",
    "recorder": "HAV-13",
    "hiding": "HAV-14",
    "influence_resistance": "HAV-15",
    "two_way_lock": "HAV-16",
    "one_way_lock": "HAV-17",
    "timelock": "HAV-18",
    "mobility": "HAV-19",
    "monitor": "HAV-20",
    "reinforcement": "HAV-21",
    "seals": "HAV-22",
}
RESISTANCE_POINTS_PER_INFLUENCE = 3  # HAV-15
REINFORCEMENT_POINTS_PER_INFLUENCE = 10  # HAV-21
POINTS_PER_UNIT: Mapping[str, int] = {
    "influence_resistance": RESISTANCE_POINTS_PER_INFLUENCE,
    "reinforcement": REINFORCEMENT_POINTS_PER_INFLUENCE,
}
# Bought once per structure: a second one would do nothing.
ONCE_PER_STRUCTURE: frozenset[str] = frozenset({"hiding", "mobility", "seals"})


def _kind(kind: object) -> str:
    if not isinstance(kind, str) or kind not in ATTRIBUTE_COSTS:
        raise ValueError(
            _("Unknown haven attribute %(kind)r; use one of %(kinds)s.")
            % {"kind": kind, "kinds": ", ".join(ATTRIBUTE_KINDS)}
        )
    return kind


def _word(kind: str) -> str:
    """An attribute's name inside a sentence of these rules, in the reader's language."""
    words = {
        "alarm": pgettext("haven attribute", "alarm"),
        "exit": pgettext("haven attribute", "exit"),
        "camera": pgettext("haven attribute", "camera"),
        "recorder": pgettext("haven attribute", "recorder"),
        "hiding": pgettext("haven attribute", "hiding"),
        "influence_resistance": pgettext("haven attribute", "influence resistance"),
        "two_way_lock": pgettext("haven attribute", "two-way lock"),
        "one_way_lock": pgettext("haven attribute", "one-way lock"),
        "timelock": pgettext("haven attribute", "timelock"),
        "mobility": pgettext("haven attribute", "mobility"),
        "monitor": pgettext("haven attribute", "monitor"),
        "reinforcement": pgettext("haven attribute", "reinforcement"),
        "seals": pgettext("haven attribute", "seals"),
    }
    return words.get(kind, kind)


def attribute_cost(kind: str, quantity: int = 1) -> int:
    """HAV-10..22: influence to buy `quantity` of one attribute.

    For "influence_resistance" the quantity is points, a multiple of 3 (1 influence per 3); for
    "reinforcement" it is points, a multiple of 10 (1 influence per 10). Hiding, mobility and
    seals are bought once per structure (quantity 1).
    """
    _kind(kind)
    _int("quantity", quantity, minimum=1)
    if kind in ONCE_PER_STRUCTURE and quantity != 1:
        raise ValueError(
            _("%(attribute)s is bought once per structure; the quantity must be 1 (%(rule)s).")
            % {"attribute": _word(kind), "rule": ATTRIBUTE_RULE_IDS[kind]}
        )
    per_unit = POINTS_PER_UNIT.get(kind, 1)
    if quantity % per_unit:
        raise ValueError(
            _(
                "%(attribute)s is bought in steps of %(step)s points (1 influence each); "
                "%(quantity)s is not a multiple of %(step)s (%(rule)s)."
            )
            % {
                "attribute": _word(kind),
                "step": per_unit,
                "quantity": quantity,
                "rule": ATTRIBUTE_RULE_IDS[kind],
            }
        )
    return ATTRIBUTE_COSTS[kind] * (quantity // per_unit)


def reinforcement_points(influences: int) -> int:
    """HAV-21: 1 influence buys 10 reinforcement points per structure."""
    return REINFORCEMENT_POINTS_PER_INFLUENCE * _int("influences", influences)


def repair_cost(original_cost: int) -> int:
    """HAV-24: repairing a destroyed lock or breached reinforcement costs half the original
    construction cost. INTERPRETATION: rounded up (5 → 3)."""
    return math.ceil(_int("original_cost", original_cost) / 2)


# HAV-16 / HAV-21 / HAV-24: only two-way locks can be destroyed and only reinforcement
# breached; every other attribute is indestructible. A bypassed lock is intact.
REPAIRABLE_STATES: Mapping[str, frozenset[str]] = {
    "two_way_lock": frozenset({"destroyed"}),
    "reinforcement": frozenset({"breached"}),
}


def needs_repair(kind: str, state: str) -> bool:
    """HAV-24: whether an attribute in this state waits for a repair (destroyed two-way lock,
    breached reinforcement)."""
    return state in REPAIRABLE_STATES.get(_kind(kind), frozenset())


def is_destructible(kind: str) -> bool:
    """HAV-10..22: "indestructible" attributes never need repair."""
    return _kind(kind) in REPAIRABLE_STATES


MAX_EXITS_PER_CRYPT = 5  # HAV-11


def design_problems(
    *,
    structure: str,
    attributes: Mapping[str, int],
    inside_mobile_haven: bool = False,
    crypt_in_mobile_haven_is_mobile: bool = True,
) -> list[str]:
    """HAV-23: what is wrong with a structure's design (empty when it is valid).

    `attributes` maps attribute kind to quantity (points for influence_resistance and
    reinforcement). Rejected: Hiding with Mobility; Mobility with reinforcement or alternate
    exits; more than 5 exits on a crypt (HAV-11 states the limit per crypt only).
    INTERPRETATION (setting `crypt_in_mobile_haven_is_mobile`): a crypt inside a mobile outer
    haven counts as mobile.
    """
    _structure(structure)
    if structure == "outer" and inside_mobile_haven:
        raise ValueError(_("Only a crypt is inside another haven; pass inside_mobile_haven=False."))
    for kind, quantity in attributes.items():
        _kind(kind)
        _int(f"{kind} quantity", quantity)
    problems: list[str] = []
    for kind in sorted(ONCE_PER_STRUCTURE):
        if attributes.get(kind, 0) > 1:
            problems.append(
                _("A structure has at most one %(attribute)s (%(rule)s).")
                % {"attribute": _word(kind), "rule": ATTRIBUTE_RULE_IDS[kind]}
            )
    for kind, per_unit in POINTS_PER_UNIT.items():
        if attributes.get(kind, 0) % per_unit:
            problems.append(
                _("%(attribute)s comes in steps of %(step)s points (%(rule)s).")
                % {"attribute": _word(kind), "step": per_unit, "rule": ATTRIBUTE_RULE_IDS[kind]}
            )
    has_mobility = attributes.get("mobility", 0) > 0
    mobile = has_mobility or (inside_mobile_haven and crypt_in_mobile_haven_is_mobile)
    # Whole sentences for translators: a mobile haven, or a crypt that is mobile by its outer.
    if attributes.get("hiding", 0) and mobile:
        problems.append(
            _("A mobile haven cannot also have Hiding (HAV-14, HAV-19).")
            if has_mobility
            else _("A crypt inside a mobile haven cannot also have Hiding (HAV-14, HAV-19).")
        )
    if attributes.get("reinforcement", 0) and mobile:
        problems.append(
            _("A mobile haven cannot be reinforced (HAV-19, HAV-21).")
            if has_mobility
            else _("A crypt inside a mobile haven cannot be reinforced (HAV-19, HAV-21).")
        )
    if attributes.get("exit", 0) and mobile:
        problems.append(
            _("A mobile haven cannot have alternate exits (HAV-11, HAV-19).")
            if has_mobility
            else _("A crypt inside a mobile haven cannot have alternate exits (HAV-11, HAV-19).")
        )
    if structure == "crypt" and attributes.get("exit", 0) > MAX_EXITS_PER_CRYPT:
        problems.append(
            _("A crypt has at most %(exits)s alternate exits (HAV-11).")
            % {"exits": MAX_EXITS_PER_CRYPT}
        )
    return problems


def check_attribute_purchase(
    *,
    structure: str,
    existing: Mapping[str, int],
    kind: str,
    quantity: int = 1,
    buyer_is_owner: bool,
    inside_mobile_haven: bool = False,
    crypt_in_mobile_haven_is_mobile: bool = True,
) -> int:
    """HAV-02 / HAV-23: validate adding `quantity` of `kind` to a structure whose attributes are
    `existing`, and return its cost in influence (HAV-10..22). Only owners may change a design.
    Raises `RuleViolation` listing every problem."""
    cost = attribute_cost(kind, quantity)
    design = dict(existing)
    design[kind] = design.get(kind, 0) + quantity
    problems = [] if buyer_is_owner else [_("Only a structure's owners may change it (HAV-02).")]
    problems += design_problems(
        structure=structure,
        attributes=design,
        inside_mobile_haven=inside_mobile_haven,
        crypt_in_mobile_haven_is_mobile=crypt_in_mobile_haven_is_mobile,
    )
    if problems:
        raise RuleViolation(problems)
    return cost


# --- Hiding and searching (HAV-25, HAV-25b) ----------------------------------------------------


def hiding_points(*, mental_traits: int, influences: int, hidden: bool) -> int:
    """HAV-25: a haven's hiding points for one owner: (mental traits + influences) x 2, doubled
    if the structure has Hiding. INTERPRETATION: `influences` is the sum of the owner's 5
    permanent ratings at resolution time."""
    base = 2 * (_int("mental_traits", mental_traits) + _int("influences", influences))
    return 2 * base if hidden else base


@dataclass(frozen=True)
class OwnerStanding:
    """HAV-25: one owner's mental traits and permanent influences (all 5 summed)."""

    owner: str
    mental_traits: int
    influences: int


def hiding_owner(owners: Sequence[OwnerStanding]) -> OwnerStanding:
    """HAV-25: the owner whose numbers hide the haven: the one with the highest mental traits +
    influences (ties give the same hiding points, so the first listed is used). For a crypt,
    INTERPRETATION: pass the outer haven's owners, since a crypt is found through it."""
    if not owners:
        raise ValueError(_("A haven has at least one owner (HAV-01)."))
    for standing in owners:
        _int("mental_traits", standing.mental_traits)
        _int("influences", standing.influences)
    return max(owners, key=lambda s: s.mental_traits + s.influences)


def haven_hiding_points(
    owners: Sequence[OwnerStanding],
    *,
    hidden: bool,
    mobile: bool = False,
    mobile_havens_hiding_doubled: bool = True,
) -> int:
    """HAV-25: hiding points of a haven with these owners. INTERPRETATION (setting
    `mobile_havens_hiding_doubled`, issue 14): a mobile haven "is easier to hide", so its points
    are doubled as if it had Hiding; off, the older reading (not doubled). Hiding and Mobility
    cannot be combined (HAV-23), so a mobile haven is never doubled twice."""
    if hidden and mobile:
        raise ValueError(_("A haven cannot have both Hiding and Mobility (HAV-23)."))
    primary = hiding_owner(owners)
    return hiding_points(
        mental_traits=primary.mental_traits,
        influences=primary.influences,
        hidden=hidden or (mobile and mobile_havens_hiding_doubled),
    )


def search_finds(*, spent: int, hiding_points: int) -> bool:
    """HAV-25b: a search finds a haven if the influence spent is strictly greater than its
    hiding points."""
    return _int("spent", spent) > _int("hiding_points", hiding_points)


def cooperative_search_finds(spends: Sequence[int], *, hiding_points: int) -> bool:
    """HAV-25b: cooperating searchers sum their spend. Searchers who don't cooperate are separate
    searches: call this once per group."""
    if isinstance(spends, int) or not spends:
        raise ValueError(_("Give the influence spent by each cooperating searcher, as a list."))
    total = sum(_int("spent", spent) for spent in spends)
    return search_finds(spent=total, hiding_points=hiding_points)


# --- Influence attacks (HAV-25c) ---------------------------------------------------------------


def influence_attack(*, resistance: int, spent: int) -> tuple[int, bool]:
    """HAV-25c: each influence spent permanently removes 1 resistance point; resistance below
    zero destroys the haven. Returns (resistance left, destroyed); a destroyed haven has 0 left.
    """
    _int("resistance", resistance)
    left = resistance - _int("spent", spent)
    return (0, True) if left < 0 else (left, False)


def check_influence_attack_target(
    *, mobile: bool, found_before_submission: bool, attack_needs_earlier_find: bool = True
) -> None:
    """HAV-25c: mobile havens are immune to influence attacks, and only a found haven can be
    attacked. INTERPRETATION (setting `attack_needs_earlier_find`): found before this downtime's
    submission."""
    if mobile:
        raise ValueError(_("A mobile haven cannot be attacked through influence (HAV-25c)."))
    if attack_needs_earlier_find and not found_before_submission:
        raise ValueError(
            _(
                "Only a haven already found can be attacked through influence (HAV-25c); "
                "search for it first."
            )
        )


# --- Reinforcement attacks (HAV-26) ------------------------------------------------------------

MAX_LEVEL = LEVEL_NUMBERS["3a"]
STRONGEST_ATTACKERS = 3  # HAV-26


def reinforcement_attack_bid(potence_levels: Sequence[int], *, potence_zero_adds: int = 4) -> int:
    """HAV-26: the attackers' bid: sum over the 3 strongest of (2 + Potence level)², levels
    0 (no Potence) to 5 (3a). No blood or willpower may be spent. An empty party bids 0
    (HAV-26a, issue 14); a level outside 0..5 is refused.

    INTERPRETATION (setting `potence_zero_adds`, named `no_potence_attacker_adds` in
    HouseRules): an attacker without Potence counts as level 0 and adds (2 + 0)² = 4; the
    alternative is 0.
    """
    if isinstance(potence_levels, (int, str)):
        raise ValueError(_("Give the Potence level of each attacker, as a list of 0..5."))
    # Issue 14: an empty attacking party bids nothing (HAV-26a).
    levels = [_int("Potence level", lv, maximum=MAX_LEVEL) for lv in potence_levels]
    if potence_zero_adds not in (0, 4):
        raise ValueError("potence_zero_adds must be 4 (the literal reading) or 0.")
    strongest = sorted(levels, reverse=True)[:STRONGEST_ATTACKERS]
    return sum((2 + lv) ** 2 if lv else potence_zero_adds for lv in strongest)


def min_influences_to_win_ties(attack_bid: int) -> int:
    """HAV-26: the fewest reinforcement influences whose points beat `attack_bid`, so the
    structure wins ties: floor(B / 10) + 1 (bid 99 → 10 influences, 100 points)."""
    return _int("attack_bid", attack_bid) // REINFORCEMENT_POINTS_PER_INFLUENCE + 1


def reinforcement_tie_winner(*, reinforcement: int, attack_bid: int) -> str | None:
    """HAV-26 with TST-01: who wins rock-paper-scissors ties: "structure" if its points are
    higher, "attacker" if the bid is higher, None for equal bids (play until someone wins)."""
    _int("reinforcement", reinforcement)
    _int("attack_bid", attack_bid)
    if reinforcement == attack_bid:
        return None
    return "structure" if reinforcement > attack_bid else "attacker"


def structure_breached(
    attacker_won: Sequence[bool],
    *,
    any_attacker_has_potence_3a: bool,
    potence_3a_breach_after_tests: int = 2,
) -> bool:
    """HAV-26: tests are made every 5 minutes, oldest first in `attacker_won`; winning once
    penetrates the structure. With an attacker at Potence 3a it is breached after at most 10
    minutes. INTERPRETATION (setting `potence_3a_breach_after_tests`): automatically once 2
    tests have failed."""
    results = _bools("attacker_won", attacker_won)
    _int("potence_3a_breach_after_tests", potence_3a_breach_after_tests, minimum=1)
    if any(results):
        return True
    return any_attacker_has_potence_3a and len(results) >= potence_3a_breach_after_tests


# --- Objects hidden on site (HID-01, HID-02) ---------------------------------------------------

SITE_NUMBERS = range(1, 11)  # HID-01: "a number from 1 to 10"
MIN_SEARCH_AUSPEX = LEVEL_NUMBERS["2a"]  # HID-02


def _site_number(number: int) -> int:
    if isinstance(number, bool) or not isinstance(number, int) or number not in SITE_NUMBERS:
        raise ValueError(
            _("Pick a place number from 1 to 10, got %(number)r (HID-01).") % {"number": number}
        )
    return number


def check_hidden_object_registration(*, obfuscate_bid: int, number: int) -> None:
    """HID-01: hiding an object on site registers the hider's Obfuscate bid and a number 1..10
    (the place description is flavour)."""
    _int("obfuscate_bid", obfuscate_bid)
    _site_number(number)


def _searcher_auspex(auspex_level: int) -> int:
    _int("auspex_level", auspex_level, maximum=MAX_LEVEL)
    if auspex_level < MIN_SEARCH_AUSPEX:
        raise ValueError(_("Searching for hidden objects needs Auspex 2a or higher (HID-02)."))
    return auspex_level


def check_hidden_object_search(*, auspex_level: int, number: int) -> None:
    """HID-02: only a character with Auspex 2a (level 3) or higher may search, by picking one
    number from 1 to 10."""
    _searcher_auspex(auspex_level)
    _site_number(number)


def hidden_object_search_bid(*, mental_traits: int, investigate: int, auspex_level: int) -> int:
    """HID-02: INTERPRETATION: each object under the searched number is tested with mental
    traits + Investigate + Auspex level against the stored Obfuscate bid (TST-01)."""
    _searcher_auspex(auspex_level)
    return _int("mental_traits", mental_traits) + _int("investigate", investigate) + auspex_level

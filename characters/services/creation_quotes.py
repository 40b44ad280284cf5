"""The creation wizard's draft and its freebie quote (CRE-01..09, CLN-01..04, DIS-01..06,
SEW-01): the raw choices a draft keeps in `Character.creation`, checked and priced with nothing
written. The services in `creation` save drafts, submit them and build the sheet on approval
from the same quote."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from chronicle.rules import HouseRules, settings_for

from .. import rules
from ..models import (
    INFLUENCE_LABELS,
    Character,
    Creature,
    Sect,
)
from .common import rule_ids

MAX_RATING = 99  # a typing slip, not a rule: no allocation of the rules comes near it
FEEDING_DEMOGRAPHIC_LENGTH = Character._meta.get_field("feeding_demographic").max_length or 120


@dataclass(frozen=True)
class DisciplinePick:
    """One discipline row of the wizard: the free basic levels taken (CRE-01: "", "1a" or "1b")
    and the highest level owned after freebies ("" = only the free ones)."""

    discipline: str
    free: str = ""
    top: str = ""

    def free_levels(self) -> list[str]:
        return list(rules.LEVELS[: _number(self.free)])

    def bought_levels(self) -> list[str]:
        return list(rules.LEVELS[_number(self.free) : _number(self.top)])


@dataclass(frozen=True)
class DisadvantagePick:
    name: str
    major: bool = False
    physical: bool = False
    hideously_ugly: bool = False


@dataclass(frozen=True)
class Draft:
    """What the wizard holds: the package allocation (7/5/3, abilities, willpower, influences,
    free basics), the disadvantages, and the freebie purchases (`extra_*`, bought levels,
    generation, sewer lore)."""

    name: str = ""
    creature: str = Creature.KINDRED
    clan: str = ""
    chosen_disciplines: tuple[str, ...] = ()
    clan_bonus: str = ""
    physical: int = 0
    social: int = 0
    mental: int = 0
    abilities: Mapping[str, int] = field(default_factory=dict)
    willpower: int = 0
    influences: Mapping[str, int] = field(default_factory=dict)
    disciplines: tuple[DisciplinePick, ...] = ()
    disadvantages: tuple[DisadvantagePick, ...] = ()
    generation: int = 13
    extra_physical: int = 0
    extra_social: int = 0
    extra_mental: int = 0
    extra_willpower: int = 0
    extra_abilities: Mapping[str, int] = field(default_factory=dict)
    extra_influences: Mapping[str, int] = field(default_factory=dict)
    sewer_lore: int = 0
    background_questionnaire: str = ""
    background_story: str = ""
    # CRE-08 / CLN-01 flags, copied onto the sheet at approval.
    sect: str = ""
    protean_form: str = ""
    feeding_demographic: str = ""
    embrace_earth: bool = False

    @property
    def kind(self) -> str:
        """Animal ghouls are built like ghouls (CRE-03)."""
        return "ghoul" if self.creature == Creature.ANIMAL_GHOUL else str(self.creature)

    @property
    def clan_or_none(self) -> str | None:
        return self.clan if self.kind == "kindred" and self.clan else None

    def influence_lines(self) -> list[tuple[str, int]]:
        """The package's influences, named in the reader's language (INF-01)."""
        return [(_influence_name(name), n) for name, n in self.influences.items()]

    def extra_influence_lines(self) -> list[tuple[str, int]]:
        """The influences bought with freebies, named in the reader's language."""
        return [(_influence_name(name), n) for name, n in self.extra_influences.items()]

    def creation_json(self) -> dict[str, Any]:
        """The part of the draft that has no column of its own (`Character.creation`)."""
        data = dataclasses.asdict(self)
        for column in _COLUMNS:
            data.pop(column)
        return data

    @classmethod
    def from_character(cls, character: Character) -> Draft:
        stored = dict(character.creation or {})
        return cls(
            name=character.name,
            creature=character.creature,
            clan=character.clan,
            chosen_disciplines=tuple(character.chosen_disciplines or ()),
            clan_bonus=character.clan_bonus,
            generation=character.generation,
            background_questionnaire=character.background_questionnaire,
            background_story=character.background_story,
            physical=stored.get("physical", 0),
            social=stored.get("social", 0),
            mental=stored.get("mental", 0),
            abilities=stored.get("abilities", {}),
            willpower=stored.get("willpower", 0),
            influences=stored.get("influences", {}),
            disciplines=tuple(DisciplinePick(**d) for d in stored.get("disciplines", [])),
            disadvantages=tuple(DisadvantagePick(**d) for d in stored.get("disadvantages", [])),
            extra_physical=stored.get("extra_physical", 0),
            extra_social=stored.get("extra_social", 0),
            extra_mental=stored.get("extra_mental", 0),
            extra_willpower=stored.get("extra_willpower", 0),
            extra_abilities=stored.get("extra_abilities", {}),
            extra_influences=stored.get("extra_influences", {}),
            sewer_lore=stored.get("sewer_lore", 0),
            sect=stored.get("sect", ""),
            protean_form=stored.get("protean_form", ""),
            feeding_demographic=stored.get("feeding_demographic", ""),
            embrace_earth=stored.get("embrace_earth", False),
        )


_COLUMNS = (
    "name",
    "creature",
    "clan",
    "chosen_disciplines",
    "clan_bonus",
    "generation",
    "background_questionnaire",
    "background_story",
)


@dataclass(frozen=True)
class Quote:
    """The running freebie bill of a draft: `cost` of `freebies` (CRE-01), an itemised `lines`
    list, and every problem keyed by the wizard's field, each citing its rule ID."""

    cost: int
    freebies: int
    lines: tuple[tuple[str, int], ...]
    problems: Mapping[str, list[str]]

    @property
    def ok(self) -> bool:
        return not self.problems


def _influence_name(name: str) -> str:
    label = INFLUENCE_LABELS.get(name)
    return str(label) if label is not None else name


def _number(level: str) -> int:
    return rules.level_number(level) if level else 0


def _cite(message: str, rule: str) -> str:
    """Rules sentences name their rule where the rule is not obvious from the function; the
    wizard shows every problem with its ID, so the missing ones get the section's."""
    return message if rule_ids(message) else f"{message.rstrip('.')} ({rule})."


# Which wizard field a CRE-01 package problem belongs to, by the topic rules.py gives it
# (RuleViolation.topics: the sentences themselves are in the reader's language).
_PACKAGE_FIELDS = {
    "trait_areas": "physical",
    "abilities": "abilities",
    "willpower": "willpower",
    "influences": "influences",
    "free_disciplines": "disciplines",
}


def _package_fields(exc: ValueError) -> list[tuple[str, str]]:
    messages = list(getattr(exc, "problems", None) or [str(exc)])
    topics = list(getattr(exc, "topics", None) or [])
    topics += [""] * (len(messages) - len(topics))
    return [
        (_PACKAGE_FIELDS.get(topic, "__all__"), m)
        for topic, m in zip(topics, messages, strict=True)
    ]


def _check_shape(draft: Draft) -> None:
    """Input a form or serializer should already have refused; services still refuse it."""
    errors: dict[str, str] = {}
    if draft.creature not in Creature.values:
        errors["creature"] = _("Unknown creature %(value)s.") % {"value": repr(draft.creature)}
    if draft.clan and draft.clan not in rules.CLANS:
        errors["clan"] = _("Unknown clan %(value)s.") % {"value": repr(draft.clan)}
    numbers = {
        name: getattr(draft, name)
        for name in (
            "physical",
            "social",
            "mental",
            "willpower",
            "extra_physical",
            "extra_social",
            "extra_mental",
            "extra_willpower",
            "sewer_lore",
        )
    }
    for group in ("abilities", "extra_abilities", "influences", "extra_influences"):
        numbers |= {f"{group}.{k}": v for k, v in getattr(draft, group).items()}
    for name, value in numbers.items():
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_RATING:
            errors[name.split(".")[0]] = _("Use a whole number from 0 to %(most)s.") % {
                "most": MAX_RATING
            }
    if draft.sect and draft.sect not in Sect.values:
        errors["sect"] = _("Unknown sect %(value)s.") % {"value": repr(draft.sect)}
    if not isinstance(draft.embrace_earth, bool):
        errors["embrace_earth"] = _("Tick the box or leave it empty.")
    if len(draft.feeding_demographic) > FEEDING_DEMOGRAPHIC_LENGTH:
        errors["feeding_demographic"] = _("Keep the demographic under %(most)s characters.") % {
            "most": FEEDING_DEMOGRAPHIC_LENGTH
        }
    if not 1 <= draft.generation <= 15:
        errors["generation"] = _("A generation runs from 1 to 15.")
    for pick in draft.disciplines:
        if pick.discipline not in rules.DISCIPLINE_TITLES:
            errors["disciplines"] = _("Unknown discipline %(value)s.") % {
                "value": repr(pick.discipline)
            }
        elif pick.free not in ("", "1a", "1b") or (pick.top and pick.top not in rules.LEVELS):
            errors["disciplines"] = _("Levels are 1a, 1b, 2a, 2b or 3a; free levels 1a or 1b.")
    if errors:
        raise ValidationError(errors)


def _units(kind: str, quantity: int, house_rules: HouseRules) -> int:
    return rules.unit_cost(kind, quantity, **settings_for(rules.unit_cost, house_rules))


def creation_quote(draft: Draft, *, house_rules: HouseRules) -> Quote:
    """CRE-01: the freebies a draft spends, the package's freebies, and every rule problem.

    Costs: traits, abilities and willpower at the house-rule unit costs (CRE-06), influence per
    point (INF-01 / CLN-03, Ventrue Herd), generation steps (CRE-05), discipline levels at
    creation (DIS-03..06) and Sewer Lore (SEW-01, priced as an ability: SRC-02 lists it under
    ABILITIES). Checks: the CLN-01 clan choices and bonus, the CRE-01 package, CRE-02
    disadvantages, CRE-05 generation, CRE-03/04 and DIS-04 who may buy which discipline,
    DIS-02 level order, SEW-01 Nosferatu only, and the freebie budget (CRE-01).
    """
    _check_shape(draft)
    hr = house_rules
    problems: dict[str, list[str]] = {}
    lines: list[tuple[str, int]] = []

    def problem(key: str, message: str, rule: str) -> None:
        problems.setdefault(key, []).append(_cite(message, rule))

    kind = draft.kind
    package = rules.creation_package(kind)
    clan = draft.clan_or_none
    caitiff = clan == "caitiff"
    if not draft.name.strip():
        problem("name", _("Give the character a name."), "CRE-01")

    # CLN-01: the clan and what it chooses.
    chosen: tuple[str, ...] = ()
    if kind == "kindred" and clan is None:
        problem("clan", _("A kindred needs a clan."), "CLN-01")
    if kind != "kindred" and draft.clan:
        no_clan = (
            _("A ghoul has no clan; leave the clan empty.")
            if kind == "ghoul"
            else _("A kine has no clan; leave the clan empty.")
        )
        problem("clan", no_clan, "CRE-03")
    if kind != "kindred" and draft.chosen_disciplines:
        problem("chosen_disciplines", _("Only Caitiff and Tremere choose disciplines."), "CLN-01")
    if clan is not None:
        try:
            rules.in_clan_disciplines(clan, chosen=draft.chosen_disciplines)
            chosen = draft.chosen_disciplines
        except ValueError as exc:
            problem("chosen_disciplines", str(exc), "CLN-01")
        try:
            rules.check_clan_bonus(clan, draft.clan_bonus or None)
        except ValueError as exc:
            problem("clan_bonus", str(exc), "CLN-01")
    elif draft.clan_bonus:
        problem("clan_bonus", _("Only Nosferatu, Toreador and Ventrue choose a bonus."), "CLN-01")
    clan_settled = clan is not None and "chosen_disciplines" not in problems

    # CRE-01: the package before freebies.
    if kind != "kindred" or clan_settled:
        try:
            rules.check_creation_package(
                kind=kind,
                trait_areas={
                    "physical": draft.physical,
                    "social": draft.social,
                    "mental": draft.mental,
                },
                abilities=dict(draft.abilities),
                willpower=draft.willpower,
                influences=dict(draft.influences),
                free_disciplines={
                    p.discipline: p.free_levels() for p in draft.disciplines if p.free
                },
                clan=clan,
                chosen=chosen,
                **settings_for(rules.check_creation_package, hr),
            )
        except ValueError as exc:
            for key, message in _package_fields(exc):
                problem(key, message, "CRE-01")

    # CRE-08 / CLN-01: Wolf or Bat, the Ventrue's demographic, the Tzimisce's earth.
    flags = rules.creation_flag_problems(
        clan=clan if kind == "kindred" else None,
        protean_form=draft.protean_form,
        feeding_demographic=draft.feeding_demographic,
        embrace_earth=draft.embrace_earth,
        **settings_for(rules.creation_flag_problems, hr),
    )
    for key, message in flags.items():
        problem(key, message, "CRE-08")

    # CRE-02: disadvantages (the clan rules replace the general minimum).
    try:
        rules.check_disadvantages(
            [
                rules.Disadvantage(d.name, d.major, d.physical, d.hideously_ugly)
                for d in draft.disadvantages
            ],
            clan=clan if clan_settled or clan is None else None,
        )
    except ValueError as exc:
        problem("disadvantages", str(exc), "CRE-02")
    if any(not d.name.strip() for d in draft.disadvantages):
        problem("disadvantages", _("Every disadvantage needs a name."), "CRE-02")

    # Freebies: traits, abilities, willpower (CRE-06).
    extra_traits = draft.extra_physical + draft.extra_social + draft.extra_mental
    if extra_traits:
        text = ngettext("%(count)s extra trait(s)", "%(count)s extra trait(s)", extra_traits)
        lines.append((text % {"count": extra_traits}, _units("trait", extra_traits, hr)))
    extra_abilities = sum(draft.extra_abilities.values())
    if extra_abilities:
        cost = _units("ability", extra_abilities, hr)
        text = ngettext(
            "%(count)s extra ability point(s)", "%(count)s extra ability point(s)", extra_abilities
        )
        lines.append((text % {"count": extra_abilities}, cost))
    if any(not name.strip() for name in draft.extra_abilities):
        problem("abilities", _("Every ability bought with freebies needs a name."), "CRE-06")
    if draft.extra_willpower:
        text = ngettext(
            "%(count)s extra willpower", "%(count)s extra willpower", draft.extra_willpower
        )
        lines.append(
            (
                text % {"count": draft.extra_willpower},
                _units("willpower", draft.extra_willpower, hr),
            )
        )

    # INF-01 / CLN-03: influence points, Ventrue Herd at its own price.
    for influence, points in sorted(draft.extra_influences.items()):
        if influence not in rules.INFLUENCE_TYPES:
            problem(
                "influences",
                _("Unknown influence %(value)s.") % {"value": repr(influence)},
                "INF-01",
            )
        elif points:
            unit = rules.influence_point_cost(
                influence, clan=clan, **settings_for(rules.influence_point_cost, hr)
            )
            text = ngettext(
                "%(count)s %(influence)s influence", "%(count)s %(influence)s influence", points
            )
            lines.append(
                (
                    text % {"count": points, "influence": rules.influence_title(influence)},
                    points * unit,
                )
            )

    # CRE-05: generation, bought in steps below the starting generation.
    if kind != "kindred":
        if draft.generation != hr.starting_generation:
            problem("generation", _("Only kindred have a generation to buy."), "CRE-05")
    else:
        try:
            rules.check_creation_generation(
                draft.generation,
                caitiff=caitiff,
                **settings_for(rules.check_creation_generation, hr),
            )
        except ValueError as exc:
            problem("generation", str(exc), "CRE-05")
        else:
            steps = hr.starting_generation - draft.generation
            if steps:
                cost = rules.generation_cost(
                    steps, caitiff=caitiff, **settings_for(rules.generation_cost, hr)
                )
                text = ngettext(
                    "Generation %(generation)s (%(steps)s step(s))",
                    "Generation %(generation)s (%(steps)s step(s))",
                    steps,
                )
                lines.append((text % {"generation": draft.generation, "steps": steps}, cost))

    # CRE-07: the generation's maximums, after freebies. The CLN-01 clan bonus point is left
    # out because the clan rule lets it exceed the maximum.
    maximums = rules.generation_maximums(
        draft.generation, **settings_for(rules.generation_maximums, hr)
    )
    for area in ("physical", "social", "mental"):
        total = getattr(draft, area) + getattr(draft, f"extra_{area}")
        if total > maximums.traits:
            problem(
                "physical",
                _(
                    "%(area)s would be %(total)s; generation %(generation)s allows at most "
                    "%(limit)s in a trait area (a clan bonus point may go above it)."
                )
                % {
                    "area": rules.trait_area_title(area),
                    "total": total,
                    "generation": draft.generation,
                    "limit": maximums.traits,
                },
                "CRE-07",
            )
    willpower = draft.willpower + draft.extra_willpower
    if willpower > maximums.willpower:
        problem(
            "willpower",
            _("Willpower would be %(total)s; generation %(generation)s allows at most %(limit)s.")
            % {"total": willpower, "generation": draft.generation, "limit": maximums.willpower},
            "CRE-07",
        )

    # DIS-02..06, CRE-03/04: discipline levels bought at creation.
    seen: set[str] = set()
    for pick in draft.disciplines:
        title = rules.DISCIPLINE_TITLES[pick.discipline]
        if pick.discipline in seen:
            problem("disciplines", _("List %(discipline)s once.") % {"discipline": title}, "DIS-02")
            continue
        seen.add(pick.discipline)
        try:
            rules.check_discipline_allowed(
                pick.discipline, kind=kind, clan=clan, chosen=chosen, at_creation=True
            )
        except ValueError as exc:
            if kind != "kindred" or clan_settled:
                problem("disciplines", str(exc), "DIS-04")
            continue
        if not pick.top or _number(pick.top) <= _number(pick.free):
            if pick.top:
                problem(
                    "disciplines",
                    _("%(discipline)s: the level bought must be above the free levels.")
                    % {"discipline": title},
                    "DIS-02",
                )
            elif not pick.free:
                problem(
                    "disciplines",
                    _("%(discipline)s: choose a level or remove the row.") % {"discipline": title},
                    "DIS-02",
                )
            continue
        levels = pick.bought_levels()
        try:
            rules.check_level_order(levels, owned=pick.free or None)
        except ValueError as exc:
            problem("disciplines", str(exc), "DIS-02")
            continue
        in_clan = rules.is_in_clan(
            pick.discipline, clan=clan, chosen=chosen, **settings_for(rules.is_in_clan, hr)
        )
        cost = rules.discipline_cost(
            levels,
            in_clan=in_clan,
            at_creation=True,
            path_owned=bool(pick.free),
            caitiff=caitiff,
            **settings_for(rules.discipline_cost, hr),
        )
        text = (
            _("%(discipline)s %(levels)s (in-clan)")
            if in_clan
            else _("%(discipline)s %(levels)s (out-of-clan)")
        )
        lines.append((text % {"discipline": title, "levels": ", ".join(levels)}, cost))

    # SEW-01: Sewer Lore at creation is for Nosferatu only, up to 8.
    if draft.sewer_lore:
        if clan != "nosferatu":
            problem("sewer_lore", _("Only Nosferatu may take Sewer Lore at creation."), "SEW-01")
        else:
            bonus = 1 if draft.clan_bonus == "sewer_lore" else 0
            if draft.sewer_lore + bonus > rules.MAX_SEWER_LORE:
                problem(
                    "sewer_lore",
                    _("Sewer Lore goes up to %(most)s.") % {"most": rules.MAX_SEWER_LORE},
                    "SEW-01",
                )
            text = _("%(count)s Sewer Lore") % {"count": draft.sewer_lore}
            lines.append((text, _units("sewer_lore", draft.sewer_lore, hr)))

    cost = sum(amount for _line, amount in lines)
    if cost > package.freebies:
        over = {
            "kindred": _(
                "This spends %(cost)s freebies and a new kindred has %(freebies)s; take off "
                "%(over)s."
            ),
            "ghoul": _(
                "This spends %(cost)s freebies and a new ghoul has %(freebies)s; take off %(over)s."
            ),
            "kine": _(
                "This spends %(cost)s freebies and a new kine has %(freebies)s; take off %(over)s."
            ),
        }[kind]
        problem(
            "freebies",
            over % {"cost": cost, "freebies": package.freebies, "over": cost - package.freebies},
            "CRE-01",
        )
    return Quote(cost=cost, freebies=package.freebies, lines=tuple(lines), problems=problems)


def draft_quote(character: Character) -> Quote:
    house_rules = character.chronicle.house_rules
    return creation_quote(Draft.from_character(character), house_rules=house_rules)

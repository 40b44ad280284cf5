"""The creation wizard's form (CRE-01): one page of sections, flat rows for abilities,
disciplines and disadvantages so it works without JavaScript. It checks the shape only; the
rules are the quote's (`services.creation.creation_quote`)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from .. import rules
from ..models import CLAN_CHOICES, DISCIPLINE_CHOICES, INFLUENCE_LABELS, Creature, Sect
from ..services.creation import DisadvantagePick, DisciplinePick, Draft

ABILITY_ROWS = 6
DISCIPLINE_ROWS = 4
DISADVANTAGE_ROWS = 4
BONUS_CHOICES = [
    ("", _("None")),
    ("herd", _("+1 Herd (Toreador)")),
    ("social", _("+1 social (Toreador)")),
    ("sewer_lore", _("Sewer Lore 1 (Nosferatu)")),
    ("physical", _("+1 physical (Nosferatu, Ventrue)")),
    ("leadership", _("+1 Leadership (Ventrue)")),
]
FREE_CHOICES = [("", _("None")), ("1a", "1a"), ("1b", _("1a and 1b"))]
TOP_CHOICES = [("", _("None")), *((code, code) for code in rules.LEVELS)]


def _count(label: Any, maximum: int = 99) -> forms.IntegerField:
    return forms.IntegerField(label=label, min_value=0, max_value=maximum, required=False)


class CreationForm(forms.Form):
    name = forms.CharField(label=_("Name"), max_length=120)
    creature = forms.ChoiceField(label=_("Creature"), choices=Creature.choices)
    clan = forms.ChoiceField(
        label=_("Clan"), choices=[("", _("None (ghoul, kine)")), *CLAN_CHOICES], required=False
    )
    chosen_disciplines = forms.MultipleChoiceField(
        label=_("Chosen in-clan disciplines"),
        choices=DISCIPLINE_CHOICES,
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text=_("Caitiff choose 3 non-restricted disciplines; Tremere one Thaumaturgy path."),
    )
    clan_bonus = forms.ChoiceField(label=_("Clan bonus"), choices=BONUS_CHOICES, required=False)
    physical = _count(pgettext_lazy("trait area", "Physical"))
    social = _count(pgettext_lazy("trait area", "Social"))
    mental = _count(pgettext_lazy("trait area", "Mental"))
    willpower = _count(pgettext_lazy("trait", "Willpower"))
    generation = forms.IntegerField(label=_("Generation"), min_value=1, max_value=15, initial=13)
    extra_physical = _count(_("Extra physical"))
    extra_social = _count(_("Extra social"))
    extra_mental = _count(_("Extra mental"))
    extra_willpower = _count(_("Extra willpower"))
    sewer_lore = _count(_("Sewer Lore"), rules.MAX_SEWER_LORE)
    sect = forms.ChoiceField(
        label=_("Sect"), choices=[("", _("None yet")), *Sect.choices], required=False
    )
    protean_form = forms.ChoiceField(
        label=_("Protean 2a form (Gangrel)"),
        choices=[("", _("None")), ("wolf", _("Wolf")), ("bat", _("Bat"))],
        required=False,
        help_text=_("A Gangrel chooses Wolf or Bat now, once (CRE-08)."),
    )
    feeding_demographic = forms.CharField(
        label=_("Feeding demographic (Ventrue)"),
        max_length=120,
        required=False,
        # "20%" is text, not a placeholder.
        # xgettext:no-python-format
        help_text=_("A group under 20% of people, e.g. left-handed nurses (CLN-01)."),
    )
    embrace_earth = forms.BooleanField(
        label=_("I keep at least 1 m³ of earth from my embrace (Tzimisce)"),
        required=False,
    )
    background_questionnaire = forms.CharField(
        label=_("Background questionnaire"),
        widget=forms.Textarea(attrs={"rows": 4}),
        required=False,
    )
    background_story = forms.CharField(
        label=_("Background story (optional)"),
        widget=forms.Textarea(attrs={"rows": 4}),
        required=False,
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for n in range(1, ABILITY_ROWS + 1):
            row = {"number": n}
            self.fields[f"ability_{n}"] = forms.CharField(
                label=_("Ability %(number)s") % row, max_length=60, required=False
            )
            self.fields[f"rating_{n}"] = _count(_("Rating %(number)s") % row)
            self.fields[f"extra_rating_{n}"] = _count(_("Extra rating %(number)s") % row)
        for influence in rules.INFLUENCE_TYPES:
            label = INFLUENCE_LABELS[influence]
            self.fields[influence] = _count(label)
            self.fields[f"extra_{influence}"] = _count(
                _("Extra %(influence)s") % {"influence": str(label).lower()}
            )
        for n in range(1, DISCIPLINE_ROWS + 1):
            row = {"number": n}
            self.fields[f"discipline_{n}"] = forms.ChoiceField(
                label=_("Discipline %(number)s") % row,
                choices=[("", _("None")), *DISCIPLINE_CHOICES],
                required=False,
            )
            self.fields[f"free_{n}"] = forms.ChoiceField(
                label=_("Free levels %(number)s") % row, choices=FREE_CHOICES, required=False
            )
            self.fields[f"top_{n}"] = forms.ChoiceField(
                label=_("Bought up to %(number)s") % row, choices=TOP_CHOICES, required=False
            )
        for n in range(1, DISADVANTAGE_ROWS + 1):
            row = {"number": n}
            self.fields[f"disadvantage_{n}"] = forms.CharField(
                label=_("Disadvantage %(number)s") % row, max_length=120, required=False
            )
            self.fields[f"major_{n}"] = forms.BooleanField(
                label=_("Major %(number)s") % row, required=False
            )
            self.fields[f"physical_{n}"] = forms.BooleanField(
                label=_("Physical %(number)s") % row, required=False
            )
            self.fields[f"ugly_{n}"] = forms.BooleanField(
                label=_("Hideously ugly %(number)s") % row, required=False
            )

    # Row groups for the template, so it draws rows without knowing the field names.
    def ability_rows(self) -> list[list[forms.BoundField]]:
        return [
            [self[f"ability_{n}"], self[f"rating_{n}"], self[f"extra_rating_{n}"]]
            for n in range(1, ABILITY_ROWS + 1)
        ]

    def influence_rows(self) -> list[list[forms.BoundField]]:
        return [[self[name], self[f"extra_{name}"]] for name in rules.INFLUENCE_TYPES]

    def discipline_rows(self) -> list[list[forms.BoundField]]:
        return [
            [self[f"discipline_{n}"], self[f"free_{n}"], self[f"top_{n}"]]
            for n in range(1, DISCIPLINE_ROWS + 1)
        ]

    def disadvantage_rows(self) -> list[list[forms.BoundField]]:
        return [
            [
                self[f"disadvantage_{n}"],
                self[f"major_{n}"],
                self[f"physical_{n}"],
                self[f"ugly_{n}"],
            ]
            for n in range(1, DISADVANTAGE_ROWS + 1)
        ]

    def to_draft(self) -> Draft:
        data = self.cleaned_data

        def number(name: str) -> int:
            return data.get(name) or 0

        abilities: dict[str, int] = {}
        extra_abilities: dict[str, int] = {}
        for n in range(1, ABILITY_ROWS + 1):
            name = (data.get(f"ability_{n}") or "").strip().lower()
            if not name:
                continue
            # The same name on two rows is one ability with both rows' points.
            if number(f"rating_{n}"):
                abilities[name] = abilities.get(name, 0) + number(f"rating_{n}")
            if number(f"extra_rating_{n}"):
                extra_abilities[name] = extra_abilities.get(name, 0) + number(f"extra_rating_{n}")
        disciplines = tuple(
            DisciplinePick(data[f"discipline_{n}"], free=data[f"free_{n}"], top=data[f"top_{n}"])
            for n in range(1, DISCIPLINE_ROWS + 1)
            if data.get(f"discipline_{n}")
        )
        disadvantages = tuple(
            DisadvantagePick(
                data[f"disadvantage_{n}"].strip(),
                major=data[f"major_{n}"],
                physical=data[f"physical_{n}"],
                hideously_ugly=data[f"ugly_{n}"],
            )
            for n in range(1, DISADVANTAGE_ROWS + 1)
            if (data.get(f"disadvantage_{n}") or "").strip()
        )
        return Draft(
            name=data["name"].strip(),
            creature=data["creature"],
            clan=data.get("clan") or "",
            chosen_disciplines=tuple(data.get("chosen_disciplines") or ()),
            clan_bonus=data.get("clan_bonus") or "",
            physical=number("physical"),
            social=number("social"),
            mental=number("mental"),
            abilities=abilities,
            willpower=number("willpower"),
            influences={i: number(i) for i in rules.INFLUENCE_TYPES if number(i)},
            disciplines=disciplines,
            disadvantages=disadvantages,
            generation=data.get("generation") or 13,
            extra_physical=number("extra_physical"),
            extra_social=number("extra_social"),
            extra_mental=number("extra_mental"),
            extra_willpower=number("extra_willpower"),
            extra_abilities=extra_abilities,
            extra_influences={
                i: number(f"extra_{i}") for i in rules.INFLUENCE_TYPES if number(f"extra_{i}")
            },
            sewer_lore=number("sewer_lore"),
            background_questionnaire=data.get("background_questionnaire") or "",
            background_story=data.get("background_story") or "",
            sect=data.get("sect") or "",
            protean_form=data.get("protean_form") or "",
            feeding_demographic=(data.get("feeding_demographic") or "").strip(),
            embrace_earth=bool(data.get("embrace_earth")),
        )


def initial_from(draft: Draft) -> dict[str, Any]:
    """The form's initial values for a saved draft (the inverse of `to_draft`)."""
    initial: dict[str, Any] = {
        name: getattr(draft, name)
        for name in (
            "name",
            "creature",
            "clan",
            "clan_bonus",
            "physical",
            "social",
            "mental",
            "willpower",
            "generation",
            "extra_physical",
            "extra_social",
            "extra_mental",
            "extra_willpower",
            "sewer_lore",
            "background_questionnaire",
            "background_story",
            "sect",
            "protean_form",
            "feeding_demographic",
            "embrace_earth",
        )
    }
    initial["chosen_disciplines"] = list(draft.chosen_disciplines)
    names = list(dict.fromkeys([*draft.abilities, *draft.extra_abilities]))[:ABILITY_ROWS]
    for n, name in enumerate(names, start=1):
        initial[f"ability_{n}"] = name
        initial[f"rating_{n}"] = draft.abilities.get(name, 0)
        initial[f"extra_rating_{n}"] = draft.extra_abilities.get(name, 0)
    for influence in rules.INFLUENCE_TYPES:
        initial[influence] = draft.influences.get(influence, 0)
        initial[f"extra_{influence}"] = draft.extra_influences.get(influence, 0)
    for n, pick in enumerate(draft.disciplines[:DISCIPLINE_ROWS], start=1):
        initial |= {
            f"discipline_{n}": pick.discipline,
            f"free_{n}": pick.free,
            f"top_{n}": pick.top,
        }
    for n, item in enumerate(draft.disadvantages[:DISADVANTAGE_ROWS], start=1):
        initial |= {
            f"disadvantage_{n}": item.name,
            f"major_{n}": item.major,
            f"physical_{n}": item.physical,
            f"ugly_{n}": item.hideously_ugly,
        }
    return initial


class ReturnForm(forms.Form):
    note = forms.CharField(
        label=_("Note to the player"), widget=forms.Textarea(attrs={"rows": 3}), max_length=2000
    )

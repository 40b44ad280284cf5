from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django import forms
from django.utils.formats import number_format
from django.utils.translation import gettext, pgettext_lazy
from django.utils.translation import gettext_lazy as _

from ..models import Game
from ..moments import day_text
from ..rules import HOUSE_RULE_FIELDS, HouseRules, setting_bounds
from ..services import MAX_GAME_NUMBER, SignIn


class GameForm(forms.ModelForm):
    number = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=MAX_GAME_NUMBER,
        help_text=_("Leave empty for the next number."),
        label=_("Number"),
    )

    class Meta:
        model = Game
        fields = ["number", "date", "start_time", "place", "notes"]
        labels = {
            "date": _("Date"),
            "start_time": _("Start time"),
            "place": _("Place"),
            "notes": _("Notes"),
        }
        widgets = {
            "date": forms.DateInput(attrs={"type": "date"}),
            "start_time": forms.TimeInput(attrs={"type": "time"}),
            "notes": forms.Textarea(attrs={"rows": 3}),
        }
        error_messages = {
            "date": {
                "invalid": _("Enter the game's date as YYYY-MM-DD."),
                "required": _("A game needs a date."),
            },
            "start_time": {"invalid": _("Enter a time such as 19:30.")},
        }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.instance.pk:
            # A game's number is its name in the chronicle; it does not change after creation.
            del self.fields["number"]

    def validate_unique(self) -> None:
        # The service checks the number within the chronicle (the form does not know it).
        pass


def sign_in_lines(data: Mapping[str, Any], player_ids: Iterable[int]) -> list[SignIn]:
    """Read the sign-in sheet's boxes (`attended-<id>`, `waiver-<id>`, the character played
    `character-<id>` and the black veins permission `permit-<id>`) and keep only the lines the
    ST changed, compared with the state the page showed (`was-<id>`, "10" for attended without
    waiver; `was-character-<id>`; `was-permit-<id>`, drawn only beside a permit box). Two STs
    at the door each apply their own ticks, and neither undoes the other's. An unticked box is
    simply absent from the POST; a sheet without a character column leaves the character to
    the service (the saved one, else the player's only active character, HAV-06)."""
    lines = []
    for pid in player_ids:
        chosen = str(data.get(f"character-{pid}", "")).strip()
        permit_shown = data.get(f"was-permit-{pid}")
        line = SignIn(
            player_id=pid,
            attended=f"attended-{pid}" in data,
            waiver_signed=f"waiver-{pid}" in data,
            character_id=int(chosen) if chosen.isdigit() and len(chosen) < 12 else None,
            permit_black_veins=(f"permit-{pid}" in data) if permit_shown is not None else None,
        )
        shown = data.get(f"was-{pid}")
        # A player who joined after the page was drawn has no row on it: leave them alone.
        if shown is None:
            continue
        character_shown = data.get(f"was-character-{pid}")
        if (
            shown != f"{line.attended:d}{line.waiver_signed:d}"
            or (character_shown is not None and chosen != character_shown)
            or (permit_shown is not None and permit_shown != f"{bool(line.permit_black_veins):d}")
        ):
            lines.append(line)
    return lines


# The sections of the rules (SPEC.md's chapters), in the book's order: a setting's section is
# the prefix of its rule ID ("CRE-05/XP-03" is under CRE). A prefix not listed here still gets
# a section of its own, at the end, headed by the prefix.
RULE_SECTIONS: dict[str, Any] = {
    "GEN": _("General and governance"),
    "TST": _("Tests"),
    "CLN": _("Clans"),
    "CRE": _("Character creation"),
    "DIS": _("Disciplines"),
    "CTL": _("Control traits"),
    "BLD": _("Blood"),
    "BND": _("Blood bonds"),
    "INF": _("Influences"),
    "HAV": _("Havens"),
    "DT": _("Downtimes and XP awards"),
    "XP": _("XP spending and character end"),
    "ITM": _("Items"),
    "HID": _("Objects hidden on site"),
    "SEW": _("Sewer Lore"),
    "TOR": _("Torpor and captives"),
    "MSC": _("Miscellaneous records"),
}


def rule_section(rule: str) -> str:
    """The section code of a rule ID: "CRE-05/XP-03" -> "CRE", "GEN" -> "GEN"."""
    return rule.split("/")[0].split("-")[0].strip().upper()


# The words of the settings that offer a choice of values (chronicle.rules.HouseRules).
CHOICE_WORDS: dict[str, Any] = {
    "double_cost": pgettext_lazy("Ventrue Herd", "double cost"),
    "half_yield": pgettext_lazy("Ventrue Herd", "half yield"),
}


def _shown(value: object) -> str:
    """A setting's value as the page states it (a default, say)."""
    if isinstance(value, bool):
        return str(_("Yes") if value else _("No"))
    if isinstance(value, str) and value in CHOICE_WORDS:
        return str(CHOICE_WORDS[value])
    if isinstance(value, Decimal | float):
        return number_format(value)  # 0,5 in Italian and Catalan
    return str(value).replace("_", " ")


@dataclass(frozen=True)
class SettingRow:
    """One setting on the page: its field, rule ID, default, and whether it was changed."""

    name: str
    field: forms.BoundField
    rule: str
    default: str
    changed: bool


@dataclass(frozen=True)
class SettingSection:
    code: str
    title: str
    rows: list[SettingRow]

    @property
    def changed(self) -> int:
        return sum(1 for row in self.rows if row.changed)


class HouseRulesForm(forms.Form):
    """One field per house-rule setting (chronicle.rules.HouseRules): its plain label; the rule
    ID, the default and whether it differs from it are shown beside it (`sections`)."""

    def __init__(
        self,
        *args: Any,
        current: HouseRules,
        effective_games: Iterable[Game] | None = None,
        read_only: bool = False,
        **kwargs: Any,
    ) -> None:
        """`effective_games`: once a game has been played, the games a change may take effect
        from (GEN-05: after the next game), offered as the `effective_game` choice; None
        before the first game, when a change applies at once. `read_only`: the members'
        view, every field disabled."""
        super().__init__(*args, **kwargs)
        self.current = current
        self.read_only = read_only
        if effective_games is not None:
            self.fields["effective_game"] = forms.TypedChoiceField(
                label=_("Takes effect from"),
                coerce=int,
                choices=[
                    (
                        g.number,
                        gettext("Game %(number)s (%(day)s)")
                        % {"number": g.number, "day": day_text(g.date)},
                    )
                    for g in effective_games
                ],
                help_text=_("Rule changes are announced a game before they take effect (GEN-05)."),
                disabled=read_only,
            )
        for name, spec in HOUSE_RULE_FIELDS.items():
            meta = spec.metadata
            value = getattr(current, name)
            default = spec.default
            field: forms.Field
            if meta["choices"]:
                field = forms.ChoiceField(choices=[(c, _shown(c)) for c in meta["choices"]])
                value = str(value)
            elif isinstance(default, bool):
                field = forms.BooleanField(required=False)
            elif isinstance(default, Decimal):
                low, high = setting_bounds(name)
                field = forms.DecimalField(
                    min_value=low, max_value=high, max_digits=6, decimal_places=2
                )
            else:
                low, high = setting_bounds(name)
                field = forms.IntegerField(min_value=int(low), max_value=int(high or 1000))
            # The rules mark their labels with gettext_noop; the page speaks the reader's language.
            field.label = gettext(meta["label"])
            field.initial = value
            # The rule ID, the default and the "changed" mark beside the field describe it.
            field.widget.attrs["aria-describedby"] = f"setting-{name}-meta"
            field.disabled = read_only
            self.fields[name] = field

    def setting_changes(self) -> dict[str, Any]:
        """The settings the admin changed on the page (not every field: a setting left as it
        is today must not undo a change already published for a later game)."""
        return {
            name: self.cleaned_data[name]
            for name in self.changed_data
            if name in HOUSE_RULE_FIELDS and name in self.cleaned_data
        }

    def sections(self) -> list[SettingSection]:
        """The settings grouped by section of the rules, in the book's order; every field of
        HOUSE_RULE_FIELDS appears, whatever its prefix."""
        grouped: dict[str, list[SettingRow]] = {}
        for name, spec in HOUSE_RULE_FIELDS.items():
            rule = spec.metadata["rule"]
            grouped.setdefault(rule_section(rule), []).append(
                SettingRow(
                    name=name,
                    field=self[name],
                    rule=rule,
                    default=_shown(spec.default),
                    changed=getattr(self.current, name) != spec.default,
                )
            )
        order = list(RULE_SECTIONS)
        codes = sorted(grouped, key=lambda c: (order.index(c) if c in order else len(order), c))
        return [
            SettingSection(code=code, title=str(RULE_SECTIONS.get(code, code)), rows=grouped[code])
            for code in codes
        ]

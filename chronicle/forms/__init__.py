from __future__ import annotations

from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any

from django import forms

from ..models import Game
from ..rules import HOUSE_RULE_FIELDS, HouseRules, setting_bounds
from ..services import MAX_GAME_NUMBER, SignIn


class GameForm(forms.ModelForm):
    number = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=MAX_GAME_NUMBER,
        help_text="Leave empty for the next number.",
    )

    class Meta:
        model = Game
        fields = ["number", "date", "start_time", "place", "notes"]
        widgets = {
            "date": forms.DateInput(attrs={"type": "date"}),
            "start_time": forms.TimeInput(attrs={"type": "time"}),
            "notes": forms.Textarea(attrs={"rows": 3}),
        }
        error_messages = {
            "date": {
                "invalid": "Enter the game's date as YYYY-MM-DD.",
                "required": "A game needs a date.",
            },
            "start_time": {"invalid": "Enter a time such as 19:30."},
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
    """Read the sign-in sheet's checkboxes (`attended-<id>`, `waiver-<id>`) and keep only the
    lines the ST changed, compared with the state the page showed (`was-<id>`, "10" for
    attended without waiver). Two STs at the door each apply their own ticks, and neither
    undoes the other's. An unticked box is simply absent from the POST."""
    lines = []
    for pid in player_ids:
        line = SignIn(
            player_id=pid,
            attended=f"attended-{pid}" in data,
            waiver_signed=f"waiver-{pid}" in data,
        )
        shown = data.get(f"was-{pid}")
        # A player who joined after the page was drawn has no row on it: leave them alone.
        if shown is not None and shown != f"{line.attended:d}{line.waiver_signed:d}":
            lines.append(line)
    return lines


class HouseRulesForm(forms.Form):
    """One field per house-rule setting (chronicle.rules.HouseRules), labelled with its rule ID."""

    def __init__(self, *args: Any, current: HouseRules, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for name, spec in HOUSE_RULE_FIELDS.items():
            meta = spec.metadata
            label = f"{meta['label']} ({meta['rule']})"
            value = getattr(current, name)
            default = spec.default
            help_text = f"Default: {default}"
            field: forms.Field
            if meta["choices"]:
                field = forms.ChoiceField(choices=[(c, c) for c in meta["choices"]])
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
            field.label = label
            field.help_text = help_text
            field.initial = value
            self.fields[name] = field

"""The XP purchase form (XP-01): its shape only; the rules' problems come from the service."""

from __future__ import annotations

from typing import Any

from django import forms

from .. import rules
from ..models import Character, PurchaseKind, PurchaseMoment, Status

LEVEL_CHOICES = [("", "—")] + [(code, code) for code in rules.LEVELS]
DISCIPLINE_CHOICES = [("", "—")] + [(k, v) for k, v in rules.DISCIPLINE_TITLES.items()]


class PurchaseForm(forms.Form):
    kind = forms.ChoiceField(label="What to buy", choices=PurchaseKind.choices)
    discipline = forms.ChoiceField(label="Discipline", choices=DISCIPLINE_CHOICES, required=False)
    level = forms.ChoiceField(
        label="Level",
        choices=LEVEL_CHOICES,
        required=False,
        help_text="The next level after the ones you own (DIS-02).",
    )
    teacher = forms.ModelChoiceField(
        label="Teacher",
        queryset=Character.objects.none(),
        required=False,
        help_text="Needed for out-of-clan 1a and 1b (DIS-07) and for Sewer Lore (SEW-01).",
    )
    target = forms.CharField(
        label="Target",
        max_length=60,
        required=False,
        help_text="Trait area (physical, social, mental), ability name or influence type.",
    )
    quantity = forms.IntegerField(label="Quantity", min_value=1, max_value=10, initial=1)
    moment = forms.ChoiceField(
        label="When", choices=PurchaseMoment.choices, initial=PurchaseMoment.DOWNTIME
    )
    note = forms.CharField(
        label="Note for the STs", required=False, widget=forms.Textarea(attrs={"rows": 2})
    )

    def __init__(self, *args: Any, character: Character, staff: bool, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        teacher = self.fields["teacher"]
        assert isinstance(teacher, forms.ModelChoiceField)
        teachers = Character.objects.filter(
            chronicle_id=character.chronicle_id, status=Status.ACTIVE
        ).exclude(pk=character.pk)
        if not staff:
            # Other players' characters are not a player's to know (access.py); a lesson from
            # another PC is filed by an ST, who sees every character.
            teachers = teachers.filter(player__isnull=True)
        teacher.queryset = teachers.only("pk", "name").order_by("name")

    def service_kwargs(self) -> dict[str, Any]:
        data = self.cleaned_data
        return {
            "kind": data["kind"],
            "discipline": data.get("discipline") or "",
            "levels": [data["level"]] if data.get("level") else [],
            "target": data.get("target") or "",
            "quantity": data["quantity"],
            "moment": data["moment"],
            "teacher": data.get("teacher"),
        }


# Where a service problem about `levels` goes on this form.
FIELD_FOR = {"levels": "level"}


class DecisionForm(forms.Form):
    decision = forms.ChoiceField(choices=[("approve", "Approve"), ("reject", "Reject")])
    note = forms.CharField(
        label="Note to the player", required=False, widget=forms.Textarea(attrs={"rows": 2})
    )

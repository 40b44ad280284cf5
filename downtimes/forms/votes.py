"""Forms of the vote tally and the game-report picks (shape only; the services check DT-05)."""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from chronicle.access import MAX_ID


class CyclePickForm(forms.Form):
    """The cycle picker: a cycle is named by its game's number (`?cycle=3`)."""

    cycle = forms.IntegerField(min_value=1, max_value=MAX_ID, required=False, label=_("Game"))


class ReportPickForm(forms.Form):
    sanitized_text = forms.CharField(
        required=False,
        label=_("Sanitized text"),
        widget=forms.Textarea(attrs={"rows": 5}),
        help_text=_("What may be published: secrets and other characters' business removed."),
    )
    published = forms.BooleanField(
        required=False,
        label=_("Publish"),
        help_text=_("Shown to every member on the reports page (DT-05)."),
    )

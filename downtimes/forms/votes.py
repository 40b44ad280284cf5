"""Forms of the vote tally and the game-report picks (shape only; the services check DT-05)."""

from __future__ import annotations

from django import forms

from chronicle.access import MAX_ID


class CyclePickForm(forms.Form):
    """The cycle picker: a cycle is named by its game's number (`?cycle=3`)."""

    cycle = forms.IntegerField(min_value=1, max_value=MAX_ID, required=False, label="Game")


class ReportPickForm(forms.Form):
    sanitized_text = forms.CharField(
        required=False,
        label="Sanitized text",
        widget=forms.Textarea(attrs={"rows": 5}),
        help_text="What may be published: secrets and other characters' business removed.",
    )
    published = forms.BooleanField(
        required=False,
        label="Publish",
        help_text="Shown to every member on the reports page (DT-05).",
    )

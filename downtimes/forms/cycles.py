"""Forms of the resolution pages (storytellers): an override of one outcome of the preview, and
the release's confirmation. Shape only; `pipeline.outcome_override` checks the rules (XP in
steps of 0.5, a note) and its refusals are put back beside the fields."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from ..models import Outcome

# The ledger stores XP with one decimal in six digits; a bigger number is a typo, and the
# database would refuse it with an error instead of a sentence.
MAX_XP = Decimal("9999.5")
NOTE_MAX = 2000
FOUND_CHOICES = [
    ("yes", _("Yes: the search finds its target")),
    ("no", _("No: it finds nothing")),
]


class OutcomeOverrideForm(forms.Form):
    """An ST's change to one outcome, with a note that is kept: the XP of an award (`xp`) or
    whether a search finds its target (`found`), by what the outcome allows."""

    xp = forms.DecimalField(
        label=_("XP to pay"),
        min_value=Decimal(0),
        max_value=MAX_XP,
        max_digits=6,
        required=False,
        help_text=_("In steps of 0.5."),
        widget=forms.NumberInput(attrs={"step": "0.5", "min": "0"}),
    )
    found = forms.ChoiceField(
        label=_("Does the search find its target?"),
        choices=FOUND_CHOICES,
        required=False,
        widget=forms.RadioSelect,
    )
    note = forms.CharField(
        label=_("Why (kept with the change)"),
        max_length=NOTE_MAX,
        widget=forms.Textarea(attrs={"rows": 2}),
        error_messages={"required": _("Say why you change this outcome; the note is kept.")},
    )

    def __init__(self, *args: Any, outcome: Outcome, **kwargs: Any) -> None:
        kwargs.setdefault("prefix", f"o{outcome.pk}")
        super().__init__(*args, **kwargs)
        self.outcome = outcome
        # Only the field the outcome allows; the other would be ignored by the service.
        if outcome.overridable == "xp":
            del self.fields["found"]
            self.fields["xp"].required = True
            self.fields["xp"].error_messages["required"] = _("Give the XP this award should pay.")
        elif outcome.overridable == "found":
            del self.fields["xp"]
            self.fields["found"].required = True
            self.fields["found"].error_messages["required"] = _(
                "Say whether the search finds its target."
            )
        else:
            del self.fields["xp"]
            del self.fields["found"]

    @property
    def found_value(self) -> bool | None:
        found = self.cleaned_data.get("found")
        return None if not found else found == "yes"


class ReleaseConfirmForm(forms.Form):
    """The release's confirmation names the preview it was read from (the latest run and the
    plan's figures): if another ST re-resolved or overrode since, the plan is shown again."""

    run = forms.IntegerField(min_value=0, widget=forms.HiddenInput)
    plan = forms.CharField(max_length=200, widget=forms.HiddenInput)

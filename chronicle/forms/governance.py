"""Forms of the decisions pages (GEN-03 / GEN-04): their shape only; the governance service
decides what is allowed and says why next to the field."""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from ..models import DecisionKind, Membership
from ..rules import DECISION_KINDS, HOUSE_RULE_FIELDS, setting_bounds

_DAYS = setting_bounds("decision_vote_days")


class ProposalForm(forms.Form):
    """A new decision of the proposer's body; the fields a kind does not use are ignored."""

    kind = forms.ChoiceField(label=_("What is decided"))
    target = forms.TypedChoiceField(
        label=_("Member"),
        coerce=int,
        required=False,
        empty_value=None,
        help_text=_("For adding or removing someone."),
    )
    setting_name = forms.ChoiceField(
        label=_("House-rule setting"),
        required=False,
        help_text=_("For correcting a setting now."),
    )
    setting_value = forms.CharField(
        label=_("New value"),
        required=False,
        max_length=40,
        help_text=_("A number, or yes or no, as the setting takes."),
    )
    text = forms.CharField(
        label=_("Description or reason"),
        required=False,
        max_length=2000,
        widget=forms.Textarea(attrs={"rows": 4}),
        help_text=_("Required for another decision; otherwise a reason the voters read."),
    )
    days = forms.IntegerField(
        label=_("Days the vote stays open"),
        min_value=int(_DAYS[0]),
        max_value=int(_DAYS[1] or 60),
    )

    def __init__(
        self,
        *args: Any,
        body: str,
        members: list[Membership],
        default_days: int,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        labels = dict(DecisionKind.choices)
        kind_field = self.fields["kind"]
        assert isinstance(kind_field, forms.ChoiceField)
        kind_field.choices = [(kind, labels[kind]) for kind in DECISION_KINDS[body]]
        target_field = self.fields["target"]
        assert isinstance(target_field, forms.ChoiceField)
        target_field.choices = [("", "—")] + [
            (
                m.user_id,
                f"{m.user.get_full_name() or m.user.get_username()} ({m.get_role_display()})",
            )
            for m in members
        ]
        if body == "storytellers":
            setting_field = self.fields["setting_name"]
            assert isinstance(setting_field, forms.ChoiceField)
            setting_field.choices = [("", "—")] + [
                (name, gettext(spec.metadata["label"])) for name, spec in HOUSE_RULE_FIELDS.items()
            ]
        else:
            # GEN-04: the players only remove; a setting is not theirs to correct.
            del self.fields["setting_name"], self.fields["setting_value"]
            self.fields["text"].help_text = _("Why, in a few words the players read.")
        self.fields["days"].initial = default_days


class VoteForm(forms.Form):
    vote = forms.ChoiceField(
        label=_("Your vote"),
        choices=[("yes", _("Yes")), ("no", _("No"))],
        widget=forms.RadioSelect,
    )

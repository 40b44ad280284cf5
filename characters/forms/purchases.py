"""The XP purchase form (XP-01): its shape only; the rules' problems come from the service."""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from chronicle.access import is_staff
from chronicle.models import Membership

from .. import access, rules
from ..models import Character, PurchaseKind, PurchaseMoment, XpPurchase
from ..services.purchase_quotes import TEACHER_NAME_MAX

LEVEL_CHOICES = [("", "—")] + [(code, code) for code in rules.LEVELS]
DISCIPLINE_CHOICES = [("", "—")] + [(k, v) for k, v in rules.DISCIPLINE_TITLES.items()]
TEACHER_HELP = _("Needed for out-of-clan 1a and 1b (DIS-07) and for Sewer Lore (SEW-01).")


def _teacher_select(membership: Membership, student_id: int) -> forms.ModelChoiceField:
    """The storytellers' teacher select: only `access.teacher_choices`, so an id outside it is
    refused like an unknown one."""
    return forms.ModelChoiceField(
        label=_("Teacher"),
        queryset=access.teacher_choices(membership)
        .exclude(pk=student_id)
        .only("pk", "name")
        .order_by("name"),
        required=False,
        help_text=TEACHER_HELP,
    )


class PurchaseForm(forms.Form):
    kind = forms.ChoiceField(label=_("What to buy"), choices=PurchaseKind.choices)
    discipline = forms.ChoiceField(
        label=_("Discipline"), choices=DISCIPLINE_CHOICES, required=False
    )
    level = forms.ChoiceField(
        label=_("Level"),
        choices=LEVEL_CHOICES,
        required=False,
        help_text=_("The next level after the ones you own (DIS-02)."),
    )
    # Replaced by a select of `access.teacher_choices` for storytellers; players name their
    # teacher in words, since the other characters are not theirs to know.
    teacher_name = forms.CharField(
        label=_("Teacher (their character's name)"),
        max_length=TEACHER_NAME_MAX,
        required=False,
        help_text=_(
            "Needed for out-of-clan 1a and 1b (DIS-07) and for Sewer Lore (SEW-01). A "
            "storyteller confirms the teacher at sign-off."
        ),
    )
    target = forms.CharField(
        label=_("Target"),
        max_length=60,
        required=False,
        help_text=_("Trait area (physical, social, mental), ability name or influence type."),
    )
    quantity = forms.IntegerField(label=_("Quantity"), min_value=1, max_value=10, initial=1)
    moment = forms.ChoiceField(
        label=_("When"),
        choices=PurchaseMoment.choices,
        initial=PurchaseMoment.DOWNTIME,
        help_text=_("At the game only on its day and before play starts (XP-01)."),
    )
    note = forms.CharField(
        label=_("Note for the STs"), required=False, widget=forms.Textarea(attrs={"rows": 2})
    )

    def __init__(
        self, *args: Any, character: Character, membership: Membership, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.staff = is_staff(membership)
        if self.staff:
            # Keep the field's place in the form: rebuild the dict in order.
            self.fields = {
                ("teacher" if name == "teacher_name" else name): (
                    _teacher_select(membership, character.pk) if name == "teacher_name" else field
                )
                for name, field in self.fields.items()
            }

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
            "teacher_name": data.get("teacher_name") or "",
        }


# Where a service problem about `levels` goes on this form; a teacher problem goes beside
# whichever teacher field the form has.
FIELD_FOR = {"levels": "level"}


def field_for(form: forms.Form, name: str) -> str | None:
    """The form field a service problem about `name` belongs beside (None: above the form)."""
    name = FIELD_FOR.get(name, name)
    if name == "teacher" and "teacher" not in form.fields:
        name = "teacher_name"
    return name if name in form.fields else None


class DecisionForm(forms.Form):
    decision = forms.ChoiceField(
        label=_("Decision"), choices=[("approve", _("Approve")), ("reject", _("Reject"))]
    )
    note = forms.CharField(
        label=_("Note to the player"), required=False, widget=forms.Textarea(attrs={"rows": 2})
    )

    def __init__(
        self, *args: Any, purchase: XpPurchase, membership: Membership, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        # DIS-07 / SEW-01: the ST links the teacher, prefilled with the one already linked.
        self.fields["teacher"] = _teacher_select(membership, purchase.character_id)
        self.fields["teacher"].help_text = (
            _("The player named: %(name)s.") % {"name": purchase.teacher_name}
            if purchase.teacher_name
            else TEACHER_HELP
        )
        self.initial.setdefault("teacher", purchase.teacher_id)

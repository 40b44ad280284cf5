"""The character list's search and filters (CLN: clan and sect), shared by the page and the API
so both accept and refuse the same values."""

from __future__ import annotations

from typing import Any

from django import forms
from django.db.models import Q, QuerySet
from django.utils.translation import gettext_lazy as _

from ..models import CLAN_CHOICES, Approval, Character, Creature, Sect, Status

ANY: list[tuple[str, Any]] = [("", _("Any"))]
# The filters and their values, for the page's form and the API's documented parameters.
FILTER_CHOICES: dict[str, list[tuple[str, Any]]] = {
    "creature": Creature.choices,
    "clan": CLAN_CHOICES,
    "sect": Sect.choices,
    "status": Status.choices,
    "approval": Approval.choices,
}


class RosterFilterForm(forms.Form):
    q = forms.CharField(
        label=_("Search"), required=False, max_length=100, help_text=_("Character name or player.")
    )
    creature = forms.ChoiceField(
        choices=ANY + FILTER_CHOICES["creature"], required=False, label=_("Creature")
    )
    clan = forms.ChoiceField(choices=ANY + FILTER_CHOICES["clan"], required=False, label=_("Clan"))
    sect = forms.ChoiceField(choices=ANY + FILTER_CHOICES["sect"], required=False, label=_("Sect"))
    status = forms.ChoiceField(
        choices=ANY + FILTER_CHOICES["status"], required=False, label=_("Status")
    )
    approval = forms.ChoiceField(
        choices=ANY + FILTER_CHOICES["approval"], required=False, label=_("Approval")
    )

    def apply(self, characters: QuerySet[Character]) -> QuerySet[Character]:
        """Narrow an already access-checked queryset by the fields that are valid; a field the
        form refused narrows nothing (the page shows its error beside it)."""
        data: dict[str, Any] = getattr(self, "cleaned_data", {})
        query = (data.get("q") or "").strip()
        if query:
            characters = characters.filter(
                Q(name__icontains=query) | Q(player__username__icontains=query)
            )
        chosen = {name: data[name] for name in FILTER_CHOICES if data.get(name)}
        return characters.filter(**chosen)


class VolunteerForm(forms.Form):
    """MSC-03: what a member does on the NPC volunteer list. `volunteer` names someone else on
    the list, which only storytellers may do (to record that they declined, or to remove them)."""

    ACTIONS = [("join", _("Join")), ("decline", _("Declined an NPC")), ("leave", _("Leave"))]

    action = forms.ChoiceField(choices=ACTIONS, label=_("Action"))
    volunteer = forms.IntegerField(required=False, min_value=1, label=_("Volunteer"))

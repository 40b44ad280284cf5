"""The character list's search and filters (CLN: clan and sect), shared by the page and the API
so both accept and refuse the same values."""

from __future__ import annotations

from typing import Any

from django import forms
from django.db.models import Q, QuerySet

from ..models import CLAN_CHOICES, Approval, Character, Creature, Sect, Status

ANY = [("", "Any")]
# The filters and their values, for the page's form and the API's documented parameters.
FILTER_CHOICES: dict[str, list[tuple[str, str]]] = {
    "creature": Creature.choices,
    "clan": CLAN_CHOICES,
    "sect": Sect.choices,
    "status": Status.choices,
    "approval": Approval.choices,
}


class RosterFilterForm(forms.Form):
    q = forms.CharField(
        label="Search", required=False, max_length=100, help_text="Character name or player."
    )
    creature = forms.ChoiceField(choices=ANY + FILTER_CHOICES["creature"], required=False)
    clan = forms.ChoiceField(choices=ANY + FILTER_CHOICES["clan"], required=False)
    sect = forms.ChoiceField(choices=ANY + FILTER_CHOICES["sect"], required=False)
    status = forms.ChoiceField(choices=ANY + FILTER_CHOICES["status"], required=False)
    approval = forms.ChoiceField(choices=ANY + FILTER_CHOICES["approval"], required=False)

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

    ACTIONS = [("join", "Join"), ("decline", "Declined an NPC"), ("leave", "Leave")]

    action = forms.ChoiceField(choices=ACTIONS)
    volunteer = forms.IntegerField(required=False, min_value=1)

"""Forms of havens' ownership and construction pages: their shape only; the services check the
house rules (HAV-01..24) and the pages show each problem beside its field."""

from __future__ import annotations

import uuid
from typing import Any

from django import forms
from django.db.models import QuerySet
from django.utils.translation import gettext_lazy as _

from characters.models import INFLUENCE_CHOICES, Character
from characters.models import Status as CharacterStatus
from chronicle.access import is_staff
from chronicle.models import Game, Membership

from .. import access, rules
from ..models import (
    ATTRIBUTE_LABELS,
    AlarmEffect,
    AlarmTrigger,
    Attribute,
    AttributeState,
    Ownership,
    Structure,
    StructureKind,
)
from ..services.ownership import MAX_QUANTITY, NAME_MAX, AttributeRequest

ALARM_ROWS = 4
QUANTITY_KINDS = [kind for kind in rules.ATTRIBUTE_KINDS if kind != "alarm"]
ONCE = rules.ONCE_PER_STRUCTURE
HELP = {
    "influence_resistance": _("Points, in steps of 3 (1 influence each)."),
    "reinforcement": _("Points, in steps of 10 (1 influence each)."),
    "exit": _("At most 5 on a crypt; none on a mobile haven."),
    "hiding": _("Doubles hiding points; not with Mobility."),
    "mobility": _("Not with Hiding, reinforcement or exits."),
}


def quantity_field(kind: str) -> str:
    return f"q_{kind}"


def character_choices(membership: Membership) -> QuerySet[Character]:
    """Who a member may act for: a player their own active approved characters (and those in
    torpor or staked, who still own havens); storytellers any character of the chronicle."""
    characters = access.acting_characters(membership)
    return characters.only("pk", "name").order_by("name", "pk")


def owner_choices(membership: Membership, structure: Structure) -> QuerySet[Character]:
    """The member's characters that may act on this structure as owners (HAV-02); for a plan
    nobody owns yet, the designer's player's characters."""
    owners = Ownership.objects.filter(structure=structure, ended_at__isnull=True)
    characters = character_choices(membership)
    if owners.exists():
        return characters.filter(pk__in=owners.values("character_id"))
    designer = structure.designed_by
    if designer is None:
        return characters.none()
    return characters.filter(player_id=designer.player_id).exclude(player__isnull=True)


class _AttributesMixin(forms.Form):
    """A quantity per attribute kind and a few alarm rows, each with a trigger and an effect."""

    def add_attribute_fields(self) -> None:
        for kind in QUANTITY_KINDS:
            self.fields[quantity_field(kind)] = forms.IntegerField(
                label=ATTRIBUTE_LABELS[kind],
                min_value=0,
                max_value=1 if kind in ONCE else MAX_QUANTITY,
                required=False,
                help_text=HELP.get(kind, ""),
                widget=forms.NumberInput(attrs={"size": 4}),
            )
        for row in range(ALARM_ROWS):
            self.fields[f"alarm_trigger_{row}"] = forms.ChoiceField(
                label=_("Alarm %(number)s: trigger") % {"number": row + 1},
                choices=[("", "—"), *AlarmTrigger.choices],
                required=False,
            )
            self.fields[f"alarm_effect_{row}"] = forms.ChoiceField(
                label=_("Alarm %(number)s: effect") % {"number": row + 1},
                choices=[("", "—"), *AlarmEffect.choices],
                required=False,
            )

    def attribute_requests(self) -> list[AttributeRequest]:
        data = getattr(self, "cleaned_data", {})
        requests = [
            AttributeRequest(kind, data[quantity_field(kind)])
            for kind in QUANTITY_KINDS
            if data.get(quantity_field(kind))
        ]
        for row in range(ALARM_ROWS):
            trigger = data.get(f"alarm_trigger_{row}") or ""
            effect = data.get(f"alarm_effect_{row}") or ""
            if trigger or effect:
                requests.append(AttributeRequest("alarm", 1, trigger, effect))
        return requests

    def quantity_fields(self) -> list[forms.BoundField]:
        return [self[quantity_field(kind)] for kind in QUANTITY_KINDS]

    def alarm_rows(self) -> list[tuple[forms.BoundField, forms.BoundField]]:
        return [
            (self[f"alarm_trigger_{row}"], self[f"alarm_effect_{row}"]) for row in range(ALARM_ROWS)
        ]


def _key() -> str:
    return uuid.uuid4().hex


class _DesignToken(forms.Form):
    """One token per design form shown: a double click or a resubmission plans one haven
    (the service returns the structure planned with it). Kept when the form comes back with
    errors, since a refused design wrote nothing."""

    key = forms.CharField(widget=forms.HiddenInput, max_length=64, required=False)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["key"].initial = _key()


class DesignForm(_DesignToken, _AttributesMixin):
    character = forms.ModelChoiceField(queryset=Character.objects.none(), label=_("Designed by"))
    kind = forms.ChoiceField(label=_("Kind"), choices=StructureKind.choices)
    outer = forms.ModelChoiceField(
        queryset=Structure.objects.none(),
        label=_("Inside (crypts only)"),
        required=False,
        help_text=_("A crypt is built inside an outer haven one of your characters owns."),
    )
    name = forms.CharField(label=_("Name"), max_length=NAME_MAX)
    location = forms.CharField(
        label=_("Location"),
        max_length=300,
        help_text=_("Where it is: the one thing a search that finds it reveals (HAV-25b)."),
    )
    description = forms.CharField(
        label=_("Description"), required=False, widget=forms.Textarea(attrs={"rows": 3})
    )

    def __init__(self, *args: Any, membership: Membership, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["character"].queryset = character_choices(membership)  # type: ignore[attr-defined]
        outers = access.structures_visible_to(membership).filter(
            kind=StructureKind.OUTER, status="standing"
        )
        if not is_staff(membership):
            outers = outers.filter(
                ownerships__ended_at__isnull=True,
                ownerships__character__player_id=membership.user_id,
            ).distinct()
        self.fields["outer"].queryset = outers.only("pk", "name").order_by("name", "pk")  # type: ignore[attr-defined]
        self.add_attribute_fields()


class UpgradeForm(_AttributesMixin):
    character = forms.ModelChoiceField(queryset=Character.objects.none(), label=_("Ordered by"))
    version = forms.IntegerField(widget=forms.HiddenInput, required=False)

    def __init__(
        self, *args: Any, membership: Membership, structure: Structure, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.fields["character"].queryset = owner_choices(membership, structure)  # type: ignore[attr-defined]
        self.fields["version"].initial = structure.version
        self.add_attribute_fields()


class ContributeForm(forms.Form):
    character = forms.ModelChoiceField(queryset=Character.objects.none(), label=_("Who pays"))
    influence = forms.ChoiceField(label=_("Influence"), choices=INFLUENCE_CHOICES)
    points = forms.IntegerField(label=_("Points"), min_value=1, max_value=MAX_QUANTITY)
    # One key per form shown: a double click or a resubmission pays once.
    key = forms.CharField(widget=forms.HiddenInput, max_length=40)

    def __init__(
        self, *args: Any, membership: Membership, structure: Structure, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.fields["character"].queryset = owner_choices(membership, structure)  # type: ignore[attr-defined]
        self.fields["key"].initial = _key()


class OwnerActionForm(forms.Form):
    """Repairs, cancelling a project, forsaking, a crypt vote: which character of yours acts."""

    character = forms.ModelChoiceField(queryset=Character.objects.none(), label=_("As"))

    def __init__(
        self,
        *args: Any,
        membership: Membership,
        structure: Structure,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.fields["character"].queryset = owner_choices(membership, structure)  # type: ignore[attr-defined]


class HandOverForm(OwnerActionForm):
    """HAV-05: a transfer or a will. Players name the recipient in words; storytellers may
    also pick the character."""

    to_name = forms.CharField(
        label=_("To (their character's name)"),
        max_length=NAME_MAX,
        required=False,
        help_text=_("An ST confirms the recipient if the name is not exact."),
    )
    to_character = forms.ModelChoiceField(
        queryset=Character.objects.none(), label=_("Or pick the character"), required=False
    )
    note = forms.CharField(
        label=_("Note for the STs"), required=False, widget=forms.Textarea(attrs={"rows": 2})
    )

    def __init__(self, *args: Any, membership: Membership, structure: Structure, **kw: Any):
        super().__init__(*args, membership=membership, structure=structure, **kw)
        if is_staff(membership):
            self.fields["to_character"].queryset = Character.objects.filter(  # type: ignore[attr-defined]
                chronicle=membership.chronicle, status=CharacterStatus.ACTIVE
            ).order_by("name")
        else:
            del self.fields["to_character"]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if not data.get("to_name") and not data.get("to_character"):
            self.add_error("to_name", _("Give the recipient's character name."))
        return data


class TheftControlForm(forms.Form):
    game = forms.ModelChoiceField(queryset=Game.objects.none(), label=_("Game"))
    thieves = forms.ModelMultipleChoiceField(queryset=Character.objects.none(), label=_("Thieves"))

    def __init__(self, *args: Any, membership: Membership, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["game"].queryset = Game.objects.filter(  # type: ignore[attr-defined]
            chronicle=membership.chronicle
        ).order_by("-date")
        self.fields["thieves"].queryset = Character.objects.filter(  # type: ignore[attr-defined]
            chronicle=membership.chronicle
        ).order_by("name")


LOCK_TEST_RESULTS = [
    ("lost", _("The attacker lost: a failed opening (may set off alarms)")),
    ("bypass", _("The attacker won and bypassed the lock")),
    ("destroy", _("The attacker won and destroyed the lock (open until repaired)")),
]


def _lock_label(lock: Attribute) -> str:
    return _("Two-way lock #%(number)s") % {"number": lock.pk}


class LockTestForm(forms.Form):
    """HAV-16: one static test against a two-way lock at a game, as the ST saw it played."""

    lock = forms.ModelChoiceField(queryset=Attribute.objects.none(), label=_("Two-way lock"))
    game = forms.ModelChoiceField(queryset=Game.objects.none(), label=_("Game"))
    result = forms.ChoiceField(
        choices=LOCK_TEST_RESULTS, label=_("Result (the attacker wins ties)")
    )
    key = forms.CharField(widget=forms.HiddenInput, max_length=64)

    def __init__(
        self, *args: Any, membership: Membership, structure: Structure, **kwargs: Any
    ) -> None:
        kwargs.setdefault("prefix", "lock")
        super().__init__(*args, **kwargs)
        self.fields["key"].initial = uuid.uuid4().hex
        self.fields["lock"].queryset = Attribute.objects.filter(  # type: ignore[attr-defined]
            structure=structure, kind="two_way_lock", state=AttributeState.ACTIVE
        ).order_by("pk")
        self.fields["lock"].label_from_instance = _lock_label  # type: ignore[attr-defined]
        self.fields["game"].queryset = Game.objects.filter(  # type: ignore[attr-defined]
            chronicle=membership.chronicle
        ).order_by("-date")


class DestroyForm(forms.Form):
    note = forms.CharField(label=_("Ruling"), widget=forms.Textarea(attrs={"rows": 2}))


class ListFilterForm(forms.Form):
    status = forms.ChoiceField(
        label=_("Status"),
        choices=[
            ("", _("Any status")),
            ("planned", _("Planned")),
            ("standing", _("Standing")),
            ("destroyed", _("Destroyed")),
        ],
        required=False,
    )
    kind = forms.ChoiceField(
        label=_("Kind"), choices=[("", _("Any kind")), *StructureKind.choices], required=False
    )
    owner = forms.CharField(label=_("Owner name"), max_length=NAME_MAX, required=False)

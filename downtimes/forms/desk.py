"""Forms of the influence desk (staff only): the filters, an item's edit form, assignment,
bulk approval, reminders and at-game requests (INF-04). Shape only; the services check the
rules. The filter form also filters the API's list, so pages and API agree."""

from __future__ import annotations

import uuid
from typing import Any

from django import forms
from django.contrib.auth.models import User
from django.db.models import Q, QuerySet
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from characters.models import INFLUENCE_CHOICES, Approval, Character, Status
from chronicle.access import STAFF_ROLES
from chronicle.models import Cycle, Membership

from ..models import ActionKind, DeskItem, DeskStatus, ItemKind
from ..services.desk import DESCRIPTION_MAX

MAX_POINTS = 100
ANY = [("", pgettext_lazy("filter", "any"))]


def new_key() -> str:
    return uuid.uuid4().hex


def staff_members(chronicle_id: int) -> list[Membership]:
    """The chronicle's storytellers and admins, the only possible assignees (one query)."""
    return list(
        Membership.objects.filter(chronicle_id=chronicle_id, role__in=STAFF_ROLES)
        .select_related("user")
        .order_by("user__username")
    )


def _staff_choices(staff: list[Membership]) -> list[tuple[str, str]]:
    return [(str(m.user_id), m.user.username) for m in staff]


class _CharacterLabel(forms.ModelChoiceField):
    def label_from_instance(self, obj: Any) -> str:
        return str(obj.name)


class DeskFilterForm(forms.Form):
    """Filters: item kind, action, status, assignee ("me", "none" or a storyteller), the
    acting character, and a target's words (a target character's or structure's name, or the
    free-text target)."""

    kind = forms.ChoiceField(label=_("Type"), choices=ANY + ItemKind.choices, required=False)
    action = forms.ChoiceField(label=_("Action"), choices=ANY + ActionKind.choices, required=False)
    status = forms.ChoiceField(label=_("Status"), choices=ANY + DeskStatus.choices, required=False)
    assignee = forms.ChoiceField(label=_("Assignee"), required=False)
    character = _CharacterLabel(
        label=_("Character"), queryset=Character.objects.none(), required=False
    )
    target = forms.CharField(label=_("Target"), max_length=120, required=False)

    def __init__(self, *args: Any, membership: Membership, staff: list[Membership], **kw: Any):
        super().__init__(*args, **kw)
        self.membership = membership
        self.fields["assignee"].choices = [  # type: ignore[attr-defined]
            ("", _("anyone")),
            ("me", _("me")),
            ("none", _("nobody")),
            *_staff_choices(staff),
        ]
        self.fields["character"].queryset = Character.objects.filter(  # type: ignore[attr-defined]
            chronicle_id=membership.chronicle_id
        ).order_by("name", "pk")

    def refusal(self) -> dict[str, list[str]]:
        """The invalid filters' errors by field ({} when all are valid). A set acted on (bulk
        approval) must be refused then: dropping a filter would widen the set."""
        self.is_valid()
        return {name: [str(error) for error in errors] for name, errors in self.errors.items()}

    def apply(self, items: QuerySet[DeskItem]) -> QuerySet[DeskItem]:
        """The items matching the valid filters; an invalid one is left out (never a 500) and
        shown beside its field. Callers that change the set check `refusal()` first."""
        self.is_valid()
        # After validation `cleaned_data` holds only the fields that passed (none if unbound).
        data: dict[str, Any] = getattr(self, "cleaned_data", {})
        if data.get("kind"):
            items = items.filter(kind=data["kind"])
        if data.get("action"):
            items = items.filter(action=data["action"])
        if data.get("status"):
            items = items.filter(status=data["status"])
        assignee = data.get("assignee")
        if assignee == "me":
            items = items.filter(assignee_id=self.membership.user_id)
        elif assignee == "none":
            items = items.filter(assignee__isnull=True)
        elif assignee:
            items = items.filter(assignee_id=int(assignee))
        if data.get("character"):
            items = items.filter(character=data["character"])
        words = (data.get("target") or "").strip()
        if words:
            items = items.filter(
                Q(target_name__icontains=words)
                | Q(target_text__icontains=words)
                | Q(target_character__name__icontains=words)
                | Q(target_structure__name__icontains=words)
            )
        return items

    def without_status(self, items: QuerySet[DeskItem]) -> QuerySet[DeskItem]:
        """The same filters but status: what the per-status counts count."""
        self.is_valid()
        saved = getattr(self, "cleaned_data", {}).get("status")
        if not saved:
            return self.apply(items)
        self.cleaned_data["status"] = ""
        try:
            return self.apply(items)
        finally:
            self.cleaned_data["status"] = saved


class DeskItemForm(forms.Form):
    status = forms.ChoiceField(label=_("Status"), choices=DeskStatus.choices)
    assignee = forms.ChoiceField(label=_("Assignee"), required=False)
    st_notes = forms.CharField(
        label=_("Storyteller notes"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 4}),
        help_text=_("Private to the storytellers: never shown to the player."),
    )
    result = forms.CharField(
        label=_("Result for the player"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 4}),
        help_text=_("The player reads it once the results are released."),
    )
    version = forms.IntegerField(widget=forms.HiddenInput, min_value=1)

    def __init__(self, *args: Any, staff: list[Membership], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["assignee"].choices = [  # type: ignore[attr-defined]
            ("", _("nobody")),
            *_staff_choices(staff),
        ]

    @staticmethod
    def initial_for(item: DeskItem) -> dict[str, Any]:
        return {
            "status": item.status,
            "assignee": str(item.assignee_id or ""),
            "st_notes": item.st_notes,
            "result": item.result,
            "version": item.version,
        }


class AssignForm(forms.Form):
    """From a desk row: take the item ("me") or give it to a storyteller."""

    assignee = forms.ChoiceField(label=_("Assign to"))
    version = forms.IntegerField(widget=forms.HiddenInput, min_value=1)

    def __init__(self, *args: Any, staff: list[Membership], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["assignee"].choices = [  # type: ignore[attr-defined]
            ("me", _("me")),
            *_staff_choices(staff),
        ]

    def user(self, me: User, staff: list[Membership]) -> User:
        chosen = self.cleaned_data["assignee"]
        if chosen == "me":
            return me
        return next(m.user for m in staff if str(m.user_id) == chosen)


class BulkApproveForm(forms.Form):
    confirm = forms.BooleanField(
        label=_("Yes, approve every undecided item the filters show"),
        error_messages={"required": _("Tick the box to confirm the bulk approval.")},
    )


class ReminderForm(forms.Form):
    """Who to remind: `characters` among those waiting, or `everyone` waiting when the form
    is sent (the desk's button: it shows only the first names, so it cannot list them all)."""

    characters = forms.TypedMultipleChoiceField(coerce=int, choices=[], required=False)
    everyone = forms.BooleanField(required=False)

    def __init__(self, *args: Any, waiting: list[Character], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.waiting = waiting
        self.fields["characters"].choices = [(c.pk, c.name) for c in waiting]  # type: ignore[attr-defined]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if data.get("everyone"):
            data["characters"] = [c.pk for c in self.waiting]
        if not data.get("characters") and not self.has_error("characters"):
            raise forms.ValidationError(_("Pick who to remind."), code="required")
        return data


class AtGameRequestForm(forms.Form):
    character = _CharacterLabel(label=_("Character"), queryset=Character.objects.none())
    action = forms.ChoiceField(
        label=_("Request"), choices=ActionKind.choices, initial=ActionKind.LEAVE_CITY
    )
    influence = forms.ChoiceField(
        label=_("Influence"),
        choices=[("", pgettext_lazy("influence", "none")), *INFLUENCE_CHOICES],
        required=False,
    )
    points = forms.IntegerField(label=_("Points"), min_value=0, max_value=MAX_POINTS, initial=0)
    description = forms.CharField(
        label=_("What was asked"),
        max_length=DESCRIPTION_MAX,
        widget=forms.Textarea(attrs={"rows": 3}),
    )
    requested_at = forms.DateTimeField(
        label=_("Asked at"),
        help_text=_("The chronicle's time; the storyteller signs and time-stamps it (INF-04)."),
        widget=forms.DateTimeInput(attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M"),
    )
    key = forms.CharField(widget=forms.HiddenInput, max_length=64)

    def __init__(self, *args: Any, cycle: Cycle, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["key"].initial = new_key()
        tz = cycle.chronicle.tz
        self.fields["requested_at"].initial = (
            timezone.now().astimezone(tz).replace(second=0, microsecond=0, tzinfo=None)
        )
        self.tz = tz
        self.fields["character"].queryset = Character.objects.filter(  # type: ignore[attr-defined]
            chronicle_id=cycle.chronicle_id,
            status=Status.ACTIVE,
            approval=Approval.APPROVED,
        ).order_by("name", "pk")

    def clean_requested_at(self) -> Any:
        value = self.cleaned_data["requested_at"]
        # Typed in the chronicle's time, whatever the server's zone.
        if value is not None and timezone.is_aware(value):
            value = value.replace(tzinfo=None)
        return timezone.make_aware(value, self.tz) if value is not None else value

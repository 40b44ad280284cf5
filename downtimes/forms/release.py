"""Forms of the resolution page's preview filter and of the release's confirmation (issue 12).
Shape only: the services decide (`release.release_check_unfinished` refuses a release with an
unconfirmed group of unfinished work, or any under the house rule DT-REL)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from ..services.preview import MAX_PAGE, WHO_MAX, PreviewFilter
from ..services.release import DESK_GROUP, UnfinishedGroup
from .cycles import ReleaseConfirmForm


class PreviewFilterForm(forms.Form):
    """`?step=…&who=…&overridden=1&page=…` on the resolution page. A malformed page or name
    falls back to the first page or no filter; an unknown step is the view's 404."""

    step = forms.CharField(required=False, widget=forms.HiddenInput)
    who = forms.CharField(
        label=_("Player or character"),
        required=False,
        max_length=WHO_MAX,
        help_text=_("Part of a name, any case."),
        widget=forms.TextInput(attrs={"type": "search", "autocomplete": "off"}),
    )
    overridden = forms.BooleanField(label=_("Only overridden lines"), required=False)
    page = forms.IntegerField(required=False, min_value=1, max_value=MAX_PAGE)

    def wanted(self, step: str) -> PreviewFilter:
        data = self.cleaned_data if self.is_valid() else {}
        return PreviewFilter(
            step=step,
            who=(data.get("who") or "").strip(),
            overridden=bool(data.get("overridden")),
            page=data.get("page") or 1,
        )


class ReleaseForm(ReleaseConfirmForm):
    """The release's confirmation: the preview it was read from (hidden), and one required
    checkbox per non-empty group of unfinished work."""

    def __init__(self, *args: Any, unfinished: list[UnfinishedGroup], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.unfinished = [g for g in unfinished if g.count]
        for group in self.unfinished:
            if group.name == DESK_GROUP:
                label = ngettext(
                    "I know %(n)d influence desk item is unfinished and release anyway.",
                    "I know %(n)d influence desk items are unfinished and release anyway.",
                    group.count,
                )
                required = _("Tick this to release with desk items unfinished, or finish them.")
            else:
                label = ngettext(
                    "I know %(n)d XP purchase is still waiting for sign-off and release anyway: "
                    "it is not charged by this release.",
                    "I know %(n)d XP purchases are still waiting for sign-off and release "
                    "anyway: they are not charged by this release.",
                    group.count,
                )
                required = _(
                    "Tick this to release with purchases still waiting, or sign them off first."
                )
            self.fields[group.field] = forms.BooleanField(
                label=label % {"n": group.count},
                required=True,
                error_messages={"required": required},
            )

    @property
    def confirmation_fields(self) -> list[forms.BoundField]:
        return [self[group.field] for group in self.unfinished]

    @property
    def confirmations(self) -> list[tuple[UnfinishedGroup, forms.BoundField]]:
        """Each non-empty group with its checkbox, to show one beside the other."""
        return [(group, self[group.field]) for group in self.unfinished]

    def confirmed(self) -> set[str]:
        data = getattr(self, "cleaned_data", {})
        return {g.name for g in self.unfinished if data.get(g.field) is True}

    def seen(self) -> tuple[Any, Any]:
        """The preview the confirmation names (run, plan key), if the form carried it."""
        data = getattr(self, "cleaned_data", {})
        return data.get("run"), data.get("plan")

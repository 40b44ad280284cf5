"""The desk page's own forms (issue 12): the filters and the at-game request pick a character
with a type-ahead (a text field the page fills with suggestions), never a select of every
character of the chronicle, so the page stays quick with 300 characters. The API keeps the
filters of `forms.desk` (a character's id), which these accept too."""

from __future__ import annotations

from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.utils.translation import gettext_lazy as _

from characters.models import Character
from chronicle.access import MAX_ID
from chronicle.forms.widgets import FAST_RENDERER, long_select

from ..selectors_desk import PICKED, character_label
from .desk import AtGameRequestForm, DeskFilterForm

NAME_MAX = 130


class CharacterPickField(forms.Field):
    """A character of `queryset` named by what the type-ahead put in the field ("Lucien #12"),
    by its id alone ("12", as the API and old links say), or, typed without picking, by a
    name or part of one that only one character has. One query."""

    widget = forms.TextInput
    default_error_messages = {
        "invalid": _("Select a valid choice: pick a character from the suggestions."),
        "ambiguous": _("Several characters match: pick one from the suggestions."),
    }

    def __init__(self, *, queryset: QuerySet[Character], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.queryset = queryset

    def to_python(self, value: Any) -> Character | None:
        if isinstance(value, Character):
            return value
        text = str(value or "").strip()[:NAME_MAX]
        if not text:
            return None
        picked = PICKED.search(text)
        if picked or text.isdecimal():
            pk = int(picked.group(1) if picked else text)
            found = self.queryset.filter(pk=pk).first() if 0 < pk <= MAX_ID else None
            if found is None:
                raise ValidationError(self.error_messages["invalid"], code="invalid")
            return found
        # Typed by hand (no JavaScript, or no pick): the exact name, else the one name that
        # contains the words. Two rows at most are read to tell "one" from "several".
        exact = list(self.queryset.filter(name__iexact=text)[:2])
        if len(exact) == 1:
            return exact[0]
        near = exact or list(self.queryset.filter(name__icontains=text)[:2])
        if len(near) == 1:
            return near[0]
        code = "ambiguous" if near else "invalid"
        raise ValidationError(self.error_messages[code], code=code)


def _quick(form: forms.Form) -> None:
    """The page's selects written in Python and its inputs without template includes
    (chronicle.forms.widgets): the desk page draws these forms on every load."""
    for field in form.fields.values():
        if type(field.widget) is forms.Select:
            long_select(field)


def _picked_text(form: forms.Form, name: str) -> str:
    """What the type-ahead field shows once the form was validated: the picked character as
    "Name #id", else what was typed."""
    chosen = getattr(form, "cleaned_data", {}).get(name)
    if isinstance(chosen, Character):
        return character_label(chosen)
    return str(form.data.get(form.add_prefix(name), "") or "") if form.is_bound else ""


class DeskQueueFilterForm(DeskFilterForm):
    default_renderer = FAST_RENDERER
    character = CharacterPickField(  # type: ignore[assignment]
        label=_("Character"), queryset=Character.objects.none(), required=False
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # Its own ids: the item form beside it has a "status" and an "assignee" too.
        kwargs.setdefault("auto_id", "desk-filter-%s")
        super().__init__(*args, **kwargs)
        _quick(self)

    def character_text(self) -> str:
        self.is_valid()
        return _picked_text(self, "character")


class AtGameQueueForm(AtGameRequestForm):
    default_renderer = FAST_RENDERER
    character = CharacterPickField(  # type: ignore[assignment]
        label=_("Character"), queryset=Character.objects.none()
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("auto_id", "at-game-%s")
        super().__init__(*args, **kwargs)
        _quick(self)

    def character_text(self) -> str:
        if self.is_bound:
            self.is_valid()
        return _picked_text(self, "character")

"""Form widgets every app may use.

`LongSelect` is Django's `Select` for a select of hundreds of options (a game's cast, every
character of the chronicle): Django renders each option through a template include, which
cost most of a page's time with five 300-name ballots or a 300-name teacher select. It writes
the same HTML as Django's (less the blank lines between options), for flat choices.
"""

from __future__ import annotations

import html
from collections.abc import Iterator
from typing import Any

from django import forms
from django.forms.models import ModelChoiceIterator
from django.utils.choices import BaseChoiceIterator
from django.utils.html import conditional_escape
from django.utils.safestring import SafeString, mark_safe


class PairedChoices(BaseChoiceIterator):
    """Choices already (value, label) pairs: Django takes a choice iterator as it is, where it
    would check each pair of a list again for every field it is given to."""

    def __init__(self, choices: list[tuple[Any, Any]]) -> None:
        self.choices = choices

    def __iter__(self) -> Iterator[tuple[Any, Any]]:
        return iter(self.choices)


def _text(label: Any) -> str:
    # The stdlib's escape is Django's `escape` without its lazy-string wrapper, which cost
    # more than the escaping itself over a thousand options.
    return str(conditional_escape(label)) if hasattr(label, "__html__") else html.escape(str(label))


class LongSelect(forms.Select):
    def render(
        self,
        name: str,
        value: Any,
        attrs: dict[str, Any] | None = None,
        renderer: Any = None,
    ) -> SafeString:
        chosen = set(self.format_value(value))
        options = "".join(
            '\n  <option value="{}"{}>{}</option>'.format(
                html.escape(str(choice)), " selected" if str(choice) in chosen else "", _text(label)
            )
            for choice, label in self.choices
        )
        # In their given order, as Django's attrs.html writes them (flatatt would sort them).
        written = "".join(
            f" {key}" if given is True else f' {key}="{html.escape(str(given))}"'
            for key, given in self.build_attrs(self.attrs, attrs).items()
            if given is not False
        )
        # Every value, label and attribute is escaped above.
        return mark_safe(f'<select name="{html.escape(name)}"{written}>{options}\n</select>')


class ReadModelChoices(ModelChoiceIterator):
    """A model select's options read by one plain query: Django's `iterator()` opens a
    server-side cursor on PostgreSQL (declare, fetch, close: three round trips) per select."""

    def __iter__(self) -> Iterator[tuple[Any, Any]]:
        if self.field.empty_label is not None:
            yield ("", self.field.empty_label)
        for obj in self.queryset.all():
            yield self.choice(obj)


def long_select(field: forms.Field) -> None:
    """Render a choice field already built (a model choice field's queryset set) through
    `LongSelect`, keeping its widget's attributes, choices and required flag."""
    old = field.widget
    assert isinstance(field, forms.ChoiceField) and type(old) is forms.Select, old
    if isinstance(field, forms.ModelChoiceField):
        field.iterator = ReadModelChoices
        field.queryset = field.queryset  # hands the widget choices from the new iterator
    widget = LongSelect(attrs=old.attrs, choices=old.choices)
    widget.is_required = old.is_required
    field.widget = widget

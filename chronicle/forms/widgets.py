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
from django.forms import renderers
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


# Django's own templates of the plain inputs (each includes input.html and attrs.html).
_INPUT_TEMPLATES = frozenset(
    f"django/forms/widgets/{name}.html"
    for name in (
        "input",
        "text",
        "number",
        "email",
        "url",
        "password",
        "hidden",
        "date",
        "datetime",
        "time",
        "search",
        "tel",
        "color",
        "checkbox",
    )
)
_TEXTAREA_TEMPLATE = "django/forms/widgets/textarea.html"


def _escaped(value: Any) -> str:
    """`{{ value|stringformat:'s' }}` under autoescape: safe strings as they are."""
    return str(value) if hasattr(value, "__html__") else html.escape(str(value))


def _attrs(attrs: dict[str, Any]) -> str:
    """django/forms/widgets/attrs.html in Python."""
    return "".join(
        f" {html.escape(str(key))}"
        if given is True
        else f' {html.escape(str(key))}="{_escaped(given)}"'
        for key, given in attrs.items()
        if given is not False
    )


class FastWidgetRenderer(renderers.DjangoTemplates):
    """Django's form renderer, less the template engine for the plain inputs and textareas:
    a page of five forms rendered twenty of them through input.html and attrs.html (two
    template includes each, a third of the page's form time). Writes what those templates
    write; every other template (selects, checkboxes, the form layouts) goes to Django's."""

    def render(self, template_name: str, context: dict[str, Any], request: Any = None) -> str:
        widget = context.get("widget")
        if template_name in _INPUT_TEMPLATES and widget is not None:
            value = widget["value"]
            shown = "" if value is None else f' value="{_escaped(value)}"'
            return mark_safe(
                f'<input type="{html.escape(str(widget["type"]))}" '
                f'name="{html.escape(str(widget["name"]))}"{shown}{_attrs(widget["attrs"])}>'
            )
        if template_name == _TEXTAREA_TEMPLATE and widget is not None:
            value = widget["value"]
            text = _escaped(value) if value else ""
            return mark_safe(
                f'<textarea name="{html.escape(str(widget["name"]))}"{_attrs(widget["attrs"])}>'
                f"\n{text}</textarea>"
            )
        return super().render(template_name, context, request)


FAST_RENDERER = FastWidgetRenderer()


def render_fast(*forms_: forms.BaseForm | None) -> None:
    """Have these forms write their inputs through `FastWidgetRenderer`."""
    for form in forms_:
        if form is not None:
            form.renderer = FAST_RENDERER

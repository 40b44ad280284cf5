"""`{% field_block field %}`: components/field.html written in Python, for the pages that draw
many fields on every load (the player's downtime page: five forms, some thirty fields; the
desk). An `{% include %}` per field costs a context push, a template lookup and a node walk
each time; this writes the same characters (tests/downtimes/test_page_speed.py compares them
for every field of both pages)."""

from __future__ import annotations

from typing import cast

from django import template
from django.forms import BoundField
from django.utils.html import conditional_escape
from django.utils.safestring import SafeString, mark_safe

register = template.Library()

REQUIRED = ' <span aria-hidden="true">*</span>'


@register.simple_tag
def field_block(field: BoundField) -> SafeString:
    errors = field.errors
    required = REQUIRED if field.field.required else ""
    label = conditional_escape(field.label)
    if field.use_fieldset:
        head = f"<fieldset><legend>{label}{required}</legend>\n  "
    else:
        target = conditional_escape(field.id_for_label)
        head = f'<label for="{target}">{label}{required}</label>\n  '
    help_text = field.help_text
    helped = f'<small class="help">{conditional_escape(help_text)}</small>' if help_text else ""
    shown = "".join(
        f'<p class="error" role="alert">{conditional_escape(cast(str, error))}</p>'
        for error in errors
    )
    # Every part is escaped above; the widget's HTML is Django's (or LongSelect's).
    return mark_safe(
        f'\n\n<div class="field{" has-error" if errors else ""}">\n  {head}{field}\n  '
        f"{helped}\n  {shown}\n  {'</fieldset>' if field.use_fieldset else ''}\n</div>\n"
    )

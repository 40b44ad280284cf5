"""The language switcher: in the header on every page (a disclosure, so the top bar stays one
row at 1280 px in any language) and on the account page (with "as my browser says")."""

from __future__ import annotations

from typing import Any

from django import template
from django.conf import settings
from django.utils import translation

from ..middleware import saved_language

register = template.Library()


@register.inclusion_tag("components/language_form.html", takes_context=True)
def language_switcher(context: template.Context, account: bool = False) -> dict[str, Any]:
    """Each language named in its own words (settings.LANGUAGES). In the header the page's
    language is selected; on the account page, the saved choice (blank: the browser's)."""
    request = context.get("request")
    current = translation.get_language() or settings.LANGUAGE_CODE
    selected = saved_language(getattr(request, "user", None)) if account else current
    return {
        "account": account,
        "current": current,
        "languages": [(code, name, code == selected) for code, name in settings.LANGUAGES],
        "browser_selected": account and not selected,
        "next": request.get_full_path() if request is not None else "",
        "csrf_token": context.get("csrf_token"),
    }

"""The language switcher's target (the header's form, and the account page's)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from .. import access
from ..services import account as account_services


def _back(request: HttpRequest) -> str:
    """Where the form was: its `next`, else the page it was posted from, if on this site."""
    for candidate in (request.POST.get("next"), request.headers.get("referer")):
        if candidate and url_has_allowed_host_and_scheme(
            candidate, allowed_hosts={request.get_host()}, require_https=request.is_secure()
        ):
            return candidate
    return reverse("home")


@require_POST
def language_set(request: HttpRequest) -> HttpResponse:
    """Save the choice on a signed-in person's Profile (their e-mails follow it too) and in
    Django's language cookie for everyone, so it outlives the session. "" (the account page's
    "as my browser says") clears both."""
    language = request.POST.get("language", "")
    response = redirect(_back(request))
    if language and language not in dict(settings.LANGUAGES):
        messages.error(request, _("Choose one of the languages offered."))
        return response
    if request.user.is_authenticated:
        account_services.profile_language_set(
            user=access.acting_user(request.user), language=language
        )
    where: dict[str, Any] = {
        "path": settings.LANGUAGE_COOKIE_PATH,
        "domain": settings.LANGUAGE_COOKIE_DOMAIN,
        "samesite": settings.LANGUAGE_COOKIE_SAMESITE,
    }
    if language:
        response.set_cookie(
            settings.LANGUAGE_COOKIE_NAME,
            language,
            max_age=settings.LANGUAGE_COOKIE_AGE,
            secure=settings.LANGUAGE_COOKIE_SECURE,
            httponly=settings.LANGUAGE_COOKIE_HTTPONLY,
            **where,
        )
    else:
        response.delete_cookie(settings.LANGUAGE_COOKIE_NAME, **where)
    return response

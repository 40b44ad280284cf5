"""The language of a page: a signed-in person's saved choice (Profile.language) first, else
what Django's LocaleMiddleware chose before us (the language cookie, then the browser's
Accept-Language, then LANGUAGE_CODE)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.contrib.auth import BACKEND_SESSION_KEY
from django.core.exceptions import ObjectDoesNotExist
from django.core.signals import request_finished
from django.http import HttpRequest, HttpResponse
from django.utils import translation


def saved_language(user: Any) -> str:
    """The language `user` chose on their account, or "" (none saved, or not signed in).
    chronicle.backends loads the Profile with the user, so this asks the database nothing."""
    if user is None or not user.is_authenticated:
        return ""
    try:
        language = user.chronicle_profile.language
    except ObjectDoesNotExist:
        return ""
    # A code no longer offered (LANGUAGES shrank) falls back to the browser's.
    return language if language in dict(settings.LANGUAGES) else ""


class ProfileLanguageMiddleware:
    """After AuthenticationMiddleware (it needs request.user) and LocaleMiddleware (whose choice
    it overrides); request.LANGUAGE_CODE always names the language the page is drawn in."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        activate_saved_language(request, getattr(request, "user", None))
        return self.get_response(request)


def activate_saved_language(request: HttpRequest, user: Any) -> None:
    """Draw the rest of `request` in `user`'s saved language, if they saved one (the API's
    token authentication calls this too, once it knows the caller)."""
    language = saved_language(user)
    if language:
        translation.activate(language)
        request.LANGUAGE_CODE = translation.get_language()


def _forget_language(**_kwargs: Any) -> None:
    """A request's language must not outlive it: what runs next on the same thread outside a
    request (a test's following lines, the next test) is in LANGUAGE_CODE again, as it was
    before LocaleMiddleware. Each request activates its own language anyway."""
    translation.deactivate()


request_finished.connect(_forget_language, dispatch_uid="chronicle.middleware.forget_language")


DJANGO_BACKEND = "django.contrib.auth.backends.ModelBackend"


class SessionBackendMiddleware:
    """Sessions signed in before chronicle.backends existed name Django's own backend, which is
    no longer listed: Django would sign those people out, and a player's downtime posted at
    the deadline would land on the login page. Point such a session at ours instead."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        session = request.session
        if session.get(BACKEND_SESSION_KEY) == DJANGO_BACKEND:
            session[BACKEND_SESSION_KEY] = "chronicle.backends.ModelBackend"
        return self.get_response(request)

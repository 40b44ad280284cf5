"""Response headers that protect every page (issue 16): Permissions-Policy on every response,
and `Cache-Control: private, no-store` on every response to a signed-in request, so neither a
shared computer's back button nor a proxy keeps a player's downtime. The Content-Security-Policy
itself is django-csp's (CONTENT_SECURITY_POLICY in settings); `csp_nonce` below hands its
per-request nonce to templates (django-htmx's `{% htmx_script %}` reads `csp_nonce`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from csp.middleware import CSPMiddleware
from django.conf import settings
from django.contrib.auth import SESSION_KEY
from django.http import HttpRequest, HttpResponse
from django.http.response import HttpResponseBase

# Features the app never uses, refused to the page and to anything it might embed.
PERMISSIONS_POLICY = ", ".join(
    f"{feature}=()"
    for feature in (
        "accelerometer",
        "autoplay",
        "camera",
        "display-capture",
        "geolocation",
        "gyroscope",
        "magnetometer",
        "microphone",
        "midi",
        "payment",
        "usb",
        "xr-spatial-tracking",
    )
)
PRIVATE = "private, no-store"


def is_signed_in(request: HttpRequest) -> bool:
    """A session's user, or an API caller that DRF authenticated (DRF writes the user it found
    back onto the Django request), or any request that presents credentials at all: a refused
    token's 401 is as private as its 200, and a signed-in session stays private on an API view
    that authenticates by token only (DRF then writes AnonymousUser back)."""
    user = getattr(request, "user", None)
    if user is not None and user.is_authenticated:
        return True
    if "HTTP_AUTHORIZATION" in request.META:
        return True
    session = getattr(request, "session", None)
    return (
        session is not None
        and settings.SESSION_COOKIE_NAME in request.COOKIES
        and SESSION_KEY in session
    )


class SecurityHeadersMiddleware:
    """Right after SecurityMiddleware, so it sees every answer the project makes (404s, 403s,
    the lockout's 429 included). Static files never reach it: WhiteNoise answers them first."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        response.setdefault("Permissions-Policy", PERMISSIONS_POLICY)
        if is_signed_in(request):
            # Replaces whatever a view chose (a PDF's max-age): the reader is a person.
            response["Cache-Control"] = PRIVATE
            if "Expires" in response:
                del response["Expires"]
        return response


def csp_nonce(request: HttpRequest) -> dict[str, Any]:
    """Template context: `csp_nonce`, lazy (django-csp adds the nonce to the header only when a
    page used it)."""
    return {"csp_nonce": getattr(request, "csp_nonce", "")}


class NonceCSPMiddleware(CSPMiddleware):
    """django-csp's middleware, but every HTML answer's policy names a nonce, even a page that
    used none (a redirect, DRF's browsable error): the header then says the same on every page,
    and a test can check each inline tag against it."""

    def process_response(
        self, request: HttpRequest, response: HttpResponseBase
    ) -> HttpResponseBase:
        if response.get("Content-Type", "").startswith("text/html"):
            str(getattr(request, "csp_nonce", ""))
        return super().process_response(request, response)

from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from .access import memberships_of


def chronicles(request: HttpRequest) -> dict[str, Any]:
    """The chronicle switcher in the header: the user's memberships, evaluated lazily."""
    user = getattr(request, "user", None)
    if user is None:
        # An error page drawn before authentication ran (a bad Host header, say).
        return {}
    return {"my_memberships": memberships_of(user).order_by("chronicle__name")}

from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from .access import memberships_of


def chronicles(request: HttpRequest) -> dict[str, Any]:
    """The chronicle switcher in the header: the user's memberships, evaluated lazily."""
    return {"my_memberships": memberships_of(request.user).order_by("chronicle__name")}

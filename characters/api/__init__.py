"""The characters app's REST API, one module per area; `register` adds every area's viewsets to
the project's router (the project's urls.py calls it)."""

from __future__ import annotations

from rest_framework.routers import SimpleRouter

from . import creation, purchases, records, roster


def register(router: SimpleRouter) -> None:
    for area in (roster, creation, purchases, records):
        area.register(router)

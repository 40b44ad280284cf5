"""The downtimes app's REST API, one module per area; `register` adds every area's viewsets to
the project's router (the project's urls.py calls it)."""

from __future__ import annotations

from rest_framework.routers import SimpleRouter

from . import cycles, desk, submissions, votes


def register(router: SimpleRouter) -> None:
    for area in (submissions, desk, votes, cycles):
        area.register(router)

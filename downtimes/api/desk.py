"""Placeholder: filled in by this area's work."""

from rest_framework.routers import SimpleRouter


def register(router: SimpleRouter) -> None:
    pass

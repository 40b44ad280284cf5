"""Placeholder: replaced by its owner."""

from rest_framework.routers import SimpleRouter


def register(router: SimpleRouter) -> None:
    pass

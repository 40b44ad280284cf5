"""The havens app's invariants (issue 16, `chronicle.services.invariants`): knowing where a
structure is (a find), owning it (whose owners read its attributes) and searching for it stay
inside the structure's chronicle: no secret reaches a character of another chronicle."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from chronicle.models import Chronicle
from chronicle.services.invariants import Invariant

from .models import Find, Ownership, Searcher


def _ids(queryset: QuerySet[Any]) -> list[object]:
    return list(queryset.order_by("pk").values_list("pk", flat=True))


def finds(chronicle: Chronicle) -> list[object]:
    """HAV-25b: a find names a character and a cycle of the structure's chronicle."""
    return _ids(
        Find.objects.filter(structure__chronicle=chronicle).exclude(
            character__chronicle=chronicle, cycle__chronicle=chronicle
        )
    )


def ownerships(chronicle: Chronicle) -> list[object]:
    """HAV-02: a structure's owners (who read its attributes) are of its chronicle."""
    return _ids(
        Ownership.objects.filter(structure__chronicle=chronicle).exclude(
            character__chronicle=chronicle
        )
    )


def searchers(chronicle: Chronicle) -> list[object]:
    """HAV-25: who searches (and reads the search's result) is of the search's chronicle."""
    return _ids(
        Searcher.objects.filter(search__cycle__chronicle=chronicle).exclude(
            character__chronicle=chronicle
        )
    )


CHECKS = [
    Invariant("haven_finds", "Find", finds),
    Invariant("haven_ownerships", "Ownership", ownerships),
    Invariant("haven_searchers", "Searcher", searchers),
]

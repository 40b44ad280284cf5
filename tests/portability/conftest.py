"""Helpers of the export and import tests: take a chronicle out of the database (as if the
export went to another database), and count every statement a block sends."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from typing import Any

import pgtrigger
from django.db import connection

from chronicle import portability
from chronicle.models import Chronicle

# The append-only tables refuse DELETE on PostgreSQL; taking a whole chronicle out in a test
# is the one exception.
APPEND_ONLY = (
    "characters.XpEntry:xp_entry_append_only",
    "characters.InfluenceSpend:influence_spend_append_only",
)


def wipe(chronicle: Chronicle) -> None:
    """Delete every row of the chronicle, the last tables first (raw deletes: the foreign keys
    are checked at commit, which a test never reaches with rows missing)."""
    tables = [
        (p.model, list(p.rows(chronicle).values_list("pk", flat=True)))
        for p in portability.portables()
    ]
    ignore = pgtrigger.ignore(*APPEND_ONLY) if connection.vendor == "postgresql" else nullcontext()
    with ignore:
        for model, pks in reversed(tables):
            for m2m in model._meta.many_to_many:
                through = m2m.remote_field.through
                links = through.objects.filter(**{f"{m2m.m2m_field_name()}_id__in": pks})
                links._raw_delete(links.db)
            rows = model._default_manager.filter(pk__in=pks)
            rows._raw_delete(rows.db)


class Statements:
    def __init__(self) -> None:
        self.count = 0

    def __call__(
        self, execute: Callable[..., Any], sql: str, params: Any, many: bool, context: Any
    ) -> Any:
        self.count += 1
        return execute(sql, params, many, context)


@contextmanager
def counted() -> Iterator[Statements]:
    """Every statement this connection sends (CaptureQueriesContext keeps only 9,000)."""
    statements = Statements()
    with connection.execute_wrapper(statements):
        yield statements

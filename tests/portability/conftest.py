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
    # Rows left out of the export on purpose (NOT_EXPORTED: the inbox, the mail log) go too.
    for model in portability.not_exported():
        for ref in model._meta.get_fields():
            if ref.concrete and ref.is_relation and ref.related_model is Chronicle:
                left = model._default_manager.filter(**{ref.name: chronicle})
                left._raw_delete(left.db)
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


def set_next_id(model: Any, next_id: int) -> None:
    """Make `next_id` the id the table's next row gets, as in a database that has handed out
    fewer ids than this one (a fresh target). The table must hold no row at or above it."""
    table, column = model._meta.db_table, model._meta.pk.column
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                "SELECT setval(pg_get_serial_sequence(%s, %s), %s, false)",
                [connection.ops.quote_name(table), column, next_id],
            )
        else:
            cursor.execute("DELETE FROM sqlite_sequence WHERE name = %s", [table])
            cursor.execute(
                "INSERT INTO sqlite_sequence (name, seq) VALUES (%s, %s)", [table, next_id - 1]
            )


def as_if_fresh(models: Any) -> None:
    """Every table in `models` hands out, next, the id after its largest row: what a database
    that never held the exported rows would do."""
    for model in models:
        largest = model._base_manager.order_by("-pk").values_list("pk", flat=True).first()
        set_next_id(model, (largest or 0) + 1)

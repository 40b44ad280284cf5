"""History of every change (issue 16): the django-pghistory trackers the models use.

Triggers (PostgreSQL only; pgtrigger installs nothing on SQLite) write one event row per
insert, update and delete, so `update()`, `bulk_update()` and raw SQL are caught. Each event
row is a snapshot of the tracked row; `chronicle.history` turns them into "old → new" rows.
Only what issue 16 lists is tracked: never the ledgers or the pipeline's outcomes, which the
release writes in bulk. This module imports no model, so every app's models.py can use it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import pghistory

M = TypeVar("M")

# The related name on the tracked model: `character.pgh_events`.
EVENTS_RELATED_NAME = "pgh_events"


def tracked(model_name: str, *, exclude: list[str] | None = None) -> Callable[[M], M]:
    """Track inserts, updates (when a tracked column changed) and deletes of a model, into the
    event model `model_name` of the same app ("<Model>History": chronicle.MembershipEvent is
    taken). `exclude`: columns not kept, e.g. `updated_at`, so an autosave that changes
    nothing else records nothing."""
    decorator: Callable[[Any], Any] = pghistory.track(
        pghistory.InsertEvent(),
        pghistory.UpdateEvent(),
        pghistory.DeleteEvent(),
        exclude=exclude,
        model_name=model_name,
        obj_field=pghistory.ObjForeignKey(related_name=EVENTS_RELATED_NAME),
    )
    return decorator

"""Who and what made each history event (issue 16): the context django-pghistory attaches.

A request records the acting user, its URL and method (`HistoryMiddleware`, after
AuthenticationMiddleware; an API token's user is caught when DRF sets `request.user`); a
Celery task records its name and id (`task_prerun` / `task_postrun`). Context is injected
into the SQL only on PostgreSQL, where the triggers are: on SQLite (`make run`) nothing is
recorded and nothing is changed. pghistory is imported lazily: chronicle/celery.py imports
this module before the apps are ready.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from django.db import connection
from django.http import HttpRequest, HttpResponse

_tasks = threading.local()


def recording() -> bool:
    """True where history is recorded: the triggers exist on PostgreSQL only."""
    return connection.vendor == "postgresql"


class HistoryMiddleware:
    """pghistory's middleware (user, URL) plus the method, and only on PostgreSQL."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        from pghistory.middleware import HistoryMiddleware as PgHistoryMiddleware

        class _Middleware(PgHistoryMiddleware):
            def get_context(self, request: Any) -> dict[str, Any]:
                return {**super().get_context(request), "method": request.method}

        self.get_response = get_response
        self._history = _Middleware(get_response)

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if recording():
            response: HttpResponse = self._history(request)
            return response
        return self.get_response(request)


def _task_started(task_id: str | None = None, task: Any = None, **_kwargs: Any) -> None:
    if not recording():
        return
    import pghistory
    from pghistory.runtime import _tracker

    stack = getattr(_tasks, "stack", None)
    if stack is None:
        stack = _tasks.stack = []
    if hasattr(_tracker, "value"):
        # A task run eagerly inside a request: the request's user stays the author.
        stack.append(None)
        return
    context = pghistory.context(task=getattr(task, "name", None), task_id=task_id)
    context.__enter__()
    stack.append(context)


def _task_finished(**_kwargs: Any) -> None:
    stack = getattr(_tasks, "stack", None)
    if stack:
        context = stack.pop()
        if context is not None:
            context.__exit__(None, None, None)


def connect_task_signals() -> None:
    """Called once by chronicle/celery.py: every task's writes carry its name and id."""
    from celery.signals import task_postrun, task_prerun

    task_prerun.connect(_task_started, weak=False, dispatch_uid="chronicle_history_prerun")
    task_postrun.connect(_task_finished, weak=False, dispatch_uid="chronicle_history_postrun")

"""Tasks sent by name once the transaction commits, so the services need not import the tasks
that call them."""

from __future__ import annotations

from celery import current_app
from django.db import transaction


def send_after_commit(task: str, arg: int) -> None:
    """`robust`: a broker that is down must not turn the committed work into a 500; the run
    records stay pending and the sweeper sends them again."""
    transaction.on_commit(
        lambda: current_app.send_task(task, args=[arg]),
        robust=True,
    )

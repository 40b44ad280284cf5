"""The characters app's periodic sweepers, run by beat (chronicle/celery.py's beat_schedule).

Each task is thin: it calls one idempotent sweeper service, so a redelivered or overlapping run
(acks_late, two beats after a restart) has one effect (DESIGN: timers as due-date columns).
"""

from __future__ import annotations

import logging

from celery import shared_task

from .services import imports, sweepers

log = logging.getLogger(__name__)


def _report(what: str, count: int) -> int:
    if count:
        log.info("%s: %d", what, count)
    return count


@shared_task
def sweep_stored_blood() -> int:
    """BLD-03: mark kine blood that has become unusable."""
    return _report("Stored blood expired", sweepers.stored_blood_expire_sweep())


@shared_task
def sweep_torpor_holds() -> int:
    """TOR-01: end the torpor holds whose downtime is over."""
    return _report("Torpor holds ended", sweepers.torpor_holds_sweep())


@shared_task
def sweep_captives() -> int:
    """TOR-02: captives not released by the end of the next game die."""
    return _report("Captives died", sweepers.captives_sweep())


@shared_task
def sweep_black_veins() -> int:
    """XP-04: black veins fade six months after a diablerie."""
    return _report("Black veins faded", sweepers.black_veins_sweep())


@shared_task
def sweep_bonds() -> int:
    """BND-10: end expired bonds and lapse partial levels (the records area's sweeper)."""
    # Imported here so this module (and the worker) loads even where the bonds service is not
    # yet deployed; the task itself fails loudly without it.
    from .services.bonds import bonds_sweep

    return _report("Bonds swept", bonds_sweep(now=None))


@shared_task
def run_grapevine_import(job_id: int) -> bool:
    """An Import page's job: the Grapevine files the storytellers confirmed, imported in one
    transaction. Idempotent: the job row says when it is done, so a redelivered message (acks
    late, a retry after a lost connection) imports nothing twice."""
    return imports.import_job_run(job_id=job_id)

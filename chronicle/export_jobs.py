"""The admins' download of a whole chronicle: an export job that a Celery worker runs, its state
in a file under the var dir. Split from `portability`, which holds the rows' export itself.

No model and no migration: a job is a random id, a state file and, once done, the export beside
it, in a folder per chronicle (so one chronicle's admins cannot name another's job)."""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
import secrets
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from celery import current_app
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from .languages import in_language_of
from .models import Chronicle
from .portability import PortabilityError, export_to_file

log = logging.getLogger(__name__)

EXPORT_TASK = "chronicle.tasks.export_chronicle_job"
# An export holds every secret of the chronicle: it stays on the server this long.
EXPORT_KEPT = dt.timedelta(days=7)


@dataclass
class ExportJob:
    id: str
    chronicle_id: int
    requested_by: str
    requested_at: str
    status: str = "pending"  # pending, running, done, failed
    finished_at: str = ""
    error: str = ""

    @property
    def done(self) -> bool:
        return self.status == "done"

    @property
    def waiting(self) -> bool:
        return self.status in ("pending", "running")


def _job_dir(chronicle_id: int) -> Path:
    return Path(settings.VAR_DIR) / "exports" / str(chronicle_id)


def export_job_file(job: ExportJob) -> Path:
    return _job_dir(job.chronicle_id) / f"{job.id}.json"


def _job_state_file(chronicle_id: int, job_id: str) -> Path:
    return _job_dir(chronicle_id) / f"{job_id}.state.json"


def _job_save(job: ExportJob) -> None:
    path = _job_state_file(job.chronicle_id, job.id)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps(asdict(job)), encoding="utf-8")
    os.replace(partial, path)


def export_job_for(chronicle: Chronicle, job_id: str) -> ExportJob | None:
    """The chronicle's job `job_id`, or None (also for an id that could not be one)."""
    if not (job_id.isascii() and job_id.replace("-", "").replace("_", "").isalnum()):
        return None
    try:
        state = json.loads(_job_state_file(chronicle.pk, job_id).read_text(encoding="utf-8"))
        return ExportJob(**state)
    except (OSError, ValueError, TypeError):
        return None


def export_job_start(*, chronicle: Chronicle, by: Any) -> ExportJob:
    """Record a pending job and hand it to a worker once the caller commits. A broker that is
    down leaves the job pending instead of failing the request."""
    _forget_old_jobs(chronicle.pk)
    job = ExportJob(
        id=secrets.token_urlsafe(16),
        chronicle_id=chronicle.pk,
        requested_by=by.get_username(),
        requested_at=timezone.now().isoformat(),
    )
    _job_save(job)
    transaction.on_commit(
        lambda: current_app.send_task(EXPORT_TASK, args=[chronicle.pk, job.id]), robust=True
    )
    return job


def _forget_old_jobs(chronicle_id: int) -> None:
    """Delete the chronicle's exports (and their states) older than EXPORT_KEPT."""
    oldest = (timezone.now() - EXPORT_KEPT).timestamp()
    for path in _job_dir(chronicle_id).glob("*"):
        try:
            if path.stat().st_mtime < oldest:
                path.unlink()
        except OSError:
            log.warning("Could not remove the old export %s", path)


def export_job_run(*, chronicle_id: int, job_id: str) -> ExportJob | None:
    """The worker's side. Idempotent: a redelivered job that is done does nothing, one that died
    half-way writes the file again."""
    chronicle = Chronicle.objects.filter(pk=chronicle_id).first()
    job = export_job_for(chronicle, job_id) if chronicle else None
    if chronicle is None or job is None or job.done:
        return job
    job.status = "running"
    _job_save(job)
    # What went wrong is written for the admin who asked, in their language.
    requester = get_user_model()._default_manager.filter(username=job.requested_by).first()
    with in_language_of(requester):
        try:
            export_to_file(chronicle, export_job_file(job))
        except PortabilityError as exc:
            job.status, job.error = "failed", str(exc)
        except OSError as exc:
            log.exception("Export %s of chronicle %s could not be written", job_id, chronicle_id)
            job.status = "failed"
            job.error = _("The file could not be written: %(error)s") % {"error": exc.strerror}
        else:
            job.status = "done"
    job.finished_at = timezone.now().isoformat()
    _job_save(job)
    return job

"""Real Celery worker processes for the pipeline's tests on Redis and PostgreSQL, and the demo
month resolved and released around them (tests/pipeline/test_worker_faults.py,
tests/pipeline/test_two_workers.py; the fixtures `broker`, `workers` and `chunked` are in
conftest.py).

A worker is `celery -A chronicle worker` in a subprocess with the test settings, the test's own
database (pytest-django's `test_...` name) and broker, and a chunk size of 2 so that every step
has several chunks. Waiting for one is the one place these tests watch the wall clock: they poll
with a deadline.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.core.management import call_command
from django.db import connection

from chronicle.celery import QUEUES
from chronicle.models import CycleStatus
from chronicle.services import cycle_close
from downtimes.models import ChunkStatus, ResolutionRun, RunStatus, StepChunk
from downtimes.services import pipeline

from .demo_month import AFTER_DEADLINE, DemoMonth, build_month
from .digest import digest, dump

ROOT = Path(__file__).resolve().parents[2]
CHUNK_SIZE = 2
WORKER_START = 60.0  # seconds for a worker process to report ready
RUN_DEADLINE = 120.0  # seconds for a resolution to finish once nothing stops it
WORKER_ARGS = [
    "worker",
    "--without-mingle",
    "--without-gossip",
    "--concurrency=1",
    "--loglevel=INFO",
]
# A worker with test settings set after Django starts (the pause of the pipeline's test hook,
# or a naive task configuration); otherwise the same program as `celery -A chronicle worker`.
TUNED_WORKER = """
import json, os, sys
import django
django.setup()
from django.conf import settings
for name, value in json.loads(os.environ["H3_SETTINGS"]).items():
    setattr(settings, name, value)
from chronicle.celery import app
import downtimes.tasks  # autodiscovery is lazy; the task must be registered to be tuned
task = app.tasks["downtimes.tasks.resolve_chunk"]
for name, value in json.loads(os.environ.get("H3_TASK_OPTIONS", "{}")).items():
    setattr(task, name, value)
print("resolve_chunk: acks_late", task.acks_late, "reject_on_worker_lost",
      task.reject_on_worker_lost, flush=True)
app.worker_main(sys.argv[1:])
"""


def database_url() -> str:
    """The test database (pytest-django's `test_...` name), as the worker must reach it."""
    db = connection.settings_dict
    auth = db["USER"] + (f":{db['PASSWORD']}" if db.get("PASSWORD") else "")
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


class Worker:
    """One worker process, with its log in `tmp_path`. It consumes `queues` (by default every
    queue of chronicle/celery.py, as `make run`'s worker and docker-compose.yml's do) under the
    node name `hostname`, so that two on one machine are two nodes."""

    def __init__(
        self,
        log: Path,
        *,
        broker: str,
        tuned: dict[str, Any] | None = None,
        task_options: dict[str, Any] | None = None,
        pool: str = "solo",
        queues: str = ",".join(QUEUES),
        hostname: str = "worker@%h",
        wait: bool = True,
    ) -> None:
        self.log = log
        environment = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "tests.settings",
            "DATABASE_URL": database_url(),
            "CELERY_BROKER_URL": broker,
            "CHRONICLE_PIPELINE_CHUNK_SIZE": str(CHUNK_SIZE),
            "PYTHONPATH": str(ROOT),
        }
        args = [*WORKER_ARGS, "-Q", queues, "-n", hostname, f"--pool={pool}"]
        if tuned is not None or task_options is not None:
            environment["H3_SETTINGS"] = json.dumps(tuned or {})
            environment["H3_TASK_OPTIONS"] = json.dumps(task_options or {})
            command = [sys.executable, "-c", TUNED_WORKER, *args]
        else:
            command = [str(ROOT / ".venv" / "bin" / "celery"), "-A", "chronicle", *args]
        self.handle = log.open("w")
        self.process = subprocess.Popen(
            command, cwd=ROOT, env=environment, stdout=self.handle, stderr=subprocess.STDOUT
        )
        if wait:
            self.wait_ready()

    def wait_ready(self) -> None:
        wait_for(self.ready, WORKER_START, f"worker ready (log: {self.log})")

    def ready(self) -> bool:
        if self.process.poll() is not None:
            raise AssertionError(f"The worker exited: {self.log.read_text()[-3000:]}")
        return " ready." in self.log.read_text()

    def kill(self) -> None:
        """SIGKILL: no cleanup, no ack, no goodbye to the broker or the database."""
        os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)

    def children(self) -> list[int]:
        """The pool's processes (prefork), from /proc."""
        task_dir = Path(f"/proc/{self.process.pid}/task")
        return [
            int(pid)
            for task in task_dir.iterdir()
            for pid in (task / "children").read_text().split()
        ]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()
        self.handle.close()


def wait_for(condition: Callable[[], Any], seconds: float, what: str) -> Any:
    """Poll `condition` until it gives something true, and return that; fail after `seconds`
    (the worker runs on the wall clock)."""
    deadline = time.monotonic() + seconds
    while not (value := condition()):
        if time.monotonic() > deadline:
            raise AssertionError(f"Timed out after {seconds:.0f}s waiting for: {what}")
        time.sleep(0.2)
    return value


# --- The month, resolved -------------------------------------------------------------------------


def closed_month(**build: Any) -> DemoMonth:
    month = build_month(**build)
    cycle_close(cycle=month.cycle, by=month.st, now=AFTER_DEADLINE)
    return month


@dataclass(frozen=True)
class State:
    digest: str
    lines: list[str]  # what the digest hashes: a failing comparison shows the difference


def released(month: DemoMonth) -> State:
    month.cycle.refresh_from_db()
    assert month.cycle.status == CycleStatus.RESOLVED
    assert pipeline.cycle_release(cycle=month.cycle, by=month.st) is True
    return State(digest=digest(month.chronicle), lines=dump(month.chronicle))


def resolved_inline(**build: Any) -> State:
    """The month built, resolved in this process and released: what a worker must give."""
    month = closed_month(**build)
    pipeline.cycle_resolve_inline(cycle=month.cycle, by=month.st)
    return released(month)


def fault_free(broker: str, **build: Any) -> State:
    """The month resolved inline and released, then the database flushed for the next run."""
    state = resolved_inline(**build)
    flush(broker)
    return state


def flush(broker: str) -> None:
    """An empty database and broker for the next build."""
    call_command("flush", interactive=False, verbosity=0)
    import redis

    redis.Redis.from_url(broker).flushdb()  # an inline run enqueues its chunks too


def assert_same(got: State, expected: State) -> None:
    assert got.lines == expected.lines
    assert got.digest == expected.digest


def run_done(run: ResolutionRun) -> bool:
    return ResolutionRun.objects.get(pk=run.pk).status == RunStatus.DONE


def assert_once(run: ResolutionRun) -> None:
    """Every chunk of the run done, each by exactly one committed attempt."""
    chunks = list(StepChunk.objects.filter(run=run))
    assert chunks and {c.status for c in chunks} == {ChunkStatus.DONE}
    assert {c.attempts for c in chunks} == {1}

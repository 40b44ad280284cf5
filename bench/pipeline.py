"""Benchmark: the between-games pipeline (DT-10) as the chronicle grows.

Builds tests/pipeline/demo_month.py's month with 100 and then 1,000 extra players (half of them
submitted, half not), closes it, resolves it inline (the same services a worker runs, chunk by
chunk) and releases it. Statements are counted with `connection.execute_wrapper`, which sees
every one (Django's query log keeps 9,000). With a chunk size of 500 the statements grow only
by chunk; with a chunk size of 100 they show each chunk's cost.

Run with `make bench` (SQLite in a temporary file unless DATABASE_URL is set). Prints the SQL
statements and seconds per size, and the ratios between sizes; it asserts nothing. The fault
figures (a job lost without acks_late, a chunk run twice without its row lock) come from
tests/pipeline/test_worker_faults.py and test_pipeline_idempotence.py, which need PostgreSQL
and Redis.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DEBUG", "1")
os.environ.setdefault(
    "DATABASE_URL", f"sqlite:///{Path(tempfile.mkdtemp()) / 'chronicle-bench-pipeline.sqlite3'}"
)
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "chronicle.settings")
# The release enqueues the summary e-mails after commit: keep the messages on disk, not on a
# broker nobody runs here.
os.environ.setdefault("CELERY_BROKER_URL", "filesystem://")
# Receipts and notices are e-mailed as the month is built: keep them in memory.
os.environ.setdefault("EMAIL_BACKEND", "django.core.mail.backends.locmem.EmailBackend")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402

from chronicle.services import cycle_close  # noqa: E402
from downtimes.models import StepChunk  # noqa: E402
from downtimes.services import pipeline  # noqa: E402
from tests.pipeline.demo_month import AFTER_DEADLINE, build_month  # noqa: E402

SIZES = [100, 1000]
CHUNK_SIZES = [500, 100]


@contextmanager
def counted() -> Iterator[list[int]]:
    count = [0]

    def wrapper(execute: Callable[..., Any], sql: str, params: Any, many: bool, ctx: Any) -> Any:
        count[0] += 1
        return execute(sql, params, many, ctx)

    with connection.execute_wrapper(wrapper):
        yield count


def measure(label: str, action: Callable[[], Any]) -> tuple[int, float]:
    with counted() as count:
        started = time.perf_counter()
        action()
        seconds = time.perf_counter() - started
    print(f"  {label:<40} {count[0]:>6} statements {seconds * 1000:>9.1f} ms")
    return count[0], seconds


def main() -> None:
    call_command("migrate", verbosity=0)
    results: dict[str, list[tuple[int, float]]] = {}
    for chunk_size in CHUNK_SIZES:
        settings.CHRONICLE_PIPELINE_CHUNK_SIZE = chunk_size
        for size in SIZES:
            prefix = f"c{chunk_size}s{size}_"
            started = time.perf_counter()
            month = build_month(extra_players=size, prefix=prefix)
            built = time.perf_counter() - started
            cycle_close(cycle=month.cycle, by=month.st, now=AFTER_DEADLINE)
            print(
                f"chunk size {chunk_size}, {size} extra players "
                f"({size + 8} characters; built in {built:.1f} s):"
            )
            resolve = measure(
                "resolve (every chunk, inline)",
                lambda m=month: pipeline.cycle_resolve_inline(
                    cycle=m.cycle, by=m.st, now=AFTER_DEADLINE
                ),
            )
            chunks = StepChunk.objects.filter(run__cycle=month.cycle).count()
            print(f"  {'chunks':<40} {chunks:>6}")
            month.cycle.refresh_from_db()
            release = measure(
                "release",
                lambda m=month: pipeline.cycle_release(cycle=m.cycle, by=m.st, now=AFTER_DEADLINE),
            )
            results.setdefault(f"resolve, chunk {chunk_size}", []).append(resolve)
            results.setdefault(f"release, chunk {chunk_size}", []).append(release)
    small, large = SIZES
    print(f"\nratios for {large // small}x the extra players:")
    for name, ((q1, s1), (q2, s2)) in results.items():
        print(f"  {name:<22} statements x{q2 / q1:.2f}   time x{s2 / s1:.2f}")


if __name__ == "__main__":
    main()

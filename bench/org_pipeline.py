"""The pipeline's figures: close → resolve (chunks of 500, inline, each step timed as the sum
of its chunks) → release, each run on a fresh copy of a size's template database, with the
release in a child process of its own (its peak RSS growth is `ru_maxrss` after minus before)
and the raw-SQL lower bound (bench/release_bound.py, when it exists) on a second copy of the
same resolved data; and, at L, every chronicle resolved through a real Celery worker.

Only the public services are used: `chronicle.services.cycle_close`,
`downtimes.services.pipeline.cycle_resolve` / `chunk_run` / `cycle_release`, and the models.
The parent process needs no Django: every measurement runs in a child
(`python -m bench.org_pipeline child <command> <json>`) pointed at its copy, which prints its
result as the last line of JSON.
"""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from bench.generate import (
    AFTER_DEADLINE,
    ROOT,
    SIZES,
    _admin,
    child_env,
    copy_database,
    dataset_of,
    drop_database,
    template_database,
)
from bench.report import Figure

RUN_DB = "chronicle_bench_pipe_run"
BOUND_DB = "chronicle_bench_pipe_bound"
WORKER_DB = "chronicle_bench_pipe_worker"
BROKER_URL = os.environ.get("CELERY_BROKER_URL") or "redis://127.0.0.1:6379/9"
CHUNK = 500
COUNT_ENV = "CHRONICLE_BENCH_COUNT_PUBLISHED"


def child(command: str, database: str, payload: dict[str, Any], **env: str) -> dict[str, Any]:
    """Run one measurement in a fresh Python process on `database`; its last line is JSON."""
    env.setdefault("CELERY_BROKER_URL", "memory://")
    done = subprocess.run(
        [sys.executable, "-m", "bench.org_pipeline", "child", command, json.dumps(payload)],
        cwd=ROOT,
        env=child_env(database, **env),
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"child {command} failed:\n{done.stdout[-3000:]}\n{done.stderr[-5000:]}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def bound_available() -> bool:
    return (ROOT / "bench" / "release_bound.py").exists()


# --- The inline pipeline ---------------------------------------------------------------------


def pipeline_runs(size: str, runs: int = 3, *, bound: bool = True) -> list[dict[str, Any]]:
    """`runs` close → resolve → release of `size`'s only chronicle, each on a fresh copy."""
    template = template_database(size)
    dataset = dataset_of(template)
    (chronicle,) = dataset.chronicles
    results = []
    for run in range(runs):
        copy_database(template, RUN_DB)
        result: dict[str, Any] = child(
            "resolve", RUN_DB, {"cycle_id": chronicle.cycle_id, "by": chronicle.storytellers[0]}
        )
        with_bound = bound and bound_available()
        if with_bound:
            # The same resolved data, for the raw-SQL bound.
            copy_database(RUN_DB, BOUND_DB)
        result.update(
            child(
                "release", RUN_DB, {"cycle_id": chronicle.cycle_id, "by": chronicle.storytellers[0]}
            )
        )
        if with_bound:
            result["bound"] = child("bound", BOUND_DB, {"cycle_id": chronicle.cycle_id})
        results.append(result)
        print(
            f"  {size} run {run + 1}: resolve {result['resolve']:.2f} s, release "
            f"{result['release']:.2f} s, RSS +{result['rss_growth_mb']:.1f} MB"
            + (
                f", bound {result['bound']['seconds']:.2f} s"
                f" (×{result['release'] / result['bound']['seconds']:.2f})"
                if "bound" in result
                else ""
            ),
            flush=True,
        )
    drop_database(RUN_DB)
    drop_database(BOUND_DB)
    return results


def pipeline_figures(size: str, results: list[dict[str, Any]]) -> list[Figure]:
    players = sum(SIZES[size])
    section = f"Pipeline {size} ({players:,} players, chunks of {CHUNK})"
    figures = [
        Figure(section, "resolve", "s", [r["resolve"] for r in results], "close excluded"),
    ]
    for step in results[0]["steps"]:
        figures.append(
            Figure(
                section,
                f"step {step}",
                "s",
                [r["steps"][step] for r in results],
                f"{results[0]['chunks'][step]} chunk(s)",
            )
        )
    figures += [
        Figure(section, "outcomes", "rows", [r["outcomes"] for r in results]),
        Figure(section, "release", "s", [r["release"] for r in results]),
        Figure(
            section,
            "release peak RSS growth",
            "MB",
            [r["rss_growth_mb"] for r in results],
            "ru_maxrss after − before, child process",
        ),
        Figure(section, "release peak RSS", "MB", [r["rss_peak_mb"] for r in results]),
    ]
    bounded = [r for r in results if "bound" in r]
    if bounded:
        same = [float(r["bound"]["written"] == r["written"]) for r in bounded]
        figures += [
            Figure(
                section,
                "release bound (raw SQL)",
                "s",
                [r["bound"]["seconds"] for r in bounded],
                "bench/release_bound.py on a copy of the same resolved data",
            ),
            Figure(
                section,
                "release ÷ bound",
                "×",
                [r["release"] / r["bound"]["seconds"] for r in bounded],
                "goal ≤ 2 at 10,000 and 30,000",
            ),
            Figure(
                section,
                "rows written equal",
                "1 = yes",
                same,
                "written(cycle) of the release vs of the bound"
                + ("" if all(same) else f": {_difference(bounded)}"),
            ),
        ]
    else:
        figures.append(
            Figure(section, "release bound (raw SQL)", "s", [math.nan], "no bench/release_bound.py")
        )
    return figures


def _difference(results: list[dict[str, Any]]) -> str:
    for r in results:
        a, b = r["written"], r["bound"]["written"]
        if a != b:
            keys = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
            return "; ".join(f"{k}: {a.get(k)} vs {b.get(k)}" for k in keys[:4])
    return ""


def slope_figures(small: str, large: str, by_size: dict[str, list[dict[str, Any]]]) -> list[Figure]:
    """(time ratio ÷ N ratio) from `small` to `large`, run i paired with run i."""
    n = sum(SIZES[large]) / sum(SIZES[small])
    a, b = by_size[small], by_size[large]
    section = f"Slopes {small} → {large} (time ratio ÷ N ratio {n:.0f})"

    def slope(get: Any) -> list[float]:
        return [
            (get(y) / get(x)) / n if get(x) > 0 else math.nan for x, y in zip(a, b, strict=False)
        ]

    figures = [Figure(section, "resolve", "slope", slope(lambda r: r["resolve"]), "goal ≤ 1.1")]
    for step in a[0]["steps"]:
        figures.append(
            Figure(
                section,
                f"step {step}",
                "slope",
                slope(lambda r, s=step: r["steps"][s]),
                "goal ≤ 1.1",
            )
        )
    figures.append(Figure(section, "release", "slope", slope(lambda r: r["release"])))
    growth = [y["rss_peak_mb"] - x["rss_peak_mb"] for x, y in zip(a, b, strict=False)]
    figures.append(Figure(section, "release peak RSS, large − small", "MB", growth, "goal ≤ 50 MB"))
    return figures


def pipeline_section(sizes: list[str], runs: int = 3, *, bound: bool = True) -> list[Figure]:
    by_size: dict[str, list[dict[str, Any]]] = {}
    figures: list[Figure] = []
    for size in sizes:
        print(f"pipeline {size}:", flush=True)
        by_size[size] = pipeline_runs(size, runs, bound=bound)
        figures += pipeline_figures(size, by_size[size])
    for small, large in zip(sizes, sizes[1:], strict=False):
        figures += slope_figures(small, large, by_size)
    if len(sizes) > 2:
        figures += slope_figures(sizes[0], sizes[-1], by_size)
    return figures


# --- Through a real worker -----------------------------------------------------------------------


class BackendSampler(threading.Thread):
    """Every 0.2 s, the sessions connected to `database` (pg_stat_database.numbackends)."""

    def __init__(self, database: str) -> None:
        super().__init__(daemon=True)
        self.database = database
        self.samples: list[int] = []
        self.stop = threading.Event()

    def run(self) -> None:
        # Connected to the maintenance database, so the sampler is not among what it counts.
        with _admin() as conn:
            while not self.stop.is_set():
                row = conn.execute(
                    "SELECT numbackends FROM pg_stat_database WHERE datname = %s",
                    [self.database],
                ).fetchone()
                conn.execute("SELECT pg_stat_clear_snapshot()")
                self.samples.append(int(row[0]) if row else 0)
                self.stop.wait(0.2)


def _worker_run(size: str, concurrency: int) -> tuple[dict[str, Any], list[int], int]:
    template = template_database(size)
    dataset = dataset_of(template)
    copy_database(template, WORKER_DB)
    counts = Path(tempfile.mkdtemp(prefix="bench-pipe-")) / "published.log"
    counts.touch()
    env = child_env(WORKER_DB, CELERY_BROKER_URL=BROKER_URL, **{COUNT_ENV: str(counts)})
    celery = str(ROOT / ".venv" / "bin" / "celery")
    # Stale messages from an aborted run would name chunks of another copy.
    subprocess.run(
        [celery, "-A", "chronicle", "purge", "-f"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        check=False,
    )
    log = counts.with_name("worker.log").open("w")
    worker = subprocess.Popen(
        [
            celery,
            "-A",
            "chronicle",
            "worker",
            f"--concurrency={concurrency}",
            "--pool=prefork",
            "--without-mingle",
            "--without-gossip",
            "--loglevel=WARNING",
        ],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    sampler = BackendSampler(WORKER_DB)
    sampler.start()
    try:
        result = child(
            "worker",
            WORKER_DB,
            {
                "cycles": [[c.cycle_id, c.storytellers[0]] for c in dataset.chronicles],
                "counts": str(counts),
            },
            CELERY_BROKER_URL=BROKER_URL,
        )
    finally:
        sampler.stop.set()
        sampler.join()
        os.killpg(worker.pid, signal.SIGTERM)
        try:
            worker.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait()
        log.close()
    drop_database(WORKER_DB)
    print(
        f"  worker {size}: resolve {result['resolve']:.1f} s, tasks {result['tasks_resolve']} "
        f"(formula {result['formula']}), sessions max {max(sampler.samples, default=0)}",
        flush=True,
    )
    return result, sampler.samples, len(dataset.chronicles)


def worker_section(size: str = "L", concurrency: int = 2, runs: int = 1) -> list[Figure]:
    """Resolve every chronicle's cycle of `size` through `celery worker` (prefork,
    `concurrency` processes), wait for every run, release each; count the tasks published
    (in this harness and in the worker) and sample the copy's database sessions. Each run
    starts from a fresh copy and a fresh worker."""
    results, samples = [], []
    cycles = 0
    for _run in range(runs):
        result, sampled, cycles = _worker_run(size, concurrency)
        results.append(result)
        samples.append(sampled)
    players = sum(SIZES[size])
    section = (
        f"Through a real worker at {size} ({cycles} chronicles, {players:,} players; celery "
        f"prefork, {concurrency} processes)"
    )

    def values(key: str) -> list[float]:
        return [float(r[key]) for r in results]

    return [
        Figure(section, "resolve, every cycle, wall", "s", values("resolve")),
        Figure(section, "release, every cycle, wall", "s", values("release")),
        Figure(
            section,
            "tasks sent while resolving",
            "tasks",
            values("tasks_resolve"),
            f"harness {results[-1]['by_harness_resolve']} + worker "
            f"{results[-1]['by_worker_resolve']} (before_task_publish in both)",
        ),
        Figure(
            section,
            "Σ cycles Σ steps ⌈n/500⌉",
            "tasks",
            values("formula"),
            "n = the step's subjects (characters, or members for player steps); 1 per whole step",
        ),
        Figure(
            section,
            "constant per cycle: (sent − formula) ÷ cycles",
            "tasks",
            [(r["tasks_resolve"] - r["formula"]) / cycles for r in results],
        ),
        Figure(section, "chunk rows (StepChunk)", "rows", values("chunk_rows")),
        Figure(section, "tasks sent by the releases", "tasks", values("tasks_release")),
        Figure(
            section,
            "database sessions, max",
            "sessions",
            [float(max(s, default=0)) for s in samples],
            f"pg_stat_database.numbackends every 0.2 s ({sum(map(len, samples))} samples); "
            f"goal ≤ workers + 2 = {concurrency + 2}; the harness's own session counts",
        ),
    ]


# --- Children --------------------------------------------------------------------------------


def _setup() -> None:
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "chronicle.settings")
    django.setup()
    from django.urls import get_resolver
    from django.utils import translation

    # Warm: the first `reverse` imports every view (WeasyPrint among them: seconds and tens
    # of MB), and the first gettext loads the catalogs. A worker has done both long before a
    # release, so neither belongs in a step's time or the release's memory.
    get_resolver().url_patterns  # noqa: B018
    for language in ("en", "it", "ca"):
        with translation.override(language):
            translation.gettext("Released")


def _rss_mb() -> float:
    import resource

    # Linux reports kilobytes.
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _user(username: str) -> Any:
    from django.contrib.auth import get_user_model

    return get_user_model().objects.get(username=username)


def child_resolve(payload: dict[str, Any]) -> dict[str, Any]:
    from chronicle.models import Cycle
    from chronicle.services import cycle_close
    from downtimes.models import ChunkStatus, Outcome, StepChunk
    from downtimes.services.pipeline import chunk_run, cycle_resolve

    by = _user(payload["by"])
    cycle = Cycle.objects.get(pk=payload["cycle_id"])
    cycle_close(cycle=cycle, by=by, now=AFTER_DEADLINE)
    steps: dict[str, float] = {}
    chunks: dict[str, int] = {}
    started = time.perf_counter()
    run = cycle_resolve(cycle=cycle, by=by, now=AFTER_DEADLINE)
    while True:
        chunk = (
            StepChunk.objects.filter(run=run, status=ChunkStatus.PENDING)
            .order_by("position", "number")
            .values_list("pk", "step")
            .first()
        )
        if chunk is None:
            break
        begun = time.perf_counter()
        if not chunk_run(chunk_id=chunk[0], now=AFTER_DEADLINE):
            raise RuntimeError(f"chunk {chunk} did not run")
        steps[chunk[1]] = steps.get(chunk[1], 0.0) + time.perf_counter() - begun
        chunks[chunk[1]] = chunks.get(chunk[1], 0) + 1
    resolve = time.perf_counter() - started
    cycle.refresh_from_db()
    if cycle.status != "resolved":
        raise RuntimeError(f"cycle {cycle.pk} is {cycle.status} after resolving")
    return {
        "resolve": resolve,
        "steps": steps,
        "chunks": chunks,
        "outcomes": Outcome.objects.filter(cycle=cycle).count(),
    }


def _written(cycle_id: int) -> Any:
    if not bound_available():
        return None
    from bench import release_bound  # type: ignore[attr-defined]

    return json.loads(json.dumps(release_bound.written(cycle_id), default=str, sort_keys=True))


def child_release(payload: dict[str, Any]) -> dict[str, Any]:
    from chronicle.models import Cycle
    from downtimes.services import pipeline
    from downtimes.services.haven_steps import havens_apply  # noqa: F401 - imported before

    by = _user(payload["by"])
    cycle = Cycle.objects.select_related("chronicle", "game").get(pk=payload["cycle_id"])
    before = _rss_mb()
    started = time.perf_counter()
    released = pipeline.cycle_release(cycle=cycle, by=by, now=AFTER_DEADLINE)
    seconds = time.perf_counter() - started
    peak = _rss_mb()
    if not released:
        raise RuntimeError(f"cycle {cycle.pk} was not released")
    return {
        "release": seconds,
        "rss_before_mb": before,
        "rss_peak_mb": peak,
        "rss_growth_mb": peak - before,
        "written": _written(cycle.pk),
    }


def child_bound(payload: dict[str, Any]) -> dict[str, Any]:
    from bench import release_bound  # type: ignore[attr-defined]

    started = time.perf_counter()
    release_bound.release_bound(payload["cycle_id"])
    seconds = time.perf_counter() - started
    return {"seconds": seconds, "written": _written(payload["cycle_id"])}


def _formula(cycle_ids: list[int]) -> int:
    """Σ per cycle Σ per step ⌈n/500⌉: n the step's subjects in the chronicle (every
    character, or every member for the player steps), 1 for a whole-cycle step."""
    from characters.models import Character
    from chronicle.models import Cycle, Membership
    from downtimes.services.steps import STEPS

    total = 0
    for cycle in Cycle.objects.filter(pk__in=cycle_ids):
        n = {
            "character": Character.objects.filter(chronicle_id=cycle.chronicle_id).count(),
            "player": Membership.objects.filter(chronicle_id=cycle.chronicle_id).count(),
        }
        total += sum(1 if s.unit == "whole" else math.ceil(n[s.unit] / CHUNK) for s in STEPS)
    return total


def child_worker(payload: dict[str, Any]) -> dict[str, Any]:
    from celery.signals import before_task_publish
    from django.db import connection

    from chronicle.models import Cycle
    from chronicle.services import cycle_close
    from downtimes.models import ResolutionRun, RunStatus, StepChunk
    from downtimes.services.pipeline import cycle_release, cycle_resolve

    published = [0]

    def count(**_kwargs: Any) -> None:
        published[0] += 1

    # The harness's own publishes; the worker's are the lines chronicle/celery.py's hook
    # appends to the log (the hook is off in this process: its environment lacks the path).
    before_task_publish.connect(count, weak=False)
    counts = Path(payload["counts"])

    def logged() -> int:
        return len(counts.read_text().splitlines())

    cycles = [(Cycle.objects.get(pk=pk), _user(st)) for pk, st in payload["cycles"]]
    for cycle, by in cycles:
        cycle_close(cycle=cycle, by=by, now=AFTER_DEADLINE)
    started = time.perf_counter()
    runs = [cycle_resolve(cycle=cycle, by=by).pk for cycle, by in cycles]
    deadline = time.monotonic() + 30 * 60
    while True:
        statuses = list(ResolutionRun.objects.filter(pk__in=runs).values_list("status", flat=True))
        if all(s == RunStatus.DONE for s in statuses):
            break
        if any(s == RunStatus.FAILED for s in statuses) or time.monotonic() > deadline:
            raise RuntimeError(f"runs did not finish: {statuses}")
        connection.close()
        time.sleep(0.5)
    resolve = time.perf_counter() - started
    # Let any task a finishing chunk sent land in the log.
    time.sleep(2)
    by_harness = published[0]
    total = by_harness + logged()
    chunk_rows = StepChunk.objects.filter(run_id__in=runs).count()
    formula = _formula([c.pk for c, _by in cycles])
    started = time.perf_counter()
    for cycle, by in cycles:
        cycle_release(cycle=cycle, by=by)
    release = time.perf_counter() - started
    # The summary mails go through the worker; wait until its queue is drained.
    _drain(timeout=300)
    connection.close()
    return {
        "resolve": resolve,
        "release": release,
        "by_harness_resolve": by_harness,
        "by_worker_resolve": total - by_harness,
        "tasks_resolve": total,
        "tasks_release": published[0] + logged() - total,
        "formula": formula,
        "chunk_rows": chunk_rows,
    }


def _drain(timeout: float) -> None:
    import redis

    from chronicle.celery import app

    queues = [q.name for q in app.conf.task_queues or []] or ["celery"]
    client = redis.Redis.from_url(os.environ["CELERY_BROKER_URL"])
    deadline = time.monotonic() + timeout
    quiet = 0
    while time.monotonic() < deadline and quiet < 4:
        # Every queue, and the messages taken but not yet acknowledged.
        busy = sum(client.llen(name) for name in queues) + client.hlen("unacked")
        quiet = quiet + 1 if busy == 0 else 0
        time.sleep(0.5)


CHILDREN = {
    "resolve": child_resolve,
    "release": child_release,
    "bound": child_bound,
    "worker": child_worker,
}


def _main(argv: list[str]) -> None:
    if len(argv) == 3 and argv[0] == "child":
        _setup()
        print(json.dumps(CHILDREN[argv[1]](json.loads(argv[2])), default=str))
        return
    sizes = argv or ["S"]
    from bench.report import tables

    print(tables(pipeline_section(sizes, runs=1)))


if __name__ == "__main__":
    _main(sys.argv[1:])

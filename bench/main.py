"""The benchmark's one entry point.

    python bench/main.py small   # make bench: S and M (pipeline; pages under light load if
                                 # bench/load.py is there; the older scripts) - a few minutes
    python bench/main.py org     # make bench-org: L through a real worker, P1K / P10K / XL
                                 # pipeline beside the raw-SQL bound, pages under load and
                                 # the deadline rush on M

Needs PostgreSQL (DATABASE_URL, default postgres://postgres@127.0.0.1:5432/chronicle_bench:
the server and credentials are taken from it, the databases are chronicle_bench_*) and, for
the worker and the rush, Redis (CELERY_BROKER_URL, default redis://127.0.0.1:6379/9). Each run
writes bench/results/<UTC date-time>-<title>.md and copies its tables into README.md. Figures
are min, median and max of the runs; they are measurements, not tests: nothing here asserts.
"""

from __future__ import annotations

import argparse
import importlib
import os
import subprocess
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/chronicle_bench")
os.environ.setdefault("CELERY_BROKER_URL", "redis://127.0.0.1:6379/9")

from bench import org_pipeline  # noqa: E402
from bench.generate import copy_database, dataset_of, template_database  # noqa: E402
from bench.report import Figure, write_report  # noqa: E402

LOAD_DB = "chronicle_bench_load"
# The scripts `make bench` ran before this entry point: they build their own SQLite data.
LEGACY = ["bench/run.py", "bench/havens.py", "bench/pipeline.py"]


def _load_module() -> object | None:
    if not (ROOT / "bench" / "load.py").exists():
        return None
    return importlib.import_module("bench.load")


def load_sections(size: str, *, rush: bool, runs: int = 3, seconds: float = 15) -> list[Figure]:
    """BENCH-LOAD's pages under load (`seconds` per page and run) and the rush, on a fresh
    copy of `size`."""
    load = _load_module()
    if load is None:
        print("bench/load.py is not there yet: no pages under load", flush=True)
        return []
    dataset = dataset_of(template_database(size))
    dataset.database = copy_database(dataset.database, LOAD_DB)
    figures = list(load.pages_section(dataset, runs=runs, seconds=seconds))  # type: ignore[attr-defined]
    if rush:
        dataset.database = copy_database(template_database(size), LOAD_DB)
        figures += list(load.rush_section(dataset))  # type: ignore[attr-defined]
    return figures


def legacy() -> list[Figure]:
    """The older scripts, as they were (printed, not reported); SQLite unless told."""
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CELERY_BROKER_URL")}
    figures = []
    for script in LEGACY:
        started = time.perf_counter()
        print(f"--- {script}", flush=True)
        done = subprocess.run([sys.executable, script], cwd=ROOT, env=env, check=False)
        figures.append(
            Figure(
                "Older scripts (SQLite; their figures are printed above the report)",
                script,
                "s",
                [time.perf_counter() - started],
                "ok" if done.returncode == 0 else f"exit {done.returncode}",
            )
        )
    return figures


def run(title: str, sections: list[tuple[str, Callable[[], list[Figure]]]]) -> Path:
    figures: list[Figure] = []
    started = time.perf_counter()
    path = None
    for name, section in sections:
        begun = time.perf_counter()
        print(f"=== {name}", flush=True)
        try:
            figures += section()
        except Exception:  # noqa: BLE001 - one broken section must not lose the others' figures
            traceback.print_exc()
            figures.append(Figure("Failed sections", name, "", [float("nan")], "see the log"))
        took = time.perf_counter() - begun
        print(f"=== {name}: {took:.0f} s", flush=True)
        figures.append(Figure("This run", f"section: {name}", "s", [took]))
        # Rewritten after each section, so a run stopped midway keeps what it measured.
        path = write_report(title, figures, path)
    figures.append(Figure("This run", "wall time", "s", [time.perf_counter() - started], title))
    path = write_report(title, figures, path)
    print(path.read_text())
    print(f"report: {path}")
    return path


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("target", choices=["small", "org"])
    parser.add_argument("--runs", type=int, default=3, help="runs per figure (at least 3)")
    parser.add_argument("--no-legacy", action="store_true", help="skip the older scripts")
    # Each worker run at L takes minutes (20 releases queue 10,000 summary mails); its figures
    # are counts, the same every run, so one run is the default.
    parser.add_argument("--worker-runs", type=int, default=1, help="runs through the worker")
    parser.add_argument(
        "--sizes",
        nargs="+",
        default=["P1K", "P10K", "XL"],
        help="org: the pipeline sizes, smallest first (slopes from the first to the last)",
    )
    parser.add_argument(
        "--only",
        nargs="+",
        choices=["worker", "pipeline", "pages"],
        default=["worker", "pipeline", "pages"],
        help="org: the sections to run (all by default)",
    )
    args = parser.parse_args(argv)
    runs = args.runs
    if args.target == "small":
        sections = [
            ("pipeline S, M", lambda: org_pipeline.pipeline_section(["S", "M"], runs)),
            # 5 s a page: `make bench` takes a few minutes; `make bench-org` measures 15 s.
            (
                "pages under light load (M)",
                lambda: load_sections("M", rush=False, runs=runs, seconds=5),
            ),
        ]
        if not args.no_legacy:
            sections.append(("older scripts", legacy))
        run("small", sections)
    else:
        org = [
            (
                "worker",
                "worker L",
                lambda: org_pipeline.worker_section("L", runs=args.worker_runs),
            ),
            (
                "pipeline",
                f"pipeline {', '.join(args.sizes)}",
                lambda: org_pipeline.pipeline_section(args.sizes, runs),
            ),
            ("pages", "pages under load and the rush (M)", lambda: load_sections("M", rush=True)),
        ]
        run("org", [(name, section) for key, name, section in org if key in args.only])


if __name__ == "__main__":
    main()

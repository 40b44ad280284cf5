"""The benchmark's report: every figure as min, median and max of its runs, one Markdown table
per section, written to bench/results/<UTC date-time>-<title>.md with the machine and the
commit, and copied into README.md between the bench:latest markers."""

from __future__ import annotations

import datetime as dt
import os
import platform
import re
import statistics
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
README = ROOT / "README.md"
START, END = "<!-- bench:latest:start -->", "<!-- bench:latest:end -->"


@dataclass
class Figure:
    section: str
    name: str
    unit: str
    values: list[float]
    note: str = ""


def _number(value: float) -> str:
    if value != value:  # NaN: a figure that could not be taken
        return "–"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}" if abs(value) >= 0.01 or value == 0 else f"{value:.4f}"


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _ram() -> str:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                return f"{int(line.split()[1]) / 1024 / 1024:.1f} GB"
    except OSError:
        pass
    return "?"


def _postgres() -> str:
    try:
        from bench.generate import _admin

        with _admin() as conn:
            row = conn.execute("SHOW server_version").fetchone()
            return f"PostgreSQL {row[0]}" if row else "?"
    except Exception as exc:  # noqa: BLE001 - the report is written even without a server
        return f"PostgreSQL unknown ({type(exc).__name__})"


def _commit() -> str:
    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=ROOT, capture_output=True, text=True, check=False
        ).stdout.strip()

    commit = git("rev-parse", "--short", "HEAD") or "unknown"
    return commit + ("+dirty" if git("status", "--porcelain", "--untracked-files=no") else "")


def machine() -> str:
    return (
        f"{_cpu()} × {os.cpu_count()}, {_ram()} RAM, {_postgres()}, "
        f"Python {platform.python_version()} ({platform.system()})"
    )


def tables(figures: list[Figure]) -> str:
    sections: dict[str, list[Figure]] = {}
    for figure in figures:
        sections.setdefault(figure.section, []).append(figure)
    out = []
    for section, rows in sections.items():
        out += [
            f"#### {section}",
            "",
            "| figure | min | median | max | unit | runs | note |",
            "|---|---:|---:|---:|---|---:|---|",
        ]
        for f in rows:
            values = [v for v in f.values if v == v] or [float("nan")]
            out.append(
                f"| {f.name} | {_number(min(values))} | {_number(statistics.median(values))} "
                f"| {_number(max(values))} | {f.unit} | {len(f.values)} | {f.note} |"
            )
        out.append("")
    return "\n".join(out)


def write_report(title: str, figures: list[Figure], path: Path | None = None) -> Path:
    """Write the report and copy its tables into README.md; returns the report's path."""
    now = dt.datetime.now(dt.UTC)
    slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-") or "bench"
    if path is None:
        RESULTS.mkdir(parents=True, exist_ok=True)
        path = RESULTS / f"{now:%Y%m%dT%H%M%SZ}-{slug}.md"
    header = (
        f"Run {now:%Y-%m-%d %H:%M} UTC, `{title}`, commit `{_commit()}`; "
        f"{machine()}. Min, median and max of the runs; `python {' '.join(sys.argv)}`."
    )
    body = tables(figures)
    path.write_text(f"# Benchmark: {title}\n\n{header}\n\n{body}")
    _readme(f"Latest: [{path.name}](bench/results/{path.name}). {header}\n\n{body}")
    return path


def _readme(text: str) -> None:
    readme = README.read_text()
    if START not in readme or END not in readme:
        return
    before, rest = readme.split(START, 1)
    _old, after = rest.split(END, 1)
    README.write_text(f"{before}{START}\n{text.rstrip()}\n{END}{after}")

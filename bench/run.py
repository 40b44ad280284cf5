"""Benchmarks: how the deadline sweep and the games list scale with the data.

The sweep's statements grow only with the database's insert batches (bulk_create), not per cycle.

Run with `make bench` (SQLite in a temporary file unless DATABASE_URL is set). Prints the SQL
statements and seconds per size, and the ratios between sizes; it asserts nothing.
"""

from __future__ import annotations

import datetime as dt
import os
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DEBUG", "1")
os.environ.setdefault(
    "DATABASE_URL", f"sqlite:///{Path(tempfile.mkdtemp()) / 'chronicle-bench.sqlite3'}"
)
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "chronicle.settings")
os.environ.setdefault("ALLOWED_HOSTS", "testserver")

import django  # noqa: E402

django.setup()

from django.contrib.auth.models import User  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402

from chronicle import services  # noqa: E402
from chronicle.models import Chronicle, Cycle, Game, Membership, Role  # noqa: E402

SIZES = [100, 2000]


def seed(size: int) -> Chronicle:
    """One chronicle with `size` games and their open cycles, all past their deadline."""
    chronicle = Chronicle.objects.create(name=f"Bench {size}", slug=f"bench-{size}")
    start = dt.date(2000, 1, 1)
    games = Game.objects.bulk_create(
        Game(chronicle=chronicle, number=i + 1, date=start + dt.timedelta(weeks=i))
        for i in range(size)
    )
    Cycle.objects.bulk_create(
        Cycle(chronicle=chronicle, game=g, deadline_at=dt.datetime(2001, 1, 1, tzinfo=dt.UTC))
        for g in games
    )
    return chronicle


def measure(label: str, action) -> tuple[int, float]:  # type: ignore[no-untyped-def]
    with CaptureQueriesContext(connection) as queries:
        started = time.perf_counter()
        action()
        seconds = time.perf_counter() - started
    print(f"  {label:<34} {len(queries):>5} statements {seconds * 1000:>9.1f} ms")
    return len(queries), seconds


def get(client: Client, url: str) -> None:
    response = client.get(url)
    assert response.status_code == 200, response.status_code


def main() -> None:
    call_command("migrate", verbosity=0)
    user = User.objects.create_user("bench", password="bench-password-123")
    results: dict[str, list[tuple[int, float]]] = {"sweep": [], "api": []}
    for size in SIZES:
        chronicle = seed(size)
        Membership.objects.create(user=user, chronicle=chronicle, role=Role.STORYTELLER)
        print(f"{size} games:")
        results["sweep"].append(
            measure("close due cycles (one sweep)", lambda: services.cycles_close_due())
        )
        client = Client()
        client.force_login(user)
        url = f"/api/chronicles/{chronicle.slug}/games/?limit=100"
        get(client, url)  # warm up: the first request loads URLconf, templates and schema code
        results["api"].append(measure("GET games API (page of 100)", partial(get, client, url)))
    small, large = SIZES
    print(f"\nratios for {large // small}x the data:")
    for name, ((q1, s1), (q2, s2)) in results.items():
        print(f"  {name:<6} statements x{q2 / q1:.2f}   time x{s2 / s1:.2f}")


if __name__ == "__main__":
    main()

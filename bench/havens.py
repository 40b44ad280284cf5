"""Benchmark: the havens' downtime resolution (DT-10 steps) as the chronicle grows.

Seeds N owners each with a standing haven (locks, resistance, a paid project waiting for
construction) and N searches and N influence attacks, then runs `havens_resolve` once. The
steps are set-based, so statements should grow with the insert batches only, not per haven.

Run with `make bench` (SQLite in a temporary file unless DATABASE_URL is set). Prints the SQL
statements and seconds per size and their ratios; it asserts nothing.
"""

from __future__ import annotations

import datetime as dt
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DEBUG", "1")
os.environ.setdefault(
    "DATABASE_URL", f"sqlite:///{Path(tempfile.mkdtemp()) / 'chronicle-bench-havens.sqlite3'}"
)
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "chronicle.settings")

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402

from characters.models import Approval, Character, InfluenceSpend  # noqa: E402
from chronicle import services  # noqa: E402
from chronicle.models import Chronicle  # noqa: E402
from havens.models import (  # noqa: E402
    Attribute,
    Find,
    InfluenceAttack,
    Ownership,
    Project,
    Search,
    Searcher,
    Structure,
)
from havens.services.resolution import havens_resolve  # noqa: E402

SIZES = [30, 600]
NOW = dt.datetime(2024, 3, 20, 20, 0, tzinfo=dt.UTC)


def seed(size: int) -> Chronicle:
    """`size` owners with a haven each, a searcher and an attacker per haven."""
    chronicle = services.chronicle_create(
        name=f"Havens {size}", slug=f"havens-{size}", timezone_name="UTC"
    )
    game = services.game_create(chronicle=chronicle, date=dt.date(2024, 3, 9))
    cycle = game.cycle
    people = Character.objects.bulk_create(
        Character(
            chronicle=chronicle,
            name=f"{role} {i}",
            approval=Approval.APPROVED,
            mental=5,
            business=3,
            underworld=5,
        )
        for i in range(size)
        for role in ("Owner", "Searcher")
    )
    owners, searchers = people[0::2], people[1::2]
    havens = Structure.objects.bulk_create(
        Structure(
            chronicle=chronicle,
            kind="outer",
            name=f"Haven {i}",
            location=f"Street {i}",
            status="standing",
            created_at=NOW,
        )
        for i in range(size)
    )
    Ownership.objects.bulk_create(
        Ownership(structure=h, character=o, how="built", started_at=NOW)
        for h, o in zip(havens, owners, strict=True)
    )
    Attribute.objects.bulk_create(
        Attribute(structure=h, kind="influence_resistance", quantity=3, cost=1, created_at=NOW)
        for h in havens
    )
    Project.objects.bulk_create(
        Project(
            structure=h,
            kind="attribute",
            attribute_kind="two_way_lock",
            cost=2,
            paid=2,
            status="paid",
            paid_cycle=cycle,
            requested_by=o,
            created_at=NOW,
        )
        for h, o in zip(havens, owners, strict=True)
    )
    spends = InfluenceSpend.objects.bulk_create(
        InfluenceSpend(
            character=s,
            cycle=cycle,
            influence="underworld",
            points=points,
            reason="bench",
            key=f"bench-{kind}",
            created_at=NOW,
        )
        for s in searchers
        for kind, points in (("search", 1), ("attack", 4))
    )
    searches = Search.objects.bulk_create(
        Search(
            cycle=cycle,
            target_name=o.name,
            target=o,
            party_code=f"b{size}-{i}",
            created_by=s,
            created_at=NOW,
        )
        for i, (o, s) in enumerate(zip(owners, searchers, strict=True))
    )
    Searcher.objects.bulk_create(
        Searcher(search=q, character=s, influence="underworld", points=1, spend=sp, joined_at=NOW)
        for q, s, sp in zip(searches, searchers, spends[0::2], strict=True)
    )
    # Each attacker found the haven at the game before this downtime (HAV-25c).
    Find.objects.bulk_create(
        Find(structure=h, character=s, cycle=cycle, found_at=NOW)
        for h, s in zip(havens, searchers, strict=True)
    )
    InfluenceAttack.objects.bulk_create(
        InfluenceAttack(
            cycle=cycle,
            attacker=s,
            structure=h,
            influence="underworld",
            points=4,
            spend=sp,
            created_at=NOW,
        )
        for h, s, sp in zip(havens, searchers, spends[1::2], strict=True)
    )
    services.cycle_close(cycle=cycle, by=None, now=NOW)
    return chronicle


def main() -> None:
    call_command("migrate", verbosity=0)
    results = []
    for size in SIZES:
        chronicle = seed(size)
        cycle = chronicle.cycles.get()
        with CaptureQueriesContext(connection) as queries:
            started = time.perf_counter()
            summary = havens_resolve(cycle=cycle, now=NOW)
            seconds = time.perf_counter() - started
        destroyed = summary["influence_attacks"]["destroyed"]
        print(
            f"{size} havens: {len(queries):>5} statements {seconds * 1000:>9.1f} ms"
            f"  ({summary['construction']['attributes_built']} attributes built,"
            f" {summary['searches']['searches']} searches, {destroyed} havens destroyed)"
        )
        results.append((len(queries), seconds))
    (q1, s1), (q2, s2) = results
    print(f"\nratios for {SIZES[1] // SIZES[0]}x the havens:")
    print(f"  havens_resolve statements x{q2 / q1:.2f}   time x{s2 / s1:.2f}")


if __name__ == "__main__":
    main()

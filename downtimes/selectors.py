"""Reads the resolution pages and the API share (issue 6), already limited to what the caller
may see by the views' access checks."""

from __future__ import annotations

from collections import defaultdict

from django.db.models import Count, OuterRef, Q, Subquery

from chronicle.models import Cycle

from .models import ChunkStatus, ResolutionRun, StepChunk
from .services import pipeline
from .services.pipeline import Progress, ReleasePlan


def progress_by_cycle(cycles: list[Cycle]) -> dict[int, Progress]:
    """`pipeline.run_progress` for many cycles at once (two queries, whatever their number):
    each cycle's latest run with its chunks done per step. A cycle never resolved is absent."""
    latest = (
        ResolutionRun.objects.filter(cycle=OuterRef("cycle")).order_by("-number").values("number")
    )
    runs = list(
        ResolutionRun.objects.filter(
            cycle__in=[c.pk for c in cycles], number=Subquery(latest[:1])
        ).select_related("started_by")
    )
    counts: dict[int, dict[str, tuple[int, int]]] = defaultdict(dict)
    for row in (
        StepChunk.objects.filter(run__in=[r.pk for r in runs])
        .values("run_id", "step")
        .annotate(total=Count("pk"), done=Count("pk", filter=Q(status=ChunkStatus.DONE)))
        .order_by()
    ):
        counts[row["run_id"]][row["step"]] = (row["done"], row["total"])
    return {run.cycle_id: pipeline.progress_of(run, counts[run.pk]) for run in runs}


def release_plan_key(cycle: Cycle, plan: ReleasePlan) -> tuple[int, str]:
    """What a release confirmation was read from (see `pipeline.release_key`)."""
    return pipeline.release_key(cycle=cycle, plan=plan)

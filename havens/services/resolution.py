"""The havens' part of the between-games resolution, in SPEC DT-10 order: ownership changes,
forsaking and theft, then construction and repairs, then mobile havens moving, searches and
influence attacks. The pipeline (issue 6) runs these steps as tasks with its own run records;
`havens_resolve` runs them in one process, for the demo, tests and the ST's manual run.

Each step is idempotent on its own, so running the whole sequence twice gives one effect.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

from django.utils import timezone

from chronicle.models import Cycle

from .ownership import (
    construction_resolve,
    forsaking_resolve,
    ownership_changes_apply,
    theft_resolve,
)
from .searches import influence_attacks_resolve, mobile_havens_move, searches_resolve

Step = Callable[..., dict[str, Any]]

# DT-10: ownership, forsaking, theft → construction and repairs → mobile havens move →
# searches → influence attacks.
HAVEN_STEPS: tuple[tuple[str, Step], ...] = (
    ("ownership", ownership_changes_apply),
    ("forsaking", forsaking_resolve),
    ("theft", theft_resolve),
    ("construction", construction_resolve),
    ("mobile_havens", mobile_havens_move),
    ("searches", searches_resolve),
    ("influence_attacks", influence_attacks_resolve),
)


def havens_resolve(*, cycle: Cycle, now: dt.datetime | None = None) -> dict[str, dict[str, Any]]:
    """Run every haven step of the cycle in DT-10 order; returns each step's summary."""
    now = now or timezone.now()
    return {name: step(cycle=cycle, now=now) for name, step in HAVEN_STEPS}

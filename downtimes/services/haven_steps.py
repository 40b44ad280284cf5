"""The havens' steps of the preview and the release (placeholder until written)."""

from __future__ import annotations

import datetime as dt

from chronicle.models import Cycle
from havens.services.resolution import havens_resolve

from ..models import Outcome, OutcomeOverride


def havens_preview(*, cycle: Cycle, now: dt.datetime) -> list[Outcome]:
    return []


def havens_apply(
    *, cycle: Cycle, now: dt.datetime, overrides: dict[tuple[str, str], OutcomeOverride]
) -> list[Outcome]:
    havens_resolve(cycle=cycle, now=now)
    return []

"""The pipeline's services on the database: close, resolve inline, review, release."""

from __future__ import annotations

from decimal import Decimal

import pytest

from characters.models import InfluenceSpend, XpEntry
from chronicle.models import CycleStatus
from chronicle.services import cycle_close
from downtimes.models import Outcome
from downtimes.services import pipeline

from .conftest import AFTER_DEADLINE, Month


def _resolved(month: Month) -> None:
    st = month.world.users["storyteller"]
    cycle_close(cycle=month.cycle, by=st, now=AFTER_DEADLINE)
    pipeline.cycle_resolve_inline(cycle=month.cycle, by=st, now=AFTER_DEADLINE)
    month.cycle.refresh_from_db()


def test_resolve_writes_a_preview_that_changes_no_balance(month: Month) -> None:
    _resolved(month)
    assert month.cycle.status == CycleStatus.RESOLVED
    rows = {(o.step, o.subject): o for o in Outcome.objects.filter(cycle=month.cycle)}
    alice, bob = (month.world.users[n] for n in ("player_alice", "player_bob"))
    assert rows["awards", f"base:{alice.pk}"].xp == Decimal("2.5")
    assert rows["no_downtime", f"base:{bob.pk}"].xp == Decimal("2.5")
    assert rows["no_downtime", f"cash-in:{month.marguerite.pk}"].value["cash_in"] == {
        "business": 3,
        "herd": 1,
        "occult": 1,
    }
    assert not XpEntry.objects.filter(cycle=month.cycle).exists()
    assert not InfluenceSpend.objects.filter(cycle=month.cycle).exists()


def test_release_applies_once(month: Month) -> None:
    _resolved(month)
    st = month.world.users["storyteller"]
    assert pipeline.cycle_release(cycle=month.cycle, by=st, now=AFTER_DEADLINE) is True
    assert pipeline.cycle_release(cycle=month.cycle, by=st, now=AFTER_DEADLINE) is False
    entries = XpEntry.objects.filter(cycle=month.cycle)
    assert sorted(e.amount for e in entries) == [Decimal("2.5"), Decimal("2.5")]
    spent = InfluenceSpend.objects.filter(cycle=month.cycle, character=month.marguerite)
    assert sum(s.points for s in spent) == 5


@pytest.mark.parametrize("size", [1, 500])
def test_chunking_gives_the_same_preview(month: Month, size: int, settings) -> None:
    settings.CHRONICLE_PIPELINE_CHUNK_SIZE = size
    _resolved(month)
    # lock, cash-in and base XP for Marguerite, base XP for Lucien, two summaries
    assert Outcome.objects.filter(cycle=month.cycle).count() == 6

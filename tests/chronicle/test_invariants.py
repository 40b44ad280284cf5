"""`manage.py check_invariants` (issue 16): clean on the demo chronicle and after a full
pipeline run (demo_month, closed, resolved and released); each invariant broken with raw SQL
or `update()` makes its own check fail, and the command exit non-zero."""

from __future__ import annotations

import io
from collections.abc import Callable
from decimal import Decimal

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.db.models import F

from characters.models import (
    Character,
    InfluenceSpend,
    KnownSewerLocation,
    SewerLocation,
    XpEntry,
    XpKind,
    XpPurchase,
)
from chronicle import services
from chronicle.management.commands.seed_demo import DEMO_SLUG
from chronicle.models import Chronicle, CycleStatus
from chronicle.services.invariants import check_invariants, invariants
from downtimes.models import DeskItem, Outcome, OutcomeReader
from downtimes.services import pipeline
from havens.models import Find, Ownership
from tests.pipeline.demo_month import AFTER_DEADLINE, DemoMonth, build_month

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("postgres")]

NAMES = {
    "xp_reversals",
    "xp_entry_characters",
    "xp_purchases",
    "xp_balances",
    "influence_reversals",
    "influence_overspent",
    "known_sewer_locations",
    "haven_finds",
    "haven_ownerships",
    "haven_searchers",
    "released_cycle_xp",
    "outcome_readers",
    "outcome_reader_characters",
    "desk_items",
}


def run(*args: str) -> str:
    out = io.StringIO()
    call_command("check_invariants", *args, stdout=out)
    return out.getvalue()


def failing(*args: str) -> tuple[str, str]:
    out = io.StringIO()
    with pytest.raises(CommandError) as caught:
        call_command("check_invariants", *args, stdout=out)
    return out.getvalue(), str(caught.value)


def broken() -> dict[str, int]:
    return {r.invariant.name: r.count for r in check_invariants() if not r.ok}


def raw(sql: str, params: list[object]) -> None:
    """Outside the services, as a bug or a hand at the psql prompt would: the append-only
    ledgers' triggers are dropped for the statement (pgtrigger's ignore)."""
    import pgtrigger

    with (
        pgtrigger.ignore("characters.XpEntry:xp_entry_append_only"),
        pgtrigger.ignore("characters.InfluenceSpend:influence_spend_append_only"),
        connection.cursor() as cursor,
    ):
        cursor.execute(sql, params)


@pytest.fixture
def released() -> DemoMonth:
    month = build_month()
    services.cycle_close(cycle=month.cycle, by=month.st, now=AFTER_DEADLINE)
    pipeline.cycle_resolve_inline(cycle=month.cycle, by=month.st, now=AFTER_DEADLINE)
    assert pipeline.cycle_release(cycle=month.cycle, by=month.st, now=AFTER_DEADLINE)
    month.cycle.refresh_from_db()
    assert month.cycle.status == CycleStatus.RELEASED
    return month


def test_every_check_is_found() -> None:
    assert {check.name for check in invariants()} == NAMES


def test_the_demo_chronicle_is_clean() -> None:
    call_command("seed_demo", stdout=io.StringIO())
    out = run("--chronicle", DEMO_SLUG)
    assert out.splitlines() == [f"{name}: ok" for name in [c.name for c in invariants()]]
    assert "mismatch" not in run()


def test_an_unknown_chronicle_is_an_error() -> None:
    with pytest.raises(CommandError, match="No chronicle"):
        run("--chronicle", "nowhere")


def test_a_released_month_is_clean_then_each_break_is_found(released: DemoMonth) -> None:
    # The month has what the checks look at: shared readers (the searchers read the find),
    # awards, a purchase, spends at the game and in downtime.
    assert OutcomeReader.objects.exclude(player=F("outcome__player")).exists()
    assert XpEntry.objects.filter(cycle=released.cycle, kind=XpKind.AWARD).exists()
    assert InfluenceSpend.objects.filter(cycle=released.cycle).count() > 3
    assert "mismatch" not in run()
    month = released
    chronicle = month.chronicle
    alice = month.users["alice"]
    isabella = month.characters["alice"]
    marcus = month.characters["bob"]

    # released_cycle_xp: an award the release wrote goes missing.
    award = XpEntry.objects.filter(cycle=month.cycle, kind=XpKind.AWARD).order_by("pk").first()
    assert award is not None
    raw("DELETE FROM characters_xpentry WHERE id = %s", [award.pk])
    out, error = failing()
    assert "released_cycle_xp: 1 mismatch(es), first Outcome" in out
    assert "released_cycle_xp" in error
    assert "xp_reversals: ok" in out

    # xp_reversals: a reversal that does not undo its entry.
    entry = XpEntry.objects.create(
        chronicle=chronicle,
        player=alice,
        amount=Decimal(4),
        kind=XpKind.AWARD,
        reason="test",
        key="t:award",
        created_at=AFTER_DEADLINE,
    )
    reversal = XpEntry.objects.create(
        chronicle=chronicle,
        player=alice,
        amount=Decimal(-3),
        kind=XpKind.REVERSAL,
        reason="test",
        key="t:reversal",
        reverses=entry,
        created_at=AFTER_DEADLINE,
    )
    assert broken()["xp_reversals"] == 1
    out, _error = failing("--chronicle", chronicle.slug)
    assert f"xp_reversals: 1 mismatch(es), first XpEntry {reversal.pk}" in out

    # xp_balances: a debit past zero with no penalty.
    XpEntry.objects.create(
        chronicle=chronicle,
        player=alice,
        amount=Decimal(-500),
        kind=XpKind.CORRECTION,
        reason="test",
        key="t:debit",
        created_at=AFTER_DEADLINE,
    )
    assert broken()["xp_balances"] == 1

    # xp_purchases: an approved purchase whose entry is not its cost.
    purchase = XpPurchase.objects.filter(character=isabella, status="approved").get()
    XpPurchase.objects.filter(pk=purchase.pk).update(cost=purchase.cost + 1)
    assert broken()["xp_purchases"] == 1

    # xp_entry_characters: an entry naming another chronicle's character.
    other = services.chronicle_create(name="Other", slug="other", timezone_name="UTC")
    stranger = Character.objects.create(chronicle=other, name="Stranger")
    raw("UPDATE characters_xpentry SET character_id = %s WHERE id = %s", [stranger.pk, entry.pk])
    assert broken()["xp_entry_characters"] == 1

    # influence_overspent: Marcus spends more underworld than his 6 this cycle.
    spend = InfluenceSpend.objects.create(
        character=marcus,
        cycle=month.cycle,
        influence="underworld",
        points=6,
        reason="test",
        key="t:overspend",
        created_at=AFTER_DEADLINE,
    )
    assert broken()["influence_overspent"] == 1
    # influence_reversals: a refund of another type.
    InfluenceSpend.objects.create(
        character=marcus,
        cycle=month.cycle,
        influence="government",
        points=-6,
        reason="test",
        key="t:refund",
        reverses=spend,
        created_at=AFTER_DEADLINE,
    )
    assert broken()["influence_reversals"] == 1

    # outcome_readers: a player reads an outcome that names none of their characters.
    outcome = Outcome.objects.filter(cycle=month.cycle, player=month.users["bob"]).first()
    assert outcome is not None
    OutcomeReader.objects.get_or_create(outcome=outcome, player=month.users["felix"])
    # outcome_reader_characters: an outcome names another chronicle's character as reader.
    Outcome.objects.filter(pk=outcome.pk).update(readers=[stranger.pk])
    problems = broken()
    assert problems["outcome_readers"] >= 1
    assert problems["outcome_reader_characters"] == 1

    # Secrets crossing chronicles: a desk item, a find, an ownership, a sewer location.
    DeskItem.objects.filter(pk=DeskItem.objects.filter(cycle=month.cycle).first().pk).update(
        character=stranger
    )
    Find.objects.filter(pk=Find.objects.filter(cycle=month.cycle).first().pk).update(
        character=stranger
    )
    Ownership.objects.filter(pk=Ownership.objects.order_by("pk").first().pk).update(
        character=stranger
    )
    location = SewerLocation.objects.create(chronicle=other, number=1, level=1)
    KnownSewerLocation.objects.create(
        character=isabella, location=location, learned_on=AFTER_DEADLINE.date()
    )
    problems = broken()
    for name in ("desk_items", "haven_finds", "haven_ownerships", "known_sewer_locations"):
        assert problems[name] == 1, name
    out, error = failing()
    assert len(out.splitlines()) == len(NAMES)
    assert error.startswith(f"{len(problems)} invariant(s) broken")


def test_a_searcher_of_another_chronicle_is_found(released: DemoMonth) -> None:
    from havens.models import Searcher

    other = services.chronicle_create(name="Other", slug="other", timezone_name="UTC")
    stranger = Character.objects.create(chronicle=other, name="Stranger")
    searcher = Searcher.objects.order_by("pk").first()
    assert searcher is not None
    Searcher.objects.filter(pk=searcher.pk).update(character=stranger)
    assert broken() == {"haven_searchers": 1}


def test_the_checks_cost_a_fixed_number_of_queries(
    released: DemoMonth, django_assert_max_num_queries: Callable[..., object]
) -> None:
    """Set-based: a few queries per check and chronicle, whatever the rows (the reader checks
    add one per chunk of 2,000 rows)."""
    chronicles = list(Chronicle.objects.all())
    with django_assert_max_num_queries(3 * len(NAMES) * len(chronicles)):  # type: ignore[operator]
        check_invariants(chronicles)

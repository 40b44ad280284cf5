"""The benchmark's generator cannot rot: S is built on the test database with the rows it
promises (bench/generate.py's docstring), and one seed always builds the same rows. Nothing
here times anything."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth import get_user_model
from django.db import transaction

from bench.generate import PASSWORD, SIZES, Dataset, build, digest
from characters.models import (
    Character,
    Diablerie,
    DisciplineLevel,
    InfluenceSpend,
    TorporHold,
    XpEntry,
    XpPurchase,
)
from chronicle.models import Attendance, Cycle, CycleStatus, Membership, Role
from downtimes.models import DeskItem, ItemKind, ReportPick, Submission, Vote
from havens.models import Ownership, Structure

pytestmark = pytest.mark.django_db


def test_s_has_every_kind_of_row_the_pipeline_works_on() -> None:
    (players,) = SIZES["S"]
    dataset = build(SIZES["S"], desk_items=40)
    (chronicle,) = dataset.chronicles
    assert len(chronicle.players) == players and len(chronicle.storytellers) == 5

    cycle = Cycle.objects.get(pk=chronicle.cycle_id)
    assert cycle.status == CycleStatus.OPEN and cycle.chronicle.slug == chronicle.slug
    assert Membership.objects.filter(chronicle=cycle.chronicle, role=Role.PLAYER).count() == 50
    assert Membership.objects.filter(chronicle=cycle.chronicle, role=Role.STORYTELLER).count() == 5
    pcs = Character.objects.filter(
        chronicle=cycle.chronicle, approval="approved", status__in=["active", "torpor"]
    )
    assert pcs.count() == 50
    assert DisciplineLevel.objects.filter(character__in=pcs).count() >= 50
    assert Structure.objects.count() == Ownership.objects.count() == 10

    attended = Attendance.objects.filter(game=cycle.game)
    assert 0 < attended.count() < 50
    assert 0 < attended.filter(waiver_signed=True).count() < attended.count()

    submitted = Submission.objects.filter(cycle=cycle, status="submitted")
    assert submitted.count() == 25
    assert Submission.objects.filter(cycle=cycle, status="draft").count() == 5
    # desk_items=40 influence actions in the first chronicle, each with its spend.
    influence = DeskItem.objects.filter(cycle=cycle, kind=ItemKind.INFLUENCE)
    assert influence.count() == 40
    assert InfluenceSpend.objects.filter(cycle=cycle).count() == 40
    assert influence.filter(action="herd", influence="herd").exists()
    assert Vote.objects.filter(submission__cycle=cycle).count() == 3 * 25
    assert 1 <= ReportPick.objects.filter(cycle=cycle).count() <= 4

    signed = XpPurchase.objects.filter(cycle=cycle, status="approved")
    waiting = XpPurchase.objects.filter(cycle=cycle, status="requested")
    assert signed.count() == 5 and waiting.count() == 4
    assert all(p.ledger_entry and p.ledger_entry.amount == -p.cost for p in signed)
    assert DeskItem.objects.filter(cycle=cycle, kind=ItemKind.PURCHASE).count() == 9
    # Ledger history: an opening balance and an earlier award per player.
    assert XpEntry.objects.filter(cycle__isnull=True).count() == 2 * 50
    assert TorporHold.objects.filter(cycle=cycle).count() == 1
    assert Diablerie.objects.filter(generation_step="queued").count() == 1

    user = get_user_model().objects.get(username=chronicle.players[0])
    assert user.check_password(PASSWORD)
    assert Dataset.from_json(dataset.to_json()) == dataset
    assert json.loads(dataset.to_json())["chronicles"][0]["cycle_id"] == cycle.pk


def test_one_seed_builds_the_same_rows() -> None:
    with transaction.atomic():
        build(SIZES["S"], seed=7)
        first = digest()
        transaction.set_rollback(True)
    with transaction.atomic():
        build(SIZES["S"], seed=7)
        again = digest()
        transaction.set_rollback(True)
    build(SIZES["S"], seed=8)
    assert first == again != digest()

"""The release (DT-10): what it will do (`release_plan`, `release_key`, for the confirmation
the storytellers read), and applying the reviewed preview (`cycle_release`), with the recheck of
what may have changed since the preview. Moved out of pipeline.py (issue 15), which re-exports
these names.

Issue 15: the release never holds every outcome of the cycle. Its figures are SQL aggregates;
its ledger entries, cash-ins and readers are each one `INSERT … SELECT` from the outcomes (their
overrides joined in SQL); the recheck and the summaries go chunk by chunk, over the run's
chunks (`StepChunk` ranges), so memory stays flat however many players the chronicle has.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.db.models import (
    Count,
    DecimalField,
    Exists,
    F,
    Max,
    OuterRef,
    Q,
    Subquery,
    Sum,
)
from django.db.models.functions import Coalesce
from django.utils.translation import gettext

from characters.models import Character, InfluenceSpend, SpendMoment, XpEntry, XpKind
from characters.services.sweepers import torpor_holds_sweep
from chronicle.models import Cycle, CycleStatus

from .. import ledger_words
from ..models import (
    Outcome,
    OutcomeOverride,
    OutcomeReader,
    ResolutionRun,
    RunStatus,
    StepChunk,
)
from .desk import desk_release
from .enqueue import send_after_commit
from .herd_blood import herd_blood_release
from .release import release_check_unfinished, release_unfinished
from .steps import STEP_BY_NAME
from .summaries import SUMMARY_TASK, _summaries_queue
from .votes import award_tally


@dataclass(frozen=True)
class ReleasePlan:
    """What the release will do, for the confirmation the ST reads before it."""

    xp_entries: int
    xp_total: Decimal
    players: int
    haven_outcomes: int
    overrides: int
    outcomes: int


HAVEN_STEPS = {name for name, _ in STEP_BY_NAME["havens"].parts}


def _override_of_outcome(cycle: Cycle) -> Any:
    return OutcomeOverride.objects.filter(
        cycle_id=cycle.pk, step=OuterRef("step"), subject=OuterRef("subject")
    )


def release_plan(*, cycle: Cycle) -> ReleasePlan:
    """One aggregate query. What an outcome pays is `release.effective_xp` in SQL (the
    override's XP, else the outcome's), counted as `release.release_xp_lines` counts it: not 0,
    and to a player; the release writes the same entries and the XP report lists them."""
    paid = Coalesce(
        Subquery(_override_of_outcome(cycle).values("xp")[:1]),
        F("xp"),
        output_field=DecimalField(max_digits=7, decimal_places=1),
    )
    pays = Q(player_id__isnull=False, paid__isnull=False) & ~Q(paid=0)
    figures = (
        Outcome.objects.filter(cycle=cycle)
        .annotate(paid=paid, overridden=Exists(_override_of_outcome(cycle)))
        .aggregate(
            outcomes=Count("pk"),
            xp_entries=Count("pk", filter=pays),
            xp_total=Sum("paid", filter=pays),
            players=Count(
                "player_id",
                distinct=True,
                filter=Q(step="notifications", player_id__isnull=False),
            ),
            haven_outcomes=Count("pk", filter=Q(step__in=HAVEN_STEPS)),
            # An override whose outcome a re-resolution dropped applies to nothing.
            overrides=Count("pk", filter=Q(overridden=True)),
        )
    )
    return ReleasePlan(
        xp_entries=figures["xp_entries"],
        xp_total=figures["xp_total"] if figures["xp_total"] is not None else Decimal(0),
        players=figures["players"],
        haven_outcomes=figures["haven_outcomes"],
        overrides=figures["overrides"],
        outcomes=figures["outcomes"],
    )


def release_key(*, cycle: Cycle, plan: ReleasePlan | None = None) -> tuple[int, str]:
    """What a release confirmation was read from: the latest run's number, and a digest of the
    plan's figures and of the overrides' last change (a changed XP or search result changes
    it). A release naming another key was confirmed for another preview."""
    plan = plan or release_plan(cycle=cycle)
    run = ResolutionRun.objects.filter(cycle=cycle).aggregate(n=Max("number"))["n"] or 0
    changed = OutcomeOverride.objects.filter(cycle=cycle).aggregate(at=Max("at"))["at"]
    figures = (
        f"{run}|{plan.outcomes}|{plan.xp_entries}|{plan.xp_total}|{plan.players}|"
        f"{plan.haven_outcomes}|{plan.overrides}|{changed.isoformat() if changed else ''}"
    )
    return run, hashlib.sha256(figures.encode()).hexdigest()[:32]


class PreviewChanged(ValidationError):
    """The release was confirmed for another preview than the one about to be applied."""


# --- Release ---------------------------------------------------------------------------------


def _stale_preview(what: str) -> ValidationError:
    return ValidationError(
        gettext(
            "Something changed since the preview was computed (%(what)s); resolve the cycle "
            "again and review the new preview before releasing."
        )
        % {"what": what}
    )


# Herd blood (BLD-04) too: a desk item rejected or a yield lowered after the preview.
RECHECKED_STEPS = ("no_downtime", "herd_blood", "awards")
# The outcome's column that holds a chunk's subject id, by the step's unit.
UNIT_COLUMN = {"character": "character_id", "player": "player_id"}

Key = tuple[str | None, Any]
Subject = tuple[str, str]


def _quantized(xp: Decimal) -> Decimal:
    return Decimal(xp).quantize(Decimal("0.1"))


def _key(xp: Decimal | None, value: Any) -> Key:
    return (None if xp is None else str(_quantized(xp)), value)


def _previewed(outcomes: Any) -> dict[Subject, Key]:
    """The previewed outcomes' keys, read as plain values (no model instances)."""
    return {
        (step, subject): _key(xp, value)
        for step, subject, xp, value in outcomes.values_list("step", "subject", "xp", "value")
    }


def _compare(cycle: Cycle, was: dict[Subject, Key], now_is: dict[Subject, Outcome]) -> None:
    for subject in sorted(was.keys() | now_is.keys()):
        fresh = now_is.get(subject)
        before = was.get(subject)
        if before is not None and fresh is not None and before == _key(fresh.xp, fresh.value):
            continue
        if before is not None:  # named as the STs reviewed it
            step, key = subject
            fresh = Outcome.objects.only("title", "texts").get(cycle=cycle, step=step, subject=key)
        raise _stale_preview(f"“{fresh.localized_title}”")  # type: ignore[union-attr]


def _recheck(cycle: Cycle, now: dt.datetime) -> ResolutionRun:
    """What the awards and the no-downtime defaults pay can change after the preview (a
    report picked or unpicked, the sign-in sheet, an at-game spend): compute those steps
    again with the run's chunks and refuse a release that would pay anything but what the
    STs reviewed. A step's error (a ballot the rules refuse) blocks the release too.

    Chunk by chunk: each chunk's fresh outcomes are compared with the previewed outcomes of
    the same step and subject range only (the steps key their outcomes by the chunk's unit:
    `character_id` or `player_id` in `lo..hi`); the vote tally is counted once for all the
    awards chunks. Returns the run, whose chunks the release pages over."""
    error = (
        Outcome.objects.filter(cycle=cycle, value__has_key="error")
        .order_by("position", "subject")
        .only("title", "texts", "value")
        .first()
    )
    if error is not None:
        raise ValidationError(
            gettext("%(title)s: %(error)s Fix it and resolve again.")
            % {"title": error.localized_title, "error": error.value["error"]}
        )
    run = (
        ResolutionRun.objects.filter(cycle=cycle, status=RunStatus.DONE).order_by("-number").first()
    )
    if run is None:
        raise _stale_preview(gettext("no finished resolution"))
    tally = award_tally(cycle)
    # Outcomes without the unit's id (the votes' error line) fall in no chunk's range: they
    # are compared once, after the chunks.
    loose_fresh: dict[Subject, Outcome] = {}
    for step_name, lo, hi in (
        StepChunk.objects.filter(run=run, step__in=RECHECKED_STEPS)
        .order_by("pk")
        .values_list("step", "lo", "hi")
    ):
        step = STEP_BY_NAME[step_name]
        column = UNIT_COLUMN.get(step.unit)
        fresh: dict[Subject, Outcome] = {}
        for o in step.compute(cycle, lo, hi, now, tally=tally):
            if column is not None and getattr(o, column) is None:
                loose_fresh[o.step, o.subject] = o
            else:
                fresh[o.step, o.subject] = o
        previewed = Outcome.objects.filter(cycle=cycle, step=step_name)
        if column is not None:
            previewed = previewed.filter(**{f"{column}__gte": lo, f"{column}__lte": hi})
        _compare(cycle, _previewed(previewed), fresh)
    loose = Q()
    for name in RECHECKED_STEPS:
        column = UNIT_COLUMN.get(STEP_BY_NAME[name].unit)
        if column is not None:
            loose |= Q(step=name, **{f"{column}__isnull": True})
    _compare(cycle, _previewed(Outcome.objects.filter(loose, cycle=cycle)), loose_fresh)
    return run


def _player_pages(run: ResolutionRun) -> Iterator[tuple[int | None, int | None]]:
    """Player id ranges covering every id, cut where the run's player chunks end: one summary
    page per chunk of the resolution, the first and last open-ended (a reader who is no
    member any more still gets their lines)."""
    ends = list(
        StepChunk.objects.filter(run=run, step="awards").order_by("lo").values_list("hi", flat=True)
    )
    lo: int | None = None
    for hi in ends[:-1]:
        yield lo, hi
        lo = hi + 1
    yield lo, None


def _sql(vendor_sql: dict[str, str], params: list[Any]) -> int:
    with connection.cursor() as cursor:
        cursor.execute(vendor_sql[connection.vendor], params)
        return cursor.rowcount


def _db(model: Any, name: str, value: Any) -> Any:
    return model._meta.get_field(name).get_db_prep_value(value, connection)


OUTCOME = Outcome._meta.db_table
OVERRIDE = OutcomeOverride._meta.db_table
CHARACTER = Character._meta.db_table
XP_SQL = f"""
INSERT INTO {XpEntry._meta.db_table}
    (chronicle_id, player_id, character_id, amount, kind, reason, cycle_id, "key", actor_id,
     created_at)
SELECT %s, o.player_id, o.character_id, COALESCE(v.xp, o.xp), %s, SUBSTR(o.title, 1, 300),
    o.cycle_id, SUBSTR(%s || o.step || ':' || o.subject, 1, 120), %s, %s
FROM {OUTCOME} o
LEFT JOIN {OVERRIDE} v ON v.cycle_id = o.cycle_id AND v.step = o.step AND v.subject = o.subject
WHERE o.cycle_id = %s AND o.player_id IS NOT NULL AND COALESCE(v.xp, o.xp) <> 0
ORDER BY o.position, o.subject
ON CONFLICT DO NOTHING
"""
CASH_IN_FROM = {
    "postgresql": "CROSS JOIN LATERAL jsonb_each_text(o.value -> 'cash_in') WITH ORDINALITY "
    "AS c(name, points, n)",
    "sqlite": "JOIN json_each(o.value, '$.cash_in') AS c",
}
CASH_IN_COLUMNS = {
    "postgresql": ("c.name", "c.points::integer", "c.n"),
    "sqlite": ("c.key", "c.value", "c.id"),
}


def _cash_in_sql(vendor: str) -> str:
    name, points, order = CASH_IN_COLUMNS[vendor]
    return f"""
INSERT INTO {InfluenceSpend._meta.db_table}
    (character_id, cycle_id, influence, points, moment, reason, "key", actor_id, created_at)
SELECT o.character_id, o.cycle_id, {name}, {points}, %s, %s, %s || {name}, %s, %s
FROM {OUTCOME} o {CASH_IN_FROM[vendor]}
WHERE o.cycle_id = %s AND o.step = 'no_downtime' AND o.subject LIKE %s
    AND o.character_id IS NOT NULL
ORDER BY o.position, o.subject, {order}
ON CONFLICT DO NOTHING
"""


READER_ELEMENTS = {
    "postgresql": "CROSS JOIN LATERAL jsonb_array_elements_text(o.readers) AS r(id) "
    "JOIN {character} c ON c.id = r.id::bigint",
    "sqlite": "JOIN json_each(o.readers) AS r JOIN {character} c ON c.id = r.value",
}


def _readers_sql(vendor: str) -> str:
    """Who reads what (`steps.reader_players`): the outcome's player and the players of its
    reader characters, for every outcome with words for players."""
    return f"""
INSERT INTO {OutcomeReader._meta.db_table} (outcome_id, player_id)
SELECT o.id, o.player_id FROM {OUTCOME} o
WHERE o.cycle_id = %s AND o.public_text <> '' AND o.player_id IS NOT NULL
UNION
SELECT o.id, c.player_id FROM {OUTCOME} o {READER_ELEMENTS[vendor].format(character=CHARACTER)}
WHERE o.cycle_id = %s AND o.public_text <> '' AND c.player_id IS NOT NULL
ON CONFLICT DO NOTHING
"""


def _write_ledgers(cycle: Cycle, by: User | None, now: dt.datetime) -> None:
    """DT-03's cash-ins and the XP entries (`release.release_xp_lines`, keys
    `release.release_entry_key`), each one statement. ON CONFLICT DO NOTHING keeps
    `bulk_create(ignore_conflicts=True)`'s meaning: an entry already written stays."""
    actor = by.pk if by is not None else None
    _sql(
        {vendor: _cash_in_sql(vendor) for vendor in CASH_IN_FROM},
        [
            SpendMoment.DOWNTIME,
            ledger_words.CASHED_IN,
            f"cycle:{cycle.pk}:cash-in:",
            actor,
            _db(InfluenceSpend, "created_at", now),
            cycle.pk,
            "cash-in:%",
        ],
    )
    _sql(
        {"postgresql": XP_SQL, "sqlite": XP_SQL},
        [
            cycle.chronicle_id,
            XpKind.AWARD,
            f"cycle:{cycle.pk}:",
            actor,
            _db(XpEntry, "created_at", now),
            cycle.pk,
        ],
    )


@transaction.atomic
def cycle_release(
    *,
    cycle: Cycle,
    by: User | None,
    expected_key: tuple[int, str] | None = None,
    confirmed_unfinished: Collection[str] | None = None,
    now: dt.datetime | None = None,
) -> bool:
    """Apply the reviewed preview in one transaction: haven changes (checked against the
    preview), search overrides, influence cashed in, XP ledger entries (overrides included),
    torpor holds ended; publish results; queue one summary e-mail per player. Releasing twice
    does nothing the second time (False). `expected_key` (from `release_key`) is what the ST
    confirmed; another preview is refused with `PreviewChanged`. Unfinished work (desk items,
    purchases waiting) is refused unless each group is in `confirmed_unfinished`, and always
    under the house rule DT-REL (`release.release_check_unfinished`).

    A fixed number of statements, plus a few per chunk of the resolution (the recheck and the
    summaries); no statement reads more than a chunk's outcomes."""
    from .haven_steps import havens_apply
    from .pipeline import _lock_cycle, _now, _require_staff, _transition

    now = _now(now)
    cycle = _lock_cycle(cycle)
    _require_staff(cycle, by)
    if cycle.status == CycleStatus.RELEASED:
        return False
    if cycle.status != CycleStatus.RESOLVED:
        raise ValidationError(
            gettext(
                "There is no finished preview to release: close the cycle and resolve it first."
            )
        )
    # Checked under the cycle's lock: an override saved by another ST after the confirmation
    # was read must not be released unseen.
    if expected_key is not None and release_key(cycle=cycle) != tuple(expected_key):
        raise PreviewChanged(
            gettext(
                "The preview changed since this confirmation was shown: read what the release "
                "will do again before releasing."
            )
        )
    release_check_unfinished(
        cycle=cycle, groups=release_unfinished(cycle=cycle), confirmed=confirmed_unfinished
    )
    # The STs' overrides: a handful per cycle, held for the havens and the summaries' words.
    overrides = {(o.step, o.subject): o for o in OutcomeOverride.objects.filter(cycle=cycle)}
    # Havens: apply for real and compare with what the STs reviewed (the chronicle's havens,
    # not its players: the havens' step is one chunk).
    applied = havens_apply(cycle=cycle, now=now, overrides=overrides)
    previewed = {
        (step, subject): value
        for step, subject, value in Outcome.objects.filter(
            cycle=cycle, step__in=HAVEN_STEPS
        ).values_list("step", "subject", "value")
    }
    if previewed != {(o.step, o.subject): o.value for o in applied}:
        raise _stale_preview(gettext("the havens"))
    del applied, previewed
    run = _recheck(cycle, now)

    _write_ledgers(cycle, by, now)
    # BLD-04: Herd spent for blood becomes stored blood (once: this runs once per cycle).
    herd_blood_release(cycle=cycle, now=now, page=run.chunk_size)
    torpor_holds_sweep(now=now)
    desk_release(cycle=cycle, by=by, now=now)

    _sql({vendor: _readers_sql(vendor) for vendor in READER_ELEMENTS}, [cycle.pk, cycle.pk])
    for lo, hi in _player_pages(run):
        _summaries_queue(cycle, overrides, lo, hi, now)

    Cycle.objects.filter(pk=cycle.pk).update(status=CycleStatus.RELEASED, released_at=now)
    _transition(cycle, CycleStatus.RELEASED, now, by)
    send_after_commit(SUMMARY_TASK, cycle.pk)
    return True

"""Every resolution step does work proportional to its chunk (issue 15), and the summaries leave
in batches.

- A notifications chunk reads only the outcomes about its own players (theirs, or naming one of
  their characters as a reader), and counts exactly what reading every outcome counted.
- The vote awards are counted once per run (stored on the run), not once per awards chunk, and
  equal the tally page's awards.
- `settings_for` reads a rules function's signature once.
- `summaries_send` commits once per batch of up to 500 mails, and two senders racing never send
  one twice.
"""

from __future__ import annotations

import inspect
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from decimal import Decimal
from typing import Any

import pytest
from django.core import mail
from django.db import connection

from characters.models import Character, Notification
from chronicle import rules as chronicle_rules
from chronicle.services import cycle_close
from downtimes.models import Outcome, ResolutionRun, StepChunk
from downtimes.services import pipeline, steps, summaries
from downtimes.services.votes import AwardTally, award_tally, tally_for

from .demo_month import AFTER_DEADLINE, DemoMonth, build_month
from .test_pipeline_idempotence import run_together, run_until

pytestmark = pytest.mark.django_db


@pytest.fixture
def month(settings: Any) -> DemoMonth:
    # Chunks of 3: the month's 7 players and their ST fall into several chunks, and Carmen
    # (who reads the search she joined only as one of its `readers`) is not in the chunk of
    # Marcus, whose outcome it is.
    settings.CHRONICLE_PIPELINE_CHUNK_SIZE = 3
    month = build_month(extra_players=4)
    cycle_close(cycle=month.cycle, by=month.st, now=AFTER_DEADLINE)
    return month


@contextmanager
def statements() -> Iterator[list[str]]:
    """Every SQL statement this connection sends (Django's query log keeps only some)."""
    seen: list[str] = []

    def wrapper(execute: Callable[..., Any], sql: str, params: Any, many: bool, ctx: Any) -> Any:
        seen.append(sql)
        return execute(sql, params, many, ctx)

    with connection.execute_wrapper(wrapper):
        yield seen


def _every_outcome_counted(month: DemoMonth) -> dict[int, int]:
    """What the summary of each player holds, by brute force over every outcome (the counting
    the step did before it read per chunk): outcomes with words for players, read by their
    player or by the player of one of their `readers`; only players with a character."""
    player_of = dict(
        Character.objects.filter(chronicle=month.chronicle, player__isnull=False).values_list(
            "pk", "player_id"
        )
    )
    counts: dict[int, int] = defaultdict(int)
    for player_id, readers in (
        Outcome.objects.filter(cycle=month.cycle)
        .exclude(public_text="")
        .values_list("player_id", "readers")
    ):
        readers_of = {player_of.get(pk) for pk in readers} | {player_id}
        for player in readers_of - {None}:
            if player in player_of.values():
                counts[player] += 1
    return dict(counts)


def test_a_notifications_chunk_reads_only_its_players_outcomes(
    month: DemoMonth, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = pipeline.cycle_resolve(cycle=month.cycle, by=month.st, now=AFTER_DEADLINE)
    run_until(run, "notifications")
    player_of = dict(
        Character.objects.filter(chronicle=month.chronicle, player__isnull=False).values_list(
            "pk", "player_id"
        )
    )
    public = Outcome.objects.filter(cycle=month.cycle).exclude(public_text="").count()
    # Every row the step reads goes through `reader_players`, once.
    read: list[tuple[int | None, list[int]]] = []
    real = steps.reader_players

    def spy(player_id: int | None, readers: list[int], of: dict[int, int]) -> set[int]:
        read.append((player_id, readers))
        return real(player_id, readers, of)

    monkeypatch.setattr(steps, "reader_players", spy)
    chunks = list(StepChunk.objects.filter(run=run, step="notifications").order_by("number"))
    assert len(chunks) >= 3
    through_readers = 0
    for chunk in chunks:
        read.clear()
        assert pipeline.chunk_run(chunk_id=chunk.pk, now=AFTER_DEADLINE)
        for player_id, readers in read:
            ours = player_id is not None and chunk.lo <= player_id <= chunk.hi
            named = any(chunk.lo <= player_of.get(pk, 0) <= chunk.hi for pk in readers)
            assert ours or named, (chunk.lo, chunk.hi, player_id, readers)
            through_readers += not ours
        # Each chunk reads fewer rows than the run has: it never reads them all.
        assert len(read) < public
    # The readers' path is taken (Carmen reads Marcus's search) and counted.
    assert through_readers >= 1
    counted = {
        o.player_id: o.value["results"]
        for o in Outcome.objects.filter(cycle=month.cycle, step="notifications")
    }
    assert counted == _every_outcome_counted(month)
    carmen = month.users["carmen"].pk
    assert counted[carmen] > 0


def test_the_vote_awards_are_counted_once_per_run(month: DemoMonth) -> None:
    with statements() as sent:
        run = pipeline.cycle_resolve_inline(cycle=month.cycle, by=month.st, now=AFTER_DEADLINE)
    assert run.status == "done"
    awards_chunks = StepChunk.objects.filter(run=run, step="awards").count()
    assert awards_chunks >= 3
    # The one ballot query (`votes._vote_rows`), in `cycle_resolve`: none per awards chunk.
    ballots = [sql for sql in sent if 'FROM "downtimes_vote"' in sql]
    assert len(ballots) == 1, ballots


def test_the_stored_tally_is_the_tally_pages_awards(month: DemoMonth) -> None:
    run = pipeline.cycle_resolve_inline(cycle=month.cycle, by=month.st, now=AFTER_DEADLINE)
    stored = AwardTally.from_json(ResolutionRun.objects.get(pk=run.pk).tally)
    page = tally_for(cycle=month.cycle)
    assert not page.error and not stored.error
    assert sorted(
        (a.player, Decimal(a.xp), tuple(a.categories), a.name) for a in page.awards
    ) == sorted((a.player, a.xp, a.categories, a.name) for a in stored.awards)
    # The demo month's hand figures (test_pipeline_idempotence): alice, bob and carmen win.
    users = month.users
    assert {a.player: a.categories for a in stored.awards} == {
        str(users["alice"].pk): ("costume",),
        str(users["bob"].pk): ("feared", "costume"),
        str(users["carmen"].pk): ("liked", "respected", "roleplaying"),
    }
    assert AwardTally.from_json(stored.to_json()) == stored
    # Each player's vote outcome pays what the stored tally says (DT-04 aside: all attended).
    paid = {
        o.player_id: Decimal(o.value["xp"])
        for o in Outcome.objects.filter(cycle=month.cycle, subject__startswith="votes:")
    }
    assert paid == {int(a.player): a.xp for a in stored.awards}


def test_awards_take_a_tally_computed_once_by_the_caller(month: DemoMonth) -> None:
    """RELEASE's recheck calls each awards chunk with one tally it counted; the chunk then
    reads no ballot, and computes what it computes with the run's stored tally."""
    run = pipeline.cycle_resolve_inline(cycle=month.cycle, by=month.st, now=AFTER_DEADLINE)
    tally = award_tally(month.cycle)
    step = steps.STEP_BY_NAME["awards"]
    for chunk in StepChunk.objects.filter(run=run, step="awards"):
        with statements() as sent:
            given = step.compute(month.cycle, chunk.lo, chunk.hi, AFTER_DEADLINE, tally=tally)
        assert not [sql for sql in sent if "downtimes_vote" in sql]
        stored = step.compute(month.cycle, chunk.lo, chunk.hi, AFTER_DEADLINE)
        assert [(o.subject, o.xp, o.value, o.title) for o in given] == [
            (o.subject, o.xp, o.value, o.title) for o in stored
        ]
    # Every step takes the options, whatever it uses of them.
    for name, each in steps.STEP_BY_NAME.items():
        chunk = StepChunk.objects.filter(run=run, step=name).first()
        assert chunk is not None
        each.compute(month.cycle, chunk.lo, chunk.hi, AFTER_DEADLINE, tally=tally)


def test_settings_for_reads_a_signature_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[Any] = []
    real = inspect.signature

    def counting(function: Any, *args: Any, **kwargs: Any) -> inspect.Signature:
        calls.append(function)
        return real(function, *args, **kwargs)

    monkeypatch.setattr(chronicle_rules.inspect, "signature", counting)

    def rule(x: int, *, vote_award_xp: Decimal, unrelated: int = 0) -> int:
        return x

    house = chronicle_rules.HouseRules()
    for _ in range(3):
        assert chronicle_rules.settings_for(rule, house) == {"vote_award_xp": house.vote_award_xp}
    assert calls == [rule]


# --- Summaries in batches ----------------------------------------------------------------------

SUMMARIES = 1200


def _summaries(month: DemoMonth) -> None:
    """1,200 unsent summaries of the cycle, on the month's player characters."""
    characters = list(
        Character.objects.filter(chronicle=month.chronicle, player__isnull=False).order_by("pk")
    )
    Notification.objects.bulk_create(
        [
            Notification(
                character=characters[i % len(characters)],
                key=f"cycle:{month.cycle.pk}:summary:{i}",
                subject=f"summary {i}",
                body="Your results.",
                created_at=AFTER_DEADLINE,
            )
            for i in range(SUMMARIES)
        ]
    )


@pytest.mark.django_db(transaction=True)
def test_summaries_send_commits_once_per_batch(monkeypatch: pytest.MonkeyPatch) -> None:
    month = build_month()
    _summaries(month)
    mail.outbox.clear()
    commits = 0
    real_commit = connection.commit

    def counting_commit() -> None:
        nonlocal commits
        commits += 1
        real_commit()

    monkeypatch.setattr(connection, "commit", counting_commit)
    sent = summaries.summaries_send(cycle_id=month.cycle.pk, limit=SUMMARIES)
    monkeypatch.undo()
    assert sent == SUMMARIES
    # 500 + 500 + 200: one transaction a batch, not one a mail.
    assert commits == 3
    assert not summaries.summaries_pending(cycle_id=month.cycle.pk)
    assert sorted(Counter(m.subject for m in mail.outbox).values()) == [1] * SUMMARIES


@pytest.mark.django_db(transaction=True)
def test_two_senders_never_send_a_summary_twice(postgres: None) -> None:
    month = build_month()
    _summaries(month)
    mail.outbox.clear()
    handed = run_together(
        2, lambda i: summaries.summaries_send(cycle_id=month.cycle.pk, limit=SUMMARIES)
    )
    assert all(isinstance(n, int) for n in handed), handed
    assert sum(handed) == SUMMARIES
    subjects = Counter(m.subject for m in mail.outbox)
    assert len(subjects) == SUMMARIES
    assert max(subjects.values()) == 1
    assert not summaries.summaries_pending(cycle_id=month.cycle.pk)


# The planner's two bad choices show at two sizes: the flattened join on the month alone, the
# run's index with thousands of outcomes.
@pytest.mark.parametrize("filler", [0, 20_000])
def test_the_readers_lookup_stays_one_lookup_per_character(
    month: DemoMonth, postgres: None, filler: int
) -> None:
    """The notifications chunk's readers query runs its lookup per character of the chunk, even
    while the run's fresh outcomes have no statistics: flattened into a join, the planner
    filtered every outcome of the cycle against every character (a `Join Filter` on
    `readers`; 4 s a chunk at 10,000 players in the benchmark), and through the run's index
    each lookup read the whole run (0.5 s a chunk)."""
    run = pipeline.cycle_resolve(cycle=month.cycle, by=month.st, now=AFTER_DEADLINE)
    run_until(run, "notifications")
    # A run of a large chronicle: thousands of outcomes that name nobody as a reader.
    model = Outcome.objects.filter(run=run).exclude(public_text="").first()
    assert model is not None
    Outcome.objects.bulk_create(
        [
            Outcome(
                cycle=month.cycle,
                run=run,
                position=model.position,
                step=model.step,
                subject=f"filler:{n}",
                title=model.title,
                public_text=model.public_text,
                readers=[],
            )
            for n in range(filler)
        ],
        batch_size=2_000,
    )
    with connection.cursor() as cursor:
        # As right after a resolution's bulk writes: no statistics, no row estimate.
        cursor.execute(
            "DELETE FROM pg_statistic WHERE starelid = 'downtimes_outcome'::regclass; "
            "UPDATE pg_class SET reltuples = -1, relpages = 0 "
            "WHERE oid = 'downtimes_outcome'::regclass"
        )
        players = sorted(month.users[name].pk for name in month.users)
        sql, params = steps.naming_a_reader_sql(month.cycle, players[0], players[-1])
        cursor.execute("EXPLAIN " + sql, params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "Join Filter: (o.readers @>" not in plan, plan
    assert "jsonb_build_array(c.id)" in plan, plan
    # Nor through the run's or the cycle's index, which read every outcome of the run each time.
    assert "Index Cond: (run_id" not in plan, plan
    assert "Index Cond: (cycle_id" not in plan, plan

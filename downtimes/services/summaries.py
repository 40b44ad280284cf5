"""Release summaries (DT-10): after a release, one e-mail per player with every released line they
read, queued as keyed notices and sent in batches by a worker; a sweeper re-sends what a dead
worker left unsent."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict

from django.conf import settings
from django.db import transaction
from django.db.models import QuerySet
from django.template.loader import get_template, render_to_string
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.functional import lazy
from django.utils.translation import gettext

from characters.models import Character, Notification
from chronicle.models import Cycle, MailKind
from chronicle.services.mail import deliver, languages_of

from ..models import (
    Outcome,
    OutcomeOverride,
    OutcomeReader,
)
from .enqueue import send_after_commit


def public_line(outcome: Outcome, overrides: dict[tuple[str, str], OutcomeOverride]) -> str:
    """The player's words for one outcome, as the results page and the summary e-mail give
    them: in plain words (no rule IDs: issue 12), and an XP override says so, without the STs'
    note. (Search rulings need no words here: the searchers' line points to their searches
    page, which shows the ruling.)"""
    from ..plain_words import without_rule_ids

    text = without_rule_ids(outcome.localized_public_text)
    override = overrides.get((outcome.step, outcome.subject))
    if override is not None and override.xp is not None:
        # The note is the STs' own record (DESIGN: ST notes are never shown to players).
        return gettext("%(text)s A storyteller changed this award to %(xp)s XP.") % {
            "text": text,
            "xp": override.xp,
        }
    return text


_lazy_public_line = lazy(public_line, str)


def _summaries_queue(
    cycle: Cycle,
    overrides: dict[tuple[str, str], OutcomeOverride],
    lo: int | None,
    hi: int | None,
    now: dt.datetime,
) -> int:
    """One keyed Notification per player with an id in `lo..hi` (None: no bound) who reads a
    released outcome (`OutcomeReader`, written just before); its character is the one their
    results name. The release calls it page by page, so it never holds every reader at once;
    six queries a page. The summary task sends them after commit. Its words are the results
    page's: each outcome (`public_line`) and each of the player's actions with the
    storytellers' written result (`results.released_actions`, released by `desk_release` just
    before), from the templates downtimes/mail/results_summary*.txt. Returns how many."""
    from .results import released_actions

    in_range = {}
    if lo is not None:
        in_range["player_id__gte"] = lo
    if hi is not None:
        in_range["player_id__lte"] = hi
    lines: dict[int, list[str]] = defaultdict(list)
    for player, step, subject, public_text, texts in (
        OutcomeReader.objects.filter(outcome__cycle=cycle, **in_range)
        .order_by("player_id", "outcome__position", "outcome_id")
        .values_list(
            "player_id",
            "outcome__step",
            "outcome__subject",
            "outcome__public_text",
            "outcome__texts",
        )
    ):
        # from_db: the four columns `public_line` reads, without the keyword constructor's
        # defaults for every other field (tens of thousands of lines at a large release).
        outcome = Outcome.from_db(
            None, ["step", "subject", "public_text", "texts"], (step, subject, public_text, texts)
        )
        # Lazy: worded when each summary is written, in its reader's language.
        lines[player].append(_lazy_public_line(outcome, overrides))
    if not lines:
        return 0
    actions = released_actions(cycle=cycle, players=(lo, hi))
    # The character their results name: of their first outcome in the preview's order.
    character_of: dict[int, int] = {}
    for player, character in (
        Outcome.objects.filter(cycle=cycle, character_id__isnull=False, **in_range)
        .order_by("player_id", "position", "subject")
        .values_list("player_id", "character_id")
    ):
        character_of.setdefault(player, character)
    fallback = dict(
        Character.objects.filter(chronicle_id=cycle.chronicle_id, player_id__in=list(lines))
        .order_by("player_id", "-pk")
        .values_list("player_id", "pk")
    )
    context = {
        "cycle": cycle,
        "results_url": settings.CHRONICLE_BASE_URL
        + reverse("results", args=[cycle.chronicle.slug]),
    }
    # Each summary in its reader's language (issue 17), all languages in one query.
    language_of = languages_of(lines)
    subjects: dict[str, str] = {}  # the same for every reader of one language
    summary = get_template("downtimes/mail/results_summary.txt")
    notes = []
    for player, text in lines.items():
        if player not in character_of and player not in fallback:
            continue
        language = language_of[player]
        with translation.override(language):
            if language not in subjects:
                subjects[language] = " ".join(
                    render_to_string("downtimes/mail/results_summary_subject.txt", context).split()
                )
            body = summary.render({**context, "lines": text, "actions": actions.get(player, [])})
        notes.append(
            Notification(
                character_id=character_of.get(player) or fallback[player],
                key=f"cycle:{cycle.pk}:summary:{player}",
                subject=subjects[language],
                body=body.strip() + "\n",
                created_at=now,
            )
        )
    Notification.objects.bulk_create(notes, ignore_conflicts=True, batch_size=500)
    return len(notes)


def _unsent_summaries(cycle_id: int) -> QuerySet[Notification]:
    return Notification.objects.filter(
        key__startswith=f"cycle:{cycle_id}:summary:", sent_at__isnull=True
    )


# One transaction (and one commit) per batch of summaries, not per mail.
SEND_BATCH = 500


def summaries_send(*, cycle_id: int, limit: int = 500) -> int:
    """Hand up to `limit` of the cycle's summaries not handed over yet to the mail service
    (`deliver`: the player's inbox, and their e-mail, sent here at once, by their choice);
    returns how many were handed over. In batches of up to `SEND_BATCH`, one transaction each:
    the batch's rows are locked in one query (SKIP LOCKED) while their mails leave, and marked
    sent in one UPDATE before the commit, so two workers never send one twice (each takes rows
    the other has not locked, and finds them marked once it may lock them). A worker killed
    mid-batch rolls the whole batch back, sent mark included, for the sweeper: at least once
    (the mails of that batch that had left go again). A mail server that refuses one leaves a
    failed row in the mail log, which the mail sweeper retries with backoff; the batch goes
    on."""
    handed = 0
    while handed < limit:
        size = min(SEND_BATCH, limit - handed)
        with transaction.atomic():
            notes = list(
                _unsent_summaries(cycle_id)
                .select_for_update(skip_locked=True, of=("self",))
                .select_related("character__player")
                .order_by("pk")[:size]
            )
            for note in notes:
                player = note.character.player
                if player is not None:
                    deliver(
                        kind=MailKind.RESULTS,
                        user=player,
                        chronicle=note.character.chronicle_id,
                        key=note.key,
                        subject=note.subject,
                        body=note.body,
                        send_now=True,
                    )
            if notes:
                # Nobody to write to (no player) is done too: the results page still has it.
                Notification.objects.filter(pk__in=[note.pk for note in notes]).update(
                    sent_at=timezone.now()
                )
        handed += len(notes)
        if len(notes) < size:
            break  # none left, or the rest locked by another worker that sends them
    return handed


def summaries_pending(*, cycle_id: int) -> bool:
    return _unsent_summaries(cycle_id).exists()


SUMMARY_TASK = "downtimes.tasks.send_cycle_summaries"
SUMMARY_RETRY_AFTER = dt.timedelta(minutes=5)


def _summaries_sweep(now: dt.datetime) -> int:
    """Released cycles with a summary left unsent for a while (a lost message, a mail server
    down): send their task again. One query."""
    keys = (
        Notification.objects.filter(
            key__startswith="cycle:",
            key__contains=":summary:",
            sent_at__isnull=True,
            created_at__lt=now - SUMMARY_RETRY_AFTER,
        )
        .values_list("key", flat=True)
        .distinct()
    )
    cycle_ids = sorted({int(key.split(":")[1]) for key in keys})
    for cycle_id in cycle_ids:
        send_after_commit(SUMMARY_TASK, cycle_id)
    return len(cycle_ids)

"""Release summaries (DT-10): after a release, one e-mail per player with every released line they
read, queued as keyed notices and sent in batches by a worker; a sweeper re-sends what a dead
worker left unsent."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict

from django.conf import settings
from django.db import transaction
from django.db.models import QuerySet
from django.template.loader import render_to_string
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
    outcomes: list[Outcome],
    overrides: dict[tuple[str, str], OutcomeOverride],
    readers: set[tuple[int, int]],
    now: dt.datetime,
) -> None:
    """One keyed Notification per player (its character is the one their results name); the
    summary task sends them after commit. Its words are the results page's: each outcome
    (`public_line`) and each of the player's actions with the storytellers' written result
    (`results.released_actions`, released by `desk_release` just before), from the templates
    downtimes/mail/results_summary*.txt."""
    from .results import released_actions

    by_id = {o.pk: o for o in outcomes}
    lines: dict[int, list[str]] = defaultdict(list)
    for outcome_id, player in sorted(readers, key=lambda r: (by_id[r[0]].position, r[0])):
        # Lazy: worded when each summary is written, in its reader's language.
        lines[player].append(_lazy_public_line(by_id[outcome_id], overrides))
    actions = released_actions(cycle=cycle)
    character_of: dict[int, int] = {}
    for o in outcomes:
        if o.player_id and o.character_id:
            character_of.setdefault(o.player_id, o.character_id)
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
    notes = []
    for player, text in lines.items():
        if player not in character_of and player not in fallback:
            continue
        with translation.override(language_of[player]):
            subject = " ".join(
                render_to_string("downtimes/mail/results_summary_subject.txt", context).split()
            )
            body = render_to_string(
                "downtimes/mail/results_summary.txt",
                {**context, "lines": text, "actions": actions.get(player, [])},
            )
        notes.append(
            Notification(
                character_id=character_of.get(player) or fallback[player],
                key=f"cycle:{cycle.pk}:summary:{player}",
                subject=subject,
                body=body.strip() + "\n",
                created_at=now,
            )
        )
    Notification.objects.bulk_create(notes, ignore_conflicts=True, batch_size=500)


def _unsent_summaries(cycle_id: int) -> QuerySet[Notification]:
    return Notification.objects.filter(
        key__startswith=f"cycle:{cycle_id}:summary:", sent_at__isnull=True
    )


def summaries_send(*, cycle_id: int, limit: int = 500) -> int:
    """Hand up to `limit` of the cycle's summaries not handed over yet to the mail service
    (`deliver`: the player's inbox, and their e-mail, sent here at once, by their choice);
    returns how many were handed over. Each row is locked (SKIP LOCKED) while its mail leaves
    and marked in the same transaction: two workers never send one twice, and a worker killed
    mid-send leaves it for the sweeper (at least once: only a kill between the mail server's
    "accepted" and the commit can repeat one). A mail server that refuses it leaves a failed
    row in the mail log, which the mail sweeper retries with backoff."""
    ids = list(_unsent_summaries(cycle_id).order_by("pk").values_list("pk", flat=True)[:limit])
    handed = 0
    for pk in ids:
        with transaction.atomic():
            note = (
                Notification.objects.select_for_update(skip_locked=True, of=("self",))
                .select_related("character__player")
                .filter(pk=pk, sent_at__isnull=True)
                .first()
            )
            if note is None:
                continue
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
            # Nobody to write to is done too: the results page still has it.
            Notification.objects.filter(pk=pk).update(sent_at=timezone.now())
            handed += 1
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

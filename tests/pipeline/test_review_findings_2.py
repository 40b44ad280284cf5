"""The second review's findings on the pipeline, each a repro that failed before its fix."""

from __future__ import annotations

import smtplib
from collections.abc import Iterator
from typing import Any
from unittest import mock

import pytest
import time_machine
from celery import Celery

from characters.models import Notification
from characters.services.records import torpor_hold_record
from chronicle.models import CycleStatus
from chronicle.services import cycle_close
from downtimes.services import pipeline
from downtimes.services.pipeline import SUMMARY_TASK

from .conftest import AFTER_DEADLINE, Month

pytestmark = pytest.mark.django_db
PAGES = "/c/nightfall"


@pytest.fixture(autouse=True)
def frozen() -> Iterator[None]:
    with time_machine.travel(AFTER_DEADLINE, tick=False):
        yield


def _resolve(month: Month) -> None:
    st = month.world.users["storyteller"]
    cycle_close(cycle=month.cycle, by=st, now=AFTER_DEADLINE)
    pipeline.cycle_resolve_inline(cycle=month.cycle, by=st, now=AFTER_DEADLINE)
    month.cycle.refresh_from_db()
    assert month.cycle.status == CycleStatus.RESOLVED


# 1. The release ends live torpor holds (torpor_holds_sweep) and so queues notify()'s mail, which
#    is sent synchronously in the web request after commit. A mail server that refuses it turns a
#    committed release into a 500 for the ST, and Django drops the later on-commit callbacks: the
#    summaries' task is not enqueued (the sweeper sends them 5+ minutes later), and the
#    torpor-hold e-mail is never retried (notify has no sweeper).
@pytest.mark.django_db(transaction=True)
def test_release_with_mail_server_down_is_not_a_500(month: Month, client: Any) -> None:
    st = month.world.users["storyteller"]
    torpor_hold_record(
        holder=month.lucien, captive=month.marguerite, cycle=month.cycle, by=st, now=AFTER_DEADLINE
    )
    _resolve(month)
    client.force_login(st)
    page = client.get(f"{PAGES}/resolution/1/release/")
    form = page.context["form"]
    data = {"run": form.initial["run"], "plan": form.initial["plan"]}
    client.raise_request_exception = False
    with (
        # notify's mail now leaves through the mail service (chronicle.services.mail).
        mock.patch("django.core.mail.send_mail", side_effect=smtplib.SMTPException("down")),
        mock.patch.object(Celery, "send_task") as send_task,
    ):
        response = client.post(f"{PAGES}/resolution/1/release/", data)
    month.cycle.refresh_from_db()
    assert month.cycle.status == CycleStatus.RELEASED  # it did commit
    summary_enqueued = any(c.args[:1] == (SUMMARY_TASK,) for c in send_task.call_args_list)
    assert (response.status_code, summary_enqueued) == (302, True)


# 2. Two PCs of one player in play (one active, one in torpor: the torpor sweep's own comment
#    says this happens, XP-07 "an ST decides"), neither with a downtime: no_downtime makes two
#    outcomes keyed base:<player> in one chunk, the upsert hits the same row twice, and the
#    chunk fails three times: the cycle can never be resolved, so never released.
def test_a_player_with_two_pcs_in_play_does_not_stall_resolution(
    month: Month, make_character: Any
) -> None:
    from characters.models import Character, Status

    Character.objects.filter(pk=month.marguerite.pk).update(status=Status.TORPOR)
    extra = make_character("Odile", player="player_bob", clan="ventrue")
    assert (
        extra.pk and Character.objects.filter(player=month.world.users["player_bob"]).count() == 2
    )
    st = month.world.users["storyteller"]
    cycle_close(cycle=month.cycle, by=st, now=AFTER_DEADLINE)
    run = pipeline.cycle_resolve_inline(cycle=month.cycle, by=st, now=AFTER_DEADLINE)
    assert run.status == "done", pipeline.run_progress(cycle=month.cycle).errors


# 3. summaries_send marks a summary sent (autocommit) before its mail leaves. A worker killed
#    while the mail is in flight (SIGKILL, OOM, docker stop's SIGKILL after 10 s of a warm
#    shutdown waiting on a 500-mail batch) leaves it marked sent and never sent: the
#    redelivered task and the sweeper both skip it. (The kill is simulated by a BaseException
#    out of send_mail, which nothing in summaries_send catches, as nothing catches a SIGKILL.)
def test_a_summary_in_flight_when_the_worker_dies_is_sent_later(month: Month) -> None:
    st = month.world.users["storyteller"]
    _resolve(month)
    assert pipeline.cycle_release(cycle=month.cycle, by=st, now=AFTER_DEADLINE)
    assert pipeline.summaries_pending(cycle_id=month.cycle.pk)
    with (
        mock.patch("django.core.mail.send_mail", side_effect=KeyboardInterrupt),
        pytest.raises(KeyboardInterrupt),
    ):
        pipeline.summaries_send(cycle_id=month.cycle.pk)
    first = (
        Notification.objects.filter(key__startswith=f"cycle:{month.cycle.pk}:summary:")
        .order_by("pk")
        .first()
    )
    # At least once: the summary whose mail never left must still be there to send.
    assert first is not None and first.sent_at is None, first


# 4. The release key is compared before cycle_release takes the cycle's lock, and the service
#    never sees it: an override saved by another ST between the check and the lock is released
#    although the confirmation named the preview without it. (The interleaving is injected by
#    running the other ST's override just before the real release.)
def test_the_release_key_is_checked_under_the_cycle_lock(month: Month) -> None:
    from decimal import Decimal

    from characters.models import XpEntry
    from downtimes.models import Outcome

    admin = month.world.users["admin"]
    _resolve(month)
    client = month.world.client("storyteller")
    api = "/api/chronicles/nightfall/resolution/1"
    key = client.get(f"{api}/release-plan/").json()["key"]
    award = Outcome.objects.get(cycle=month.cycle, step="awards", subject__startswith="base:")
    real_release = pipeline.cycle_release

    def other_st_first(**kwargs: Any) -> bool:
        pipeline.outcome_override(outcome=award, by=admin, note="late change", xp=Decimal(9))
        return real_release(**kwargs)

    with mock.patch.object(pipeline, "cycle_release", side_effect=other_st_first):
        response = client.post(f"{api}/release/", {"key": key}, content_type="application/json")
    paid = sorted(e.amount for e in XpEntry.objects.filter(cycle=month.cycle))
    # Either refused (409: the preview changed) or released as confirmed (2.5 each).
    assert response.status_code == 409 or paid == [Decimal("2.5"), Decimal("2.5")], (
        response.status_code,
        paid,
    )


# 5. Same class as 1: the broker down when the ST resolves (or releases). The run is committed
#    and the sweeper would enqueue its chunks later, but send_task raises in the on-commit
#    callback, after the commit, and the ST gets a 500 for work that was saved.
@pytest.mark.django_db(transaction=True)
def test_resolve_with_the_broker_down_is_not_a_500(month: Month, client: Any) -> None:
    from kombu.exceptions import OperationalError as BrokerDown

    from downtimes.models import ResolutionRun

    st = month.world.users["storyteller"]
    cycle_close(cycle=month.cycle, by=st, now=AFTER_DEADLINE)
    client.force_login(st)
    client.raise_request_exception = False
    with mock.patch.object(Celery, "send_task", side_effect=BrokerDown("redis is down")):
        response = client.post(f"{PAGES}/resolution/1/resolve/")
    assert ResolutionRun.objects.filter(cycle=month.cycle).count() == 1  # committed
    assert response.status_code == 302

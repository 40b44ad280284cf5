"""The Celery application, its reliability defaults and the static beat schedule."""

from __future__ import annotations

import os

from celery import Celery, Task
from django.db import InterfaceError, OperationalError
from kombu import Exchange, Queue
from kombu.exceptions import OperationalError as BrokerOperationalError

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "chronicle.settings")


class ReliableTask(Task):
    """Every task retries on a lost database or broker connection, with bounded jittered backoff.

    Measured here: without these, a job running while PostgreSQL restarts is silently lost.
    Tasks must be idempotent for this to be safe; DESIGN.md says how.
    """

    autoretry_for = (OperationalError, InterfaceError, BrokerOperationalError)
    retry_backoff = 2
    retry_backoff_max = 120
    retry_jitter = True
    max_retries = 8
    acks_late = True
    reject_on_worker_lost = True


app = Celery("chronicle", task_cls=ReliableTask)
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

# Issue 16: each task's writes carry its name and id in the history (PostgreSQL only).
from chronicle.history_context import connect_task_signals  # noqa: E402

connect_task_signals()

if os.environ.get("CHRONICLE_BENCH_COUNT_PUBLISHED"):
    # bench/org_pipeline.py counts the tasks a worker sends: one line per publish, appended
    # (each write is atomic, so the prefork processes may share the file). Off unless set.
    from celery.signals import before_task_publish

    @before_task_publish.connect(weak=False)
    def _count_published(**_kwargs: object) -> None:
        with open(os.environ["CHRONICLE_BENCH_COUNT_PUBLISHED"], "a") as log:
            log.write("1\n")


# Three queues, so that hosts can be given work by kind (README, "Growing past one machine"):
# the resolution's chunks can take a worker for minutes, and must not hold up a password reset
# or the beat's one-minute sweeps behind them. Every queue is declared here, so a worker started
# without -Q consumes all three (`make run`'s single worker, the tests' in-process workers).
DEFAULT_QUEUE = "celery"
PIPELINE_QUEUE = "pipeline"
MAIL_QUEUE = "mail"
QUEUES = (DEFAULT_QUEUE, PIPELINE_QUEUE, MAIL_QUEUE)
app.conf.task_default_queue = DEFAULT_QUEUE
# An exchange and routing key per queue, as Celery declares a queue it creates itself: Queue(name)
# alone binds all three to the `celery` exchange under the one key `celery`.
app.conf.task_queues = [Queue(name, Exchange(name), routing_key=name) for name in QUEUES]
# By name, so that send_task (the services send by name after commit) is routed too. The rest
# (the beat's sweepers, exports, imports) stays on the default queue.
app.conf.task_routes = {
    "downtimes.tasks.resolve_chunk": {"queue": PIPELINE_QUEUE},
    "chronicle.tasks.send_mail_log": {"queue": MAIL_QUEUE},
    "chronicle.tasks.send_password_reset": {"queue": MAIL_QUEUE},
    "downtimes.tasks.send_cycle_summaries": {"queue": MAIL_QUEUE},
}

app.conf.beat_schedule = {
    "close-due-cycles": {
        "task": "chronicle.tasks.close_due_cycles",
        "schedule": 60.0,
        # A missed minute is picked up by the next one; never let them pile up in the broker.
        "options": {"expires": 55},
    },
    # GEN-03 / GEN-04: decision votes close at their deadline (a page showing one closes it too).
    "chronicle-close-due-proposals": {
        "task": "chronicle.tasks.proposals_close_due",
        "schedule": 60.0,
        "options": {"expires": 55},
    },
    # The characters app's timers (DESIGN: due-date columns, one sweeper each). The sweepers are
    # idempotent, so the hour only bounds how late an effect comes; a missed hour expires
    # rather than piling up behind the next one.
    "characters-sweep-stored-blood": {
        "task": "characters.tasks.sweep_stored_blood",
        "schedule": 3600.0,
        "options": {"expires": 3300},
    },
    "characters-sweep-torpor-holds": {
        "task": "characters.tasks.sweep_torpor_holds",
        "schedule": 3600.0,
        "options": {"expires": 3300},
    },
    "characters-sweep-captives": {
        "task": "characters.tasks.sweep_captives",
        "schedule": 3600.0,
        "options": {"expires": 3300},
    },
    "characters-sweep-black-veins": {
        "task": "characters.tasks.sweep_black_veins",
        "schedule": 3600.0,
        "options": {"expires": 3300},
    },
    "characters-sweep-bonds": {
        "task": "characters.tasks.sweep_bonds",
        "schedule": 3600.0,
        "options": {"expires": 3300},
    },
    # DT-10: the pipeline's run records are the truth; re-enqueue chunks no worker finished.
    "downtimes-sweep-pipeline": {
        "task": "downtimes.tasks.sweep_pipeline",
        "schedule": 60.0,
        "options": {"expires": 55},
    },
    # Mail (issue 17): failed mails whose backoff is over and queued ones whose task was lost,
    # for every kind; the sweep is idempotent (a row is claimed before it is sent).
    "chronicle-sweep-mail": {
        "task": "chronicle.tasks.sweep_mail",
        "schedule": 300.0,
        "options": {"expires": 290},
    },
    # The daily digests, from the morning hour on (chronicle.services.mail.digest): hourly, so a
    # missed hour is caught up; the (person, day) key sends each digest once.
    "chronicle-send-daily-digests": {
        "task": "chronicle.tasks.send_daily_digests",
        "schedule": 3600.0,
        "options": {"expires": 3300},
    },
    # DT-01: the reminder 48 hours before a deadline, once per character (keyed mails).
    "downtimes-send-reminders": {
        "task": "downtimes.tasks.send_downtime_reminders",
        "schedule": 3600.0,
        "options": {"expires": 3500},
    },
}

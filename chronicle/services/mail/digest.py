"""The daily digest: one e-mail a day to each person who chose it for some kinds, with the inbox
messages of those kinds that arrived since their last digest and that they have not read yet.

Exactly once a day, even when a worker dies mid-way: the day's digest is first *claimed* (one
mail log row keyed by person and day, committed together with the messages it carries), and
only then sent, by the ordinary mail task (`sending.mail_send`). A second run, or a run after a
worker died past the claim, finds the key taken and sends nothing; a claimed row whose task was
lost is still queued, and the sweeper sends it when its lease runs out. The window left is the
mail task's own: a kill between the mail server's "accepted" and the commit that marks the row
sent makes the sweeper send that digest a second time.
"""

from __future__ import annotations

import datetime as dt

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from ...models import MailChoice, MailKind, Message
from ...moments import moment_text
from .delivery import deliver

# Digests leave from this hour of the deployment's day (TIME_ZONE) on: a morning mail. Beat runs
# the task hourly, so a missed hour is caught by the next one, and the day's key keeps it once.
DIGEST_HOUR = 7


def _owed(now: dt.datetime) -> dict[str, object]:
    return {
        "delivery": MailChoice.DIGEST,
        "digest__isnull": True,
        "read_at__isnull": True,
        "created_at__lte": now,
    }


def digest_text(user: object, messages: list[Message]) -> tuple[str, str]:
    """The digest's subject and body, in the active language (the caller sets the reader's)."""
    count = len(messages)
    subject = ngettext(
        "Chronicle: %(count)d new message", "Chronicle: %(count)d new messages", count
    ) % {"count": count}
    name = getattr(user, "first_name", "") or getattr(user, "username", "")
    lines = [
        _("Hello %(name)s,") % {"name": name},
        "",
        ngettext(
            "Here is the message Chronicle wrote to you since your last digest.",
            "Here are the %(count)d messages Chronicle wrote to you since your last digest.",
            count,
        )
        % {"count": count},
    ]
    for message in messages:
        where = message.chronicle
        heading = (
            _("%(subject)s (%(chronicle)s, %(moment)s)")
            % {
                "subject": message.subject,
                "chronicle": where.name,
                "moment": moment_text(message.created_at, where),
            }
            if where is not None
            else message.subject
        )
        lines += ["", "— " + heading, "", message.body.strip()]
    base = settings.CHRONICLE_BASE_URL
    lines += [
        "",
        _("Read them in your inbox: %(url)s") % {"url": base + reverse("inbox")},
        _("Choose how each kind of message reaches you: %(url)s")
        % {"url": base + reverse("mail_preferences")},
    ]
    return subject, "\n".join(lines) + "\n"


@transaction.atomic
def digest_claim(*, user_id: int, day: dt.date, now: dt.datetime) -> int | None:
    """Claim `user_id`'s digest of `day`: its mail log row (keyed `digest:<user>:<day>`) and the
    messages it carries, in one transaction, queued for the mail task after commit. None when
    the day's digest is claimed already or nothing is owed. Returns the row's id."""
    user = get_user_model().objects.get(pk=user_id)
    messages = list(
        Message.objects.select_for_update(of=("self",))
        .filter(recipient_id=user_id, **_owed(now))
        .select_related("chronicle")
        .order_by("created_at", "pk")
    )
    if not messages:
        return None
    written: list[tuple[str, str]] = []

    def text() -> tuple[str, str]:
        # Written once, in the reader's language (deliver renders the subject and body in it).
        if not written:
            written.append(digest_text(user, messages))
        return written[0]

    delivery = deliver(
        kind=MailKind.DIGEST,
        user=user,
        key=f"digest:{user_id}:{day.isoformat()}",
        subject=lambda: text()[0],
        body=lambda: text()[1],
        now=now,
    )
    if delivery.log is None:
        return None
    Message.objects.filter(pk__in=[m.pk for m in messages]).update(digest=delivery.log)
    return delivery.log.pk


def digests_send(*, now: dt.datetime | None = None) -> int:
    """Beat, hourly: claim today's digest of everyone who has digest messages owed (from
    DIGEST_HOUR on). Each claim commits on its own and its mail leaves in its own task.
    Returns how many digests were claimed."""
    now = now or timezone.now()
    local = timezone.localtime(now)
    if local.hour < DIGEST_HOUR:
        return 0
    owed = (
        Message.objects.filter(**_owed(now))
        .order_by("recipient_id")
        .values_list("recipient_id", flat=True)
        .distinct()
    )
    claimed = 0
    for user_id in list(owed):
        if digest_claim(user_id=user_id, day=local.date(), now=now) is not None:
            claimed += 1
    return claimed

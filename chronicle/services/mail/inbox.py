"""A person's inbox (reading, marking read) and their choice per kind of notice. The pages read
through chronicle.access (`messages_of`, `message_for`); these are the writes."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count, IntegerField, OuterRef, Subquery, Value
from django.db.models.functions import Coalesce
from django.utils import timezone
from django.utils.translation import gettext as _

from ...models import PERSONAL_KINDS, MailChoice, MailPreference, Message

# Set on the signed-in user by chronicle.backends, which loads it with the user.
UNREAD = "chronicle_unread_messages"


def unread_annotation() -> dict[str, Any]:
    """The user's unread messages as a column of the query that loads the user: every page
    shows the count, and pages assert a fixed number of queries, so it costs none of its own."""
    unread = (
        Message.objects.filter(recipient_id=OuterRef("pk"), read_at__isnull=True)
        .order_by()
        .values("recipient_id")
        .annotate(n=Count("pk"))
        .values("n")
    )
    return {UNREAD: Coalesce(Subquery(unread, output_field=IntegerField()), Value(0))}


def unread_count(request: Any) -> int:
    """The header's badge: the viewer's unread messages, loaded with the user (one query of
    its own, once per request, for a user loaded another way)."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return 0
    count = getattr(user, UNREAD, None)
    if count is None:
        count = Message.objects.filter(recipient_id=user.pk, read_at__isnull=True).count()
        setattr(user, UNREAD, count)
    return int(count)


def message_open(
    *, message: Message, reader: Any = None, now: dt.datetime | None = None
) -> Message:
    """Opening a message marks it read (once: the first reading's time stays). `reader`, the
    signed-in user, has the header's count lowered to match."""
    if message.read_at is None:
        now = now or timezone.now()
        Message.objects.filter(pk=message.pk, read_at__isnull=True).update(read_at=now)
        message.read_at = now
        count = getattr(reader, UNREAD, None)
        if count:
            setattr(reader, UNREAD, count - 1)
    return message


def inbox_mark_all_read(*, user: Any, now: dt.datetime | None = None) -> int:
    """Every unread message of `user`, read now. Returns how many."""
    return Message.objects.filter(recipient_id=user.pk, read_at__isnull=True).update(
        read_at=now or timezone.now()
    )


def preferences_of(user: Any) -> dict[str, str]:
    """Each kind a person may choose for, with their choice (an e-mail at once unless saved
    otherwise). One query."""
    saved = dict(MailPreference.objects.filter(user_id=user.pk).values_list("kind", "choice"))
    return {kind: saved.get(kind, MailChoice.IMMEDIATE) for kind in PERSONAL_KINDS}


@transaction.atomic
def preferences_save(*, user: Any, choices: dict[str, str]) -> None:
    """Save a person's choice for each kind named (kinds left out keep theirs). One statement."""
    errors = {
        kind: _("Pick e-mail at once, daily digest or inbox only.")
        for kind, choice in choices.items()
        if kind not in PERSONAL_KINDS or choice not in MailChoice.values
    }
    if errors:
        raise ValidationError(errors)
    rows = [MailPreference(user_id=user.pk, kind=k, choice=c) for k, c in choices.items()]
    MailPreference.objects.bulk_create(
        rows,
        update_conflicts=True,
        unique_fields=["user", "kind"],
        update_fields=["choice"],
    )

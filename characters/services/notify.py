"""Keyed e-mails to players: a sweeper or service calls `notify`; the `Notification` row's
unique key means a re-run sends nothing twice, and the mail leaves only after commit."""

from __future__ import annotations

import datetime as dt

from django.conf import settings
from django.core.mail import send_mail
from django.db import IntegrityError, transaction
from django.utils import timezone

from ..models import Character, Notification


def notify(
    *, character: Character, key: str, subject: str, body: str, now: dt.datetime | None = None
) -> bool:
    """Queue one e-mail to the character's player, once per `key`; False if already queued or
    the character has no player with an address."""
    player = character.player
    if player is None or not player.email:
        return False
    try:
        with transaction.atomic():
            note = Notification.objects.create(
                character=character,
                key=key,
                subject=subject[:200],
                body=body,
                created_at=now or timezone.now(),
            )
    except IntegrityError:
        return False
    address = player.email

    def deliver() -> None:
        send_mail(note.subject, note.body, settings.DEFAULT_FROM_EMAIL, [address])
        Notification.objects.filter(pk=note.pk).update(sent_at=timezone.now())

    # robust: a mail server that is down must not turn the committed work into a 500; the row
    # stays unsent (sent_at empty) for an ST to see.
    transaction.on_commit(deliver, robust=True)
    return True

"""Keyed notices to players: a sweeper or service calls `notify`; the `Notification` row's
unique key means a re-run writes nothing twice. The notice goes through the mail service
(chronicle.services.mail.deliver): a message in the player's inbox always, and an e-mail as the
player chose for its kind, sent by a worker after commit."""

from __future__ import annotations

import datetime as dt

from django.db import IntegrityError, transaction
from django.utils import timezone

from chronicle.models import MailKind
from chronicle.services.mail import Text, deliver, render_for

from ..models import Character, Notification

# The kind of a notice, from its key's first part (the keys predate kinds; callers may also
# name the kind).
KIND_OF_KEY = {
    "downtime-receipt": MailKind.RECEIPT,
    "downtime-reminder": MailKind.REMINDER,
    "dt-desk-reminder": MailKind.REMINDER,
    "cycle": MailKind.RESULTS,
    "character-approved": MailKind.CHARACTER,
    "character-returned": MailKind.CHARACTER,
    "purchase": MailKind.PURCHASE,
    "bond-beginning": MailKind.BOND,
    "bond-ended": MailKind.BOND,
    "regnant-died": MailKind.BOND,
    "torpor-hold-ended": MailKind.TORPOR,
    "captive-died": MailKind.TORPOR,
    "blood-expired": MailKind.BLOOD,
    "black-veins-faded": MailKind.DIABLERIE,
    "alarm-firing": MailKind.ALARM,
}


def kind_of(key: str) -> str:
    return KIND_OF_KEY.get(key.split(":", 1)[0], MailKind.OTHER)


def notify(
    *,
    character: Character,
    key: str,
    subject: Text,
    body: Text,
    now: dt.datetime | None = None,
    kind: str = "",
) -> bool:
    """Tell the character's player once per `key`: an inbox message, and an e-mail queued by
    their choice. `subject`/`body` may be functions (or lazy translations), rendered in the
    player's language. False if already told or the character has no player."""
    player = character.player
    if player is None:
        return False
    now = now or timezone.now()
    subject_text, body_text = render_for(player, subject, body)
    try:
        with transaction.atomic():
            # sent_at: handed to the mail service, whose log says what became of the e-mail.
            Notification.objects.create(
                character=character,
                key=key,
                subject=subject_text,
                body=body_text,
                created_at=now,
                sent_at=now,
            )
    except IntegrityError:
        return False
    deliver(
        kind=kind or kind_of(key),
        user=player,
        chronicle=character.chronicle_id,
        key=key,
        subject=subject_text,
        body=body_text,
        now=now,
    )
    return True

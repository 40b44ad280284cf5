"""`deliver`: the one way Chronicle writes to a person. Every notice becomes a message in the
recipient's inbox; their choice for its kind decides whether an e-mail goes at once (a mail log
row, sent by a worker after commit), waits for the daily digest, or is skipped. Mails for an
address without an inbox (invitations, password resets, address confirmations) are logged and
sent at once.

A request never sends mail itself and never fails because of mail: the send happens in a worker
(`sending.mail_send`); a broker or mail server that is down leaves a row the sweeper retries."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone, translation
from django.utils.functional import Promise

from ...languages import language_of
from ...models import (
    TRANSACTIONAL_KINDS,
    Chronicle,
    MailChoice,
    MailKind,
    MailLog,
    MailPreference,
    MailStatus,
    Message,
    Profile,
    SkipReason,
)
from .sending import QUEUED_LEASE, enqueue_after_commit, send_claimed

# A subject or body: text already written, a lazy translation, or a function that writes it.
# The last two are rendered in the recipient's language (`in_language_of`), so a caller that
# wants its mail in the reader's language passes `lambda: _("…") % {…}`.
Text = str | Promise | Callable[[], str]

SUBJECT_LENGTH = 200


@dataclass(frozen=True)
class Delivery:
    """What `deliver` wrote: the inbox message (None when the key was delivered before, or the
    kind has no inbox) and the mail log row (None for a digest's notice, or a repeat)."""

    message: Message | None
    log: MailLog | None

    @property
    def new(self) -> bool:
        return self.message is not None or self.log is not None

    @property
    def sent(self) -> bool:
        return self.log is not None and self.log.status == MailStatus.SENT


def _needs_language(*texts: Text) -> bool:
    return any(not isinstance(text, str) for text in texts)


def _text(text: Text) -> str:
    return str(text()) if callable(text) else str(text)


def render_for(user: Any, subject: Text, body: Text, *, language: str = "") -> tuple[str, str]:
    """The subject (one line, at most 200 characters) and body, written in `user`'s language
    (or `language`, for an address without an account). Plain strings are taken as written."""
    if _needs_language(subject, body):
        code = language or (
            language_of(user) if user is not None else translation.get_language() or ""
        )
        with translation.override(code or settings.LANGUAGE_CODE):
            subject, body = _text(subject), _text(body)
    subject_line = " ".join(_text(subject).split())[:SUBJECT_LENGTH]
    return subject_line, _text(body)


def languages_of(user_ids: Iterable[int]) -> dict[int, str]:
    """Each user's language in one query (LANGUAGE_CODE for one without a saved choice), for a
    service that writes to many people at once."""
    ids = list(user_ids)
    saved = dict(
        Profile.objects.filter(user_id__in=ids)
        .exclude(language="")
        .values_list("user_id", "language")
    )
    return {pk: saved.get(pk) or settings.LANGUAGE_CODE for pk in ids}


def choice_for(user_id: int, kind: str) -> str:
    """How `user_id` takes `kind`: their saved choice, or an e-mail at once."""
    if kind in TRANSACTIONAL_KINDS:
        return MailChoice.IMMEDIATE
    saved = (
        MailPreference.objects.filter(user_id=user_id, kind=kind)
        .values_list("choice", flat=True)
        .first()
    )
    return saved or MailChoice.IMMEDIATE


def deliver(
    *,
    kind: str,
    subject: Text,
    body: Text,
    key: str = "",
    user: Any = None,
    address: str | None = None,
    chronicle: Chronicle | int | None = None,
    language: str = "",
    send_now: bool = False,
    now: dt.datetime | None = None,
) -> Delivery:
    """Write one notice or mail, in the caller's transaction.

    `user`: the recipient with an account (their inbox, their choice, their address unless
    `address` names another); without one, `address` alone (an invitation). `key` makes a
    notice exist once: delivering the same key again writes nothing (a re-run sweeper).
    `send_now`: the caller is a worker already (a release's summaries, a digest, a password
    reset); the mail leaves here, inside the caller's transaction, instead of in another task.
    Whatever the mail server does, this returns: a failure is a failed row the sweeper
    retries."""
    if kind not in MailKind.values:
        raise ValueError(f"unknown mail kind {kind!r}")
    personal = kind not in TRANSACTIONAL_KINDS
    if personal and (user is None or not key):
        raise ValueError("a notice needs its recipient and a key")
    now = now or timezone.now()
    chronicle_id = chronicle.pk if isinstance(chronicle, Chronicle) else chronicle
    subject_text, body_text = render_for(user, subject, body, language=language)
    to = (address if address is not None else getattr(user, "email", "")) or ""
    choice = choice_for(user.pk, kind) if personal else MailChoice.IMMEDIATE
    message = None
    if personal:
        try:
            with transaction.atomic():
                message = Message.objects.create(
                    recipient=user,
                    chronicle_id=chronicle_id,
                    kind=kind,
                    key=key,
                    subject=subject_text,
                    body=body_text,
                    delivery=choice,
                    created_at=now,
                )
        except IntegrityError:
            return Delivery(message=None, log=None)
    if choice == MailChoice.DIGEST:
        return Delivery(message=message, log=None)
    log = MailLog(
        recipient=user,
        address=to,
        chronicle_id=chronicle_id,
        kind=kind,
        key=key or None,
        subject=subject_text,
        created_at=now,
    )
    if choice == MailChoice.INBOX:
        log.status, log.reason = MailStatus.SKIPPED, SkipReason.CHOICE
    elif not to:
        log.status, log.reason = MailStatus.SKIPPED, SkipReason.NO_ADDRESS
    else:
        # The body waits here only until the mail leaves (`send_claimed` clears it).
        log.status, log.body = MailStatus.QUEUED, body_text
        # The lease runs on the clock, not on the notice's moment (a sweeper may pass its own).
        log.next_attempt_at = timezone.now() + QUEUED_LEASE
    try:
        with transaction.atomic():
            log.save(force_insert=True)
    except IntegrityError:
        # A keyed mail without an inbox (a day's digest) that exists already.
        return Delivery(message=message, log=None)
    if log.status == MailStatus.QUEUED:
        if send_now:
            # Created in this transaction, so no other worker can see it, let alone claim it.
            send_claimed(log)
        else:
            enqueue_after_commit(log.pk)
    return Delivery(message=message, log=log)

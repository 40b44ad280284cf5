"""Mail a player can always find (issue 17): the inbox, each person's choice per kind, the mail
log, the worker that sends it, the sweeper that retries it, and the daily digest.

Every other app writes to people through `deliver` (characters' `notify` does, keeping its own
keyed rows); nothing else sends mail. The modules: `delivery` (deliver, and rendering in the
recipient's language), `sending` (the mail task, the sweeper, Retry), `digest`, `inbox` (reading
and preferences) and `password_reset`.
"""

from __future__ import annotations

from .delivery import Delivery, Text, choice_for, deliver, languages_of, render_for
from .digest import DIGEST_HOUR, digest_claim, digests_send
from .inbox import (
    inbox_mark_all_read,
    message_open,
    preferences_of,
    preferences_save,
    unread_count,
)
from .password_reset import password_reset_request, password_reset_send
from .sending import (
    MAX_ATTEMPTS,
    QUEUED_LEASE,
    mail_retry,
    mail_send,
    mail_sweep,
    retry_delay,
)

__all__ = [
    "DIGEST_HOUR",
    "MAX_ATTEMPTS",
    "QUEUED_LEASE",
    "Delivery",
    "Text",
    "choice_for",
    "deliver",
    "digest_claim",
    "digests_send",
    "inbox_mark_all_read",
    "languages_of",
    "mail_retry",
    "mail_send",
    "mail_sweep",
    "message_open",
    "password_reset_request",
    "password_reset_send",
    "preferences_of",
    "preferences_save",
    "render_for",
    "retry_delay",
    "unread_count",
]

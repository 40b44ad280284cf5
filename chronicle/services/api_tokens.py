"""API tokens (django-rest-knox): issued at each log-in, stored only as a hash, expiring after
API_TOKEN_TTL_DAYS, revoked one by one or all at once from the account page or the API, and all
at once when the password changes (any way it changes) or the account is deactivated.

The only code that writes knox's AuthToken rows; the receiver at the bottom is connected in
ChronicleConfig.ready.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.contrib.auth.models import User
from django.db.models import Q
from django.http import Http404
from django.utils import timezone
from django.utils.translation import gettext as _
from knox.models import AuthToken

# How many characters of a token the account page shows: enough to tell tokens apart, far too
# few to use one. knox keeps the first 15 (token_key) to find a token; the rest only hashed.
SHOWN_PREFIX = 8


@dataclass(frozen=True)
class TokenRow:
    """One token as its owner sees it on the account page."""

    id: str
    prefix: str
    created: datetime
    expiry: datetime | None


def token_issue(*, user: User) -> tuple[AuthToken, str]:
    """A new token for `user` (every log-in makes its own); returns the row and the key, which
    is shown once to the caller and never stored. The user's expired tokens go at the same time."""
    now = timezone.now()
    AuthToken.objects.filter(user=user, expiry__lt=now).delete()
    return AuthToken.objects.create(user=user)


def tokens_of(user: User) -> list[TokenRow]:
    """The user's live tokens, newest first, in one query."""
    now = timezone.now()
    rows = (
        AuthToken.objects.filter(Q(expiry__isnull=True) | Q(expiry__gte=now), user=user)
        .order_by("-created")
        .values_list("digest", "token_key", "created", "expiry")
    )
    return [
        TokenRow(id=digest, prefix=key[:SHOWN_PREFIX], created=created, expiry=expiry)
        for digest, key, created, expiry in rows
    ]


def token_revoke(*, user: User, token_id: str) -> None:
    """Revoke one of `user`'s own tokens; another person's (or none) is a 404, never a hint."""
    deleted, _rows = AuthToken.objects.filter(user=user, digest=token_id).delete()
    if not deleted:
        raise Http404(_("No such token."))


def token_expired(*, token: AuthToken) -> None:
    """Forget a token found expired when it was presented."""
    AuthToken.objects.filter(digest=token.digest).delete()


def tokens_revoke_all(*, user: User | int) -> int:
    """Revoke every token of `user`; returns how many there were."""
    user_id = user if isinstance(user, int) else user.pk
    deleted, _rows = AuthToken.objects.filter(user_id=user_id).delete()
    return deleted


def user_saved(sender: Any, instance: User, created: bool, **kwargs: Any) -> None:
    """post_save of User: a password set by `set_password` in this save (the account page's
    change, a reset, an admin's change, manage.py changepassword) or a deactivated account
    ends every token. Django keeps the raw password on the instance until just after the save
    (AbstractBaseUser.save), so this sees exactly the saves that changed it."""
    if created:
        return
    if getattr(instance, "_password", None) is not None or not instance.is_active:
        tokens_revoke_all(user=instance.pk)

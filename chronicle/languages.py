"""Which language a person reads: the one saved on their profile, else the site's default.
E-mails are written in it, whatever language the request that caused them was in."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.conf import settings
from django.utils import translation


def saved_language_of(user: Any) -> str:
    """The language `user` (a User or None) chose and saved, or "" when they chose none."""
    if user is None or not getattr(user, "pk", None):
        return ""
    from .models import Profile

    language = Profile.objects.filter(user_id=user.pk).values_list("language", flat=True).first()
    return language or ""


def language_of(user: Any) -> str:
    """The saved choice of `user` (a User or None), or LANGUAGE_CODE when there is none."""
    return saved_language_of(user) or settings.LANGUAGE_CODE


@contextmanager
def in_language_of(user: Any) -> Iterator[str]:
    """Render what follows (a mail's subject and body) in `user`'s language."""
    language = language_of(user)
    with translation.override(language):
        yield language

"""Small helpers every characters service shares."""

from __future__ import annotations

import re
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.utils import translation

from chronicle.languages import language_of

RULE_ID = re.compile(r"\b([A-Z]{2,3}-\d{2}[a-z]?)\b")


def rule_ids(message: str) -> list[str]:
    """The SPEC rule IDs a refusal cites, e.g. ["DIS-07"]."""
    return RULE_ID.findall(message)


def refusal(exc: ValueError, field: str | None = None) -> ValidationError:
    """Turn a rules refusal (a `ValueError`, or a `RuleViolation` listing several problems)
    into the `ValidationError` that pages show beside the field and the API as its one error
    shape. The sentences already name the rule's ID."""
    problems = list(getattr(exc, "problems", None) or [str(exc)])
    if field is None:
        return ValidationError(problems)
    return ValidationError({field: problems})


def reader_language(user: Any) -> str:
    """The language `user` reads their mail in (chronicle.languages.language_of), read from the
    profile already joined to the row (`select_related("…player__chronicle_profile")`) when it
    is, so a sweep that tells a thousand players costs no query per player."""
    if user is None:
        return str(settings.LANGUAGE_CODE)
    relation = type(user).chronicle_profile.related
    if relation.is_cached(user):
        profile = relation.get_cached_value(user)
        return (profile.language if profile is not None else "") or str(settings.LANGUAGE_CODE)
    return language_of(user)


def in_reader_language(user: Any) -> translation.override:
    """Write what follows (a mail's subject and body) in `user`'s language."""
    return translation.override(reader_language(user))

"""Small helpers every characters service shares."""

from __future__ import annotations

import re

from django.core.exceptions import ValidationError

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

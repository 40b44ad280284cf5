"""`check_invariants` as a test's last word (issue 16): the fault and race tests end with it,
so a race or a crash that leaves the ledgers or a secret inconsistent fails the test even when
its own assertions missed it."""

from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command


def assert_invariants(*args: str) -> str:
    """Run `manage.py check_invariants` (all chronicles unless `--chronicle` is given); fail
    the test with its lines when any invariant is broken. Returns its output."""
    out = io.StringIO()
    try:
        call_command("check_invariants", *args, stdout=out)
    except CommandError as exc:
        pytest.fail(f"check_invariants: {exc}\n{out.getvalue()}")
    return out.getvalue()


def broken_invariants(*args: str) -> str:
    """The output of `check_invariants` where the test broke an invariant on purpose (a race
    proven with naive code): it must exit non-zero."""
    out = io.StringIO()
    with pytest.raises(CommandError):
        call_command("check_invariants", *args, stdout=out)
    return out.getvalue()

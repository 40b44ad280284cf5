"""Production settings: `check --deploy` is clean, and bad configuration stops start-up."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

PRODUCTION = {
    "DEBUG": "0",
    "SECRET_KEY": "s3cr3t-" + "x7Qp9-LmZ2vB8nR4tY6uW1eK3jH5gF0dS" * 2,
    "ALLOWED_HOSTS": "chronicle.example.org",
    "DATABASE_URL": "sqlite:///:memory:",
    "CELERY_BROKER_URL": "redis://127.0.0.1:6379/0",
}


def manage(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    clean = {
        k: v for k, v in os.environ.items() if k not in {*PRODUCTION, "DJANGO_SETTINGS_MODULE"}
    }
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env={**clean, "DJANGO_SETTINGS_MODULE": "chronicle.settings", **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_check_deploy_passes_with_production_variables(tmp_path: Path) -> None:
    result = manage(
        "check",
        "--deploy",
        "--fail-level",
        "WARNING",
        env={**PRODUCTION, "CHRONICLE_VAR_DIR": str(tmp_path)},
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_check_deploy_catches_a_weak_setup(tmp_path: Path) -> None:
    # Proof that the check above can fail: a short key and HSTS off are reported.
    result = manage(
        "check",
        "--deploy",
        "--fail-level",
        "WARNING",
        env={
            **PRODUCTION,
            "SECRET_KEY": "short",
            "SECURE_HSTS_SECONDS": "0",
            "CHRONICLE_VAR_DIR": str(tmp_path),
        },
    )
    assert result.returncode != 0
    assert "security.W009" in result.stderr + result.stdout


@pytest.mark.parametrize(
    ("env", "message"),
    [
        pytest.param({"SECRET_KEY": ""}, "SECRET_KEY is not set", id="missing-secret-key"),
        pytest.param({"DEBUG": "maybe"}, "DEBUG must be one of", id="bad-debug"),
        pytest.param({"TIME_ZONE": "Mars/Olympus"}, "not an IANA time zone", id="bad-time-zone"),
        pytest.param({"DATABASE_URL": "nosuchdb://x"}, "DATABASE_URL", id="bad-database-url"),
        pytest.param({"EMAIL_PORT": "smtp"}, "EMAIL_PORT must be a whole number", id="bad-port"),
    ],
)
def test_bad_configuration_stops_start_up(
    tmp_path: Path, env: dict[str, str], message: str
) -> None:
    result = manage("check", env={**PRODUCTION, "CHRONICLE_VAR_DIR": str(tmp_path), **env})
    assert result.returncode != 0
    assert message in result.stderr


def test_production_turns_on_secure_cookies_and_hsts(tmp_path: Path) -> None:
    code = (
        "from django.conf import settings as s; "
        "print(s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE, s.SECURE_HSTS_SECONDS > 0, "
        "s.SECURE_SSL_REDIRECT, s.DEBUG)"
    )
    result = manage("shell", "-c", code, env={**PRODUCTION, "CHRONICLE_VAR_DIR": str(tmp_path)})
    assert result.stdout.split()[-5:] == ["True", "True", "True", "True", "False"], result.stderr

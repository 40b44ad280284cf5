"""docker-compose.yml cannot run here (no Docker engine), so its shape is checked instead."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def load() -> dict:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def test_services_are_all_there() -> None:
    assert set(load()["services"]) == {"postgres", "redis", "web", "worker", "beat"}


def test_postgres_and_redis_have_healthchecks_the_app_waits_for() -> None:
    services = load()["services"]
    assert "pg_isready" in " ".join(services["postgres"]["healthcheck"]["test"])
    assert services["redis"]["healthcheck"]["test"][-1] == "ping"
    for name in ("web", "worker", "beat"):
        depends = services[name]["depends_on"]
        assert depends["postgres"]["condition"] == "service_healthy"
        assert depends["redis"]["condition"] == "service_healthy"


def test_one_app_definition_is_reused_through_an_anchor() -> None:
    text = (ROOT / "docker-compose.yml").read_text()
    assert re.search(r"^x-app: &app$", text, re.M)
    assert len(re.findall(r"<<: \*app", text)) == 3
    services = load()["services"]
    images = {services[name]["image"] for name in ("web", "worker", "beat")}
    assert images == {"chronicle:latest"}


def test_app_services_get_the_variables_the_settings_need() -> None:
    services = load()["services"]
    for name in ("web", "worker", "beat"):
        env = services[name]["environment"]
        assert env["DATABASE_URL"].startswith("postgres://chronicle:")
        assert "@postgres:5432/" in env["DATABASE_URL"]
        assert env["CELERY_BROKER_URL"] == "redis://redis:6379/0"
        assert env["DEBUG"] == "0"
        assert "SECRET_KEY" in env and "ALLOWED_HOSTS" in env


def test_commands_run_gunicorn_worker_and_beat() -> None:
    services = load()["services"]
    assert "gunicorn chronicle.wsgi:application" in services["web"]["command"]
    assert services["worker"]["command"][:4] == ["celery", "-A", "chronicle", "worker"]
    assert services["beat"]["command"][:4] == ["celery", "-A", "chronicle", "beat"]


def test_env_example_lists_every_variable_the_compose_file_uses() -> None:
    text = (ROOT / "docker-compose.yml").read_text()
    used = set(re.findall(r"\$\{([A-Z_]+)", text))
    example = (ROOT / ".env.example").read_text()
    listed = set(re.findall(r"^([A-Z_]+)=", example, re.M))
    assert used <= listed, used - listed


def test_env_example_lists_every_variable_the_settings_read() -> None:
    settings_text = (ROOT / "chronicle" / "settings.py").read_text()
    read = set(re.findall(r'env_(?:bool|int|list)\("([A-Z_]+)"', settings_text))
    read |= set(re.findall(r'os\.environ\.get\("([A-Z_]+)"', settings_text))
    listed = set(re.findall(r"^([A-Z_]+)=", (ROOT / ".env.example").read_text(), re.M))
    assert read and read <= listed, read - listed


def test_web_and_worker_share_var_for_exports() -> None:
    """The worker writes chronicle exports under var/; the web serves them from there."""
    data = load()
    services = data["services"]
    assert "appvar:/app/var" in services["web"]["volumes"]
    assert services["web"]["volumes"] == services["worker"]["volumes"]
    assert "appvar" in data["volumes"]

"""docker-compose.yml cannot run here (no Docker engine), so its shape is checked instead: the
services, what they wait for, what they are given, how many of each, and that the settings
the app services get load as meant (through PgBouncer, in transaction pooling)."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import yaml

from chronicle.celery import QUEUES, app

ROOT = Path(__file__).resolve().parents[1]
APP_SERVICES = ("migrate", "web", "worker", "beat")
RUNNING_APP = ("web", "worker", "beat")


def load() -> dict:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def test_services_are_all_there() -> None:
    assert set(load()["services"]) == {
        "postgres",
        "pgbouncer",
        "redis",
        "migrate",
        "web",
        "lb",
        "worker",
        "beat",
    }


def test_services_wait_for_what_they_use() -> None:
    services = load()["services"]
    assert "pg_isready" in " ".join(services["postgres"]["healthcheck"]["test"])
    assert "pg_isready" in " ".join(services["pgbouncer"]["healthcheck"]["test"])
    assert services["redis"]["healthcheck"]["test"][-1] == "ping"
    assert services["pgbouncer"]["depends_on"] == {"postgres": {"condition": "service_healthy"}}
    assert services["migrate"]["depends_on"] == {"postgres": {"condition": "service_healthy"}}
    for name in RUNNING_APP:
        assert services[name]["depends_on"] == {
            "migrate": {"condition": "service_completed_successfully"},
            "pgbouncer": {"condition": "service_healthy"},
            "redis": {"condition": "service_healthy"},
        }
    assert services["lb"]["depends_on"] == {"web": {"condition": "service_healthy"}}


def test_migrations_run_once_and_not_by_the_web_replicas() -> None:
    services = load()["services"]
    assert services["migrate"]["command"] == ["python", "manage.py", "migrate", "--noinput"]
    assert services["migrate"]["restart"] == "no"
    assert "migrate" not in json.dumps(services["web"]["command"])


def test_one_app_definition_is_reused_through_an_anchor() -> None:
    text = (ROOT / "docker-compose.yml").read_text()
    assert re.search(r"^x-app: &app$", text, re.M)
    assert len(re.findall(r"<<: \*app", text)) == len(APP_SERVICES)
    services = load()["services"]
    assert {services[name]["image"] for name in APP_SERVICES} == {"chronicle:latest"}


def _settings_read() -> set[str]:
    settings_text = (ROOT / "chronicle" / "settings.py").read_text()
    read = set(re.findall(r'env_(?:bool|int|list)\("([A-Z_]+)"', settings_text))
    return read | set(re.findall(r'os\.environ\.get\("([A-Z_]+)"', settings_text))


def test_app_services_get_the_variables_the_settings_need() -> None:
    services = load()["services"]
    read = _settings_read()
    for name in APP_SERVICES:
        env = services[name]["environment"]
        # Every name given is one the settings read: a typo would be silently ignored.
        assert set(env) <= read, set(env) - read
        assert env["CELERY_BROKER_URL"] == "redis://redis:6379/0"
        assert env["DEBUG"] == "0"
        assert "SECRET_KEY" in env and "ALLOWED_HOSTS" in env
        assert not env["STATIC_ROOT"].startswith("/app/var")  # var/ is a volume
        assert env["DATABASE_URL"].startswith("postgres://chronicle:")
    for name in RUNNING_APP:
        env = services[name]["environment"]
        assert "@pgbouncer:5432/chronicle" in env["DATABASE_URL"]
        assert env["DATABASE_POOLER"] == "transaction"
    assert services["pgbouncer"]["environment"]["POOL_MODE"] == "transaction"
    # migrate goes around the pooler, straight to PostgreSQL.
    migrate = services["migrate"]["environment"]
    assert "@postgres:5432/chronicle" in migrate["DATABASE_URL"]
    assert migrate["DATABASE_POOLER"] == ""


def _resolved(env: dict[str, str]) -> dict[str, str]:
    """The compose file's ${NAME:?...} / ${NAME:-default} with values for a test."""
    given = {"POSTGRES_PASSWORD": "pw", "SECRET_KEY": "k" * 50, "ALLOWED_HOSTS": "c.example"}

    def one(match: re.Match[str]) -> str:
        return given.get(match.group(1), match.group(3) or "")

    return {k: re.sub(r"\$\{([A-Z_]+)(:[?-]([^}]*))?\}", one, v) for k, v in env.items()}


PROBE = (
    "import json, django; django.setup(); from django.conf import settings as s; "
    "d = s.DATABASES['default']; "
    "print(json.dumps([d['HOST'], d['PORT'], d['NAME'], d['DISABLE_SERVER_SIDE_CURSORS']]))"
)


def _probe(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """The settings, loaded by a fresh interpreter with `env` and no other Django variable."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("DATABASE", "DJANGO"))}
    return subprocess.run(
        [sys.executable, "-c", PROBE],
        env={
            **clean,
            **env,
            "DJANGO_SETTINGS_MODULE": "chronicle.settings",
            "CHRONICLE_VAR_DIR": "/tmp/compose-settings-probe",
        },
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_web_environment_loads_pooled_settings() -> None:
    """With the web service's environment, the settings point at PgBouncer with server-side
    cursors off; migrate's go straight to PostgreSQL with them on."""
    services = load()["services"]
    web = _probe(_resolved(services["web"]["environment"]))
    assert web.returncode == 0, web.stderr
    assert json.loads(web.stdout.splitlines()[-1]) == ["pgbouncer", 5432, "chronicle", True]
    migrate = _probe(_resolved(services["migrate"]["environment"]))
    assert migrate.returncode == 0, migrate.stderr
    assert json.loads(migrate.stdout.splitlines()[-1]) == ["postgres", 5432, "chronicle", False]


def test_an_unknown_pooler_stops_start_up() -> None:
    env = _resolved(load()["services"]["web"]["environment"])
    bad = _probe({**env, "DATABASE_POOLER": "statement"})
    assert bad.returncode != 0
    assert "DATABASE_POOLER must be empty, 'session' or 'transaction'" in bad.stderr


def test_web_and_worker_are_scaled_to_two_and_beat_is_one() -> None:
    services = load()["services"]
    assert services["web"]["deploy"]["replicas"] == 2
    assert services["worker"]["deploy"]["replicas"] == 2
    assert services["beat"]["deploy"]["replicas"] == 1
    # Only beat schedules: a worker with an embedded beat (-B) would be a second beat.
    assert not {"-B", "--beat"} & set(services["worker"]["command"])


def test_commands_run_gunicorn_worker_and_beat() -> None:
    services = load()["services"]
    assert services["web"]["command"][:2] == ["gunicorn", "chronicle.wsgi:application"]
    assert services["worker"]["command"][:4] == ["celery", "-A", "chronicle", "worker"]
    assert services["beat"]["command"][:4] == ["celery", "-A", "chronicle", "beat"]


def _queues(command: list[str]) -> set[str]:
    return set(command[command.index("-Q") + 1].split(","))


def test_every_queue_is_consumed_and_every_route_names_a_queue() -> None:
    assert _queues(load()["services"]["worker"]["command"]) == set(QUEUES)
    routed = {route["queue"] for route in app.conf.task_routes.values()}
    assert routed <= set(QUEUES) and app.conf.task_default_queue in QUEUES
    # `make run`'s one worker takes every queue too.
    makefile = (ROOT / "Makefile").read_text()
    (line,) = [x for x in makefile.splitlines() if "$(CELERY) -A chronicle worker" in x]
    assert _queues(shlex.split(line.strip().rstrip("\\"))) == set(QUEUES)


def test_the_load_balancer_publishes_the_port_and_points_at_web() -> None:
    services = load()["services"]
    # One host port cannot serve two replicas: only the load balancer publishes one.
    assert "ports" not in services["web"]
    assert services["web"]["expose"] == ["8000"]
    assert services["lb"]["ports"] == ["127.0.0.1:8000:80"]
    (mount,) = services["lb"]["volumes"]
    source, target, mode = mount.split(":")
    assert (target, mode) == ("/etc/nginx/conf.d/default.conf", "ro")
    conf = (ROOT / source).read_text()
    upstream = re.search(r"upstream (\w+) \{([^}]*)\}", conf)
    assert upstream is not None
    assert re.search(r"^\s*server web:8000\b", upstream.group(2), re.M)
    assert f"proxy_pass http://{upstream.group(1)};" in conf
    assert "--bind 0.0.0.0:8000" in " ".join(services["web"]["command"])
    # nginx answers 413 above 1 MB by default; the Grapevine import takes more.
    from characters.forms.imports import MAX_FILES
    from characters.services.imports import MAX_FILE_BYTES

    size = re.search(r"client_max_body_size (\d+)m;", conf)
    assert size is not None and int(size.group(1)) * 1024 * 1024 > MAX_FILES * MAX_FILE_BYTES
    assert conf.count("{") == conf.count("}")


def test_env_example_lists_every_variable_the_compose_file_uses() -> None:
    text = (ROOT / "docker-compose.yml").read_text()
    used = set(re.findall(r"\$\{([A-Z_]+)", text))
    example = (ROOT / ".env.example").read_text()
    listed = set(re.findall(r"^([A-Z_]+)=", example, re.M))
    assert used <= listed, used - listed


def test_env_example_lists_every_variable_the_settings_read() -> None:
    read = _settings_read()
    listed = set(re.findall(r"^([A-Z_]+)=", (ROOT / ".env.example").read_text(), re.M))
    assert read and read <= listed, read - listed


def test_web_and_worker_share_var_for_exports() -> None:
    """The worker writes chronicle exports under var/; the web serves them from there."""
    data = load()
    services = data["services"]
    assert "appvar:/app/var" in services["web"]["volumes"]
    assert services["web"]["volumes"] == services["worker"]["volumes"]
    assert "appvar" in data["volumes"]

"""The admins' download of the whole chronicle from the settings page: a button starts a Celery
job (enqueued on commit), a page shows its state, and the file is served to the chronicle's
admins only: storytellers and players get 403, anyone else 404."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from django.test import override_settings
from django.urls import reverse

from chronicle import export_jobs
from chronicle.celery import app as celery_app
from chronicle.tasks import export_chronicle_job

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def var_dir(tmp_path: Path) -> Any:
    with override_settings(VAR_DIR=tmp_path):
        yield tmp_path


def _start(world: Any, capture: Any) -> str:
    with capture(execute=False) as callbacks:
        response = world.client("admin").post(
            reverse("chronicle_export_start", args=[world.chronicle.slug])
        )
    assert response.status_code == 302
    assert len(callbacks) == 1  # the job goes to a worker once the request commits
    return response["Location"].rstrip("/").split("/")[-1]


def test_an_admin_exports_from_the_settings_page(
    world: Any, make_character: Any, django_capture_on_commit_callbacks: Any
) -> None:
    make_character("Lucien", player="player_alice", st_notes="ST only")
    slug = world.chronicle.slug
    admin = world.client("admin")
    settings_page = admin.get(reverse("house_rules", args=[slug])).content.decode()
    assert reverse("chronicle_export_start", args=[slug]) in settings_page

    job = _start(world, django_capture_on_commit_callbacks)
    status = reverse("chronicle_export_status", args=[slug, job])
    download = reverse("chronicle_export_download", args=[slug, job])
    waiting = admin.get(status)
    assert waiting.status_code == 200
    assert "hx-trigger" in waiting.content.decode()  # the page refreshes itself
    assert admin.get(download).status_code == 404  # not written yet

    assert export_jobs.EXPORT_TASK in celery_app.tasks  # the name the job is sent by
    export_chronicle_job(world.chronicle.pk, job)  # what the worker runs
    export_chronicle_job(world.chronicle.pk, job)  # a redelivery does nothing more

    done = admin.get(status).content.decode()
    assert download in done
    response = admin.get(download)
    assert response.status_code == 200
    assert response["Content-Disposition"].startswith("attachment")
    data = json.loads(b"".join(response.streaming_content))
    assert data["format"] == "chronicle-export" and data["chronicle"] == slug
    assert "ST only" in json.dumps(data)


@pytest.mark.parametrize(
    ("persona", "code"),
    [
        ("storyteller", 403),
        ("player_alice", 403),
        ("outsider", 404),
        ("other_storyteller", 404),
        (None, 302),
    ],
)
def test_only_the_chronicle_admins_may_export(
    world: Any, persona: str | None, code: int, django_capture_on_commit_callbacks: Any
) -> None:
    slug = world.chronicle.slug
    job = _start(world, django_capture_on_commit_callbacks)
    export_chronicle_job(world.chronicle.pk, job)
    client = world.client(persona)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        assert client.post(reverse("chronicle_export_start", args=[slug])).status_code == code
    assert callbacks == []
    for name in ("chronicle_export_status", "chronicle_export_download"):
        assert client.get(reverse(name, args=[slug, job])).status_code == code


def test_a_job_of_another_chronicle_or_no_job_is_not_found(
    world: Any, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=False):
        other = export_jobs.export_job_start(chronicle=world.other, by=world.users["admin"])
    export_chronicle_job(world.other.pk, other.id)
    admin = world.client("admin")
    slug = world.chronicle.slug
    for job in (other.id, "nothing", "123", "..", "a" * 300):
        assert admin.get(f"/c/{slug}/settings/export/{job}/").status_code == 404
        assert admin.get(f"/c/{slug}/settings/export/{job}/download/").status_code == 404
    assert admin.get(f"/c/{slug}/settings/export/").status_code == 405


def test_a_file_gone_from_the_server_is_not_found(
    world: Any, django_capture_on_commit_callbacks: Any
) -> None:
    job = _start(world, django_capture_on_commit_callbacks)
    export_chronicle_job(world.chronicle.pk, job)
    found = export_jobs.export_job_for(world.chronicle, job)
    assert found is not None
    export_jobs.export_job_file(found).unlink()
    url = reverse("chronicle_export_download", args=[world.chronicle.slug, job])
    assert world.client("admin").get(url).status_code == 404


def test_exports_older_than_a_week_are_removed(
    world: Any, var_dir: Path, django_capture_on_commit_callbacks: Any
) -> None:
    old = _start(world, django_capture_on_commit_callbacks)
    export_chronicle_job(world.chronicle.pk, old)
    week_ago = time.time() - export_jobs.EXPORT_KEPT.total_seconds() - 60
    for path in (var_dir / "exports" / str(world.chronicle.pk)).iterdir():
        os.utime(path, (week_ago, week_ago))
    new = _start(world, django_capture_on_commit_callbacks)
    assert export_jobs.export_job_for(world.chronicle, old) is None
    assert export_jobs.export_job_for(world.chronicle, new) is not None

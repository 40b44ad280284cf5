"""The Import page end to end on a real Celery worker: a storyteller uploads a Grapevine file
with the test client, confirms the preview, and the job goes after commit through Redis to a
worker in a thread of this process, which imports into PostgreSQL while the test polls the
progress bar the way htmx does, until the page would reload. (test_grapevine_pages.py covers
the same page with the message captured instead of sent.)

The five-vampire chronicle holds only NPCs, whose XP history stays text on the sheet, so
McMillan's file (a player's character, 299 ledger entries, counted in
test_grapevine_services.py) goes in the same upload: the worker writes both characters and XP.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any

import pytest
from celery.contrib.testing.worker import start_worker
from celery.signals import task_postrun
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connections

from characters.models import Character, ImportJob, ImportStatus, XpEntry
from chronicle.celery import app
from tests.characters.test_grapevine_services import DATA
from tests.conftest import World

pytestmark = [pytest.mark.postgres, pytest.mark.redis]

PAGE = "/c/nightfall/import/"
FILE = "chronicle_camarilla_five_xml.gex"  # 5 NPCs, their 2 XP entries kept as text
WITH_XP = "mcmillan.gex"  # 1 character of a player, 299 ledger entries
WAIT_S = 60


@pytest.fixture
def worker(postgres: None, redis_broker: str) -> Iterator[None]:
    """A real worker on the Redis broker, in a thread of this process (so it runs on this
    test's database)."""
    # A message left by an earlier, interrupted run names a job id that may exist again in this
    # database: only this test's message may run.
    app.control.purge()

    def close_connections(**kwargs: Any) -> None:
        # The worker thread's own connections: closed, so the test database can be dropped.
        connections.close_all()

    task_postrun.connect(close_connections, weak=False)
    try:
        with start_worker(app, pool="solo", perform_ping_check=False, shutdown_timeout=30):
            yield
    finally:
        task_postrun.disconnect(close_connections)


@pytest.mark.django_db(transaction=True)
def test_a_storyteller_imports_a_grapevine_file_on_a_real_worker(
    worker: None, world: World
) -> None:
    client = world.client("storyteller")
    files = [
        SimpleUploadedFile(name, (DATA / name).read_bytes(), content_type="application/xml")
        for name in (FILE, WITH_XP)
    ]
    response = client.post(PAGE, {"files": files})
    assert response.status_code == 302
    job = ImportJob.objects.get(chronicle=world.chronicle)
    assert response["Location"] == f"{PAGE}{job.pk}/"

    preview = client.get(response["Location"])
    assert preview.status_code == 200 and job.status == ImportStatus.PREVIEW
    assert not Character.objects.filter(chronicle=world.chronicle).exists()
    # Import with what the preview shows (each unmapped value's proposed choice).
    form = preview.context["choices_form"]
    choices = {name: field.initial for name, field in form.fields.items()}
    confirmed = client.post(
        f"{PAGE}{job.pk}/confirm/",
        {"action": "import", "digest": preview.context["digest"], **choices},
    )
    assert confirmed.status_code == 302, confirmed.content.decode()[:2000]

    # Poll the progress bar as htmx does (every second on the page) until it asks for a reload.
    statuses = []
    deadline = time.monotonic() + WAIT_S
    while True:
        bar = client.get(f"{PAGE}{job.pk}/progress/", HTTP_HX_REQUEST="true")
        assert bar.status_code == 200
        found = re.search(r'data-import-status="(\w+)"', bar.content.decode())
        assert found is not None
        statuses.append(found.group(1))
        if bar.get("HX-Refresh") == "true":
            break
        assert time.monotonic() < deadline, f"no worker finished the import: {statuses}"
        time.sleep(0.2)

    job.refresh_from_db()
    assert job.status == ImportStatus.DONE, job.error
    assert statuses[-1] == "done" and job.percent == 100
    assert job.result["created"] == 6
    npcs = Character.objects.filter(chronicle=world.chronicle, imported_from=FILE)
    assert npcs.count() == 5
    adam = npcs.get(name="Adam St. Charles")
    assert adam.player is None and "XP entries kept as text" in adam.imported_notes
    mcmillan = Character.objects.get(chronicle=world.chronicle, imported_from=WITH_XP)
    entries = XpEntry.objects.filter(chronicle=world.chronicle)
    assert entries.count() == job.result["xp_entries"] == 299
    assert set(entries.values_list("character", flat=True)) == {mcmillan.pk}
    # The balance Grapevine showed (unspent="29").
    assert sum(e.amount for e in entries) == 29
    page = client.get(f"{PAGE}{job.pk}/")
    assert b"Imported" in page.content

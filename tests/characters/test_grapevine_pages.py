"""The Import page through the test client: who may use it (staff 200, players 403, outsiders
404), the upload and its preview, the storytellers' choices, Import on a worker (the task as
the broker would deliver it after commit), the progress bar, and refusals that write nothing."""

from __future__ import annotations

from typing import Any
from unittest import mock

import pytest
from celery import Celery
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from characters import tasks
from characters.models import Character, ImportJob, ImportStatus, XpEntry
from characters.services import imports
from chronicle.celery import app
from tests.characters.test_grapevine_services import DATA
from tests.conftest import PERSONAS, World

pytestmark = pytest.mark.django_db

PAGE = "/c/nightfall/import/"


def upload(name: str) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, (DATA / name).read_bytes(), content_type="application/xml")


EXPECTED = {
    "admin": 200,
    "storyteller": 200,
    "player_alice": 403,
    "player_bob": 403,
    "outsider": 404,
    "other_storyteller": 404,
}


@pytest.mark.parametrize("persona", PERSONAS)
def test_who_may_open_the_import_page(world: World, persona: str) -> None:
    response = world.client(persona).get(PAGE)
    assert response.status_code == EXPECTED[persona]


@pytest.mark.parametrize("persona", ["player_alice", "outsider"])
def test_players_and_outsiders_cannot_upload_or_see_a_job(world: World, persona: str) -> None:
    response = world.client(persona).post(PAGE, {"files": upload("mcmillan.gex")})
    assert response.status_code == EXPECTED[persona]
    assert not ImportJob.objects.exists()
    job = ImportJob.objects.create(
        chronicle=world.chronicle,
        created_by=world.users["storyteller"],
        created_at=world.game.cycle.deadline_at,
        files=[],
    )
    for path in (f"{PAGE}{job.pk}/", f"{PAGE}{job.pk}/progress/"):
        assert world.client(persona).get(path).status_code == EXPECTED[persona]
    assert (
        world.client(persona).post(f"{PAGE}{job.pk}/confirm/", {}).status_code
        == (EXPECTED[persona])
    )


def test_anonymous_is_sent_to_log_in(world: World) -> None:
    response = world.client(None).get(PAGE)
    assert response.status_code == 302 and "login" in response["Location"]


def test_another_chronicles_job_is_404(world: World) -> None:
    other_job = ImportJob.objects.create(
        chronicle=world.other,
        created_by=world.users["other_storyteller"],
        created_at=world.game.cycle.deadline_at,
        files=[],
    )
    assert world.client("storyteller").get(f"{PAGE}{other_job.pk}/").status_code == 404


def test_upload_preview_choose_and_import_on_a_worker(
    world: World, django_capture_on_commit_callbacks: Any
) -> None:
    client = world.client("storyteller")
    response = client.post(PAGE, {"files": upload("chronicle_00.gex")})
    assert response.status_code == 302
    job = ImportJob.objects.get()
    assert response["Location"] == f"{PAGE}{job.pk}/"
    # Nothing of the chronicle written by the upload.
    assert not Character.objects.filter(chronicle=world.chronicle).exists()

    preview = client.get(response["Location"])
    assert preview.status_code == 200
    html = preview.content.decode()
    for text in ("Charles McMillan", "ValueForEverything", "Andrew Sayman", "Nihilist", "create"):
        assert text in html
    rows = imports.import_job_preview(job=job).unmapped()
    nihilist = next(i for i, r in enumerate(rows) if r["key"] == "sect:nihilist")
    digest = preview.context["digest"]

    # Preview again with a choice: still nothing written.
    again = client.post(
        f"{PAGE}{job.pk}/confirm/",
        {"action": "preview", f"c{nihilist}": "anarch", "digest": digest},
    )
    assert again.status_code == 200
    assert not Character.objects.filter(chronicle=world.chronicle).exists()

    with (
        mock.patch.object(Celery, "send_task") as send_task,
        django_capture_on_commit_callbacks(execute=True),
    ):
        confirmed = client.post(
            f"{PAGE}{job.pk}/confirm/",
            {"action": "import", f"c{nihilist}": "anarch", "digest": digest},
        )
    assert confirmed.status_code == 302
    send_task.assert_called_once_with(imports.IMPORT_TASK, args=[job.pk])
    job.refresh_from_db()
    assert job.status == ImportStatus.QUEUED and job.choices["sect:nihilist"] == "anarch"
    queued = client.get(f"{PAGE}{job.pk}/")
    assert b'data-import-status="queued"' in queued.content

    # The worker receives the message after commit.
    assert imports.IMPORT_TASK in app.tasks
    assert tasks.run_grapevine_import(job.pk) is True
    job.refresh_from_db()
    assert job.status == ImportStatus.DONE and job.percent == 100
    assert job.result["created"] == 3 and job.result["xp_entries"] == 299
    assert Character.objects.get(name="ValueForEverything").sect == "anarch"
    assert Character.objects.filter(imported_from="chronicle_00.gex").count() == 3
    # Delivered twice (acks late): nothing more.
    assert tasks.run_grapevine_import(job.pk) is False
    assert XpEntry.objects.filter(chronicle=world.chronicle).count() == 299

    done = client.get(f"{PAGE}{job.pk}/")
    assert b"Imported" in done.content and b"Charles McMillan" in done.content
    bar = client.get(f"{PAGE}{job.pk}/progress/", HTTP_HX_REQUEST="true")
    assert bar.status_code == 200 and bar["HX-Refresh"] == "true"
    assert b'id="progress-bar"' in bar.content


def test_the_task_is_reliable() -> None:
    task = app.tasks[imports.IMPORT_TASK]
    assert task.acks_late is True and task.reject_on_worker_lost is True


def test_a_chronicle_changed_after_the_preview_fails_the_job_and_writes_nothing(
    world: World, make_character: Any, django_capture_on_commit_callbacks: Any
) -> None:
    client = world.client("storyteller")
    client.post(PAGE, {"files": upload("mcmillan.gex")})
    job = ImportJob.objects.get()
    digest = client.get(f"{PAGE}{job.pk}/").context["digest"]
    with mock.patch.object(Celery, "send_task"), django_capture_on_commit_callbacks(execute=True):
        client.post(f"{PAGE}{job.pk}/confirm/", {"action": "import", "digest": digest})
    # Meanwhile a storyteller makes a character of that name by hand.
    make_character("Charles McMillan", player=None)
    assert tasks.run_grapevine_import(job.pk) is False
    job.refresh_from_db()
    assert job.status == ImportStatus.FAILED and "changed since the preview" in job.error
    assert not XpEntry.objects.exists()
    page = client.get(f"{PAGE}{job.pk}/")
    assert b"changed since the preview" in page.content


@pytest.mark.parametrize(
    ("name", "words"),
    [
        pytest.param("adamstcharles_broken_xml.gex", b"line 68, column", id="damaged"),
        pytest.param("chronicle_camarilla_five_bin.gex", b"export the characters as XML", id="bin"),
    ],
)
def test_refused_files_write_nothing(world: World, name: str, words: bytes) -> None:
    response = world.client("storyteller").post(
        PAGE, {"files": [upload("mcmillan.gex"), upload(name)]}
    )
    assert response.status_code == 400
    assert words in response.content and b"Nothing was imported" in response.content
    assert not ImportJob.objects.exists()
    assert not Character.objects.filter(chronicle=world.chronicle).exists()


def test_empty_upload_is_an_error_next_to_the_field(world: World) -> None:
    response = world.client("storyteller").post(PAGE, {})
    assert response.status_code == 400
    assert b'class="error"' in response.content


def test_imported_free_text_is_on_the_storytellers_sheet_only(
    world: World, make_character: Any
) -> None:
    """Grapevine is the storytellers' program: its free text may hold their secrets."""
    pc = make_character(
        "Charles McMillan",
        player="player_alice",
        imported_from="mcmillan.gex",
        imported_at=timezone.now(),
        imported_notes="Notes: secretly a Sabbat spy",
    )
    url = f"/c/nightfall/characters/{pc.pk}/"
    assert "secretly a Sabbat spy" in world.client("storyteller").get(url).content.decode()
    owner = world.client("player_alice").get(url)
    assert owner.status_code == 200
    assert "secretly a Sabbat spy" not in owner.content.decode()
    assert (
        "secretly a Sabbat spy"
        not in world.client("player_alice").get(url + "print/").content.decode()
    )

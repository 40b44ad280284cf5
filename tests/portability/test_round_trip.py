"""Export, import and digest of a whole chronicle: the demo chronicle and a resolved and released
month of 300 players leave the database, come back with new ids into a database that no
longer holds them, and give the same digest; the import writes in batches, not per row."""

from __future__ import annotations

import datetime as dt
import io
import json
import math
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.db import connection

from characters.models import Character, Notification, XpEntry, XpKind
from characters.services import ledger
from chronicle import portability, services
from chronicle.models import Chronicle, CycleStatus, Game, Role
from downtimes.models import Outcome
from downtimes.services import pipeline
from tests.pipeline.demo_month import AFTER_DEADLINE, build_month

from .conftest import counted, wipe

pytestmark = pytest.mark.django_db

DEMO_SLUG = "elysium-nights"


def _through_json(data: dict[str, Any]) -> dict[str, Any]:
    """What a file gives back: the export as written and read."""
    return json.loads(json.dumps(data))


def _filler() -> None:
    """Rows made after the exported ones, so that the import's ids are new ones on every
    database (SQLite reuses the ids of deleted rows at the end of a table)."""
    chronicle = services.chronicle_create(name="Filler", slug="filler", timezone_name="UTC")
    services.game_create(chronicle=chronicle, date=dt.date(2024, 1, 6))
    user = get_user_model().objects.create_user("filler_player")
    services.membership_add(chronicle=chronicle, user=user, role=Role.PLAYER)
    character = Character.objects.create(chronicle=chronicle, player=user, name="Filler")
    ledger.xp_entry_add(
        chronicle=chronicle,
        player_id=user.pk,
        character=character,
        amount=Decimal(3),
        kind=XpKind.AWARD,
        reason="filler",
        key="filler",
    )


def _ids(chronicle: Chronicle) -> dict[str, set[int]]:
    return {
        p.model._meta.label: set(p.rows(chronicle).values_list("pk", flat=True))
        for p in portability.portables()
    }


def round_trip(chronicle: Chronicle) -> tuple[Chronicle, dict[str, Any]]:
    before = portability.digest(chronicle)
    old_ids = _ids(chronicle)
    data = _through_json(portability.export_data(chronicle))
    wipe(chronicle)
    assert not Chronicle.objects.filter(slug=data["chronicle"]).exists()
    _filler()
    report = portability.import_data(data)
    assert portability.digest(report.chronicle) == before
    new_ids = _ids(report.chronicle)
    # Every row came back under a new id (the references were remapped, not copied), above
    # every id the source handed out (ids named in text never name a row made here).
    for label, ids in old_ids.items():
        assert len(new_ids[label]) == len(ids), label
        if ids:
            assert min(new_ids[label]) > data["max_ids"][label.lower()] >= max(ids), label
    return report.chronicle, data


def test_the_demo_chronicle_round_trips_with_the_same_digest() -> None:
    call_command("seed_demo", stdout=io.StringIO())
    demo = Chronicle.objects.get(slug=DEMO_SLUG)
    character = Character.objects.filter(chronicle=demo).order_by("pk").first()
    game = Game.objects.filter(chronicle=demo).order_by("number").first()
    assert character is not None and game is not None
    stamps = (character.name, character.created_at, character.updated_at, game.updated_at)
    tables = {t.label: len(t.rows) for t in portability.snapshot(demo).tables}
    # The demo has rows of every app for the round trip to prove something.
    for label in (
        "characters.xpentry",
        "havens.structure",
        "downtimes.vote",
        "chronicle.cycle",
    ):
        assert tables[label] > 0, label

    imported, data = round_trip(demo)

    again = Character.objects.get(chronicle=imported, name=stamps[0])
    # auto_now and auto_now_add columns keep the exported times.
    assert (again.created_at, again.updated_at) == stamps[1:3]
    assert Game.objects.get(chronicle=imported, number=game.number).updated_at == stamps[3]
    # Exported again, the file is the same but for its time.
    second = _through_json(portability.export_data(imported))
    assert second["tables"] == data["tables"]
    assert second["users"] == data["users"]


def test_the_digest_ignores_ids_and_order() -> None:
    call_command("seed_demo", stdout=io.StringIO())
    demo = Chronicle.objects.get(slug=DEMO_SLUG)
    lines = portability.dump(demo)
    assert lines == sorted(lines)
    assert not any('"id":' in line for line in lines)
    assert portability.digest(demo) == portability.digest(demo)
    # A change anywhere changes it.
    before = portability.digest(demo)
    Character.objects.filter(chronicle=demo).update(st_notes="changed")
    assert portability.digest(demo) != before


def _month_of_300_players() -> Chronicle:
    """demo_month's month with 300 players, closed, resolved and released: characters,
    ledgers, havens, searches, the desk, votes, outcomes and their readers, notifications."""
    month = build_month(extra_players=293)
    services.cycle_close(cycle=month.cycle, by=month.st, now=AFTER_DEADLINE)
    pipeline.cycle_resolve_inline(cycle=month.cycle, by=month.st, now=AFTER_DEADLINE)
    assert pipeline.cycle_release(cycle=month.cycle, by=month.st, now=AFTER_DEADLINE)
    month.cycle.refresh_from_db()
    assert month.cycle.status == CycleStatus.RELEASED
    return month.chronicle


def _most_statements(data: dict[str, Any]) -> int:
    """What the import may send: a few fixed statements, one existence check per unique
    column, and per batch of a table one INSERT (which the database may split further when a
    row has many columns: SQLite binds at most 999 values), one UPDATE of its auto-timestamps
    and one INSERT per many-to-many field. Rows pointing into their own table add a layer."""
    total = 10 + math.ceil(len(data["users"]) / portability.BATCH_SIZE)
    by_label = {t["model"]: t["rows"] for t in data["tables"]}
    for p in portability.portables():
        model = p.model
        rows = by_label.get(model._meta.label_lower, [])
        fields = [f for f in model._meta.concrete_fields if not f.primary_key]
        total += sum(1 for f in fields if f.unique and not f.is_relation)
        if not rows:
            continue
        stamped = sum(
            1 for f in fields if getattr(f, "auto_now", False) or getattr(f, "auto_now_add", False)
        )
        layers = 3 if any(f.related_model is model for f in fields) else 1
        batches = layers * math.ceil(len(rows) / portability.BATCH_SIZE)
        per_insert = connection.ops.bulk_batch_size(fields, rows) or len(rows)
        per_update = connection.ops.bulk_batch_size(fields[:2] * (stamped + 1), rows) or len(rows)
        inserts = batches + math.ceil(len(rows) / min(per_insert, portability.BATCH_SIZE))
        updates = batches + math.ceil(len(rows) / min(per_update, portability.BATCH_SIZE))
        total += inserts + (updates if stamped else 0)
        total += len(model._meta.many_to_many) * batches
    return total


def test_a_chronicle_of_300_players_round_trips_in_batches(capsys: Any) -> None:
    chronicle = _month_of_300_players()
    before = portability.digest(chronicle)

    with counted() as export_statements:
        started = time.perf_counter()
        data = _through_json(portability.export_data(chronicle))
        export_seconds = time.perf_counter() - started
    rows = sum(len(t["rows"]) for t in data["tables"])
    assert len(data["users"]) == 301  # 300 players and the storyteller
    assert Outcome.objects.filter(cycle__chronicle=chronicle).count() > 300
    # One query per table, one per many-to-many field, one for the users, one for the highest
    # ids of every table (max_ids).
    m2m = sum(len(p.model._meta.many_to_many) for p in portability.portables())
    assert export_statements.count <= len(data["tables"]) + m2m + 2

    wipe(chronicle)
    _filler()
    with counted() as import_statements:
        started = time.perf_counter()
        report = portability.import_data(data)
        import_seconds = time.perf_counter() - started

    assert portability.digest(report.chronicle) == before
    assert report.rows == rows
    assert import_statements.count <= _most_statements(data)
    assert import_statements.count < rows / 20, (import_statements.count, rows)
    with capsys.disabled():
        print(
            f"\n[{connection.vendor}] 300 players, {rows} rows: export {export_seconds:.2f} s, "
            f"{export_statements.count} statements; import {import_seconds:.2f} s, "
            f"{import_statements.count} statements"
        )


# --- The commands ------------------------------------------------------------------------------


def test_the_commands_export_import_and_digest(tmp_path: Path) -> None:
    call_command("seed_demo", stdout=io.StringIO())
    out = io.StringIO()
    call_command("chronicle_digest", DEMO_SLUG, stdout=out)
    before = out.getvalue().strip()
    assert len(before) == 64
    path = tmp_path / "demo.json"
    call_command("export_chronicle", DEMO_SLUG, "--output", str(path), stdout=io.StringIO())
    header = json.loads(path.read_text())
    assert (header["format"], header["version"], header["chronicle"]) == (
        "chronicle-export",
        1,
        DEMO_SLUG,
    )
    assert "password" not in path.read_text()

    wipe(Chronicle.objects.get(slug=DEMO_SLUG))
    out = io.StringIO()
    call_command("import_chronicle", str(path), stdout=out)
    assert "Imported" in out.getvalue()
    out = io.StringIO()
    call_command("chronicle_digest", DEMO_SLUG, stdout=out)
    assert out.getvalue().strip() == before


def test_import_refuses_a_chronicle_that_exists(tmp_path: Path) -> None:
    call_command("seed_demo", stdout=io.StringIO())
    path = tmp_path / "demo.json"
    call_command("export_chronicle", DEMO_SLUG, "-o", str(path), stdout=io.StringIO())
    with pytest.raises(CommandError, match="already exists"):
        call_command("import_chronicle", str(path))


@pytest.mark.parametrize(
    ("content", "message"),
    [
        pytest.param('{"format": "chronicle-export", "version": 2}', "version 1", id="version"),
        pytest.param('{"format": "other", "version": 1}', "not a chronicle export", id="format"),
        pytest.param("[1, 2", "not a JSON file", id="json"),
        pytest.param(
            '{"format": "chronicle-export", "version": 1, "chronicle": "x", '
            '"tables": [{"model": "auth.permission", "rows": []}]}',
            "auth.permission",
            id="unknown-table",
        ),
        pytest.param(
            '{"format": "chronicle-export", "version": 1, "chronicle": "x", '
            '"tables": [{"model": "chronicle.chronicle", "rows": [{"key": "k", "fields": '
            '{"slug": "x", "name": "X"}}]}, {"model": "chronicle.game", "rows": [{"key": "g"}]}]}',
            "damaged",
            id="damaged",
        ),
        pytest.param(
            '{"format": "chronicle-export", "version": 1, "chronicle": "x", "tables": '
            '[{"model": "chronicle.chronicle", "rows": [{"key": "k", "fields": {"slug": "y"}}]}]}',
            "exactly the one chronicle",
            id="other-slug",
        ),
        pytest.param(
            '{"format": "chronicle-export", "version": 1, "chronicle": "x", "tables": 5}',
            "damaged",
            id="not-a-list",
        ),
        pytest.param(
            '{"format": "chronicle-export", "version": 1, "chronicle": "x", "tables": '
            '[{"model": "chronicle.chronicle", "rows": [{"key": "k", "fields": '
            '{"slug": "x", "name": "X", "created_at": "yesterday"}}]}]}',
            "damaged",
            id="bad-value",
        ),
    ],
)
def test_import_refuses_what_it_cannot_read(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(CommandError, match=message):
        call_command("import_chronicle", str(path))
    assert not Chronicle.objects.exists()


def test_import_of_a_missing_file_and_digest_of_a_missing_chronicle(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="Cannot read"):
        call_command("import_chronicle", str(tmp_path / "nothing.json"))
    with pytest.raises(CommandError, match="No chronicle"):
        call_command("chronicle_digest", "nowhere")
    with pytest.raises(CommandError, match="No chronicle"):
        call_command("export_chronicle", "nowhere", "-o", str(tmp_path / "x.json"))


# --- Users ---------------------------------------------------------------------------------------


def test_users_are_matched_by_username_and_new_ones_get_no_password(
    world: Any, make_character: Any
) -> None:
    alice = world.users["player_alice"]
    lucien = make_character("Lucien", player="player_alice", st_notes="secret")
    make_character("Marguerite", player="player_bob")
    ledger.xp_entry_add(
        chronicle=world.chronicle,
        player_id=alice.pk,
        character=lucien,
        amount=Decimal("2.5"),
        kind=XpKind.AWARD,
        reason="costume",
        key="award:1",
    )
    before = portability.digest(world.chronicle)
    data = _through_json(portability.export_data(world.chronicle))
    assert all("password" not in user for user in data["users"])
    wipe(world.chronicle)
    world.users["player_bob"].delete()

    report = portability.import_data(data)

    assert report.users_created == ["player_bob"]
    bob = get_user_model().objects.get(username="player_bob")
    assert not bob.has_usable_password()
    alice.refresh_from_db()
    assert alice.check_password("correct-horse-battery-staple")  # reused as she was
    assert XpEntry.objects.get(chronicle=report.chronicle).player == alice
    assert portability.digest(report.chronicle) == before


def test_a_value_unique_across_the_database_that_is_taken_is_named(
    world: Any, make_character: Any
) -> None:
    lucien = make_character("Lucien", player="player_alice")
    Notification.objects.create(
        character=lucien, key="bond-ended:7", subject="s", body="b", created_at=AFTER_DEADLINE
    )
    data = _through_json(portability.export_data(world.chronicle))
    wipe(world.chronicle)
    other = make_character("Other", player="other_storyteller", chronicle=world.other)
    Notification.objects.create(
        character=other, key="bond-ended:7", subject="s", body="b", created_at=AFTER_DEADLINE
    )
    users = get_user_model().objects.count()

    with pytest.raises(portability.PortabilityError, match="bond-ended:7"):
        portability.import_data(data)
    assert not Chronicle.objects.filter(slug=world.chronicle.slug).exists()
    assert get_user_model().objects.count() == users

"""The restore drill (issue 16, README "Backups and restores"): the demo chronicle on PostgreSQL,
backed up with the real pg_dump, restored with the real pg_restore into another fresh database,
is the same there: the same chronicle_digest, the same rows in every table (counted and
hashed), the same id sequences and XP ledger sums, and a clean check_invariants.

Also: a restore refuses a database that holds tables unless forced, a dump never lands over an
existing file, a client older than the server is named with the package to install, and the
SQLite path (make run's database) round-trips with the sqlite3 backup API.
"""

from __future__ import annotations

import dataclasses
import io
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from psycopg import sql

from characters.models import XpEntry
from chronicle import backups
from chronicle.management.commands.seed_demo import DEMO_SLUG


def _drop(database: backups.Database) -> None:
    with database.connect("postgres") as conn:
        conn.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(database.name))
        )


@pytest.fixture
def restored(postgres: None, transactional_db: None) -> Iterator[backups.Database]:
    """A database name beside the test database's, dropped before and after the test."""
    source = backups.Database.from_settings(connection.settings_dict)
    target = dataclasses.replace(source, name=f"{source.name}_drill")
    _drop(target)
    yield target
    _drop(target)


def _tables(conn: psycopg.Connection[Any]) -> dict[str, tuple[int, str]]:
    """Every table's row count and a hash of its rows in a fixed order."""
    names = [
        row[0]
        for row in conn.execute(
            "SELECT quote_ident(schemaname) || '.' || quote_ident(tablename) FROM pg_tables"
            " WHERE schemaname NOT IN ('pg_catalog', 'information_schema') ORDER BY 1"
        )
    ]
    found = {}
    for name in names:
        row = conn.execute(
            sql.SQL(
                "SELECT count(*), md5(coalesce(string_agg(t::text, E'\\n' ORDER BY t::text), ''))"
                " FROM {} t"
            ).format(sql.SQL(name))
        ).fetchone()
        assert row is not None
        found[name] = (int(row[0]), str(row[1]))
    return found


def _sequences(conn: psycopg.Connection[Any]) -> dict[str, Any]:
    return {
        f"{schema}.{name}": value
        for schema, name, value in conn.execute(
            "SELECT schemaname, sequencename, last_value FROM pg_sequences"
        )
    }


def _ledger(conn: psycopg.Connection[Any]) -> list[tuple[Any, ...]]:
    """Each XP ledger's balance (chronicle, player): the sum of its entries."""
    return list(
        conn.execute(
            sql.SQL(
                "SELECT c.slug, u.username, sum(e.amount), count(*) FROM {} e"
                " JOIN {} c ON c.id = e.chronicle_id JOIN {} u ON u.id = e.player_id"
                " GROUP BY 1, 2 ORDER BY 1, 2"
            ).format(
                sql.Identifier(XpEntry._meta.db_table),
                sql.Identifier(XpEntry._meta.get_field("chronicle").related_model._meta.db_table),
                sql.Identifier(XpEntry._meta.get_field("player").related_model._meta.db_table),
            )
        )
    )


@pytest.mark.postgres
def test_restore_drill_of_the_demo_chronicle(restored: backups.Database, tmp_path: Path) -> None:
    call_command("seed_demo", stdout=io.StringIO())
    source = backups.Database.from_settings(connection.settings_dict)
    dump = tmp_path / "drill.dump"

    out = io.StringIO()
    call_command("backup_database", output=str(dump), stdout=out)
    assert dump.read_bytes()[:5] == b"PGDMP"  # pg_dump's custom format
    assert not dump.with_name("drill.dump.partial").exists()

    out = io.StringIO()
    call_command("restore_database", str(dump), to=restored.url(), stdout=out)
    report = out.getvalue()
    assert "(created)" in report
    assert "migrate --check: ok" in report
    assert "check_invariants: ok" in report

    # The same chronicle, by the digest that ignores ids and order ...
    digest = io.StringIO()
    call_command("chronicle_digest", DEMO_SLUG, stdout=digest)
    there = backups.manage(restored, "chronicle_digest", DEMO_SLUG)
    assert there.returncode == 0, there.stderr
    assert there.stdout.strip() == digest.getvalue().strip() != ""

    # ... and the same rows, table by table, the same sequences and the same ledger sums.
    with source.connect() as a, restored.connect() as b:
        tables_a, tables_b = _tables(a), _tables(b)
        assert len(tables_a) > 30
        assert sum(count for count, _ in tables_a.values()) > 200
        assert tables_b == tables_a
        assert _sequences(b) == _sequences(a)
        ledger = _ledger(a)
        assert ledger, "the demo has XP ledgers"
        assert _ledger(b) == ledger

    # A second restore into the now populated database is refused, and changes nothing ...
    with pytest.raises(CommandError, match="not empty"):
        call_command("restore_database", str(dump), to=restored.url(), stdout=io.StringIO())
    # ... unless forced: dropped, created again, the same rows.
    out = io.StringIO()
    call_command(
        "restore_database", str(dump), to=restored.url(), force=True, no_verify=True, stdout=out
    )
    assert "dropped and created again" in out.getvalue()
    with source.connect() as a, restored.connect() as b:
        assert _tables(b) == _tables(a)


def test_a_dump_never_lands_over_a_file(tmp_path: Path) -> None:
    existing = tmp_path / "kept.dump"
    existing.write_bytes(b"yesterday")
    with pytest.raises(CommandError, match="exists already"):
        call_command("backup_database", output=str(existing), stdout=io.StringIO())
    assert existing.read_bytes() == b"yesterday"


@pytest.mark.postgres
def test_a_client_older_than_the_server_is_named(postgres: None, db: None) -> None:
    # The installed pg_dump is real; a server "99" is newer than any of it.
    with pytest.raises(backups.BackupError, match="postgresql-client-99"):
        backups.client_tool("pg_dump", 99)
    with connection.cursor() as cursor:
        cursor.execute("SHOW server_version_num")
        major = int(cursor.fetchone()[0]) // 10000
    assert backups.tool_major(backups.client_tool("pg_dump", major)) >= major


def test_a_backup_is_not_restored_into_another_engine(tmp_path: Path) -> None:
    fake = tmp_path / "x.dump"
    fake.write_bytes(b"PGDMP" + b"\0" * 20)
    target = backups.Database(backups.SQLITE, str(tmp_path / "new.sqlite3"))
    with pytest.raises(backups.BackupError, match="cannot be restored into"):
        backups.restore(fake, target)
    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"hello")
    with pytest.raises(backups.BackupError, match="neither"):
        backups.restore(junk, target)


def test_sqlite_round_trip(tmp_path: Path) -> None:
    """make run's SQLite file: copied with the sqlite3 backup API, restored into a new file,
    refused over a file with tables unless forced."""
    source_path = tmp_path / "chronicle.sqlite3"
    with sqlite3.connect(source_path) as conn:
        conn.execute("CREATE TABLE ledger (player TEXT, amount NUMERIC)")
        conn.executemany("INSERT INTO ledger VALUES (?, ?)", [("alice", 3), ("bob", -1.5)])
    conn.close()
    source = backups.Database(backups.SQLITE, str(source_path))

    dump = backups.backup(source, tmp_path / "backups" / "chronicle-1.sqlite3")
    assert backups.kind_of(dump) == backups.SQLITE
    with pytest.raises(backups.BackupError, match="exists already"):
        backups.backup(source, dump)

    target = backups.Database(backups.SQLITE, str(tmp_path / "restored" / "db.sqlite3"))
    assert backups.restore(dump, target) == "created"
    with sqlite3.connect(target.name) as conn:
        rows = conn.execute("SELECT player, amount FROM ledger ORDER BY player").fetchall()
    conn.close()
    assert rows == [("alice", 3), ("bob", -1.5)]

    with pytest.raises(backups.BackupError, match="not empty"):
        backups.restore(dump, target)
    assert backups.restore(dump, target, force=True) == "replaced"
    assert target.url() == f"sqlite:///{Path(target.name).resolve()}"


@pytest.mark.parametrize(
    "url",
    [
        "postgres://postgres@127.0.0.1:5432/chronicle",
        "postgres://u:p%40ss@%2Fvar%2Frun%2Fpostgresql/db",  # a socket folder, an @ in a password
        "postgres://u@[::1]:5433/db?sslmode=require",
    ],
)
def test_the_child_process_gets_the_same_database(url: str) -> None:
    database = backups.Database.from_url(url)
    assert backups.Database.from_url(database.url()) == database


def test_a_restore_without_a_file_takes_the_newest(tmp_path: Path, settings: Any) -> None:
    settings.VAR_DIR = tmp_path
    with pytest.raises(backups.BackupError, match="No backup"):
        backups.latest_backup()
    folder = tmp_path / "backups"
    folder.mkdir()
    for name in [
        "chronicle-20261201T020000Z.dump",
        "chronicle-20261203T020000Z.sqlite3",
        "chronicle-20261202T020000Z.dump",
    ]:
        (folder / name).write_bytes(b"")
    assert backups.latest_backup().name == "chronicle-20261203T020000Z.sqlite3"
    assert backups.default_path("postgresql").parent == folder

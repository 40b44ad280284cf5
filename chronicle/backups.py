"""Backups and restores of the whole database (README, "Backups and restores").

PostgreSQL: `pg_dump --format=custom` into one file, and `pg_restore` into a fresh database
(created when missing; a database that already holds tables is refused unless forced, and then
dropped and created again, so the result is exactly the dump). SQLite (`make run`): the sqlite3
backup API copies the file consistently even while the server writes to it, and a restore
copies it back into a new file the same way.

A restore is verified in a child process pointed at the restored database (`DATABASE_URL`):
`migrate --check` (every migration of this code is applied there) and `check_invariants`.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import dj_database_url
import psycopg
from django.conf import settings
from django.utils.translation import gettext as _
from psycopg import sql

PGDUMP_MAGIC = b"PGDMP"
SQLITE_MAGIC = b"SQLite format 3\x00"
POSTGRES = "postgresql"
SQLITE = "sqlite"


class BackupError(Exception):
    """A backup or restore that cannot go on; the message says why and what to do."""


@dataclass(frozen=True)
class Database:
    """Where a database is, as pg_dump, pg_restore, psycopg and sqlite3 need it."""

    engine: str  # POSTGRES or SQLITE
    name: str  # the database's name, or the SQLite file's path
    host: str = ""
    port: str = ""
    user: str = ""
    password: str = ""
    sslmode: str = ""

    @classmethod
    def from_settings(cls, conf: Mapping[str, Any]) -> Database:
        engine = str(conf.get("ENGINE", ""))
        if engine.endswith("sqlite3"):
            return cls(SQLITE, str(conf["NAME"]))
        if "postgresql" in engine:
            options = conf.get("OPTIONS") or {}
            return cls(
                POSTGRES,
                str(conf["NAME"]),
                host=str(conf.get("HOST") or ""),
                port=str(conf.get("PORT") or ""),
                user=str(conf.get("USER") or ""),
                password=str(conf.get("PASSWORD") or ""),
                sslmode=str(options.get("sslmode") or ""),
            )
        raise BackupError(
            _("Backups work with PostgreSQL and SQLite, not with %(engine)s.") % {"engine": engine}
        )

    @classmethod
    def from_url(cls, url: str) -> Database:
        try:
            conf = dj_database_url.parse(url)
        except ValueError as exc:
            raise BackupError(
                _("%(url)r is not a database URL: %(error)s") % {"url": url, "error": exc}
            ) from exc
        return cls.from_settings(conf)

    def url(self) -> str:
        """The database as a DATABASE_URL, for the verifying child process."""
        if self.engine == SQLITE:
            return f"sqlite:///{Path(self.name).resolve()}"
        auth = quote(self.user, safe="")
        if self.password:
            auth += ":" + quote(self.password, safe="")
        netloc = f"{auth}@" if auth else ""
        host = self.host or "localhost"
        if host.startswith("/"):  # a Unix socket's folder
            host = quote(host, safe="")
        elif ":" in host:  # IPv6
            host = f"[{host}]"
        netloc += host
        if self.port:
            netloc += f":{self.port}"
        query = f"?sslmode={self.sslmode}" if self.sslmode else ""
        return f"postgres://{netloc}/{quote(self.name, safe='')}{query}"

    def pg_env(self) -> dict[str, str]:
        """The environment for pg_dump and pg_restore: the password never goes on a command
        line, where `ps` would show it."""
        env = dict(os.environ)
        for variable, value in (
            ("PGHOST", self.host),
            ("PGPORT", self.port),
            ("PGUSER", self.user),
            ("PGPASSWORD", self.password),
            ("PGSSLMODE", self.sslmode),
        ):
            if value:
                env[variable] = value
        env["PGDATABASE"] = self.name
        return env

    def connect(self, dbname: str | None = None) -> psycopg.Connection[Any]:
        params: dict[str, Any] = {"dbname": dbname or self.name, "autocommit": True}
        for key, value in (
            ("host", self.host),
            ("port", self.port),
            ("user", self.user),
            ("password", self.password),
            ("sslmode", self.sslmode),
        ):
            if value:
                params[key] = value
        return psycopg.connect(connect_timeout=10, **params)


def default_path(engine: str, now: dt.datetime | None = None) -> Path:
    """var/backups/chronicle-<UTC time>.dump (or .sqlite3 for SQLite)."""
    moment = (now or dt.datetime.now(dt.UTC)).astimezone(dt.UTC)
    suffix = "sqlite3" if engine == SQLITE else "dump"
    return Path(settings.VAR_DIR) / "backups" / f"chronicle-{moment:%Y%m%dT%H%M%SZ}.{suffix}"


def latest_backup() -> Path:
    """The newest file under var/backups/, for a restore that names none."""
    folder = Path(settings.VAR_DIR) / "backups"
    found = sorted(folder.glob("chronicle-*.dump")) + sorted(folder.glob("chronicle-*.sqlite3"))
    if not found:
        raise BackupError(
            _("No backup under %(folder)s: name one (BACKUP=path).") % {"folder": folder}
        )
    return max(found, key=lambda path: path.name.split(".")[0])


def kind_of(path: Path) -> str:
    """POSTGRES for a pg_dump custom-format file, SQLITE for an SQLite database file."""
    try:
        with path.open("rb") as file:
            head = file.read(len(SQLITE_MAGIC))
    except OSError as exc:
        raise BackupError(
            _("Cannot read the backup %(path)s: %(error)s") % {"path": path, "error": exc}
        ) from exc
    if head.startswith(PGDUMP_MAGIC):
        return POSTGRES
    if head == SQLITE_MAGIC:
        return SQLITE
    raise BackupError(
        _("%(path)s is neither a pg_dump custom-format file nor an SQLite database.")
        % {"path": path}
    )


# --- PostgreSQL's client tools ----------------------------------------------------------------


def server_major(conn: psycopg.Connection[Any]) -> int:
    row = conn.execute("SHOW server_version_num").fetchone()
    assert row is not None
    return int(row[0]) // 10000


def tool_major(path: str) -> int:
    out = subprocess.run([path, "--version"], capture_output=True, text=True, check=True).stdout
    match = re.search(r"(\d+)(?:\.\d+)?", out)
    if match is None:
        raise BackupError(
            _("Cannot read the version of %(tool)s: %(out)r") % {"tool": path, "out": out}
        )
    return int(match.group(1))


def client_tool(name: str, major: int) -> str:
    """pg_dump or pg_restore at least as new as the server (an older pg_dump refuses a newer
    server): Debian's versioned folder for the server's version first, then the PATH."""
    candidates = [f"/usr/lib/postgresql/{major}/bin/{name}", shutil.which(name) or ""]
    found = [path for path in candidates if path and os.access(path, os.X_OK)]
    if not found:
        raise BackupError(
            _(
                "%(tool)s is not installed. Install PostgreSQL's client tools, version %(major)s "
                "or newer (Debian: apt-get install postgresql-client-%(major)s)."
            )
            % {"tool": name, "major": major}
        )
    for path in found:
        if tool_major(path) >= major:
            return path
    raise BackupError(
        _(
            "%(tool)s is version %(have)s but the server is PostgreSQL %(major)s: install "
            "postgresql-client-%(major)s (an older %(tool)s refuses a newer server)."
        )
        % {"tool": found[0], "have": tool_major(found[0]), "major": major}
    )


def _run(command: list[str], env: dict[str, str], what: str) -> None:
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise BackupError(
            _("%(what)s failed (exit %(code)s): %(error)s")
            % {"what": what, "code": done.returncode, "error": done.stderr.strip()}
        )


# --- Backup -----------------------------------------------------------------------------------


def backup(database: Database, output: Path) -> Path:
    """Write the whole database to `output` (never over an existing file). The file appears
    under its name only once complete: a dump cut short stays `<name>.partial`."""
    if output.exists():
        raise BackupError(_("%(path)s exists already: name another file.") % {"path": output})
    output.parent.mkdir(parents=True, exist_ok=True)
    partial = output.with_name(output.name + ".partial")
    partial.unlink(missing_ok=True)
    if database.engine == POSTGRES:
        try:
            with database.connect() as conn:
                major = server_major(conn)
        except psycopg.Error as exc:
            raise BackupError(
                _("Cannot connect to PostgreSQL database %(name)s: %(error)s")
                % {"name": database.name, "error": str(exc).strip()}
            ) from exc
        pg_dump = client_tool("pg_dump", major)
        _run(
            [pg_dump, "--format=custom", "--no-password", f"--file={partial}"],
            database.pg_env(),
            "pg_dump",
        )
    else:
        source_path = Path(database.name)
        if not source_path.is_file():
            raise BackupError(_("There is no SQLite file at %(path)s.") % {"path": source_path})
        source = sqlite3.connect(f"{source_path.resolve().as_uri()}?mode=ro", uri=True)
        target = sqlite3.connect(partial)
        try:
            source.backup(target)
        finally:
            target.close()
            source.close()
    partial.replace(output)
    return output


# --- Restore ----------------------------------------------------------------------------------


def _pg_tables(database: Database) -> int:
    with database.connect() as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE c.relkind IN ('r', 'p', 'v', 'm', 'S')"
            " AND n.nspname NOT IN ('pg_catalog', 'information_schema')"
            " AND n.nspname NOT LIKE 'pg_toast%%' AND n.nspname NOT LIKE 'pg_temp%%'"
        ).fetchone()
    assert row is not None
    return int(row[0])


def _maintenance(database: Database) -> psycopg.Connection[Any]:
    """A connection to the server that is not to the database being replaced."""
    errors = []
    for name in ("postgres", "template1"):
        try:
            return database.connect(name)
        except psycopg.Error as exc:
            errors.append(str(exc).strip())
    raise BackupError(
        _("Cannot connect to the PostgreSQL server of %(name)s: %(error)s")
        % {"name": database.name, "error": "; ".join(errors)}
    )


def _fresh_postgres(database: Database, force: bool) -> str:
    """Make sure `database` exists and is empty. Returns what was done, for the report."""
    with _maintenance(database) as conn:
        identifier = sql.Identifier(database.name)
        exists = conn.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", [database.name]
        ).fetchone()
        if not exists:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(identifier))
            return _("created")
        if not _pg_tables(database):
            return _("empty")
        if not force:
            raise BackupError(
                _(
                    "The database %(name)s is not empty: restore into a new database "
                    "(RESTORE_TO=<another name>), or replace it with FORCE=1."
                )
                % {"name": database.name}
            )
        try:
            conn.execute(sql.SQL("DROP DATABASE {}").format(identifier))
        except psycopg.Error as exc:
            raise BackupError(
                _(
                    "Cannot drop %(name)s to replace it (stop the processes using it first): "
                    "%(error)s"
                )
                % {"name": database.name, "error": str(exc).strip()}
            ) from exc
        conn.execute(sql.SQL("CREATE DATABASE {}").format(identifier))
        return _("dropped and created again")


def _fresh_sqlite(database: Database, force: bool) -> str:
    path = Path(database.name)
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        return _("created")
    conn = sqlite3.connect(path)
    try:
        tables = conn.execute("SELECT count(*) FROM sqlite_master WHERE type = 'table'").fetchone()
    finally:
        conn.close()
    if tables and tables[0]:
        if not force:
            raise BackupError(
                _(
                    "The SQLite file %(name)s is not empty: restore into a new file, or "
                    "replace it with FORCE=1."
                )
                % {"name": path}
            )
        path.unlink()
        return _("replaced")
    path.unlink()
    return _("empty")


def restore(source: Path, database: Database, *, force: bool = False) -> str:
    """Restore the backup `source` into `database`, which is created when missing and must be
    empty unless `force`. Returns how the target was prepared."""
    kind = kind_of(source)
    if kind != database.engine:
        raise BackupError(
            _("%(path)s is a %(kind)s backup; it cannot be restored into %(engine)s.")
            % {"path": source, "kind": kind, "engine": database.engine}
        )
    if kind == POSTGRES:
        with _maintenance(database) as conn:
            major = server_major(conn)
        pg_restore = client_tool("pg_restore", major)
        how = _fresh_postgres(database, force)
        _run(
            [
                pg_restore,
                "--no-owner",
                "--no-privileges",
                "--exit-on-error",
                "--single-transaction",
                "--no-password",
                f"--dbname={database.name}",
                str(source),
            ],
            database.pg_env(),
            "pg_restore",
        )
        return how
    how = _fresh_sqlite(database, force)
    backup_file = sqlite3.connect(f"{source.resolve().as_uri()}?mode=ro", uri=True)
    target = sqlite3.connect(database.name)
    try:
        backup_file.backup(target)
    finally:
        target.close()
        backup_file.close()
    return how


# --- Verification -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Check:
    command: str
    ok: bool
    output: str


def manage(database: Database, *args: str) -> subprocess.CompletedProcess[str]:
    """Run `manage.py <args>` in a child process whose DATABASE_URL is `database`."""
    env = dict(os.environ, DATABASE_URL=database.url())
    command = [sys.executable, "-m", "django", *args]
    if getattr(settings, "SETTINGS_MODULE", None):
        command.append(f"--settings={settings.SETTINGS_MODULE}")
    return subprocess.run(
        command, env=env, cwd=settings.BASE_DIR, capture_output=True, text=True, timeout=900
    )


VERIFY_COMMANDS: list[list[str]] = [["migrate", "--check"], ["check_invariants"]]


def verify(database: Database) -> list[Check]:
    """`migrate --check` (no migration of this code is missing there) and `check_invariants`
    against the restored database."""
    checks = []
    for args in VERIFY_COMMANDS:
        done = manage(database, *args)
        output = (done.stdout + done.stderr).strip()
        checks.append(Check(" ".join(args), done.returncode == 0, output))
    return checks

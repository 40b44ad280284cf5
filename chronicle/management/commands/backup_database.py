"""Back up the whole database: `pg_dump --format=custom` for PostgreSQL, the sqlite3 backup API
for SQLite (`make backup`; README, "Backups and restores")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connections
from django.utils.translation import gettext as _

from chronicle import backups


class Command(BaseCommand):
    # A backup must not wait on the app's own checks (URLs, templates): only the database.
    requires_system_checks: list[str] = []
    help = (
        "Back up the database (DATABASE_URL, or --database-url) into "
        "var/backups/chronicle-<UTC time>.dump, or --output."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--output", help="The file to write (it must not exist yet).")
        parser.add_argument(
            "--database-url", help="Back up this database instead of the configured one."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            if options["database_url"]:
                database = backups.Database.from_url(options["database_url"])
            else:
                database = backups.Database.from_settings(connections["default"].settings_dict)
            output = (
                Path(options["output"])
                if options["output"]
                else backups.default_path(database.engine)
            )
            written = backups.backup(database, output)
        except backups.BackupError as exc:
            raise CommandError(str(exc)) from exc
        size = written.stat().st_size
        self.stdout.write(
            _("Backed up %(name)s to %(path)s (%(size)s bytes).")
            % {"name": database.name, "path": written, "size": f"{size:,}"}
        )

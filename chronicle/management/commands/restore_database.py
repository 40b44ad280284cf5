"""Restore a backup into a fresh database, then verify it (`make restore`; README, "Backups and
restores"): `pg_restore` for a pg_dump file, the sqlite3 backup API for an SQLite file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils.translation import gettext as _

from chronicle import backups


class Command(BaseCommand):
    # A backup must not wait on the app's own checks (URLs, templates): only the database.
    requires_system_checks: list[str] = []
    help = (
        "Restore a backup (default: the newest under var/backups/) into the database --to, "
        "created when missing and refused when not empty unless --force; then run "
        "`migrate --check` and `check_invariants` against it."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("backup", nargs="?", help="The backup file.")
        parser.add_argument(
            "--to",
            dest="to",
            required=True,
            help="The database URL to restore into (postgres://…/name or sqlite:///path).",
        )
        parser.add_argument(
            "--force",
            action="store_true",
            help="Replace the target database if it holds tables (it is dropped first).",
        )
        parser.add_argument(
            "--no-verify", action="store_true", help="Skip migrate --check and check_invariants."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            source = Path(options["backup"]) if options["backup"] else backups.latest_backup()
            database = backups.Database.from_url(options["to"])
            how = backups.restore(source, database, force=options["force"])
        except backups.BackupError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(
            _("Restored %(path)s into %(name)s (%(how)s).")
            % {"path": source, "name": database.name, "how": how}
        )
        if options["no_verify"]:
            return
        failed = []
        for check in backups.verify(database):
            verdict = _("ok") if check.ok else _("FAILED")
            self.stdout.write(f"{check.command}: {verdict}")
            if check.output and not check.ok:
                self.stdout.write(check.output)
            if not check.ok and check.command.startswith("migrate"):
                self.stdout.write(
                    _(
                        "Migrations of this code are not applied there: the backup is older "
                        "than the code. Run `manage.py migrate` with DATABASE_URL set to it."
                    )
                )
            if not check.ok:
                failed.append(check.command)
        if failed:
            raise CommandError(
                _("The restored database %(name)s failed: %(checks)s.")
                % {"name": database.name, "checks": ", ".join(failed)}
            )
        self.stdout.write(
            _("The restored database %(name)s is verified.") % {"name": database.name}
        )

"""Load a chronicle export into a database that does not hold that chronicle yet, in one
transaction. Users are matched by username; new ones get no usable password."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils.translation import gettext as _

from chronicle import portability


class Command(BaseCommand):
    help = "Import a chronicle from a file written by export_chronicle."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            report = portability.import_data(portability.read_export(Path(options["file"])))
        except portability.PortabilityError as exc:
            raise CommandError(str(exc)) from exc
        chronicle = report.chronicle
        self.stdout.write(
            _("Imported %(name)r (%(slug)s): %(rows)d rows.")
            % {"name": chronicle.name, "slug": chronicle.slug, "rows": report.rows}
        )
        if report.users_created:
            self.stdout.write(
                _("New users, without a password (they set one through the password reset): %s")
                % ", ".join(report.users_created)
            )

"""Write a chronicle's characters and XP histories as Grapevine 3 XML on standard output.

    python manage.py export_grapevine --chronicle SLUG > FILE.gex

Importing the file into an empty chronicle (import_grapevine) gives the same characters and
ledgers.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from chronicle.models import Chronicle

from ...importers.grapevine_export import export_chronicle


class Command(BaseCommand):
    help = "Write a chronicle's characters and XP histories as Grapevine 3 XML (standard output)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--chronicle", required=True, metavar="SLUG")

    def handle(self, *args: Any, **options: Any) -> None:
        chronicle = Chronicle.objects.filter(slug=options["chronicle"]).first()
        if chronicle is None:
            raise CommandError(f"No chronicle with the slug {options['chronicle']!r}.")
        self.stdout.write(export_chronicle(chronicle), ending="")

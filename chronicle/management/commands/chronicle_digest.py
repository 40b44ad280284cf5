"""Print one sha256 over every row of a chronicle, independent of database ids and row order:
two databases holding the same chronicle print the same digest (see chronicle.portability)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils.translation import gettext as _

from chronicle import portability
from chronicle.models import Chronicle


class Command(BaseCommand):
    help = "Print the digest of a chronicle's rows (every app), independent of ids and order."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug")
        parser.add_argument(
            "--lines", action="store_true", help="Print the hashed lines instead, one per row."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        chronicle = Chronicle.objects.filter(slug=options["slug"]).first()
        if chronicle is None:
            raise CommandError(
                _("No chronicle with the slug %(slug)r.") % {"slug": options["slug"]}
            )
        try:
            if options["lines"]:
                self.stdout.write("\n".join(portability.dump(chronicle)))
            else:
                self.stdout.write(portability.digest(chronicle))
        except portability.PortabilityError as exc:
            raise CommandError(str(exc)) from exc

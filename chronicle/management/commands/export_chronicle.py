"""Write a whole chronicle (members, characters, ledgers, havens, downtimes, the desk,
resolutions and settings) to a versioned JSON file that `import_chronicle` loads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils.translation import gettext as _

from chronicle import portability
from chronicle.models import Chronicle


class Command(BaseCommand):
    help = "Export a chronicle to a JSON file (format chronicle-export, version 1)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug")
        parser.add_argument("--output", "-o", required=True, help="The file to write.")

    def handle(self, *args: Any, **options: Any) -> None:
        chronicle = Chronicle.objects.filter(slug=options["slug"]).first()
        if chronicle is None:
            raise CommandError(
                _("No chronicle with the slug %(slug)r.") % {"slug": options["slug"]}
            )
        path = Path(options["output"])
        try:
            portability.export_to_file(chronicle, path)
        except portability.PortabilityError as exc:
            raise CommandError(str(exc)) from exc
        except OSError as exc:
            raise CommandError(
                _("Cannot write %(path)s: %(error)s") % {"path": path, "error": exc.strerror}
            ) from exc
        self.stdout.write(
            _("Exported %(name)r to %(path)s.") % {"name": chronicle.name, "path": path}
        )

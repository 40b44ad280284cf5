"""`manage.py check_invariants [--chronicle SLUG]`: verify what must hold in the stored data
(issue 16): the ledgers add up, no influence is overspent in a cycle, no released cycle lacks
its ledger entries, no secret reaches beyond its readers. One line per check; exits non-zero
(CommandError) on any mismatch. The checks live in each app's `invariants.py`."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from chronicle.models import Chronicle
from chronicle.services.invariants import check_invariants


class Command(BaseCommand):
    help = "Check the chronicle's invariants (ledgers, influence, releases, secrets)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--chronicle", metavar="SLUG", help="Only this chronicle.")

    def handle(self, *args: Any, **options: Any) -> None:
        chronicles = None
        slug = options.get("chronicle")
        if slug:
            chronicle = Chronicle.objects.filter(slug=slug).first()
            if chronicle is None:
                raise CommandError(f"No chronicle with the slug {slug!r}.")
            chronicles = [chronicle]
        results = check_invariants(chronicles)
        for result in results:
            style = self.style.SUCCESS if result.ok else self.style.ERROR
            self.stdout.write(style(result.line()))
        failed = [result.invariant.name for result in results if not result.ok]
        if failed:
            raise CommandError(f"{len(failed)} invariant(s) broken: {', '.join(failed)}.")

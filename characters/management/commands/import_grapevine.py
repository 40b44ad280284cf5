"""Import Grapevine 3 XML files into a chronicle: every character, its sheet and its XP history.

    python manage.py import_grapevine FILE [FILE ...] --chronicle SLUG [--dry-run] [--json]

Exit status 0 when imported (with --dry-run: when it would import), 2 when a file is refused
(damaged, binary, not Grapevine's); nothing is written then. --json prints one JSON object on
standard output and nothing else there. Values the mapping table lacks (a clan, a sect, a
discipline the house rules do not have) are listed as unmapped and imported as text, unless
--choose says otherwise, e.g. --choose "sect:nihilist=anarch".
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from chronicle.access import STAFF_ROLES
from chronicle.models import Chronicle, Membership, Role

from ...importers import grapevine
from ...services.imports import ImportReport, grapevine_import

REFUSED = 2


class Command(BaseCommand):
    help = "Import Grapevine 3 XML files (characters and XP histories) into a chronicle."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("files", nargs="+", metavar="FILE")
        parser.add_argument("--chronicle", required=True, metavar="SLUG")
        parser.add_argument(
            "--dry-run", action="store_true", help="Say what would be imported; write nothing."
        )
        parser.add_argument(
            "--json", action="store_true", help="Print one JSON object on standard output."
        )
        parser.add_argument(
            "--by",
            metavar="USERNAME",
            help="The storyteller or admin the import is recorded as (default: the first admin).",
        )
        parser.add_argument(
            "--choose",
            action="append",
            default=[],
            metavar="WHAT:VALUE=TARGET",
            help='A choice for an unmapped value, e.g. "sect:nihilist=anarch" or '
            '"discipline:necromancy: ash path=" (empty: keep as text). Repeatable.',
        )

    def handle(self, *args: Any, **options: Any) -> None:
        chronicle = Chronicle.objects.filter(slug=options["chronicle"]).first()
        if chronicle is None:
            raise CommandError(f"No chronicle with the slug {options['chronicle']!r}.")
        by = self._actor(chronicle, options["by"])
        choices = self._choices(options["choose"])
        files: list[tuple[str, bytes]] = []
        for name in options["files"]:
            path = Path(name)
            try:
                files.append((path.name, path.read_bytes()))
            except OSError as exc:
                raise CommandError(f"Cannot read {name}: {exc.strerror or exc}.") from exc
        try:
            report = grapevine_import(
                chronicle=chronicle,
                files=files,
                by=by,
                choices=choices,
                dry_run=options["dry_run"],
            )
        except (ValidationError, PermissionDenied) as exc:
            raise CommandError(" ".join(getattr(exc, "messages", [str(exc)]))) from exc
        if options["json"]:
            self.stdout.write(json.dumps(report.as_json(), ensure_ascii=False, indent=2))
        else:
            self._print(report, dry_run=options["dry_run"])
        if report.refused:
            sys.exit(REFUSED)

    def _actor(self, chronicle: Chronicle, username: str | None) -> User:
        staff = Membership.objects.filter(chronicle=chronicle, role__in=STAFF_ROLES)
        if username:
            membership = staff.filter(user__username=username).select_related("user").first()
            if membership is None:
                raise CommandError(f"{username!r} is not a storyteller or admin of this chronicle.")
            return membership.user
        staff = staff.select_related("user").order_by("pk")
        membership = staff.filter(role=Role.ADMIN).first() or staff.first()
        if membership is None:
            raise CommandError("The chronicle has no storyteller or admin to record the import as.")
        return membership.user

    def _choices(self, given: list[str]) -> dict[str, str]:
        choices: dict[str, str] = {}
        for item in given:
            if "=" not in item or ":" not in item.split("=", 1)[0]:
                raise CommandError(f"--choose {item!r}: write it as WHAT:VALUE=TARGET.")
            left, target = item.rsplit("=", 1)
            what, value = left.split(":", 1)
            what, target = what.strip().lower(), target.strip().lower()
            if what not in grapevine.TARGETS:
                raise CommandError(
                    f"--choose {item!r}: WHAT is one of {', '.join(grapevine.TARGETS)}."
                )
            if target not in grapevine.TARGETS[what]:
                allowed = ", ".join(t or '""' for t in grapevine.TARGETS[what])
                raise CommandError(f"--choose {item!r}: TARGET is one of {allowed}.")
            choices[grapevine.choice_key(what, value)] = target
        return choices

    def _print(self, report: ImportReport, *, dry_run: bool) -> None:
        for error in report.errors:
            self.stderr.write(f"Refused: {error}")
        if report.refused:
            self.stderr.write("Nothing was imported.")
            return
        for line in report.characters:
            data = line.as_json()
            self.stdout.write(
                f"{'Would ' + line.action if dry_run else line.action.title() + 'd'}: "
                f"{data['name']} ({data['kind']}"
                f"{', ' + data['clan'] if data['clan'] else ''}"
                f"{', NPC' if data['npc'] else ''}"
                f"{', player ' + data['player'] if data['player'] else ''}), "
                f"{data['xp_entries']} XP entries, {data['xp_unspent']:g} XP unspent"
            )
            for changed in line.changed_since:
                self.stdout.write(f"  changed in Chronicle since the last import: {changed}")
        for player in report.invitations:
            self.stdout.write(f"Invitation for the player {player.name} (no account yet)")
        for row in report.unmapped():
            self.stdout.write(f"Unmapped {row['what']} {row['value']!r} ({row['where']})")
        for warning in report.all_warnings():
            self.stdout.write(f"Warning: {warning}")
        verb = "Would import" if dry_run else "Imported"
        self.stdout.write(
            f"{verb}: {report.created} created, {report.updated} updated, "
            f"{report.xp_entries} XP entries."
        )

"""Start a chronicle from a shell and invite its first admin, so a fresh deployment needs no
Django admin: `create_chronicle --name … --slug … --timezone … --admin-email …`."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from chronicle.models import Role
from chronicle.moments import moment_text
from chronicle.services import people


class Command(BaseCommand):
    help = "Create a chronicle and print the invitation link of its first admin."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--name", required=True, help="The chronicle's name.")
        parser.add_argument("--slug", required=True, help="Its address: /c/<slug>/.")
        parser.add_argument("--timezone", required=True, help="IANA time zone, e.g. Europe/Rome.")
        parser.add_argument("--admin-email", required=True, help="Who becomes its admin.")
        parser.add_argument("--admin-name", default="", help="The admin's name, for the e-mail.")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            with transaction.atomic():
                chronicle = people.chronicle_start(
                    name=options["name"],
                    slug=options["slug"],
                    timezone_name=options["timezone"],
                    creator=None,
                )
                [(invitation, token)] = people.invitations_create_by_operator(
                    chronicle=chronicle,
                    invitees=[
                        people.Invitee(
                            email=options["admin_email"],
                            name=options["admin_name"],
                            role=Role.ADMIN,
                        )
                    ],
                )
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from exc
        self.stdout.write(
            f"Created the chronicle '{chronicle.name}' at /c/{chronicle.slug}/.\n"
            f"An invitation went to {invitation.email}. Its link (works once, until "
            f"{moment_text(invitation.expires_at, chronicle)}):\n"
            f"{people.invitation_link(token)}"
        )

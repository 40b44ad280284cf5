"""Load the demo chronicle: an admin, two storytellers, six players, three past games with
attendance, and the open downtime cycle of the latest game. Running it again changes nothing."""

from __future__ import annotations

import datetime as dt
import importlib
import importlib.util
from pathlib import Path
from typing import Any

from django.apps import apps
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.mail.backends import filebased
from django.core.management.base import BaseCommand
from django.db import transaction
from django.test.utils import override_settings
from django.utils import timezone

from chronicle import services
from chronicle.models import Chronicle, Game, Role
from chronicle.services import account

DEMO_SLUG = "elysium-nights"
# Demo accounts only: printed by `make run`, never for a real deployment.
DEMO_PASSWORD = "nightfall-demo-2026"
DEMO_USERS: list[tuple[str, str]] = [
    ("admin", Role.ADMIN),
    ("st_lucia", Role.STORYTELLER),
    ("st_marcus", Role.STORYTELLER),
    ("alice", Role.PLAYER),
    ("bob", Role.PLAYER),
    ("carmen", Role.PLAYER),
    ("dmitri", Role.PLAYER),
    ("esme", Role.PLAYER),
    ("felix", Role.PLAYER),
]


def _shown(path: Path) -> str:
    """The folder as a reader finds it: relative to the working directory when inside it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def _last_saturday(today: dt.date) -> dt.date:
    """The most recent Saturday strictly before today: the demo's latest game, whose downtime
    (second Tuesday after it) is therefore still open."""
    days_back = (today.weekday() - 5) % 7 or 7
    return today - dt.timedelta(days=days_back)


class DemoMailBackend(filebased.EmailBackend):
    """The demo's e-mails (receipts, notices) go to files under var/mail/ while it is seeded,
    never to the terminal or a mail server; the command counts them for its one line."""

    sent = 0

    def send_messages(self, email_messages: Any) -> int:
        count = super().send_messages(email_messages)
        DemoMailBackend.sent += count
        return count


class Command(BaseCommand):
    help = "Create the demo chronicle (idempotent) and print its logins."

    def handle(self, *args: Any, **options: Any) -> None:
        mail_dir = Path(settings.VAR_DIR) / "mail"
        DemoMailBackend.sent = 0
        # Mails leave after commit (transaction.on_commit), so the override spans the commit.
        with (
            override_settings(
                EMAIL_BACKEND=f"{__name__}.DemoMailBackend", EMAIL_FILE_PATH=str(mail_dir)
            ),
            transaction.atomic(),
        ):
            chronicle, created = self._seed()
        self.stdout.write(
            ("Created" if created else "Found") + f" the demo chronicle '{chronicle.name}'."
        )
        if DemoMailBackend.sent:
            self.stdout.write(
                f"{DemoMailBackend.sent} demo e-mails were written to {_shown(mail_dir)}/ "
                "(not sent)."
            )
        # The logins last, so they are what `make run` shows just before the server starts.
        self.stdout.write(f"Demo logins (password {DEMO_PASSWORD}):")
        for username, role in DEMO_USERS:
            self.stdout.write(f"  {username:<10} {role}")

    def _seed(self) -> tuple[Chronicle, bool]:
        User = get_user_model()
        chronicle = Chronicle.objects.filter(slug=DEMO_SLUG).first()
        created = chronicle is None
        if chronicle is None:
            chronicle = services.chronicle_create(
                name="Elysium Nights Theater", slug=DEMO_SLUG, timezone_name="America/New_York"
            )
        users: dict[str, Any] = {}
        for number, (username, role) in enumerate(DEMO_USERS):
            user = User.objects.filter(username=username).first()
            if user is None:
                user = User.objects.create_user(
                    username=username,
                    email=f"{username}@example.com",
                    password=DEMO_PASSWORD,
                )
                # GEN-01: the demo's people are adults who gave their date of birth, so the
                # admin's People page shows ages and logging in asks nothing.
                account.birth_date_record(
                    user=user,
                    birth_date=dt.date(1980 + 2 * number, 1 + number, 3 + number),
                    now=timezone.now(),
                )
            elif (user.is_staff or user.is_superuser) and user.check_password(DEMO_PASSWORD):
                # Demos seeded before issue 16 made their admin a Django superuser, who could
                # read every chronicle's secrets through /admin/ with the printed password: a
                # chronicle admin only now (an operator's own account keeps its own password).
                User.objects.filter(pk=user.pk).update(is_staff=False, is_superuser=False)
            services.membership_add(chronicle=chronicle, user=user, role=role)
            users[username] = user

        if not Game.objects.filter(chronicle=chronicle).exists():
            self._games(chronicle, users)
        # Each app above this one seeds its own part (its `demo.seed`), so this ground-floor
        # app names none of them. What they tell is not printed: the logins are the point.
        for config in apps.get_app_configs():
            if config.name != "chronicle" and importlib.util.find_spec(f"{config.name}.demo"):
                importlib.import_module(f"{config.name}.demo").seed(
                    chronicle=chronicle, users=users, stdout=None
                )
        return chronicle, created

    def _games(self, chronicle: Chronicle, users: dict[str, Any]) -> None:
        now = timezone.now()
        latest = _last_saturday(services.chronicle_today(chronicle, now))
        players = [
            u
            for name, u in users.items()
            if name in {"alice", "bob", "carmen", "dmitri", "esme", "felix"}
        ]
        storyteller = users["st_lucia"]
        for index, weeks_before in enumerate((8, 4, 0), start=1):
            game = services.game_create(
                chronicle=chronicle,
                date=latest - dt.timedelta(weeks=weeks_before),
                start_time=dt.time(19, 30),
                place="The Old Theater, back room",
                notes="Demo game.",
            )
            # Everyone but one player each time; one forgot the waiver at the second game.
            lines = []
            for i, player in enumerate(players):
                attended = (i + index) % len(players) != 0
                waiver = attended and not (index == 2 and i == 1)
                lines.append(services.SignIn(player.pk, attended, waiver))
            services.attendance_record(game=game, lines=lines, by=storyteller, now=now)
        # The older games' deadlines have passed: close them as the deadline task would.
        services.cycles_close_due(now=now)

# GEN-03 / GEN-04: decisions by two thirds (proposals and their secret ballots), and the
# mail kind that tells voters a vote opened and everyone concerned its result (issue 14).

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("chronicle", "0008_house_rule_changes"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AlterField(
            model_name="maillog",
            name="kind",
            field=models.CharField(
                choices=[
                    ("receipt", "Downtime receipts"),
                    ("reminder", "Downtime reminders"),
                    ("results", "Downtime results"),
                    ("character", "Character approval"),
                    ("purchase", "XP purchases"),
                    ("bond", "Blood bonds"),
                    ("torpor", "Torpor and captivity"),
                    ("blood", "Stored blood"),
                    ("diablerie", "Diablerie"),
                    ("alarm", "Haven alarms"),
                    ("renewal", "Requests for a new invitation"),
                    ("decision", "Votes on decisions"),
                    ("other", "Other notices"),
                    ("invitation", "Invitations"),
                    ("account", "E-mail address confirmations"),
                    ("password_reset", "Password resets"),
                    ("digest", "Daily digest"),
                ],
                max_length=32,
            ),
        ),
        migrations.AlterField(
            model_name="mailpreference",
            name="kind",
            field=models.CharField(
                choices=[
                    ("receipt", "Downtime receipts"),
                    ("reminder", "Downtime reminders"),
                    ("results", "Downtime results"),
                    ("character", "Character approval"),
                    ("purchase", "XP purchases"),
                    ("bond", "Blood bonds"),
                    ("torpor", "Torpor and captivity"),
                    ("blood", "Stored blood"),
                    ("diablerie", "Diablerie"),
                    ("alarm", "Haven alarms"),
                    ("renewal", "Requests for a new invitation"),
                    ("decision", "Votes on decisions"),
                    ("other", "Other notices"),
                    ("invitation", "Invitations"),
                    ("account", "E-mail address confirmations"),
                    ("password_reset", "Password resets"),
                    ("digest", "Daily digest"),
                ],
                max_length=32,
            ),
        ),
        migrations.AlterField(
            model_name="message",
            name="kind",
            field=models.CharField(
                choices=[
                    ("receipt", "Downtime receipts"),
                    ("reminder", "Downtime reminders"),
                    ("results", "Downtime results"),
                    ("character", "Character approval"),
                    ("purchase", "XP purchases"),
                    ("bond", "Blood bonds"),
                    ("torpor", "Torpor and captivity"),
                    ("blood", "Stored blood"),
                    ("diablerie", "Diablerie"),
                    ("alarm", "Haven alarms"),
                    ("renewal", "Requests for a new invitation"),
                    ("decision", "Votes on decisions"),
                    ("other", "Other notices"),
                    ("invitation", "Invitations"),
                    ("account", "E-mail address confirmations"),
                    ("password_reset", "Password resets"),
                    ("digest", "Daily digest"),
                ],
                max_length=32,
            ),
        ),
        migrations.CreateModel(
            name="Proposal",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "body",
                    models.CharField(
                        choices=[("storytellers", "Storytellers"), ("players", "Players")],
                        max_length=16,
                    ),
                ),
                (
                    "kind",
                    models.CharField(
                        choices=[
                            ("add_storyteller", "Make a member a storyteller"),
                            ("remove_storyteller", "Remove a storyteller"),
                            ("remove_player", "Remove a player"),
                            ("setting_now", "Correct a house-rule setting now"),
                            ("other", "Another storytellers' decision"),
                        ],
                        max_length=24,
                    ),
                ),
                ("setting_name", models.CharField(blank=True, max_length=64)),
                ("setting_value", models.JSONField(blank=True, null=True)),
                ("text", models.TextField(blank=True)),
                ("opened_at", models.DateTimeField()),
                ("closes_at", models.DateTimeField()),
                (
                    "status",
                    models.CharField(
                        choices=[("open", "Open"), ("passed", "Passed"), ("failed", "Failed")],
                        default="open",
                        max_length=16,
                    ),
                ),
                ("closed_at", models.DateTimeField(blank=True, null=True)),
                ("yes_count", models.PositiveIntegerField(blank=True, null=True)),
                ("no_count", models.PositiveIntegerField(blank=True, null=True)),
                ("eligible_count", models.PositiveIntegerField(blank=True, null=True)),
                (
                    "effect",
                    models.CharField(
                        blank=True,
                        choices=[
                            ("", "No effect"),
                            ("applied", "Applied"),
                            ("not_applied", "Could not be applied"),
                        ],
                        default="",
                        max_length=16,
                    ),
                ),
                ("effect_note", models.TextField(blank=True)),
                ("applied_at", models.DateTimeField(blank=True, null=True)),
                (
                    "chronicle",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="proposals",
                        to="chronicle.chronicle",
                    ),
                ),
                (
                    "proposed_by",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "target",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "ordering": ["chronicle", "-opened_at", "-pk"],
            },
        ),
        migrations.CreateModel(
            name="Ballot",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("yes", models.BooleanField()),
                ("cast_at", models.DateTimeField()),
                ("counted", models.BooleanField(blank=True, null=True)),
                (
                    "voter",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "proposal",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="ballots",
                        to="chronicle.proposal",
                    ),
                ),
            ],
            options={
                "ordering": ["proposal", "cast_at", "pk"],
            },
        ),
        migrations.AddIndex(
            model_name="proposal",
            index=models.Index(
                condition=models.Q(("status", "open")),
                fields=["closes_at"],
                name="proposal_open_due",
            ),
        ),
        migrations.AddConstraint(
            model_name="proposal",
            constraint=models.CheckConstraint(
                condition=models.Q(("body__in", ["storytellers", "players"])),
                name="proposal_body_known",
            ),
        ),
        migrations.AddConstraint(
            model_name="proposal",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    (
                        "kind__in",
                        [
                            "add_storyteller",
                            "remove_storyteller",
                            "remove_player",
                            "setting_now",
                            "other",
                        ],
                    )
                ),
                name="proposal_kind_known",
            ),
        ),
        migrations.AddConstraint(
            model_name="proposal",
            constraint=models.CheckConstraint(
                condition=models.Q(("status__in", ["open", "passed", "failed"])),
                name="proposal_status_known",
            ),
        ),
        migrations.AddConstraint(
            model_name="proposal",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    models.Q(("body", "players"), _negated=True),
                    ("kind__in", ["remove_storyteller", "remove_player"]),
                    _connector="OR",
                ),
                name="proposal_players_remove_only",
            ),
        ),
        migrations.AddConstraint(
            model_name="proposal",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("status", "open"),
                    models.Q(
                        ("closed_at__isnull", False),
                        ("eligible_count__isnull", False),
                        ("no_count__isnull", False),
                        ("yes_count__isnull", False),
                    ),
                    _connector="OR",
                ),
                name="proposal_closed_has_tally",
            ),
        ),
        migrations.AddConstraint(
            model_name="ballot",
            constraint=models.UniqueConstraint(
                fields=("proposal", "voter"), name="ballot_once_per_voter"
            ),
        ),
    ]

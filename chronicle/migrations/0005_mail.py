# The inbox, mail preferences and the mail log (issue 17).

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("chronicle", "0004_calendar_feed"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="MailLog",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("address", models.EmailField(blank=True, max_length=254)),
                (
                    "kind",
                    models.CharField(
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
                            ("other", "Other notices"),
                            ("invitation", "Invitations"),
                            ("account", "E-mail address confirmations"),
                            ("password_reset", "Password resets"),
                            ("digest", "Daily digest"),
                        ],
                        max_length=32,
                    ),
                ),
                ("key", models.CharField(blank=True, max_length=160, null=True, unique=True)),
                ("subject", models.CharField(max_length=200)),
                ("body", models.TextField(blank=True)),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("queued", "Queued"),
                            ("sent", "Sent"),
                            ("failed", "Failed"),
                            ("skipped", "Skipped"),
                        ],
                        max_length=16,
                    ),
                ),
                ("reason", models.TextField(blank=True)),
                ("attempts", models.PositiveSmallIntegerField(default=0)),
                ("next_attempt_at", models.DateTimeField(blank=True, null=True)),
                ("created_at", models.DateTimeField()),
                ("sent_at", models.DateTimeField(blank=True, null=True)),
                (
                    "chronicle",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="mail_log",
                        to="chronicle.chronicle",
                    ),
                ),
                (
                    "recipient",
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
                "ordering": ["-created_at", "-pk"],
            },
        ),
        migrations.CreateModel(
            name="MailPreference",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "kind",
                    models.CharField(
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
                            ("other", "Other notices"),
                            ("invitation", "Invitations"),
                            ("account", "E-mail address confirmations"),
                            ("password_reset", "Password resets"),
                            ("digest", "Daily digest"),
                        ],
                        max_length=32,
                    ),
                ),
                (
                    "choice",
                    models.CharField(
                        choices=[
                            ("immediate", "E-mail at once"),
                            ("digest", "Daily digest"),
                            ("inbox", "Inbox only"),
                        ],
                        default="immediate",
                        max_length=16,
                    ),
                ),
                (
                    "user",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="mail_preferences",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
        ),
        migrations.CreateModel(
            name="Message",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "kind",
                    models.CharField(
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
                            ("other", "Other notices"),
                            ("invitation", "Invitations"),
                            ("account", "E-mail address confirmations"),
                            ("password_reset", "Password resets"),
                            ("digest", "Daily digest"),
                        ],
                        max_length=32,
                    ),
                ),
                ("key", models.CharField(max_length=160, unique=True)),
                ("subject", models.CharField(max_length=200)),
                ("body", models.TextField()),
                (
                    "delivery",
                    models.CharField(
                        choices=[
                            ("immediate", "E-mail at once"),
                            ("digest", "Daily digest"),
                            ("inbox", "Inbox only"),
                        ],
                        max_length=16,
                    ),
                ),
                ("created_at", models.DateTimeField()),
                ("read_at", models.DateTimeField(blank=True, null=True)),
                (
                    "chronicle",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="chronicle.chronicle",
                    ),
                ),
                (
                    "digest",
                    models.ForeignKey(
                        blank=True,
                        help_text="The daily digest that carried this message.",
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="digest_messages",
                        to="chronicle.maillog",
                    ),
                ),
                (
                    "recipient",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="inbox_messages",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "ordering": ["-created_at", "-pk"],
            },
        ),
        migrations.AddIndex(
            model_name="maillog",
            index=models.Index(fields=["chronicle", "-created_at"], name="mail_log_by_chronicle"),
        ),
        migrations.AddIndex(
            model_name="maillog",
            index=models.Index(
                condition=models.Q(("status__in", ["queued", "failed"])),
                fields=["next_attempt_at"],
                name="mail_log_owed",
            ),
        ),
        migrations.AddConstraint(
            model_name="maillog",
            constraint=models.CheckConstraint(
                condition=models.Q(("status__in", ["queued", "sent", "failed", "skipped"])),
                name="mail_log_status_known",
            ),
        ),
        migrations.AddConstraint(
            model_name="mailpreference",
            constraint=models.UniqueConstraint(
                fields=("user", "kind"), name="one_mail_preference_per_kind"
            ),
        ),
        migrations.AddConstraint(
            model_name="mailpreference",
            constraint=models.CheckConstraint(
                condition=models.Q(("choice__in", ["immediate", "digest", "inbox"])),
                name="mail_preference_choice_known",
            ),
        ),
        migrations.AddIndex(
            model_name="message",
            index=models.Index(fields=["recipient", "-created_at"], name="message_inbox"),
        ),
        migrations.AddIndex(
            model_name="message",
            index=models.Index(
                condition=models.Q(("read_at__isnull", True)),
                fields=["recipient"],
                name="message_unread",
            ),
        ),
        migrations.AddIndex(
            model_name="message",
            index=models.Index(
                condition=models.Q(("delivery", "digest"), ("digest__isnull", True)),
                fields=["recipient", "created_at"],
                name="message_digest_owed",
            ),
        ),
    ]

# GEN-05: rule changes take effect a game later (issue 14). The schedule the services read
# (denormalised onto the chronicle, so reading the settings in force costs no query) and the
# record of every published change.

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

import chronicle.models


class Migration(migrations.Migration):
    dependencies = [
        ("chronicle", "0007_profile_birth_date"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="chronicle",
            name="house_rule_schedule",
            field=models.JSONField(
                blank=True,
                default=list,
                validators=[chronicle.models.validate_house_rule_schedule],
            ),
        ),
        migrations.CreateModel(
            name="HouseRuleChange",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("name", models.CharField(max_length=80)),
                ("value", models.JSONField(blank=True, null=True)),
                ("to_default", models.BooleanField(default=False)),
                ("published_game", models.PositiveIntegerField(blank=True, null=True)),
                ("effective_game", models.PositiveIntegerField(blank=True, null=True)),
                ("at", models.DateTimeField()),
                ("reason", models.CharField(blank=True, max_length=200)),
                (
                    "by",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "chronicle",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="house_rule_changes",
                        to="chronicle.chronicle",
                    ),
                ),
            ],
            options={
                "ordering": ["chronicle", "-at", "-pk"],
                "indexes": [
                    models.Index(fields=["chronicle", "-at"], name="house_rule_change_by_time")
                ],
            },
        ),
    ]

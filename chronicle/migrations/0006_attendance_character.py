# Issue 14: the sign-in sheet records which character each player played (HAV-06 counts the
# character's games away) and a storyteller's permission to enter with black veins (XP-04).
# Older rows keep no character; havens' forsaking says how they count.
import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("chronicle", "0005_mail"),
        ("characters", "0004_grapevine_import"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="attendance",
            name="character",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="attendances",
                to="characters.character",
            ),
        ),
        migrations.AddField(
            model_name="attendance",
            name="black_veins_permitted_by",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AddConstraint(
            model_name="attendance",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("black_veins_permitted_by__isnull", True),
                    ("character__isnull", False),
                    _connector="OR",
                ),
                name="attend_veins_permit_names_character",
            ),
        ),
    ]

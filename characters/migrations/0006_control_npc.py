# CTL-02: when and why a character became an NPC because its control fell below 1. XP-04's
# permission to enter with black veins is per game, on the sign-in line (chronicle 0006), so the
# character's old flag, never read, goes.
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("characters", "0005_rebuild"),
        ("chronicle", "0006_attendance_character"),
    ]

    operations = [
        migrations.AddField(
            model_name="character",
            name="npc_since",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="character",
            name="npc_reason",
            field=models.CharField(blank=True, max_length=300),
        ),
        migrations.RemoveField(model_name="character", name="black_veins_permitted"),
    ]

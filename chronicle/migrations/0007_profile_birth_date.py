# GEN-01: a person's date of birth, and when they were asked for it (issue 14).
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("chronicle", "0006_attendance_character"),
    ]

    operations = [
        migrations.AddField(
            model_name="profile",
            name="birth_date",
            field=models.DateField(blank=True, null=True, verbose_name="date of birth"),
        ),
        migrations.AddField(
            model_name="profile",
            name="birth_date_asked_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
    ]

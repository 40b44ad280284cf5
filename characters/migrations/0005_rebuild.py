# XP-07 / CRE-04: a returning or embraced character is reopened as a draft and rebuilt; the
# count of rebuilds and the XP spent before the last one (XP-07a, no double XP-06 credit).
from decimal import Decimal

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("characters", "0004_grapevine_import"),
    ]

    operations = [
        migrations.AddField(
            model_name="character",
            name="rebuilds",
            field=models.PositiveSmallIntegerField(default=0),
        ),
        migrations.AddField(
            model_name="character",
            name="xp_spent_before_rebuild",
            field=models.DecimalField(decimal_places=1, default=Decimal("0"), max_digits=7),
        ),
    ]

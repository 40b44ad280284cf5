# Placeholder in the migration chain, filled by the calendar feed's work.
from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("chronicle", "0003_profile")]

    operations: list[migrations.operations.base.Operation] = []

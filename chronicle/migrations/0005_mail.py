# Placeholder in the migration chain, filled by the inbox and mail log's work.
from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("chronicle", "0004_calendar_feed")]

    operations: list[migrations.operations.base.Operation] = []

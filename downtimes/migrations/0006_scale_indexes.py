# Issue 15: the desk's list pages through a cycle's items in their order (created, then id).
# Without this index the database joins and sorts every item of the cycle to show 50; with it,
# it reads the first rows of the cycle in order and stops.
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("downtimes", "0005_run_tally")]

    operations = [
        migrations.AddIndex(
            model_name="deskitem",
            index=models.Index(fields=["cycle", "created_at", "id"], name="desk_item_queue_order"),
        ),
    ]

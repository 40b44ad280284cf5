# Issue 15: the vote awards counted once per resolution run and stored with it; the indexes
# through which a notifications chunk reads only its own players' outcomes.
from django.db import migrations, models

READERS_GIN = "outcome_readers_gin"


def readers_gin(apps, schema_editor):
    # jsonb_path_ops: the smaller GIN operator class, enough for `readers @> '[id]'`. No fast
    # update: a resolution writes thousands of outcomes at once, and with the pending list on,
    # every lookup scanned all of them (measured: 2.3 s instead of 22 ms for 500 lookups at
    # 10,000 players). SQLite has no GIN index; its small chronicles scan the lists.
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(
            f"CREATE INDEX IF NOT EXISTS {READERS_GIN} ON downtimes_outcome "
            "USING gin (readers jsonb_path_ops) WITH (fastupdate = off)"
        )


def readers_gin_drop(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"DROP INDEX IF EXISTS {READERS_GIN}")


class Migration(migrations.Migration):
    dependencies = [("downtimes", "0004_translatable_texts")]

    operations: list[migrations.operations.base.Operation] = [
        migrations.AddField(
            model_name="resolutionrun",
            name="tally",
            field=models.JSONField(blank=True, default=None, null=True),
        ),
        migrations.AddIndex(
            model_name="outcome",
            index=models.Index(fields=["cycle", "player"], name="outcome_cycle_player"),
        ),
        migrations.RunPython(readers_gin, readers_gin_drop, elidable=False),
    ]

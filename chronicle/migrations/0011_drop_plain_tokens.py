"""API tokens moved to django-rest-knox (hashed, expiring). DRF's old `authtoken_token` table held
every key in plain text and nothing reads it any more: drop it rather than leave readable keys in
the database and in every backup. Clients log in once for a new token."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("chronicle", "0010_history")]

    operations = [
        migrations.RunSQL("DROP TABLE IF EXISTS authtoken_token", migrations.RunSQL.noop),
    ]

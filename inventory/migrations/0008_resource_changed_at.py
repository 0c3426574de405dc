# When a Resource's stored content last changed, apart from last_seen (bumped by unchanged events).

import django.utils.timezone
from django.db import migrations, models
from django.db.models import F


def from_last_seen(apps, schema_editor):  # type: ignore[no-untyped-def]
    """The best date known for rows stored before: their last_seen (what dated lags until now)."""
    apps.get_model("inventory", "Resource").objects.update(changed_at=F("last_seen"))


class Migration(migrations.Migration):

    dependencies = [
        ('inventory', '0007_watch_lost_at'),
    ]

    operations = [
        migrations.AddField(
            model_name='resource',
            name='changed_at',
            field=models.DateTimeField(default=django.utils.timezone.now),
        ),
        migrations.RunPython(from_last_seen, migrations.RunPython.noop),
    ]

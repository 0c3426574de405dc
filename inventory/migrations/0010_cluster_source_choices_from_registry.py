# Cluster.source's choices come from the registered sources (inventory.sources), read when
# used: the stored values stay as they were.

import inventory.models
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('inventory', '0009_cluster_policy_reports'),
    ]

    operations = [
        migrations.AlterField(
            model_name='cluster',
            name='source',
            field=models.CharField(choices=inventory.models.source_choices, max_length=16),
        ),
    ]

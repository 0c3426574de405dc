"""Grants to groups: a Django group's name stays as it is, an OIDC group's gets the `oidc:` prefix
(access.models.OIDC_GROUP_PREFIX). Before, one name matched both. An existing grant whose name is
a Django group's stays that group's; any other was for an OIDC group and is renamed."""

from django.db import migrations, models

PREFIX = "oidc:"


def split_group_namespaces(apps, schema_editor):
    Grant = apps.get_model("access", "Grant")
    Group = apps.get_model("auth", "Group")
    django_groups = set(Group.objects.values_list("name", flat=True))
    for grant in Grant.objects.filter(user__isnull=True).exclude(group__startswith=PREFIX):
        if grant.group not in django_groups:
            Grant.objects.filter(pk=grant.pk).update(group=PREFIX + grant.group)


def join_group_namespaces(apps, schema_editor):
    Grant = apps.get_model("access", "Grant")
    for grant in Grant.objects.filter(user__isnull=True, group__startswith=PREFIX):
        Grant.objects.filter(pk=grant.pk).update(group=grant.group.removeprefix(PREFIX))


class Migration(migrations.Migration):
    dependencies = [
        ("access", "0003_identity_groups_read_at"),
        ("auth", "0012_alter_user_first_name_max_length"),
    ]

    operations = [
        migrations.AlterField(
            model_name="grant",
            name="group",
            field=models.CharField(
                blank=True, help_text="A Django group's name, or oidc:NAME for a group of the OIDC token.", max_length=253
            ),
        ),
        migrations.RunPython(split_group_namespaces, join_group_namespaces),
    ]

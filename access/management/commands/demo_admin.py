"""`make run`'s demo administrator: a superuser `admin` whose password is DEMO_ADMIN_PASSWORD
(devrun chooses a random one at every start and prints it). Refuses with DEBUG off."""

from __future__ import annotations

import os
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

DEMO_ADMIN = "admin"


class Command(BaseCommand):
    help = "Create or reset make run's demo superuser `admin` with the password in DEMO_ADMIN_PASSWORD (DEBUG only)."

    def handle(self, *args: Any, **options: Any) -> None:
        password = os.environ.get("DEMO_ADMIN_PASSWORD", "")
        if not settings.DEBUG:
            raise CommandError("demo_admin is for make run's local copy (DEBUG on) only")
        if len(password) < 12:
            raise CommandError("set DEMO_ADMIN_PASSWORD (at least 12 characters)")
        users = get_user_model().objects
        user = users.filter(username=DEMO_ADMIN).first() or users.create_user(DEMO_ADMIN)
        user.is_staff = user.is_superuser = True
        user.set_password(password)
        user.save()
        self.stdout.write(f"demo administrator {DEMO_ADMIN} ready")

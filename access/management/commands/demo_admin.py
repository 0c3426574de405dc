"""`make run`'s demo administrator: a superuser `admin` with a new random password at every
start, and what the local copy has on. Refuses with DEBUG off. `make run` hands the password in
(DEMO_ADMIN_PASSWORD) and shows it in its start-up box; run by hand, the command prints it."""

from __future__ import annotations

import os
import secrets
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

DEMO_ADMIN = "admin"


class Command(BaseCommand):
    help = "Create or reset make run's demo superuser `admin` with a new random password (DEBUG only)."

    def handle(self, *args: Any, **options: Any) -> None:
        if not settings.DEBUG:
            raise CommandError("demo_admin is for make run's local copy (DEBUG on) only")
        given = os.environ.get("DEMO_ADMIN_PASSWORD", "")
        password = given or secrets.token_urlsafe(12)
        users = get_user_model().objects
        user = users.filter(username=DEMO_ADMIN).first() or users.create_user(DEMO_ADMIN)
        user.is_staff = user.is_superuser = True
        user.set_password(password)
        user.save()
        reads = "on" if settings.API_ANONYMOUS_READ else "off"
        self.stdout.write(
            f"DEBUG is on and anonymous reads are {reads}: this copy listens on 127.0.0.1 only "
            "(a shared deployment runs with both off)."
        )
        if not given:
            base = f"http://127.0.0.1:{os.environ.get('PORT', '8000')}"
            self.stdout.write(f"Sign in at {base}/accounts/login/ as {DEMO_ADMIN} with the password {password}")

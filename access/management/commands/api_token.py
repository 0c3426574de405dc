from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from access.models import ApiToken
from access.tokens import TokenLifetimeInvalid, api_token_create


class Command(BaseCommand):
    help = "Make an API token for a user (the key is printed once), list tokens, or revoke one."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username", nargs="?", help="make a token for this user")
        parser.add_argument("--name", default="command line", help="what the token is for")
        parser.add_argument("--days", type=int, help="lifetime in days (default OME_API_TOKEN_DAYS)")
        parser.add_argument("--list", action="store_true", help="list every token (never a key)")
        parser.add_argument("--revoke", type=int, metavar="ID", help="revoke (delete) the token with this id")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["list"]:
            for token in ApiToken.objects.select_related("user"):
                used = f"last used {token.last_used_at:%Y-%m-%d %H:%M}" if token.last_used_at else "never used"
                self.stdout.write(f"{token.pk} {token} expires {token.expires_at:%Y-%m-%d %H:%M}, {used}")
        elif options["revoke"] is not None:
            deleted, _ = ApiToken.objects.filter(pk=options["revoke"]).delete()
            if not deleted:
                raise CommandError(f"no token with id {options['revoke']}")
            self.stdout.write(f"token {options['revoke']} revoked")
        elif options["username"]:
            user = get_user_model().objects.filter(username=options["username"]).first()
            if user is None:
                raise CommandError(f"no user named {options['username']!r}")
            try:
                token, key = api_token_create(user, name=options["name"], days=options["days"])
            except TokenLifetimeInvalid as error:
                raise CommandError(error.message) from None
            self.stdout.write(f"Generated token {key} for user {user} (expires {token.expires_at:%Y-%m-%d %H:%M} UTC)")
        else:
            raise CommandError("name a user, or --list, or --revoke ID")

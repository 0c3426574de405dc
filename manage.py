#!/usr/bin/env python
"""Django's command-line utility for administrative tasks."""

from __future__ import annotations

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ome_dashboard.settings")
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line

    # Django reads --settings and --pythonpath before it loads the settings, so they are loaded
    # inside it, not before; a missing or bad setting is then one line naming it, not a traceback.
    try:
        execute_from_command_line(sys.argv)
    except ImproperlyConfigured as error:
        sys.exit(f"manage.py: {error}")


if __name__ == "__main__":
    main()

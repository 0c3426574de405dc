"""WSGI entry point (gunicorn ome_dashboard.wsgi)."""

from __future__ import annotations

import gc
import os
import sys

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ome_dashboard.settings")

application = get_wsgi_application()

# In a gunicorn worker, what start-up loaded lives as long as the worker: frozen out of the
# collector's sight, a full collection during a request walks only what requests made
# (docs/performance.md, "Pages"). Not in a process that only imports this module (a test, a tool).
if "gunicorn.arbiter" in sys.modules:
    gc.collect()
    gc.freeze()

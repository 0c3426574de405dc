"""Settings for the OME Compat dashboard (DJANGO_SETTINGS_MODULE=ome_dashboard.settings).

Two parts: ome_dashboard.settings.knobs reads every setting an operator may change from the
environment (each variable documented once, in docs/configuration.md), and this module wires
Django, DRF, Celery and the libraries with them. The defaults are safe ones: DEBUG off and
anonymous reads off, so SECRET_KEY and ALLOWED_HOSTS must be set or startup fails; `make run`
turns both on for its loopback-only demo. Tests change values with pytest-django's ``settings``
fixture, not with a second module.
"""

from __future__ import annotations

from typing import Any

from ome_dashboard.settings.knobs import *  # noqa: F403 (every knob is a setting)
from ome_dashboard.settings.knobs import (
    BASE_DIR,
    CACHE_ENTRIES,
    CACHES,
    DATABASES,
    DEBUG,
    LOG_FORMAT,
    LOG_LEVEL,
    MATRIX_AUDIT_INTERVAL,
    MATRIX_CATCH_UP_INTERVAL,
    OIDC_ENABLED,
    OME_ARGOCD_HUB,
    OME_ARGOCD_INTERVAL,
    OME_RESYNC_INTERVAL,
    OME_WATCH_LEASE,
    REDIS_URL,
    REQUEST_MAX_BYTES,
    THROTTLE_RATES,
    WEBHOOK_RETRY_INTERVAL,
)

SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = CSRF_COOKIE_SAMESITE = "Lax"
# Probes and Prometheus speak plain HTTP to the pod (ome_dashboard.ops.middleware answers them first anyway).
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$", r"^metrics$"]
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
DATA_UPLOAD_MAX_MEMORY_SIZE = REQUEST_MAX_BYTES

INSTALLED_APPS = [
    # Before staticfiles, so runserver serves static files through whitenoise as production does.
    "whitenoise.runserver_nostatic",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_htmx",
    # SimpleAppConfig leaves TEMPLATES alone; the default config would rewrite the loaders at
    # startup. The partials loader is configured explicitly below instead.
    "template_partials.apps.SimpleAppConfig",
    "axes",
    # The project's apps, from the bottom layer up (docs/architecture.md; `lint-imports` checks it).
    "access",
    "inventory",
    "matrix",
    "lint",
    "isvcs",
    "whatif",
    "fleet",
    "patches",
    "policies",
    "reports",
    "web",
]

MIDDLEWARE = [
    # First: answers /healthz, /readyz and /metrics before the host check and the HTTPS redirect,
    # since kubelet and Prometheus call the pod by its IP over plain HTTP.
    "ome_dashboard.ops.middleware.ProbeMiddleware",
    # Then: a body larger than REQUEST_MAX_BYTES is refused (413) before anything reads it.
    "ome_dashboard.ops.middleware.RequestSizeLimitMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # Compresses pages and API answers (static files come compressed from whitenoise). BREACH:
    # Django's GZipMiddleware pads each answer with random bytes (Heal The Breach) and the CSRF
    # token is masked anew in every page, so a secret cannot be read from compressed sizes.
    "django.middleware.gzip.GZipMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # Says in a header when an API token acts without its OIDC user's groups (access.tokens).
    "access.tokens.TokenGroupsNoticeMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "csp.middleware.CSPMiddleware",
    # Last, as django-axes asks: refuses sign-ins from a locked-out username/address.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "ome_dashboard.urls"
WSGI_APPLICATION = "ome_dashboard.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "access.context_processors.access",
            ],
            # "page.html#row" renders only the partial named "row" (django-template-partials).
            "loaders": [
                (
                    "template_partials.loader.Loader",
                    [
                        (
                            "django.template.loaders.cached.Loader",
                            [
                                "django.template.loaders.filesystem.Loader",
                                "django.template.loaders.app_directories.Loader",
                            ],
                        )
                    ],
                )
            ],
            "builtins": ["template_partials.templatetags.partials"],
        },
    },
]

# The web server and the worker write to the same file. IMMEDIATE transactions plus a busy
# timeout make a concurrent writer wait instead of failing with "database is locked".
SQLITE_OPTIONS: dict[str, Any] = {
    "transaction_mode": "IMMEDIATE",
    "timeout": 20,
    "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    DATABASES["default"].setdefault("OPTIONS", {}).update(SQLITE_OPTIONS)
# With health checks a persistent connection that died meanwhile (the database restarted) is
# replaced at the start of the next request instead of failing it.
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        # Hashed, compressed files need `collectstatic`; local runs serve straight from the finders.
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage"
            if DEBUG
            else "whitenoise.storage.CompressedManifestStaticFilesStorage"
        ),
    },
}
WHITENOISE_USE_FINDERS = WHITENOISE_AUTOREFRESH = DEBUG

REST_FRAMEWORK = {
    # Token first: a request without credentials then gets 401 with a WWW-Authenticate header.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "access.tokens.ApiTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["core.permissions.HasPermissionOrReadOnly"],
    "DEFAULT_PARSER_CLASSES": [
        "core.parsers.JSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_FILTER_BACKENDS": [
        "django_filters.rest_framework.DjangoFilterBackend",
        "rest_framework.filters.OrderingFilter",
    ],
    "DEFAULT_PAGINATION_CLASS": "core.api.Pagination",
    "PAGE_SIZE": 50,
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "core.api.exception_handler",
    # Views that parse big input or stream a whole matrix name a `throttle_scope`; the counts
    # live in CACHES.
    "DEFAULT_THROTTLE_CLASSES": ["rest_framework.throttling.ScopedRateThrottle"],
    "DEFAULT_THROTTLE_RATES": THROTTLE_RATES,
}

SPECTACULAR_SETTINGS = {
    "TITLE": "OME Compat API",
    "DESCRIPTION": (
        "Which OME serving runtime serves which model, and why. Matrix responses name the OME "
        "behaviour their verdicts follow (`X-OME-Behaviour` header; `ome` and `build` in JSON). "
        "Errors are `{detail, code, field}`. Reads are open while API_ANONYMOUS_READ is on; "
        "writes need a Django permission (token or session authentication)."
    ),
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    # Swagger UI and ReDoc from drf-spectacular-sidecar's static files: no CDN, works offline.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Several lists have a `status`, and some choice sets share field names ("kind", "severity"):
    # name each choice set once.
    "ENUM_NAME_OVERRIDES": {
        "CellStatusEnum": "matrix.models.CellStatus",
        "BuildStatusEnum": "matrix.models.MatrixBuild.Status",
        "KindEnum": "inventory.models.Kind",
        "SeverityEnum": "lint.rules.SEVERITIES",
        "ErrorOrWarningEnum": "core.schema.ERROR_OR_WARNING",
        "AssertionKindEnum": "web.api.policies_responses.ASSERTION_KINDS",
    },
}

# ---- Celery (docs/operations.md, "Queues") ---------------------------------------------------
CELERY_BROKER_URL = CELERY_RESULT_BACKEND = REDIS_URL
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# A worker whose broker is away waits for it, however long: exiting would take `make up` down.
CELERY_BROKER_CONNECTION_MAX_RETRIES = None
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_SERIALIZER = CELERY_RESULT_SERIALIZER = "json"
CELERY_RESULT_EXPIRES = 60 * 60 * 24
# Nothing reads a task's result (runs are recorded in the database: SyncState, MatrixBuild).
# Ignoring results also keeps every process that enqueues off the result backend's pub/sub
# connection, whose reconnect budget, once spent during a long Redis outage, left the process
# failing "Retry limit exceeded ... The Celery application must be restarted".
CELERY_TASK_IGNORE_RESULT = True
CELERY_TIMEZONE = TIME_ZONE
CELERY_TASK_TIME_LIMIT = 10 * 60
CELERY_TASK_SOFT_TIME_LIMIT = 9 * 60
# Django's LOGGING (plain or JSON lines) formats the workers' logs too.
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
# Celery 6's default: a task acknowledged late is cancelled (and redelivered) when the broker
# connection is lost, instead of running on with a result that can no longer be acknowledged.
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = True
# While Redis is down, enqueueing fails within about a second instead of blocking the web request
# that enqueues for 20 s (the result backend's default: 20 reconnects, 1 s apart). A host that
# does not answer at all fails after the connect timeout.
CELERY_RESULT_BACKEND_TRANSPORT_OPTIONS = {
    "retry_policy": {"max_retries": 3, "interval_start": 0, "interval_step": 0.2, "interval_max": 0.5}
}
CELERY_REDIS_SOCKET_CONNECT_TIMEOUT = 5
CELERY_BROKER_TRANSPORT_OPTIONS = {"socket_connect_timeout": 5}
# Each queue has its own worker, so none starves another: `watch` (watch tasks only hand a watch
# to the worker's hub), `control` (short supervision, never behind a burst), `matrix` (builds,
# updates and what follows them; a burst delays only these), `celery` (resyncs, the rest).
CELERY_TASK_DEFAULT_QUEUE = "celery"
CELERY_TASK_QUEUES = {name: {"routing_key": name} for name in ("celery", "control", "matrix", "watch")}
CELERY_TASK_ROUTES = {
    "inventory.tasks.watch_cluster": {"queue": "watch"},
    "inventory.tasks.ensure_watches": {"queue": "control"},
    "inventory.tasks.resync_all": {"queue": "control"},
    "inventory.tasks.argocd_discover": {"queue": "control"},
    "inventory.tasks.cluster_connection_test": {"queue": "control"},
    "matrix.matrix_catch_up_all": {"queue": "control"},
    "matrix.matrix_audit_all": {"queue": "control"},
    "matrix.*": {"queue": "matrix"},
    "policies.policies_evaluate": {"queue": "matrix"},
    "reports.*": {"queue": "matrix"},
    "lint.*": {"queue": "matrix"},
    "policies.*": {"queue": "control"},
}
# A worker takes one task at a time per slot, so a long matrix build never holds short ones back.
CELERY_WORKER_PREFETCH_MULTIPLIER = 1


def every(seconds: float, task: str) -> dict[str, Any]:
    """A beat entry running `task` every `seconds`; a run not started before the next one is due
    expires, so that a slow worker does not pile up duplicates."""
    return {"task": task, "schedule": seconds, "options": {"expires": seconds * 0.9}}


CELERY_BEAT_SCHEDULE: dict[str, dict[str, Any]] = {
    "inventory.resync_all": every(OME_RESYNC_INTERVAL, "inventory.tasks.resync_all"),
    "inventory.ensure_watches": every(OME_WATCH_LEASE / 2, "inventory.tasks.ensure_watches"),
    "matrix.matrix_catch_up_all": every(MATRIX_CATCH_UP_INTERVAL, "matrix.matrix_catch_up_all"),
    "matrix.matrix_audit_all": every(MATRIX_AUDIT_INTERVAL, "matrix.matrix_audit_all"),
    "policies.webhooks_retry_due": every(WEBHOOK_RETRY_INTERVAL, "policies.webhooks_retry_due"),
}
if OME_ARGOCD_HUB:
    CELERY_BEAT_SCHEDULE["inventory.argocd_discover"] = every(OME_ARGOCD_INTERVAL, "inventory.tasks.argocd_discover")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    # Both formatters blank out bearer tokens, passwords in URLs and the like (ome_dashboard.ops.logs).
    "formatters": {
        "plain": {
            "()": "ome_dashboard.ops.logs.RedactingFormatter",
            "format": "%(asctime)s %(levelname)s %(name)s: %(message)s",
        },
        "json": {"()": "ome_dashboard.ops.logs.JsonFormatter"},
    },
    "handlers": {
        "stdout": {"class": "logging.StreamHandler", "stream": "ext://sys.stdout", "formatter": LOG_FORMAT},
    },
    "root": {"handlers": ["stdout"], "level": LOG_LEVEL},
    # Django's default "django" handlers would print every record a second time under DEBUG.
    # axes.apps logs an "AXES: BEGIN version ..." banner at INFO in every process that starts.
    "loggers": {
        "django": {"handlers": [], "level": LOG_LEVEL, "propagate": True},
        "axes.apps": {"level": "WARNING"},
    },
}

if CACHES["default"]["BACKEND"].endswith("LocMemCache"):
    CACHES["default"].setdefault("OPTIONS", {}).setdefault("MAX_ENTRIES", CACHE_ENTRIES["django_cache"])

# ---- identity, access and hardening (access app; docs/operations.md, "Access") --------------
AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend", "django.contrib.auth.backends.ModelBackend"]
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
LOGIN_REDIRECT_URL = LOGOUT_REDIRECT_URL = "/"

if OIDC_ENABLED:
    INSTALLED_APPS.append("mozilla_django_oidc")
    AUTHENTICATION_BACKENDS.append("access.oidc.OidcBackend")
    MIDDLEWARE.insert(
        MIDDLEWARE.index("django.contrib.auth.middleware.AuthenticationMiddleware") + 1, "access.oidc.FreshOidcSession"
    )

# Content-Security-Policy (django-csp): scripts, styles, images and requests from the dashboard
# itself only; no inline script or style, no framing, forms post back to the dashboard.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "font-src": ["'self'"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'none'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    }
}

"""Settings for the OME Compat dashboard: one module, every deployment knob from the environment.

The defaults are safe ones: DEBUG off and anonymous reads off, so SECRET_KEY and ALLOWED_HOSTS
must be set or startup fails. `make run` (ome_dashboard.devrun) turns DEBUG and anonymous reads
on for its loopback-only demo and says so; SQLite next to manage.py and Redis on localhost are
the defaults of the stores. Values missing from the environment are then read from ENV_FILE
(default `.env` next to manage.py, git-ignored), which `make run` writes while it runs, so that
`manage.py` commands beside it use the same settings and Redis.
Tests change values with pytest-django's ``settings`` fixture, not with a second module.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import environ
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()
# The environment wins over the file; ENV_FILE= (empty) reads no file.
ENV_FILE: str = env.str("ENV_FILE", default=str(BASE_DIR / ".env"))
if ENV_FILE and Path(ENV_FILE).is_file():
    environ.Env.read_env(ENV_FILE)


def _required(name: str, value: Any) -> Any:
    # django-environ only complains when a variable is absent; an empty value is just as wrong.
    if not value:
        raise ImproperlyConfigured(
            f"Set the {name} environment variable (required when DEBUG is off; DEBUG=true is for a local copy, "
            "and `make run` writes .env with it for the commands run beside it)."
        )
    return value


DEBUG: bool = env.bool("DEBUG", default=False)

if DEBUG:
    SECRET_KEY: str = env.str("SECRET_KEY", default="django-insecure-local-development-only")
    ALLOWED_HOSTS: list[str] = env.list("ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]"])
else:
    SECRET_KEY = _required("SECRET_KEY", env.str("SECRET_KEY", default=""))
    ALLOWED_HOSTS = _required("ALLOWED_HOSTS", env.list("ALLOWED_HOSTS", default=[]))

CSRF_TRUSTED_ORIGINS: list[str] = env.list("CSRF_TRUSTED_ORIGINS", default=[])

# ---- HTTPS and browser security headers (docs/operations.md, "Security settings") ------------
# Cookies go over HTTPS only once DEBUG is off (browsers still accept them on http://localhost).
# SECURE_COOKIES=false serves a deployment reached over plain HTTP, e.g. through a port-forward.
SECURE_COOKIES: bool = env.bool("SECURE_COOKIES", default=not DEBUG)
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = SECURE_COOKIES
SESSION_COOKIE_HTTPONLY = True
# A sign-in lasts a working day (Django's default is two weeks); OIDC sign-ins are renewed far
# more often (OIDC_RENEW_ID_TOKEN_EXPIRY_SECONDS).
SESSION_COOKIE_AGE: int = env.int("SESSION_MAX_AGE_SECONDS", default=8 * 3600)
SESSION_COOKIE_SAMESITE = CSRF_COOKIE_SAMESITE = "Lax"
# Behind a TLS-terminating proxy: SECURE_PROXY_SSL_HEADER=X-Forwarded-Proto,https (only when the
# proxy always sets or strips that header, or clients could claim HTTPS), SECURE_SSL_REDIRECT,
# and HSTS once HTTPS works for good (browsers remember it for SECURE_HSTS_SECONDS).
_proxy_ssl_header: list[str] = env.list("SECURE_PROXY_SSL_HEADER", default=[])
if _proxy_ssl_header:
    if len(_proxy_ssl_header) != 2:
        raise ImproperlyConfigured("SECURE_PROXY_SSL_HEADER must be HEADER,VALUE, e.g. X-Forwarded-Proto,https")
    _header = _proxy_ssl_header[0].strip().upper().replace("-", "_")
    SECURE_PROXY_SSL_HEADER = (
        _header if _header.startswith("HTTP_") else f"HTTP_{_header}",
        _proxy_ssl_header[1].strip(),
    )
SECURE_SSL_REDIRECT: bool = env.bool("SECURE_SSL_REDIRECT", default=False)
# Probes and Prometheus speak plain HTTP to the pod (ome_dashboard.ops.middleware answers them first anyway).
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$", r"^metrics$"]
SECURE_HSTS_SECONDS: int = env.int("SECURE_HSTS_SECONDS", default=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS: bool = env.bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=False)
SECURE_HSTS_PRELOAD: bool = env.bool("SECURE_HSTS_PRELOAD", default=False)
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY: str = env.str("SECURE_REFERRER_POLICY", default="same-origin")
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
# The largest request body accepted (413 above it); uploads and what-if manifests are smaller.
REQUEST_MAX_BYTES: int = env.int("REQUEST_MAX_BYTES", default=4 * 1024 * 1024)
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

DATABASES = {"default": env.db("DATABASE_URL", default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}")}
# The web server and the worker write to the same file. IMMEDIATE transactions plus a busy
# timeout make a concurrent writer wait instead of failing with "database is locked".
SQLITE_OPTIONS: dict[str, Any] = {
    "transaction_mode": "IMMEDIATE",
    "timeout": 20,
    "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    DATABASES["default"].setdefault("OPTIONS", {}).update(SQLITE_OPTIONS)
# Persistent connections (seconds; 0 closes each at the end of its request or task). With
# health checks a connection that died meanwhile (the database restarted) is replaced at the
# start of the next request instead of failing it.
DATABASES["default"]["CONN_MAX_AGE"] = env.int("CONN_MAX_AGE", default=DATABASES["default"].get("CONN_MAX_AGE", 0))
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
STATIC_ROOT = env.path("STATIC_ROOT", default=BASE_DIR / "staticfiles")
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
WHITENOISE_USE_FINDERS = DEBUG
WHITENOISE_AUTOREFRESH = DEBUG

# While on, anonymous users read every cluster (pages and API), as `make run`'s loopback-only
# demo does. Off by default: every read needs a session or a token, and shows what the user's
# roles allow (access.scope). Writes always need a login and a role (or Django permission).
API_ANONYMOUS_READ: bool = env.bool("API_ANONYMOUS_READ", default=False)

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
    # live in CACHES (CACHE_URL below).
    "DEFAULT_THROTTLE_CLASSES": ["rest_framework.throttling.ScopedRateThrottle"],
    "DEFAULT_THROTTLE_RATES": {
        "whatif": env.str("THROTTLE_WHATIF", default="30/min"),
        "patch-preview": env.str("THROTTLE_PATCH_PREVIEW", default="60/min"),
        "model-index": env.str("THROTTLE_MODEL_INDEX", default="30/min"),
        "export": env.str("THROTTLE_EXPORT", default="20/min"),
        # CI checks of manifests (and policies) over the API: each endpoint its own scope.
        "whatif-check": env.str("THROTTLE_WHATIF_CHECK", default="30/min"),
        "policy-check": env.str("THROTTLE_POLICY_CHECK", default="30/min"),
    },
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
    # Several lists have a `status`; name each choice set once.
    "ENUM_NAME_OVERRIDES": {
        "CellStatusEnum": "matrix.models.CellStatus",
        "BuildStatusEnum": "matrix.models.MatrixBuild.Status",
        # Choice sets whose field names ("kind", "severity") other sets share.
        "KindEnum": "inventory.models.Kind",
        "SeverityEnum": "lint.rules.SEVERITIES",
        "ErrorOrWarningEnum": "core.schema.ERROR_OR_WARNING",
        "AssertionKindEnum": "web.api.policies_responses.ASSERTION_KINDS",
    },
}

REDIS_URL: str = env.str("REDIS_URL", default="redis://127.0.0.1:6379/0")

CELERY_BROKER_URL = REDIS_URL
CELERY_RESULT_BACKEND = REDIS_URL
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# A worker whose broker is away waits for it, however long: exiting would take `make up` down.
CELERY_BROKER_CONNECTION_MAX_RETRIES = None
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
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
# Apps add their periodic tasks here, each with options={"expires": ...} a little under its
# interval so a slow worker does not pile up duplicate runs.
CELERY_BEAT_SCHEDULE: dict[str, dict[str, Any]] = {}

# The clusters to mirror, registered by `manage.py register_clusters` (see inventory.services):
# `NAME=manifests:PATH[,PATH]`, `NAME=kubeconfig:PATH[#CONTEXT]` or `NAME=in-cluster`, separated
# by `;`. The default is the bundled demo: OME's catalog runtimes plus the demo folder.
OME_CLUSTERS: str = env.str("OME_CLUSTERS", default="demo=manifests:catalog/runtimes,demo")
# The clusters of OME_CLUSTERS that write their findings into themselves as PolicyReports
# (docs/reports.md), by name. Empty: registering leaves each cluster's choice (admin) as it is.
OME_POLICY_REPORTS: list[str] = env.list("OME_POLICY_REPORTS", default=[])
# How often celery beat resyncs every cluster fully (seconds); watches apply changes between.
OME_RESYNC_INTERVAL: int = env.int("OME_RESYNC_INTERVAL", default=300)
# The namespace of OME's control plane in every live cluster: its controller Deployment's
# image tag tells which OME runs there (inventory.ome_release).
OME_NAMESPACE: str = env.str("OME_NAMESPACE", default="ome")
# Watches (inventory.tasks.watch_cluster hands them to the watch hub of a worker on the `watch`
# queue, inventory.live.hub): all of a worker's watches share one event loop and
# OME_WATCH_DB_THREADS database threads (and connections); a worker holds at most
# OME_WATCH_HUB_CAPACITY watches (five per live cluster). A watch holds a lease of
# OME_WATCH_LEASE seconds, renewed while it runs, so only one runs per cluster and kind. After an
# error a watch reconnects with capped, jittered exponential backoff.
OME_WATCH_DB_THREADS: int = env.int("OME_WATCH_DB_THREADS", default=4)
OME_WATCH_HUB_CAPACITY: int = env.int("OME_WATCH_HUB_CAPACITY", default=1000)
OME_WATCH_LEASE: int = env.int("OME_WATCH_LEASE", default=60)
# A worker's PostgreSQL transaction left idle this long (seconds) is ended by the server, and
# its row locks with it (core.db.bound_idle_transactions): a frozen worker holds a cluster's
# lock no longer than about one lease. 0: no bound.
OME_DB_IDLE_TRANSACTION_TIMEOUT: float = env.float("OME_DB_IDLE_TRANSACTION_TIMEOUT", default=OME_WATCH_LEASE)
OME_WATCH_BACKOFF_BASE: float = env.float("OME_WATCH_BACKOFF_BASE", default=0.5)
OME_WATCH_BACKOFF_MAX: float = env.float("OME_WATCH_BACKOFF_MAX", default=30.0)

# The manifest folders an administrator may register as a cluster on the add-cluster page
# (inventory.registration), relative to the project folder or absolute, separated by commas.
OME_MANIFEST_FOLDERS: list[str] = env.list("OME_MANIFEST_FOLDERS", default=["catalog/runtimes", "demo"])
# Clusters registered in Argo CD (inventory.argocd): the hub cluster whose cluster Secrets of
# OME_ARGOCD_NAMESPACE are read (`in-cluster` or `kubeconfig:PATH[#CONTEXT]`; empty: off), every
# OME_ARGOCD_INTERVAL seconds; clusters appear, change and disappear as the Secrets do. A
# Secret's exec credentials may run only the commands of OME_ARGOCD_EXEC_COMMANDS (not `aws`,
# whose arguments could copy the kubeconfigs anywhere: awsAuthConfig runs `aws eks get-token`).
OME_ARGOCD_HUB: str = env.str("OME_ARGOCD_HUB", default="")
OME_ARGOCD_NAMESPACE: str = env.str("OME_ARGOCD_NAMESPACE", default="argocd")
OME_ARGOCD_INTERVAL: int = env.int("OME_ARGOCD_INTERVAL", default=60)
OME_ARGOCD_EXEC_COMMANDS: list[str] = env.list(
    "OME_ARGOCD_EXEC_COMMANDS", default=["argocd-k8s-auth", "gke-gcloud-auth-plugin", "kubelogin"]
)
# The dashboard's own variables an exec plugin still gets (besides PATH and HOME): its workload
# identity, set by its operator. Every other variable (DATABASE_URL, secrets) is withheld.
OME_ARGOCD_EXEC_INHERIT: list[str] = env.list(
    "OME_ARGOCD_EXEC_INHERIT",
    default=[
        "AZURE_CLIENT_ID",
        "AZURE_TENANT_ID",
        "AZURE_FEDERATED_TOKEN_FILE",
        "AZURE_AUTHORITY_HOST",
        "AWS_ROLE_ARN",
        "AWS_WEB_IDENTITY_TOKEN_FILE",
        "AWS_REGION",
        "AWS_DEFAULT_REGION",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "HTTPS_PROXY",
        "NO_PROXY",
    ],
)
# How long the add-cluster page waits for the worker that runs its connection test.
OME_CONNECTION_TEST_TIMEOUT: int = env.int("OME_CONNECTION_TEST_TIMEOUT", default=30)
if OME_ARGOCD_HUB:
    CELERY_BEAT_SCHEDULE["inventory.argocd_discover"] = {
        "task": "inventory.tasks.argocd_discover",
        "schedule": OME_ARGOCD_INTERVAL,
        "options": {"expires": OME_ARGOCD_INTERVAL * 0.9},
    }

CELERY_BEAT_SCHEDULE["inventory.resync_all"] = {
    "task": "inventory.tasks.resync_all",
    "schedule": OME_RESYNC_INTERVAL,
    "options": {"expires": OME_RESYNC_INTERVAL * 0.9},
}
CELERY_BEAT_SCHEDULE["inventory.ensure_watches"] = {
    "task": "inventory.tasks.ensure_watches",
    "schedule": OME_WATCH_LEASE / 2,
    "options": {"expires": OME_WATCH_LEASE / 2 * 0.9},
}
# ---- queues (docs/operations.md, "Queues"): each has its own worker, so none starves another --
# `watch`: watch tasks, which only hand a watch to the worker's hub (`--pool threads
# --concurrency 2` holds the watches of hundreds of clusters). `control`: short supervision tasks (ensure_watches, the
# matrix catch-up and audit, resync scheduling), never behind a burst. `matrix`: builds,
# updates and what follows them (policies, lint proofs); a burst delays only these. `celery` (the default): resyncs and everything else.
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
# A worker of the `matrix` queue alone lowers its CPU priority by this much (os.nice; 0: not at
# all), so that on a busy machine the watch worker and the web come first (docs/performance.md).
OME_MATRIX_WORKER_NICENESS: int = env.int("OME_MATRIX_WORKER_NICENESS", default=10)

# Models per chunk of a full matrix rebuild; each chunk is one Celery task.
MATRIX_CHUNK_MODELS: int = env.int("MATRIX_CHUNK_MODELS", default=2000)
# Recompute the touched rows of the matrix whenever the inventory changes.
MATRIX_UPDATE_ON_CHANGE: bool = env.bool("MATRIX_UPDATE_ON_CHANGE", default=True)
# How often beat levels every matrix with its inventory (an update lost to a broker outage or a
# killed worker) and fails builds abandoned by a dead worker (seconds).
MATRIX_CATCH_UP_INTERVAL: int = env.int("MATRIX_CATCH_UP_INTERVAL", default=60)
# A matrix behind its inventory for longer than this (seconds) is stale, not lagging
# (matrix.freshness): its update was lost and even the catch-up has not repaired it.
MATRIX_LAG_STALE_AFTER: int = env.int("MATRIX_LAG_STALE_AFTER", default=2 * MATRIX_CATCH_UP_INTERVAL)
CELERY_BEAT_SCHEDULE["matrix.matrix_catch_up_all"] = {
    "task": "matrix.matrix_catch_up_all",
    "schedule": MATRIX_CATCH_UP_INTERVAL,
    "options": {"expires": MATRIX_CATCH_UP_INTERVAL * 0.9},
}
# Inventory changes within this many seconds become one matrix update per cluster.
MATRIX_UPDATE_DELAY: float = env.float("MATRIX_UPDATE_DELAY", default=0.5)
# A build still running after this many seconds was abandoned by its worker: it is failed and
# the rebuild queued again.
MATRIX_BUILD_ABANDON_AFTER: int = env.int("MATRIX_BUILD_ABANDON_AFTER", default=300)
# How often beat audits every matrix: it recomputes up to MATRIX_AUDIT_SAMPLE models (every model
# of a smaller cluster), repairs any row that differs and records it (ome_matrix_audit_*).
MATRIX_AUDIT_INTERVAL: int = env.int("MATRIX_AUDIT_INTERVAL", default=600)
MATRIX_AUDIT_SAMPLE: int = env.int("MATRIX_AUDIT_SAMPLE", default=500)
CELERY_BEAT_SCHEDULE["matrix.matrix_audit_all"] = {
    "task": "matrix.matrix_audit_all",
    "schedule": MATRIX_AUDIT_INTERVAL,
    "options": {"expires": MATRIX_AUDIT_INTERVAL * 0.9},
}
# After every matrix update, a task on the matrix queue proves the cluster's lint fixes with the
# what-if (lint.proving); the lint page shows fixes only once proven. A proving task queued this
# many seconds ago and not started (lost with the broker or a worker) no longer holds back a new one.
LINT_PROVE_ON_UPDATE: bool = env.bool("LINT_PROVE_ON_UPDATE", default=True)
LINT_PROOFS_REQUEUE_AFTER: int = env.int("LINT_PROOFS_REQUEUE_AFTER", default=300)
# How often pages poll the matrix version, so that a sync or a patch shows up by itself (seconds).
MATRIX_POLL_SECONDS: float = env.float("MATRIX_POLL_SECONDS", default=3.0)

# Policies and alerts (docs/policies.md). POLICY_FILES: RuntimePolicy files or folders that
# `manage.py load_policies` (run by `make run`/`make up` after migrate) stores, comma-separated.
# Every matrix update queues an evaluation of its cluster unless POLICY_EVALUATE_ON_UPDATE is off.
POLICY_FILES: list[str] = env.list("POLICY_FILES", default=[])
POLICY_EVALUATE_ON_UPDATE: bool = env.bool("POLICY_EVALUATE_ON_UPDATE", default=True)
# Webhooks: signing keys are files of WEBHOOK_SECRET_DIR (a mounted Secret), named by each
# receiver; a POST waits WEBHOOK_TIMEOUT seconds; a failed one is tried again after
# WEBHOOK_RETRY_BASE * 2^(attempt-1) seconds, WEBHOOK_MAX_ATTEMPTS times in all. Beat queues
# due deliveries every WEBHOOK_RETRY_INTERVAL seconds (a task lost with a worker or the broker).
WEBHOOK_SECRET_DIR = env.path("WEBHOOK_SECRET_DIR", default=BASE_DIR / "webhook-secrets")
WEBHOOK_TIMEOUT: float = env.float("WEBHOOK_TIMEOUT", default=5.0)
WEBHOOK_RETRY_BASE: float = env.float("WEBHOOK_RETRY_BASE", default=10.0)
WEBHOOK_MAX_ATTEMPTS: int = env.int("WEBHOOK_MAX_ATTEMPTS", default=8)
WEBHOOK_RETRY_INTERVAL: int = env.int("WEBHOOK_RETRY_INTERVAL", default=60)
# Webhooks reach public addresses only (policies.egress), never loopback, private, link-local or
# metadata ones, and follow no redirect; an administrator may allow networks here (CIDRs, e.g.
# an in-cluster receiver's 10.0.0.0/8).
WEBHOOK_ALLOWED_NETWORKS: list[str] = env.list("WEBHOOK_ALLOWED_NETWORKS", default=[])
CELERY_BEAT_SCHEDULE["policies.webhooks_retry_due"] = {
    "task": "policies.webhooks_retry_due",
    "schedule": WEBHOOK_RETRY_INTERVAL,
    "options": {"expires": WEBHOOK_RETRY_INTERVAL * 0.9},
}

# What-if input limits (whatif.parse): the text of pasted manifests, the documents in it, and
# the YAML/JSON nodes (scalars, mappings, lists) of all of them together.
OME_WHATIF_MAX_BYTES: int = env.int("OME_WHATIF_MAX_BYTES", default=1024 * 1024)
OME_WHATIF_MAX_DOCUMENTS: int = env.int("OME_WHATIF_MAX_DOCUMENTS", default=500)
OME_WHATIF_MAX_NODES: int = env.int("OME_WHATIF_MAX_NODES", default=100_000)

# ---- operations: readiness, metrics, logs (ome_dashboard.ops; docs/operations.md) -----------
# /readyz reports a live cluster as stale when a kind was last listed longer ago than this.
OME_READY_SYNC_MAX_AGE: int = env.int("OME_READY_SYNC_MAX_AGE", default=3 * OME_RESYNC_INTERVAL)
# /readyz fails its `freshness` check once a cluster has been stale (matrix.freshness) for longer
# than this many seconds.
OME_READY_STALE_AFTER: int = env.int("OME_READY_STALE_AFTER", default=2 * OME_WATCH_LEASE)
# The checks that make /readyz answer 503 when they fail (of database, broker, sync, freshness). The others
# are reported only: without Redis or a cluster's API server the web still serves what it has.
OME_READY_REQUIRE: list[str] = env.list("OME_READY_REQUIRE", default=["database", "freshness"])
# When set, /metrics needs `Authorization: Bearer <METRICS_TOKEN>`; with DEBUG off it is refused
# until one is set.
METRICS_TOKEN: str = env.str("METRICS_TOKEN", default="")

LOG_LEVEL: str = env.str("LOG_LEVEL", default="INFO").upper()
# `plain` lines for people, or `json`: one JSON object per line for a log collector.
LOG_FORMAT: str = env.str("LOG_FORMAT", default="plain").lower()
if LOG_FORMAT not in ("plain", "json"):
    raise ImproperlyConfigured(f"LOG_FORMAT must be plain or json, not {LOG_FORMAT!r}")

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

# ---- identity, access and hardening (access app; docs/operations.md, "Access") --------------
# The cache the API throttles count in: this process's memory unless CACHE_URL names a shared
# one (e.g. rediscache://redis:6379/1), so that several web processes throttle together.
CACHES = {"default": env.cache("CACHE_URL", default="locmemcache://")}

# ---- in-process caches (docs/configuration.md, "Caches") -------------------------------------
# Every cache a process keeps is bounded in entries; the least recently used go first. The names
# are those of core.cache.VersionedCache instances, plus `grid_texts` (each cluster's grid keeps
# that many reasons and checks, matching.Grid.text_memo_entries) and `django_cache` (MAX_ENTRIES
# of the default cache when it lives in this process). CACHE_ENTRIES=name=N,... overrides some.
CACHE_ENTRIES: dict[str, int] = {
    "cell_pages": 256,  # made pages of the matrix cells API, ~75 KB each
    "cell_scopes": 64,  # (cluster, namespace, runtimes) -> the runtimes a page of cells shows
    "cell_layouts": 64,  # (cluster, filter) -> where each row's cells start
    "cell_lists": 64,  # (cluster, filter, reader's rights) -> the cells a parsed query selects (with its layout)
    "build_data": 64,  # build -> its serialized form
    "reason_inventories": 8,  # (cluster, namespaces a reader reads) -> the parsed inventory that explains cells (reasons)
    "inventories": 64,  # clusters' parsed inventories, caught up from changes
    "inventory_parts": 64,  # (cluster, namespaces a reader reads) -> that part of its parsed inventory
    "parsed_objects": 200_000,  # parsed objects (models, runtimes, InferenceServices), all clusters
    "grid_texts": 65_536,  # per grid: reasons and checks of (model signature, runtime), ~0.4 KB each
    "lint_reports": 64,  # clusters' lint reports
    "lint_proven": 64,  # the same with the proofs of every fix, as stored by the proving task
    "lint_manifests": 64,  # clusters' lint fix manifests as YAML, by group and fix
    "near_misses": 512,  # (model, namespace, runtime, reader's rights) -> a model's near misses
    "status_rows": 64,  # (cluster, query, runtimes, statuses) -> the matrix rows with those statuses
    "matrix_namespaces": 64,  # builds' namespaces (matrix rows), for the namespace filter
    "upgrade_diffs": 64,  # (cluster, other profile, namespaces a reader reads) -> the upgrade report's differences
    "fleet_clusters": 256,  # clusters' data as the fleet shows it
    "fleets": 32,  # fleets, one per set of clusters readers see
    "metrics_cell_counts": 256,  # clusters' cells by status for /metrics
    "django_cache": 10_000,  # throttle counts, when CACHE_URL is this process's memory
}
for _item in filter(None, env.str("CACHE_ENTRIES", default="").split(",")):
    _name, _, _entries = _item.strip().partition("=")
    if _name not in CACHE_ENTRIES or not _entries.isdigit() or int(_entries) < 1:
        raise ImproperlyConfigured(
            f"CACHE_ENTRIES: {_item.strip()!r} must be NAME=N, N at least 1, NAME one of {', '.join(CACHE_ENTRIES)}"
        )
    CACHE_ENTRIES[_name] = int(_entries)
if CACHES["default"]["BACKEND"].endswith("LocMemCache"):
    CACHES["default"].setdefault("OPTIONS", {}).setdefault("MAX_ENTRIES", CACHE_ENTRIES["django_cache"])
# Sign-in: Django accounts, throttled and locked out by django-axes after AXES_FAILURE_LIMIT
# failures per username and address, for AXES_COOLOFF_TIME hours.
AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend", "django.contrib.auth.backends.ModelBackend"]
AXES_FAILURE_LIMIT: int = env.int("AXES_FAILURE_LIMIT", default=5)
AXES_COOLOFF_TIME: float = env.float("AXES_COOLOFF_TIME", default=0.25)
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
# Behind a proxy axes must read the client's address from the header the proxy sets.
AXES_IPWARE_META_PRECEDENCE_ORDER: list[str] = env.list("AXES_IP_HEADERS", default=["REMOTE_ADDR"])
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/"

# Optional single sign-on with OpenID Connect (mozilla-django-oidc), on when OIDC_RP_CLIENT_ID is
# set. The username and groups claims are kept (access.models.Identity) for authorization, for
# impersonation on delegating clusters and for the audit log.
OIDC_RP_CLIENT_ID: str = env.str("OIDC_RP_CLIENT_ID", default="")
OIDC_ENABLED = bool(OIDC_RP_CLIENT_ID)
if OIDC_ENABLED:
    INSTALLED_APPS.append("mozilla_django_oidc")
    AUTHENTICATION_BACKENDS.append("access.oidc.OidcBackend")
    OIDC_RP_CLIENT_SECRET: str = env.str("OIDC_RP_CLIENT_SECRET", default="")
    OIDC_OP_AUTHORIZATION_ENDPOINT: str = env.str("OIDC_OP_AUTHORIZATION_ENDPOINT")
    OIDC_OP_TOKEN_ENDPOINT: str = env.str("OIDC_OP_TOKEN_ENDPOINT")
    OIDC_OP_USER_ENDPOINT: str = env.str("OIDC_OP_USER_ENDPOINT")
    OIDC_OP_JWKS_ENDPOINT: str = env.str("OIDC_OP_JWKS_ENDPOINT", default="")
    OIDC_RP_SIGN_ALGO: str = env.str("OIDC_RP_SIGN_ALGO", default="RS256")
    OIDC_RP_SCOPES: str = env.str("OIDC_RP_SCOPES", default="openid email profile groups")
    # Groups are read again this often (access.oidc.FreshOidcSession): a silent sign-in at the
    # identity provider on the next page load, a sign-out for any other request.
    OIDC_RENEW_ID_TOKEN_EXPIRY_SECONDS: int = env.int("OIDC_RENEW_ID_TOKEN_EXPIRY_SECONDS", default=15 * 60)
    MIDDLEWARE.insert(
        MIDDLEWARE.index("django.contrib.auth.middleware.AuthenticationMiddleware") + 1, "access.oidc.FreshOidcSession"
    )
OIDC_USERNAME_CLAIM: str = env.str("OIDC_USERNAME_CLAIM", default="preferred_username")
OIDC_GROUPS_CLAIM: str = env.str("OIDC_GROUPS_CLAIM", default="groups")
# How a user is named to a delegating cluster (SubjectAccessReview, Impersonate-User/-Group),
# access.identity: the OIDC username claim and groups with the first two prefixes, which must
# match the API server's --oidc-username-prefix / --oidc-groups-prefix; a Django account's
# username and groups with the other two. Never empty, never `system:`, OIDC and local apart.
OME_KUBE_USER_PREFIX: str = env.str("OME_KUBE_USER_PREFIX", default="oidc:")
OME_KUBE_GROUP_PREFIX: str = env.str("OME_KUBE_GROUP_PREFIX", default="oidc:")
OME_KUBE_LOCAL_USER_PREFIX: str = env.str("OME_KUBE_LOCAL_USER_PREFIX", default="ome-compat:")
OME_KUBE_LOCAL_GROUP_PREFIX: str = env.str("OME_KUBE_LOCAL_GROUP_PREFIX", default="ome-compat:")

# API tokens (access.tokens): their lifetime when none is asked for, and the longest one allowed.
OME_API_TOKEN_DAYS: int = env.int("OME_API_TOKEN_DAYS", default=90)
OME_API_TOKEN_MAX_DAYS: int = env.int("OME_API_TOKEN_MAX_DAYS", default=365)
# A token is not renewed at the identity provider: grants through its OIDC user's groups count
# while a sign-in read those groups at most this long ago, then only once the user signs in again.
OME_API_TOKEN_OIDC_GROUPS_MAX_AGE_HOURS: int = env.int("OME_API_TOKEN_OIDC_GROUPS_MAX_AGE_HOURS", default=24)

# Kubeconfig files are read from this folder only (inventory.kubeconfigs), at most this large.
OME_KUBECONFIG_DIR = env.path("OME_KUBECONFIG_DIR", default=BASE_DIR / "kubeconfigs")
OME_KUBECONFIG_MAX_BYTES: int = env.int("OME_KUBECONFIG_MAX_BYTES", default=1024 * 1024)
# The audit log stores a patch body up to this size; a larger one is kept as its start, marked.
OME_AUDIT_PATCH_MAX_BYTES: int = env.int("OME_AUDIT_PATCH_MAX_BYTES", default=16 * 1024)

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

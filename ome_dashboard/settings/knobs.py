"""Every setting an operator may change: one line per environment variable, read through the typed
readers of ome_dashboard.settings.readers. What each variable means, and its default, is written
once, in docs/configuration.md (tests/test_settings.py checks that every name read here is there);
comments here say only why a value is computed as it is.
"""

from __future__ import annotations

from pathlib import Path

from ome_dashboard.settings.readers import Environment

BASE_DIR = Path(__file__).resolve().parent.parent.parent

env = Environment()
# The environment wins over the file; ENV_FILE= (empty) reads no file.
ENV_FILE = env.text("ENV_FILE", str(BASE_DIR / ".env"))
env.load(ENV_FILE)

# ---- Django: secrets, hosts, HTTPS (docs/operations.md, "Security settings") -----------------
DEBUG = env.flag("DEBUG", False)
_WITHOUT_DEBUG = (
    "DEBUG is off; DEBUG=true is for a local copy, and `make run` writes .env with it for the commands run beside it"
)
if DEBUG:
    SECRET_KEY = env.text("SECRET_KEY", "django-insecure-local-development-only")
    ALLOWED_HOSTS = env.items("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"])
else:
    SECRET_KEY = env.required("SECRET_KEY", when=_WITHOUT_DEBUG)
    ALLOWED_HOSTS = env.required("ALLOWED_HOSTS", when=_WITHOUT_DEBUG).split(",")
CSRF_TRUSTED_ORIGINS = env.items("CSRF_TRUSTED_ORIGINS")
# Browsers accept secure cookies on http://localhost, hence on as soon as DEBUG is off.
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = env.flag("SECURE_COOKIES", not DEBUG)
SESSION_COOKIE_AGE = env.whole("SESSION_MAX_AGE_SECONDS", 8 * 3600)
if proxy_ssl_header := env.proxy_ssl_header("SECURE_PROXY_SSL_HEADER"):
    SECURE_PROXY_SSL_HEADER = proxy_ssl_header
SECURE_SSL_REDIRECT = env.flag("SECURE_SSL_REDIRECT", False)
SECURE_HSTS_SECONDS = env.whole("SECURE_HSTS_SECONDS", 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.flag("SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = env.flag("SECURE_HSTS_PRELOAD", False)
SECURE_REFERRER_POLICY = env.text("SECURE_REFERRER_POLICY", "same-origin")
REQUEST_MAX_BYTES = env.whole("REQUEST_MAX_BYTES", 4 * 1024 * 1024)
STATIC_ROOT = env.path("STATIC_ROOT", BASE_DIR / "staticfiles")
DATABASES = {"default": env.database("DATABASE_URL", f"sqlite:///{BASE_DIR / 'db.sqlite3'}")}
DATABASES["default"]["CONN_MAX_AGE"] = env.whole("CONN_MAX_AGE", DATABASES["default"].get("CONN_MAX_AGE", 0))
REDIS_URL = env.text("REDIS_URL", "redis://127.0.0.1:6379/0")
LOG_LEVEL = env.text("LOG_LEVEL", "INFO").upper()
LOG_FORMAT = env.choice("LOG_FORMAT", "plain", ("plain", "json"))

# ---- the API: anonymous reads, throttles ------------------------------------------------------
API_ANONYMOUS_READ = env.flag("API_ANONYMOUS_READ", False)
THROTTLE_RATES = {
    "whatif": env.text("THROTTLE_WHATIF", "30/min"),
    "patch-preview": env.text("THROTTLE_PATCH_PREVIEW", "60/min"),
    "model-index": env.text("THROTTLE_MODEL_INDEX", "30/min"),
    "export": env.text("THROTTLE_EXPORT", "20/min"),
    "whatif-check": env.text("THROTTLE_WHATIF_CHECK", "30/min"),
    "policy-check": env.text("THROTTLE_POLICY_CHECK", "30/min"),
}

# ---- clusters and watches (inventory) ---------------------------------------------------------
OME_CLUSTERS = env.text("OME_CLUSTERS", "demo=manifests:catalog/runtimes,demo")
OME_POLICY_REPORTS = env.items("OME_POLICY_REPORTS")  # names of OME_CLUSTERS that write PolicyReports
OME_RESYNC_INTERVAL = env.whole("OME_RESYNC_INTERVAL", 300)
OME_NAMESPACE = env.text("OME_NAMESPACE", "ome")
OME_WATCH_DB_THREADS = env.whole("OME_WATCH_DB_THREADS", 4)
OME_WATCH_HUB_CAPACITY = env.whole("OME_WATCH_HUB_CAPACITY", 1000)
OME_WATCH_LEASE = env.whole("OME_WATCH_LEASE", 60)
OME_WATCH_BACKOFF_BASE = env.number("OME_WATCH_BACKOFF_BASE", 0.5)
OME_WATCH_BACKOFF_MAX = env.number("OME_WATCH_BACKOFF_MAX", 30.0)
# A frozen worker then holds a cluster's lock no longer than about one lease.
OME_DB_IDLE_TRANSACTION_TIMEOUT = env.number("OME_DB_IDLE_TRANSACTION_TIMEOUT", OME_WATCH_LEASE)
OME_MANIFEST_FOLDERS = env.items("OME_MANIFEST_FOLDERS", ["catalog/runtimes", "demo"])
OME_KUBECONFIG_DIR = env.path("OME_KUBECONFIG_DIR", BASE_DIR / "kubeconfigs")
OME_KUBECONFIG_MAX_BYTES = env.whole("OME_KUBECONFIG_MAX_BYTES", 1024 * 1024)
OME_CONNECTION_TEST_TIMEOUT = env.whole("OME_CONNECTION_TEST_TIMEOUT", 30)
OME_ARGOCD_HUB = env.text("OME_ARGOCD_HUB", "")
OME_ARGOCD_NAMESPACE = env.text("OME_ARGOCD_NAMESPACE", "argocd")
OME_ARGOCD_INTERVAL = env.whole("OME_ARGOCD_INTERVAL", 60)
# Not `aws`, whose arguments could copy the kubeconfigs anywhere (awsAuthConfig runs `aws eks get-token`).
OME_ARGOCD_EXEC_COMMANDS = env.items(
    "OME_ARGOCD_EXEC_COMMANDS", ["argocd-k8s-auth", "gke-gcloud-auth-plugin", "kubelogin"]
)
# The workload identity an operator gives the dashboard, and proxies; every other variable is withheld.
OME_ARGOCD_EXEC_INHERIT = env.items(
    "OME_ARGOCD_EXEC_INHERIT",
    [
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

# ---- the matrix and what follows its updates --------------------------------------------------
MATRIX_CHUNK_MODELS = env.whole("MATRIX_CHUNK_MODELS", 2000)
MATRIX_UPDATE_ON_CHANGE = env.flag("MATRIX_UPDATE_ON_CHANGE", True)
MATRIX_UPDATE_DELAY = env.number("MATRIX_UPDATE_DELAY", 0.5)
MATRIX_CATCH_UP_INTERVAL = env.whole("MATRIX_CATCH_UP_INTERVAL", 60)
# Even the catch-up has not repaired a lost update by then.
MATRIX_LAG_STALE_AFTER = env.whole("MATRIX_LAG_STALE_AFTER", 2 * MATRIX_CATCH_UP_INTERVAL)
MATRIX_BUILD_ABANDON_AFTER = env.whole("MATRIX_BUILD_ABANDON_AFTER", 300)
MATRIX_AUDIT_INTERVAL = env.whole("MATRIX_AUDIT_INTERVAL", 600)
MATRIX_AUDIT_SAMPLE = env.whole("MATRIX_AUDIT_SAMPLE", 500)
MATRIX_POLL_SECONDS = env.number("MATRIX_POLL_SECONDS", 3.0)
OME_MATRIX_WORKER_NICENESS = env.whole("OME_MATRIX_WORKER_NICENESS", 10)
LINT_PROVE_ON_UPDATE = env.flag("LINT_PROVE_ON_UPDATE", True)
LINT_PROOFS_REQUEUE_AFTER = env.whole("LINT_PROOFS_REQUEUE_AFTER", 300)
POLICY_FILES = env.items("POLICY_FILES")
POLICY_EVALUATE_ON_UPDATE = env.flag("POLICY_EVALUATE_ON_UPDATE", True)
WEBHOOK_SECRET_DIR = env.path("WEBHOOK_SECRET_DIR", BASE_DIR / "webhook-secrets")
WEBHOOK_TIMEOUT = env.number("WEBHOOK_TIMEOUT", 5.0)
WEBHOOK_RETRY_BASE = env.number("WEBHOOK_RETRY_BASE", 10.0)
WEBHOOK_MAX_ATTEMPTS = env.whole("WEBHOOK_MAX_ATTEMPTS", 8)
WEBHOOK_RETRY_INTERVAL = env.whole("WEBHOOK_RETRY_INTERVAL", 60)
WEBHOOK_ALLOWED_NETWORKS = env.items("WEBHOOK_ALLOWED_NETWORKS")
OME_WHATIF_MAX_BYTES = env.whole("OME_WHATIF_MAX_BYTES", 1024 * 1024)
OME_WHATIF_MAX_DOCUMENTS = env.whole("OME_WHATIF_MAX_DOCUMENTS", 500)
OME_WHATIF_MAX_NODES = env.whole("OME_WHATIF_MAX_NODES", 100_000)
OME_AUDIT_PATCH_MAX_BYTES = env.whole("OME_AUDIT_PATCH_MAX_BYTES", 16 * 1024)

# ---- operations: readiness and metrics (ome_dashboard.ops) ------------------------------------
OME_READY_SYNC_MAX_AGE = env.whole("OME_READY_SYNC_MAX_AGE", 3 * OME_RESYNC_INTERVAL)
OME_READY_STALE_AFTER = env.whole("OME_READY_STALE_AFTER", 2 * OME_WATCH_LEASE)
OME_READY_REQUIRE = env.items("OME_READY_REQUIRE", ["database", "freshness"])
METRICS_TOKEN = env.text("METRICS_TOKEN", "")

# ---- caches (docs/configuration.md, "Caches") ------------------------------------------------
CACHES = {"default": env.cache("CACHE_URL", "locmemcache://")}
# Every cache a process keeps is bounded in entries; the least recently used go first. The names
# are those of core.cache.VersionedCache instances, plus `grid_texts` (each cluster's grid keeps
# that many reasons and checks, matching.Grid.text_memo_entries) and `django_cache` (MAX_ENTRIES
# of the default cache when it lives in this process).
CACHE_ENTRIES = env.bounds(
    "CACHE_ENTRIES",
    {
        "cell_pages": 256,  # made pages of the matrix cells API, ~75 KB each
        "cell_lists": 64,  # a query of the cells API or the matrix page -> the cells it selects, laid out
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
        "matrix_namespaces": 64,  # builds' namespaces (matrix rows), for the namespace filter
        "upgrade_diffs": 64,  # (cluster, other profile, namespaces a reader reads) -> the upgrade report's differences
        "fleet_clusters": 256,  # clusters' data as the fleet shows it
        "fleets": 32,  # fleets, one per set of clusters readers see
        "metrics_cell_counts": 256,  # clusters' cells by status for /metrics
        "django_cache": 10_000,  # throttle counts, when CACHE_URL is this process's memory
    },
)

# ---- identity and access (access app; docs/operations.md, "Access") ---------------------------
AXES_FAILURE_LIMIT = env.whole("AXES_FAILURE_LIMIT", 5)
AXES_COOLOFF_TIME = env.number("AXES_COOLOFF_TIME", 0.25)
AXES_IPWARE_META_PRECEDENCE_ORDER = env.items("AXES_IP_HEADERS", ["REMOTE_ADDR"])
OIDC_RP_CLIENT_ID = env.text("OIDC_RP_CLIENT_ID", "")
OIDC_ENABLED = bool(OIDC_RP_CLIENT_ID)
if OIDC_ENABLED:
    OIDC_RP_CLIENT_SECRET = env.text("OIDC_RP_CLIENT_SECRET", "")
    OIDC_OP_AUTHORIZATION_ENDPOINT = env.required("OIDC_OP_AUTHORIZATION_ENDPOINT", when="OIDC_RP_CLIENT_ID is set")
    OIDC_OP_TOKEN_ENDPOINT = env.required("OIDC_OP_TOKEN_ENDPOINT", when="OIDC_RP_CLIENT_ID is set")
    OIDC_OP_USER_ENDPOINT = env.required("OIDC_OP_USER_ENDPOINT", when="OIDC_RP_CLIENT_ID is set")
    OIDC_OP_JWKS_ENDPOINT = env.text("OIDC_OP_JWKS_ENDPOINT", "")
    OIDC_RP_SIGN_ALGO = env.text("OIDC_RP_SIGN_ALGO", "RS256")
    OIDC_RP_SCOPES = env.text("OIDC_RP_SCOPES", "openid email profile groups")
    OIDC_RENEW_ID_TOKEN_EXPIRY_SECONDS = env.whole("OIDC_RENEW_ID_TOKEN_EXPIRY_SECONDS", 15 * 60)
OIDC_USERNAME_CLAIM = env.text("OIDC_USERNAME_CLAIM", "preferred_username")
OIDC_GROUPS_CLAIM = env.text("OIDC_GROUPS_CLAIM", "groups")
OME_KUBE_USER_PREFIX = env.text("OME_KUBE_USER_PREFIX", "oidc:")
OME_KUBE_GROUP_PREFIX = env.text("OME_KUBE_GROUP_PREFIX", "oidc:")
OME_KUBE_LOCAL_USER_PREFIX = env.text("OME_KUBE_LOCAL_USER_PREFIX", "ome-compat:")
OME_KUBE_LOCAL_GROUP_PREFIX = env.text("OME_KUBE_LOCAL_GROUP_PREFIX", "ome-compat:")
OME_API_TOKEN_DAYS = env.whole("OME_API_TOKEN_DAYS", 90)
OME_API_TOKEN_MAX_DAYS = env.whole("OME_API_TOKEN_MAX_DAYS", 365)
OME_API_TOKEN_OIDC_GROUPS_MAX_AGE_HOURS = env.whole("OME_API_TOKEN_OIDC_GROUPS_MAX_AGE_HOURS", 24)

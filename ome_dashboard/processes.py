"""The processes of the stack and their arguments. `make run`/`make up` (ome_dashboard.devrun),
docker-compose.yml and deploy/ run the same ones (tests/ops/test_compose.py compares them)."""

from __future__ import annotations

# Broker state is throwaway in development: no snapshots, no append-only file.
REDIS_ARGS = ("--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--loglevel", "warning")


def worker_args(name: str, *options: str) -> tuple[str, ...]:
    # Gossip and mingle only matter between several workers; skipping them makes startup faster.
    return (
        "worker",
        "--loglevel=INFO",
        f"--hostname=devrun-{name}@%h",
        *options,
        "--without-gossip",
        "--without-mingle",
    )


# One worker per queue (settings.CELERY_TASK_ROUTES), so that none starves another: a burst of
# matrix work waits in `matrix` while watches, their supervision and resyncs go on.
# docker-compose.yml and deploy/ run the same four (a test compares them).
PRODUCTION_WORKERS = {
    "worker": worker_args("worker", "--queues=celery", "--concurrency=2"),
    # Short tasks, mostly waiting on the database: threads.
    "control-worker": worker_args("control", "--queues=control", "--pool=threads", "--concurrency=4"),
    "matrix-worker": worker_args("matrix", "--queues=matrix", "--concurrency=2"),
    # Watch tasks only hand their watches to the worker's watch hub (one event loop): threads.
    "watch-worker": worker_args("watch", "--queues=watch", "--pool=threads", "--concurrency=2"),
}
# `make run`: one worker for everything but the watches.
DEV_WORKERS = {
    "worker": worker_args("worker", "--queues=celery,control,matrix", "--concurrency=2"),
    "watch-worker": PRODUCTION_WORKERS["watch-worker"],
}
BEAT_ARGS = ("beat", "--loglevel=INFO")
# The web server of docker-compose.yml and deploy/ (workers: WEB_CONCURRENCY, read by gunicorn).
# No control socket: nothing uses it, and it would need a writable home directory.
GUNICORN_ARGS = ("ome_dashboard.wsgi", "--access-logfile", "-", "--no-control-socket")


def startup_commands(*, production: bool = False) -> list[list[str]]:
    """The manage.py commands run once, in order, after Redis answers and before the worker starts."""
    if production:
        # The image collects static files when it is built; the compose file's `migrate` service
        # runs the others before the long-running services start.
        return [
            ["collectstatic", "--noinput", "--verbosity=0"],
            ["migrate", "--noinput"],
            ["register_clusters", "--sync"],
            ["load_policies"],
        ]
    return [
        ["migrate", "--noinput"],
        # OME_CLUSTERS (by default the bundled demo), each synced once, then their matrices.
        ["register_clusters", "--sync"],
        ["load_policies"],  # POLICY_FILES (docs/policies.md)
        ["recompute_matrix", "--all"],
        ["demo_admin"],  # a demo superuser with a new random password, and how to sign in
    ]

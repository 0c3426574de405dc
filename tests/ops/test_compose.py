"""docker-compose.yml: the services, what each command runs (real modules, commands and options),
configuration through documented environment variables only, and the same processes as
`make up` (ome_dashboard.devrun --production)."""

from __future__ import annotations

import importlib
from typing import Any

import click
import pytest
from celery.bin.base import CLIContext
from celery.bin.beat import beat
from celery.bin.worker import worker
from django.core.management import get_commands
from gunicorn.config import Config

from inventory.tasks import WATCH_QUEUE
from ome_dashboard import processes
from ome_dashboard.celery import app as celery_app
from tests.ops import files

APP_SERVICES = {"migrate", "web", "worker", "control-worker", "matrix-worker", "watch-worker", "beat"}
# What a user must set, in a .env file or the environment: there is no safe default for these.
REQUIRED = {"SECRET_KEY": "s3cret", "POSTGRES_PASSWORD": "pg-s3cret"}


@pytest.fixture(scope="module")
def services() -> dict[str, Any]:
    return dict(files.interpolate(files.compose(), REQUIRED)["services"])


def test_the_compose_file_runs_postgresql_redis_a_one_shot_migrate_and_the_four_processes(
    services: dict[str, Any],
) -> None:
    assert set(services) == {"postgres", "redis", *APP_SERVICES}
    assert services["postgres"]["image"].startswith("postgres:")
    assert services["redis"]["image"].startswith("redis:")


def test_every_app_service_runs_the_one_image_with_the_same_environment(services: dict[str, Any]) -> None:
    first = services["web"]

    for name in APP_SERVICES:
        service = services[name]
        assert service["build"] == "."
        assert service["image"] == first["image"]
        assert service["environment"] == first["environment"]
    assert first["environment"]["DEBUG"] == "false"
    assert first["environment"]["DATABASE_URL"] == "postgres://ome:pg-s3cret@postgres:5432/ome"
    assert first["environment"]["REDIS_URL"] == "redis://redis:6379/0"


def test_the_processes_start_after_a_successful_migrate_and_healthy_postgresql_and_redis(
    services: dict[str, Any],
) -> None:
    for name in APP_SERVICES - {"migrate"}:
        assert services[name]["depends_on"] == {
            "migrate": {"condition": "service_completed_successfully"},
            "postgres": {"condition": "service_healthy"},
            "redis": {"condition": "service_healthy"},
        }, name
    assert services["migrate"]["depends_on"] == {
        "postgres": {"condition": "service_healthy"},
        "redis": {"condition": "service_healthy"},
    }
    assert services["migrate"]["restart"] == "no"
    assert "pg_isready" in " ".join(services["postgres"]["healthcheck"]["test"])
    assert services["redis"]["healthcheck"]["test"] == ["CMD", "redis-cli", "ping"]
    assert "/healthz" in " ".join(services["web"]["healthcheck"]["test"])


def _check_celery(argv: list[str]) -> dict[str, Any]:
    assert argv[:3] == ["celery", "-A", "ome_dashboard"]
    assert importlib.import_module(argv[2]).celery_app is celery_app
    command = {"worker": worker, "beat": beat}[argv[3]]
    try:
        context = command.make_context(argv[3], argv[4:], obj=CLIContext(app=celery_app, no_color=True, workdir=None))
    except click.ClickException as error:
        pytest.fail(f"{' '.join(argv)}: {error.format_message()}")
    return dict(context.params)


def _check_gunicorn(argv: list[str]) -> None:
    assert argv[0] == "gunicorn"
    parsed = Config().parser().parse_args(argv[1:])
    module = importlib.import_module(parsed.args[0])
    assert callable(module.application)


def test_every_command_runs_a_real_module_command_and_options(services: dict[str, Any]) -> None:
    manage_commands = get_commands()

    for name in APP_SERVICES:
        for argv in files.shell_commands(services[name]["command"]):
            if argv[0] == "celery":
                _check_celery(argv)
            elif argv[0] == "gunicorn":
                _check_gunicorn(argv)
            else:
                assert argv[:2] == ["python", "manage.py"], argv
                assert argv[2] in manage_commands, argv


def test_each_queue_has_a_worker_of_its_own_and_every_routed_queue_is_served(services: dict[str, Any]) -> None:
    served = {
        name: _check_celery(services[name]["command"])
        for name in ("worker", "control-worker", "matrix-worker", "watch-worker")
    }
    routed = {route["queue"] for route in celery_app.conf.task_routes.values()} | {celery_app.conf.task_default_queue}

    queues = {name: params["queues"] for name, params in served.items()}
    assert queues == {
        "worker": ["celery"],
        "control-worker": ["control"],
        "matrix-worker": ["matrix"],
        "watch-worker": [WATCH_QUEUE],
    }
    assert routed == {"celery", "control", "matrix", WATCH_QUEUE}
    assert served["watch-worker"]["pool"].__module__ == "celery.concurrency.thread"
    assert served["watch-worker"]["concurrency"] >= 1  # the tasks only hand their watch to the hub
    assert celery_app.conf.task_routes["inventory.tasks.watch_cluster"] == {"queue": WATCH_QUEUE}


def test_beat_keeps_its_schedule_on_the_volume(services: dict[str, Any]) -> None:
    params = _check_celery(services["beat"]["command"])

    assert params["schedule"].startswith("/data/")
    assert "app-data:/data" in services["beat"]["volumes"]


def test_compose_requires_the_secrets_and_defaults_every_other_variable() -> None:
    variables = files.compose_variables()

    assert {name for name, variable in variables.items() if variable.default is None} == set(REQUIRED)
    assert all(variables[name].required for name in REQUIRED)


def test_the_app_environment_names_settings_that_exist(services: dict[str, Any]) -> None:
    read_elsewhere = {"WEB_CONCURRENCY"}  # gunicorn reads it

    unknown = set(services["web"]["environment"]) - files.settings_variables() - read_elsewhere

    assert unknown == set()


def test_a_missing_secret_key_stops_compose_with_a_message() -> None:
    with pytest.raises(ValueError, match="SECRET_KEY"):
        files.interpolate(files.compose(), {"POSTGRES_PASSWORD": "x"})


def _options(argv: list[str] | tuple[str, ...], *, drop: tuple[str, ...]) -> list[str]:
    """The arguments, less those that name this machine or this run (`--opt=value` or `--opt value`)."""
    kept, skip = [], False
    for arg in argv:
        if skip:
            skip = False
            continue
        name = arg.split("=", 1)[0]
        if name in drop:
            skip = "=" not in arg
            continue
        kept.append(arg)
    return kept


def test_make_up_starts_the_same_processes_with_the_same_commands(services: dict[str, Any]) -> None:
    machine_specific = ("--bind", "--hostname", "--concurrency", "--schedule")

    web = services["web"]["command"]
    assert web[0] == "gunicorn"
    assert _options(web[1:], drop=machine_specific) == list(processes.GUNICORN_ARGS)
    for service, args in processes.PRODUCTION_WORKERS.items():
        compose_args = _options(services[service]["command"][3:], drop=machine_specific)
        assert compose_args == _options(args, drop=machine_specific), service
    assert _options(services["beat"]["command"][3:], drop=machine_specific) == list(processes.BEAT_ARGS)
    migrate = [argv[2:] for argv in files.shell_commands(services["migrate"]["command"])]
    # The image collects static files when it is built; `make up` does it first.
    assert [["collectstatic", "--noinput", "--verbosity=0"], *migrate] == processes.startup_commands(production=True)

"""Settings come from the environment, each case loaded in a fresh interpreter with a clean env."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from django.conf import settings

from ome_dashboard.celery import app as celery_app
from tests.ops import files
from tests.settings import sqlite_test_database

SHOW_SETTINGS = """
import json
from ome_dashboard import settings as s
print(json.dumps({
    "DEBUG": s.DEBUG,
    "SECRET_KEY": s.SECRET_KEY,
    "ALLOWED_HOSTS": s.ALLOWED_HOSTS,
    "DATABASE": {k: s.DATABASES["default"][k] for k in ("ENGINE", "NAME", "HOST", "PORT", "USER")},
    "BROKER": s.CELERY_BROKER_URL,
    "RESULTS": s.CELERY_RESULT_BACKEND,
}))
"""


def load_settings(**env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", SHOW_SETTINGS],
        cwd=settings.BASE_DIR,
        env={"PATH": os.environ["PATH"], "ENV_FILE": "", **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def loaded(**env: str) -> dict[str, object]:
    result = load_settings(**env)
    assert result.returncode == 0, result.stderr
    return dict(json.loads(result.stdout))


def test_the_defaults_are_production_ones_debug_off_needs_a_secret_key() -> None:
    result = load_settings()

    assert result.returncode != 0
    assert "SECRET_KEY" in result.stderr


SHOW_ACCESS = """
import json
from ome_dashboard import settings as s
print(json.dumps({"DEBUG": s.DEBUG, "API_ANONYMOUS_READ": s.API_ANONYMOUS_READ}))
"""


def test_anonymous_reads_are_off_unless_set() -> None:
    env = {"PATH": os.environ["PATH"], "ENV_FILE": "", "SECRET_KEY": "k", "ALLOWED_HOSTS": "ome.example"}
    shown = subprocess.run(
        [sys.executable, "-c", SHOW_ACCESS], cwd=settings.BASE_DIR, env=env, capture_output=True, text=True, timeout=60
    )

    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout) == {"DEBUG": False, "API_ANONYMOUS_READ": False}


def test_a_local_copy_runs_with_debug_sqlite_and_local_redis() -> None:
    values = loaded(DEBUG="true")

    assert values["DEBUG"] is True
    assert values["SECRET_KEY"]
    assert values["DATABASE"] == {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": str(settings.BASE_DIR / "db.sqlite3"),
        "HOST": "",
        "PORT": "",
        "USER": "",
    }
    assert values["BROKER"] == values["RESULTS"] == "redis://127.0.0.1:6379/0"


def test_database_url_and_redis_url_come_from_the_environment() -> None:
    values = loaded(
        DEBUG="true", DATABASE_URL="postgres://ome:secret@db.example:5433/ome", REDIS_URL="redis://cache:6379/3"
    )

    assert values["DATABASE"] == {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": "ome",
        "HOST": "db.example",
        "PORT": 5433,
        "USER": "ome",
    }
    assert values["BROKER"] == values["RESULTS"] == "redis://cache:6379/3"


def test_debug_off_without_secret_key_refuses_to_start() -> None:
    result = load_settings(DEBUG="false", ALLOWED_HOSTS="ome.example")

    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr
    assert "SECRET_KEY" in result.stderr


def test_debug_off_with_an_empty_secret_key_refuses_to_start() -> None:
    result = load_settings(DEBUG="false", SECRET_KEY="", ALLOWED_HOSTS="ome.example")

    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr
    assert "SECRET_KEY" in result.stderr


def test_debug_off_without_allowed_hosts_refuses_to_start() -> None:
    result = load_settings(DEBUG="false", SECRET_KEY="s3cret-for-this-test")

    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr
    assert "ALLOWED_HOSTS" in result.stderr


def test_values_missing_from_the_environment_come_from_the_env_file_which_the_environment_overrides(
    tmp_path: Path,
) -> None:
    env_file = tmp_path / "env"
    env_file.write_text("DEBUG=true\nREDIS_URL=redis://127.0.0.1:6391/0\nDATABASE_URL=sqlite:////tmp/x.sqlite3\n")

    values = loaded(ENV_FILE=str(env_file), DATABASE_URL="postgres://ome@db.example/ome")

    assert values["DEBUG"] is True
    assert values["BROKER"] == "redis://127.0.0.1:6391/0"
    assert values["DATABASE"]["HOST"] == "db.example"  # type: ignore[index]


def test_manage_py_names_a_missing_setting_in_one_line_not_a_traceback() -> None:
    result = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=settings.BASE_DIR,
        env={"PATH": os.environ["PATH"], "ENV_FILE": ""},
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert result.returncode == 1
    assert result.stderr.startswith("manage.py: Set the SECRET_KEY environment variable")
    assert len(result.stderr.splitlines()) == 1


def test_manage_py_loads_the_settings_module_its_settings_flag_names(tmp_path: Path) -> None:
    # Django reads --settings (and --pythonpath) before the settings load; ours would need SECRET_KEY.
    (tmp_path / "other_settings.py").write_text(
        'SECRET_KEY = "other"\nINSTALLED_APPS = ["django.contrib.contenttypes"]\nOTHER_MARKER = "read"\n'
    )

    result = subprocess.run(
        [sys.executable, "manage.py", "diffsettings", "--settings=other_settings", f"--pythonpath={tmp_path}"],
        cwd=settings.BASE_DIR,
        env={"PATH": os.environ["PATH"], "ENV_FILE": ""},
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert result.returncode == 0, result.stderr
    assert "OTHER_MARKER = 'read'" in result.stdout
    assert "SECRET_KEY = 'other'" in result.stdout


def test_debug_off_starts_when_secret_key_and_allowed_hosts_are_set() -> None:
    values = loaded(DEBUG="false", SECRET_KEY="s3cret-for-this-test", ALLOWED_HOSTS="ome.example,localhost")

    assert values["DEBUG"] is False
    assert values["SECRET_KEY"] == "s3cret-for-this-test"
    assert values["ALLOWED_HOSTS"] == ["ome.example", "localhost"]


def test_celery_speaks_json_only_and_retries_the_broker_on_startup() -> None:
    conf = celery_app.conf

    assert conf.task_serializer == conf.result_serializer == "json"
    assert conf.accept_content == ["json"]
    assert conf.broker_connection_retry_on_startup is True
    assert conf.task_time_limit > conf.task_soft_time_limit > 0
    assert isinstance(conf.beat_schedule, dict)


def test_a_processs_sqlite_test_database_starts_without_the_files_an_earlier_process_left(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A pid is used again: the database file, WAL and shared memory an earlier test process
    # with it left behind (killed, or a thread's connection still open when Django removed the
    # file) must not be found, least of all a WAL that SQLite would replay into a new database.
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    for suffix in ("", "-wal", "-shm", "_gw0", "_gw0-wal"):
        (tmp_path / f"ome-test-4242.sqlite3{suffix}").write_text("stale")
    (tmp_path / "ome-test-42420.sqlite3-wal").write_text("another process's")

    name = sqlite_test_database(4242)

    assert name == str(tmp_path / "ome-test-4242.sqlite3")
    assert [path.name for path in tmp_path.iterdir()] == ["ome-test-42420.sqlite3-wal"]


def test_every_variable_is_documented_once_in_docs_configuration() -> None:
    """The one check of the settings' documentation: every variable the settings read, and every one
    compose and the ConfigMap set, is named by exactly one row of docs/configuration.md."""
    read = files.settings_variables() | set(files.compose_variables()) | set(files.config_env())
    documented = files.documented_variables()

    assert sorted(read - set(documented)) == []
    assert sorted({name for name in documented if documented.count(name) > 1}) == []

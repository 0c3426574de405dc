"""`POST /api/v1/whatif/check/`: `manage.py whatif` over HTTP, for CI systems that call the
dashboard with a token (`Authorization: Token <key>`, access.tokens; a session works
too). It computes and changes nothing, so whoever may read may call it (API_ANONYMOUS_READ),
and it sees only the clusters its caller may read.

The answer is always the JSON report (`sections`, each with its cluster's `ome`: the profile
that judged it and why; `failed`, `found`, `fail_on`) with
`exitCode` (0 or 1, as the command's); `format` text, markdown or junit adds that rendering
as `rendered`, and `problems`: the schema warnings. Bad input answers 400 naming the document
and field, with `problems[]`: every schema problem, errors and warnings together, each with
its document, line, path and a hint ("did you mean max?"); `lenient` demotes schema errors to
warnings.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

import matching
from access.current import scope_of
from access.scope import Scope
from core.api import api_keys, namespace_tokens
from core.errors import DomainError
from core.permissions import CanRead
from inventory.models import Cluster
from inventory.selectors import ClusterChoiceError, cluster_choose, cluster_list
from web.api.freshness import verdicts_envelope
from web.api.whatif_responses import CheckReportSerializer
from whatif.check import Item, check_clusters, items_from_text
from whatif.errors import WhatIfError, problems_response


class ManifestsCheckInputSerializer(serializers.Serializer):
    """What every check of manifests against registered clusters takes (this one, policies')."""

    cluster = serializers.CharField(required=False, help_text="Cluster name; defaults to the only cluster.")
    all_clusters = serializers.BooleanField(default=False, help_text="Check every cluster the caller may read.")
    manifests = serializers.CharField(
        required=False, allow_blank=True, help_text="Manifests: YAML or JSON, several documents; other kinds skipped."
    )
    objects = serializers.ListField(child=serializers.DictField(), required=False, help_text="The same, as objects.")
    prune = serializers.BooleanField(default=False, help_text="Objects the manifests lack count as deleted.")
    lenient = serializers.BooleanField(
        default=False,
        help_text="Fields OME's CRD schemas do not declare, wrong types and values outside an enum are warnings "
        "(in `problems`), not a 400: for manifests that carry fields of another OME version.",
    )


class CheckInputSerializer(ManifestsCheckInputSerializer):
    fail_on = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        help_text="Comma-separated: " + ", ".join(matching.DIFF_CONDITIONS),
    )
    format = serializers.ChoiceField(choices=matching.REPORT_FORMATS, default="json")


class InvalidCondition(DomainError):
    code = "invalid_condition"


Sections = TypeVar("Sections")


def manifests_check(
    request: Request,
    values: Mapping[str, Any],
    check: Callable[[list[Cluster], list[Item], Scope], Sections],
    answer: Callable[[list[Cluster], Sections], dict[str, Any]],
) -> Response:
    """What every check of manifests against registered clusters does around its own `check`
    (this one, policies'): the clusters (`all_clusters`: every one the caller may read, else
    `cluster` or the only one), the manifests read, and the body `answer` makes of the sections
    with the schema warnings as `problems`; manifests with schema problems answer 400 with every
    problem."""
    scope = scope_of(request)
    clusters = (
        list(cluster_list(scope))
        if values["all_clusters"]
        else [cluster_choose(values.get("cluster"), default="only", scope=scope)]
    )
    if not clusters:
        raise ClusterChoiceError("no cluster to check: none is registered, or you may read none")
    documents: Any = values.get("objects") or values.get("manifests") or ()
    try:
        items, warnings = items_from_text(documents, lenient=values["lenient"])
        sections = check(clusters, items, scope)
    except WhatIfError as error:
        return problems_response(error)
    return Response({**answer(clusters, sections), "problems": [warning.to_dict() for warning in warnings]})


class WhatIfCheckView(APIView):
    """The what-if of manifests on one or every cluster, with a pass/fail verdict for CI."""

    permission_classes = [CanRead]
    throttle_scope = "whatif-check"

    @extend_schema(request=CheckInputSerializer, responses=CheckReportSerializer)
    def post(self, request: Request) -> Response:
        data = CheckInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        try:
            fail_on = matching.parse_conditions(values["fail_on"])
        except ValueError as error:
            raise InvalidCondition(str(error).removeprefix("--fail-on: "), field="fail_on") from None

        def check(clusters: list[Cluster], items: list[Item], scope: Scope) -> list[matching.Section]:
            return check_clusters(clusters, items, prune=values["prune"], scope=scope)

        def answer(clusters: list[Cluster], sections: list[matching.Section]) -> dict[str, Any]:
            result = matching.verdict(sections, fail_on)
            # matching's report is also the CLI's JSON (camelCase); the API's casing is snake_case.
            report = namespace_tokens(api_keys(matching.json_report(sections, result)))
            for section, cluster in zip(report["sections"], clusters, strict=True):
                section.update(verdicts_envelope(cluster))
            body: dict[str, Any] = {**report, "exit_code": result.exit_code}
            if values["format"] != "json":
                body["rendered"] = matching.render(sections, result, values["format"])
            return body

        return manifests_check(request, values, check, answer)

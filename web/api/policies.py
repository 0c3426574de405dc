"""The policies API: `GET policies/states/?cluster=` (each assertion's state on a cluster, as
the Policies page shows it) and `POST policies/check/` (manifests checked against policies on
registered clusters, as `whatif/check/` checks them against `--fail-on` conditions)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

import matching
import matching.policy
from access.current import scope_of
from access.scope import Scope
from core.api import api_keys, namespace_tokens
from core.errors import DomainError
from core.permissions import CanRead
from inventory.models import Cluster
from inventory.selectors import cluster_choose
from policies.evaluation import policy_check
from policies.selectors import assertion_state_list
from policies.services import assertions_enabled
from policies.visibility import readable_by
from web.api.policies_responses import PolicyCheckSerializer, PolicyStatesSerializer
from web.api.whatif_check import ManifestsCheckInputSerializer, manifests_check
from whatif.check import Item


class InvalidPolicy(DomainError):
    code = "invalid_policy"


class PolicyCheckInputSerializer(ManifestsCheckInputSerializer):
    policies = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=matching.policy.POLICY_TEXT_LIMITS.max_bytes,
        help_text="RuntimePolicy documents (YAML); default: the dashboard's enabled policies.",
    )
    format = serializers.ChoiceField(choices=matching.REPORT_FORMATS, default="json")


def _assertions(text: str) -> list[matching.policy.Assertion]:
    if not text:
        return [assertion for _policy, assertion in assertions_enabled()]
    try:
        parsed = matching.policy.policies_from_text(text, source="policies")
    except matching.policy.PolicyError as error:
        raise InvalidPolicy("; ".join(error.problems), field="policies") from None
    return [assertion for policy in parsed for assertion in policy.assertions]


class PolicyCheckView(APIView):
    """Policies over manifests applied to one or every cluster, with a pass/fail verdict for CI:
    exit_code 1 when an error-severity assertion fails. The policies are parsed only once the
    caller's clusters are chosen (a role on each), within the bounded reader's limits."""

    permission_classes = [CanRead]
    throttle_scope = "policy-check"

    @extend_schema(request=PolicyCheckInputSerializer, responses=PolicyCheckSerializer)
    def post(self, request: Request) -> Response:
        data = PolicyCheckInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        given = values.get("policies") or ""

        def readable(
            cluster: Cluster, scope: Scope, assertions: list[matching.policy.Assertion]
        ) -> list[matching.policy.Assertion]:
            """The caller's own policies whole; of the stored ones, those that cover a namespace
            the caller reads (policies.visibility): no other team's names, owners or runtimes."""
            if given:
                return assertions
            names = readable_by(scope, cluster.name)
            return [assertion for assertion in assertions if names.reads_any(assertion.subjects.namespaces)]

        def check(clusters: list[Cluster], items: list[Item], scope: Scope) -> list[matching.policy.PolicySection]:
            assertions = _assertions(given)
            return [
                policy_check(cluster, items, readable(cluster, scope, assertions), prune=values["prune"], scope=scope)
                for cluster in clusters
            ]

        def answer(_clusters: list[Cluster], sections: list[matching.policy.PolicySection]) -> dict[str, Any]:
            body: dict[str, Any] = {
                **namespace_tokens(api_keys(matching.policy.json_report(sections))),
                "exit_code": matching.policy.exit_code(sections),
            }
            if values["format"] != "json":
                body["rendered"] = matching.policy.render(sections, values["format"])
            return body

        return manifests_check(request, values, check, answer)


class PolicyStatesView(APIView):
    """Each assertion's state on a cluster: passing or failing since when, the failures the
    caller may read, and the change that broke or fixed it."""

    permission_classes = [CanRead]

    @extend_schema(
        parameters=[OpenApiParameter("cluster", str, description="Cluster name; defaults to the first by name.")],
        responses=PolicyStatesSerializer,
    )
    def get(self, request: Request) -> Response:
        scope = scope_of(request)
        cluster = cluster_choose(request.query_params.get("cluster"), default="first", scope=scope)
        states = [view.to_dict() for view in assertion_state_list(cluster, scope=scope, user=request.user)]
        return Response({"cluster": cluster.name, "count": len(states), "results": namespace_tokens(states)})

"""The error of a what-if that cannot use its input."""

from __future__ import annotations

from rest_framework.response import Response

from core.errors import DomainError
from matching import Problem


class WhatIfError(DomainError):
    """Input a what-if cannot use; `document` is 1-based, `field` a path such as spec.priority.
    `problems`: every schema problem of the input, errors and warnings together, each with its
    document, line and path (`matching.Problem`)."""

    code = "invalid_manifest"

    def __init__(
        self,
        problem: str,
        *,
        document: int | None = None,
        obj: str | None = None,
        field: str | None = None,
        problems: list[Problem] | None = None,
    ) -> None:
        self.problem = problem
        self.problems = problems or []
        self.document = document
        self.obj = obj
        where = [part for part in (f"document {document}" if document is not None else "", obj, field) if part]
        super().__init__(": ".join([*where, problem]), field=field)

    def to_dict(self) -> dict[str, object]:
        return {
            "document": self.document,
            "object": self.obj,
            "field": self.field,
            "problem": self.problem,
            "message": str(self),
            "problems": [problem.to_dict() for problem in self.problems],
        }


def problems_body(error: WhatIfError) -> dict[str, object]:
    """The 400 answer of an input with schema problems: the first error, and every problem."""
    body: dict[str, object] = {"detail": str(error), "code": error.code, "field": error.field}
    return {**body, "problems": [problem.to_dict() for problem in error.problems]}


def problems_response(error: WhatIfError) -> Response:
    """The 400 answer of manifests a what-if cannot use, every schema problem listed; an error
    without a field is about the manifests. One without problems goes to the API's handler."""
    error.field = error.field or "manifests"
    if not error.problems:
        raise error
    return Response(problems_body(error), status=400)

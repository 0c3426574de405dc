"""The one error type of `matching`: input that is not shaped like an OME object."""

from __future__ import annotations


class ManifestError(ValueError):
    """A manifest is structurally malformed: it names the object, the field path and the problem.

    Values that OME accepts but cannot match (an unparsable version, an unknown operator) are
    not errors; they mismatch as in OME. This is raised only where OME's API server would
    reject the object or Go could not decode it.
    """

    def __init__(self, obj: str, field: str, problem: str) -> None:
        self.obj = obj
        self.field = field
        self.problem = problem
        super().__init__(f"{obj}: {field}: {problem}")


class ModelIndexError(ValueError):
    """A model_index.json from which OME would record no pipeline."""

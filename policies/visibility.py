"""Which of a cluster's assertion states and failures a reader sees, and what a webhook receiver
is sent: one rule for the Policies page, the states API, the check API and every delivery.

A reader (a person's Scope, or a receiver's namespace globs) reads some namespaces of a cluster
(`Readable`). An assertion whose scope names namespaces shows only to readers of one of them;
one without a namespace scope covers every namespace, so every reader of the cluster sees it
(with only their failures). A failure shows when its namespace is readable ("" the cluster
scope row, readable as Scope.reads says). `pickCount` counts the picks over every namespace of
its scope (docs/policies.md, "Assertion kinds"; matching.policy.evaluate records its failure at
cluster scope), so its failure is withheld, and counted as withheld, unless the reader reads
every namespace the count covers: the whole cluster, or each of the assertion's namespaces
named without a glob.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from glob import has_magic
from typing import Any

from access.models import EVERY_CLUSTER
from access.scope import Scope

# Assertions whose failure is one count over every namespace of the assertion's scope.
COUNTED_ACROSS_NAMESPACES = frozenset({"pickCount"})
WITHHELD = "counted over namespaces you do not all read: withheld"


@dataclass(frozen=True)
class Readable:
    """The namespaces of one cluster a reader reads: `names` (exact, "" = the cluster scope
    row) or `globs`; `whole` for every namespace."""

    whole: bool = False
    names: frozenset[str] = frozenset()
    globs: tuple[str, ...] = ()

    def reads(self, namespace: str) -> bool:
        if self.whole or namespace in self.names:
            return True
        return bool(namespace) and any(fnmatchcase(namespace, glob) for glob in self.globs)

    def reads_any(self, globs: Sequence[str]) -> bool:
        """Some namespace an assertion scoped to `globs` covers (none: every namespace)."""
        if self.whole:
            return True
        if not globs:
            return bool(self.names or self.globs)
        named = [name for name in self.names if name]
        return any(fnmatchcase(name, glob) for name in named for glob in globs) or any(
            not has_magic(glob) and self.reads(glob) for glob in globs
        )

    def reads_every(self, globs: Sequence[str]) -> bool:
        """Every namespace `globs` may cover: only globs that name one namespace each can be."""
        return self.whole or (bool(globs) and all(not has_magic(glob) and self.reads(glob) for glob in globs))


def readable_by(scope: Scope, cluster: str) -> Readable:
    """What `scope` reads of `cluster`, as Scope.reads says it."""
    names = scope.read_namespaces(cluster)
    return Readable(whole=True) if names is None else Readable(names=names)


def readable_by_receiver(globs_text: str) -> Readable:
    """What a receiver of its cluster is sent: every namespace, or those its globs match and the
    cluster scope row (as a reader of a namespace reads the cluster-scoped objects)."""
    globs = tuple(glob.strip() for glob in globs_text.split(",") if glob.strip())
    return Readable(whole=True) if not globs else Readable(names=frozenset({""}), globs=globs)


def failures_shown(
    readable: Readable, kind: str, namespaces: Sequence[str], failures: Sequence[Mapping[str, Any]]
) -> tuple[list[Mapping[str, Any]], int]:
    """The failures (dicts with a `namespace` and the `keys` of their objects) of an assertion of
    `kind` scoped to `namespaces` that `readable` reads, their objects too (a cluster-scope failure
    may name rows and models of every namespace), and how many counts across namespaces are
    withheld."""
    if kind in COUNTED_ACROSS_NAMESPACES and not readable.reads_every(namespaces):
        return [], len(failures)
    return [item for item in failures if _reads_all(readable, item)], 0


def _reads_all(readable: Readable, failure: Mapping[str, Any]) -> bool:
    keys = failure.get("keys") or ()
    return readable.reads(str(failure.get("namespace", ""))) and all(readable.reads(str(key[1])) for key in keys)


def subscribe_problem(scope: Scope, cluster: str | None, globs_text: str) -> str | None:
    """Why `scope` may not create a receiver of `cluster` (None: every cluster) for the
    namespaces `globs_text` names, or None: it must read everything it would be sent."""
    if cluster is None:
        return None if scope.reads_whole(EVERY_CLUSTER) else "a receiver of every cluster needs a role on every cluster"
    if scope.reads_whole(cluster):
        return None
    globs = readable_by_receiver(globs_text).globs
    if globs and readable_by(scope, cluster).reads_every(globs):
        return None
    return (
        f"you need a role on cluster {cluster}, or on each namespace listed (named without a glob)"
        if globs
        else f"a receiver of every namespace of cluster {cluster} needs a role on the whole cluster"
    )

"""Loading policies: from files (POLICY_FILES, `manage.py load_policies`) or the admin, each
RuntimePolicy document one `Policy`, versioned: a changed text is a new version and revision."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import yaml
from django.db import transaction

import matching.policy

from .models import Policy, PolicyRevision

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class LoadResult:
    created: list[str]
    changed: list[str]
    unchanged: list[str]


def policy_validate(text: str, *, source: str, name: str | None = None) -> list[matching.policy.Policy]:
    """The policies of `text`; PolicyError naming line and field, or when `name` is given and
    the text is not exactly that one policy."""
    found = matching.policy.policies_from_text(text, source=source)
    if name is not None and [policy.name for policy in found] != [name]:
        raise matching.policy.PolicyError([f"{source}: the text must hold exactly one policy, named {name!r}"])
    return found


def policy_upsert(*, name: str, text: str, source: str, path: str = "") -> tuple[Policy, str]:
    """Store one policy's text; a changed text gets the next version. Returns the policy and
    created | changed | unchanged. The text must be valid (policy_validate)."""
    with transaction.atomic():
        policy = Policy.objects.select_for_update().filter(name=name).first()
        if policy is None:
            policy = Policy.objects.create(name=name, text=text, source=source, path=path)
            outcome = "created"
        elif policy.text == text:
            return policy, "unchanged"
        else:
            policy.text, policy.source, policy.path = text, source, path
            policy.version += 1
            policy.save()
            outcome = "changed"
        PolicyRevision.objects.create(policy=policy, version=policy.version, text=text, source=source)
    return policy, outcome


def policies_load_files(paths: Iterable[str | Path]) -> LoadResult:
    """Every RuntimePolicy document of the files and folders, stored by name. All files are
    validated first (PolicyError naming file, line and field): a bad file changes nothing."""
    created: list[str] = []
    changed: list[str] = []
    unchanged: list[str] = []
    for parsed in matching.policy.load_policies(paths):
        text = yaml.safe_dump(dict(parsed.document), sort_keys=False, allow_unicode=True)
        _policy, outcome = policy_upsert(name=parsed.name, text=text, source=Policy.Source.FILE, path=parsed.file)
        {"created": created, "changed": changed, "unchanged": unchanged}[outcome].append(parsed.name)
    logger.info("policies loaded: %d created, %d changed, %d unchanged", len(created), len(changed), len(unchanged))
    return LoadResult(created, changed, unchanged)


def assertions_enabled() -> list[tuple[Policy, matching.policy.Assertion]]:
    """(policy row, assertion) of every enabled policy. A stored text that no longer parses
    (written before a format change) is logged and left out, not fatal."""
    found = []
    for policy in Policy.objects.filter(enabled=True):
        try:
            parsed = policy_validate(policy.text, source=f"policy {policy.name} v{policy.version}", name=policy.name)
        except matching.policy.PolicyError as error:
            logger.warning("policy %s v%d cannot be read: %s", policy.name, policy.version, error.problems[0])
            continue
        found += [(policy, assertion) for assertion in parsed[0].assertions]
    return found

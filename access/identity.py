"""How a user is named to a delegating cluster (SubjectAccessReview, Impersonate-User/-Group).

Like kube-apiserver's `--oidc-username-prefix` / `--oidc-groups-prefix`, every name gets a
prefix: OIDC names and groups `OME_KUBE_USER_PREFIX` / `OME_KUBE_GROUP_PREFIX` (default `oidc:`),
Django accounts and groups `OME_KUBE_LOCAL_USER_PREFIX` / `OME_KUBE_LOCAL_GROUP_PREFIX` (default
`ome-compat:`). The prefixes are not empty, never start with `system:` and differ, so no name
the dashboard sends is a `system:` name and a local account never passes for an OIDC user of
the same name. `unsendable` refuses what an HTTP header cannot carry.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core import checks

SYSTEM_PREFIX = "system:"
PREFIX_SETTINGS = (
    "OME_KUBE_USER_PREFIX",
    "OME_KUBE_GROUP_PREFIX",
    "OME_KUBE_LOCAL_USER_PREFIX",
    "OME_KUBE_LOCAL_GROUP_PREFIX",
)


@dataclass(frozen=True)
class Actor:
    """Who acts: the Django username (empty: anonymous), and the name and groups the user has in
    Kubernetes (OIDC claims when signed in through OIDC, else the username and Django groups,
    with the prefixes above), for SubjectAccessReviews, impersonation and the audit log."""

    username: str = ""
    kube_user: str = ""
    kube_groups: tuple[str, ...] = ()
    oidc: bool = False


def actor_for(user: Any, oidc_name: str, oidc_groups: Iterable[Any], django_groups: Iterable[str]) -> Actor:
    """The Actor of a signed-in user: their OIDC name and groups when they have an OIDC name,
    else their Django username and groups."""
    if oidc_name:
        name, groups = oidc_name, [str(group) for group in oidc_groups]
        user_prefix, group_prefix = settings.OME_KUBE_USER_PREFIX, settings.OME_KUBE_GROUP_PREFIX
    else:
        name, groups = user.get_username(), list(django_groups)
        user_prefix, group_prefix = settings.OME_KUBE_LOCAL_USER_PREFIX, settings.OME_KUBE_LOCAL_GROUP_PREFIX
    return Actor(
        username=user.get_username(),
        kube_user=f"{user_prefix}{name}",
        kube_groups=tuple(dict.fromkeys(f"{group_prefix}{group}" for group in groups)),
        oidc=bool(oidc_name),
    )


def unsendable(actor: Actor) -> str | None:
    """Why the actor's name or a group cannot be sent to a cluster; None when all can. A header
    carries printable ASCII only here: http.client would fail on other text, CR/LF would split
    the header, and the API server reads no encoding of these two headers."""
    for what, name in [("user name", actor.kube_user), *(("group", group) for group in actor.kube_groups)]:
        if name.startswith(SYSTEM_PREFIX):
            return f"your {what} {name!r} starts with {SYSTEM_PREFIX!r}, which names Kubernetes' own identities"
        bad = next((char for char in name if not " " <= char <= "~"), None)
        if bad is not None:
            return (
                f"your {what} {name!a} cannot be sent in an HTTP header: it holds {bad!a} "
                f"(U+{ord(bad):04X}), and only printable ASCII can be; ask an administrator to change the "
                "name in the identity provider"
            )
        if not name.strip() or name != name.strip():
            return f"your {what} {name!a} is empty or starts or ends with a space"
    return None


@checks.register(checks.Tags.security)
def check_prefixes(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """The prefixes keep OIDC and local names apart and away from `system:`."""
    values = {name: str(getattr(settings, name)) for name in PREFIX_SETTINGS}
    errors: list[checks.CheckMessage] = [
        checks.Error(f"{name} must not be empty or start with {SYSTEM_PREFIX!r}", id="access.E001")
        for name, value in values.items()
        if not value or value.startswith(SYSTEM_PREFIX)
    ]
    for oidc, local in (PREFIX_SETTINGS[0], PREFIX_SETTINGS[2]), (PREFIX_SETTINGS[1], PREFIX_SETTINGS[3]):
        if values[oidc].startswith(values[local]) or values[local].startswith(values[oidc]):
            errors.append(checks.Error(f"{oidc} and {local} must differ, neither starting the other", id="access.E002"))
    return errors

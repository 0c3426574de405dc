"""The exec credential plugins an Argo CD cluster Secret may name, each with a fixed template:
which subcommand, which flags (each with the shape of its value, or none for a switch) and which
environment variables the Secret may give it. Nothing else passes: no positional argument, no
short option, no flag that names a file, a directory or a host to send a token to.

The plugin then runs through inventory/kube/exec_runner.py with an isolated interpreter, which
hands it a minimal environment: PATH and HOME, the variables of settings.OME_ARGOCD_EXEC_INHERIT
(the dashboard's own workload identity, chosen by its operator) and the Secret's checked ones.
None of the dashboard's other variables (DATABASE_URL, the OIDC client secret) reach it.

Flags and variables, from each plugin's source:
- kubelogin: Azure/kubelogin pkg/internal/token/options.go (AddFlags, UpdateFromEnv) and
  pkg/internal/env/variables.go.
- argocd-k8s-auth: argoproj/argo-cd cmd/argocd-k8s-auth/commands/ (argocd_k8s_auth.go: the
  `--verbose` switch and the aws, gcp and azure subcommands; aws.go: `--cluster-name`,
  `--role-arn`, `--profile`; azure.go: AAD_SERVER_APPLICATION_ID, AAD_ENVIRONMENT_NAME).
- gke-gcloud-auth-plugin: kubernetes/cloud-provider-gcp cmd/gke-gcloud-auth-plugin/main.go (the
  `--use_application_default_credentials` switch).
- aws (`aws eks get-token`, built from awsAuthConfig, never from a Secret's args): the AWS CLI's
  eks get-token reference (`--cluster-name`, `--role-arn`, and the global `--profile`).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings

RUNNER = Path(__file__).with_name("exec_runner.py")
# The runner reads which of its variables came from the Secret from this one (exec_runner.py).
SECRET_NAMES = "OME_EXEC_SECRET_ENV"

_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@:-]{0,127}")  # client, tenant, server ids; names
_SECRET = re.compile(r"[\x21-\x7e]{1,1024}")  # a client secret: printable, no spaces
_ARN = re.compile(r"arn:aws[a-z-]*:iam::\d{12}:role/[\w+=,.@/-]{1,512}")
_AZURE_RESOURCE = re.compile(r"/subscriptions/[\w-]+/resourceGroups/[\w.()-]+/providers/[\w./-]+", re.I)
_DURATION = re.compile(r"\d{1,4}(ms|s|m|h)")


def _choice(*values: str) -> re.Pattern[str]:
    return re.compile("|".join(map(re.escape, values)))


_AZURE_CLOUDS = _choice("AzurePublicCloud", "AzureChinaCloud", "AzureUSGovernmentCloud")
# Of kubelogin's login methods, those that need no person and read no file a Secret names
# (devicecode and interactive wait for a person; ropc takes a user's password).
_AZURE_LOGINS = _choice("workloadidentity", "msi", "spn", "azurecli")


@dataclass(frozen=True)
class Form:
    """One accepted shape of a plugin's command line: flags (None: a switch without a value) and
    the Secret's environment variables, each with the pattern its value must match whole."""

    flags: Mapping[str, re.Pattern[str] | None] = field(default_factory=dict)
    env: Mapping[str, re.Pattern[str]] = field(default_factory=dict)


_AWS_FLAGS: dict[str, re.Pattern[str] | None] = {"--cluster-name": _ID, "--role-arn": _ARN, "--profile": _ID}

# For each command, its forms by subcommand ("" for a command without one).
PLUGINS: dict[str, dict[str, Form]] = {
    "kubelogin": {
        "get-token": Form(
            flags={
                "--login": _AZURE_LOGINS,
                "--server-id": _ID,
                "--client-id": _ID,
                "--tenant-id": _ID,
                "--environment": _AZURE_CLOUDS,
                "--identity-resource-id": _AZURE_RESOURCE,
                "--legacy": None,
                "--timeout": _DURATION,
            },
            env={
                "AAD_LOGIN_METHOD": _AZURE_LOGINS,
                "AAD_SERVICE_PRINCIPAL_CLIENT_ID": _ID,
                "AAD_SERVICE_PRINCIPAL_CLIENT_SECRET": _SECRET,
                "AZURE_CLIENT_ID": _ID,
                "AZURE_CLIENT_SECRET": _SECRET,
                "AZURE_TENANT_ID": _ID,
            },
        )
    },
    "argocd-k8s-auth": {
        "aws": Form(flags={**_AWS_FLAGS, "--verbose": None}),
        "gcp": Form(flags={"--verbose": None}),
        "azure": Form(
            flags={"--verbose": None},
            env={
                "AAD_SERVER_APPLICATION_ID": _ID,
                "AAD_ENVIRONMENT_NAME": _AZURE_CLOUDS,
                "AAD_LOGIN_METHOD": _AZURE_LOGINS,
                "AZURE_CLIENT_ID": _ID,
                "AZURE_TENANT_ID": _ID,
            },
        ),
    },
    "gke-gcloud-auth-plugin": {"": Form(flags={"--use_application_default_credentials": None})},
    "aws": {"eks get-token": Form(flags=_AWS_FLAGS)},
}


class ExecRefused(ValueError):
    """An exec plugin's arguments or environment outside its template (the message says which)."""


def checked_args(command: str, args: list[str]) -> None:
    """Raise ExecRefused unless `args` fit one form of `command`'s template."""
    forms = PLUGINS.get(command)
    if forms is None:
        raise ExecRefused(f"command {command!r} has no argument template (known: {', '.join(sorted(PLUGINS))})")
    prefix = _subcommand(command, args)
    _checked_flags(command, forms[prefix], list(args[len(prefix.split()) :]))


def _subcommand(command: str, args: list[str]) -> str:
    """The form's key whose words begin `args` ("" for a command without subcommands)."""
    forms = PLUGINS[command]
    for prefix in sorted(forms, key=len, reverse=True):
        if args[: len(prefix.split())] == prefix.split():
            return prefix
    raise ExecRefused(f"args: {command} needs one of the subcommands {', '.join(forms)}")


def _checked_flags(command: str, form: Form, words: list[str]) -> None:
    while words:
        word = words.pop(0)
        name, equals, value = word.partition("=")
        if name not in form.flags:
            what = f"flag {name!r}" if word.startswith("-") else f"argument {word!r}"
            raise ExecRefused(f"args: {what} is not allowed for {command} (allowed: {', '.join(form.flags) or 'none'})")
        pattern = form.flags[name]
        if pattern is None:
            if equals and value not in ("true", "false"):
                raise ExecRefused(f"args: {name} is a switch, not {value!r}")
            continue
        if not equals:
            if not words:
                raise ExecRefused(f"args: {name} needs a value")
            value = words.pop(0)
        if not pattern.fullmatch(value):
            raise ExecRefused(f"args: the value of {name} has not the shape {command} takes there")


def checked_env(command: str, args: list[str], env: Mapping[str, str]) -> None:
    """Raise ExecRefused unless every variable is one the command's form takes, of its shape."""
    form = PLUGINS[command][_subcommand(command, args)]
    for name, value in env.items():
        pattern = form.env.get(name)
        if pattern is None:
            allowed = ", ".join(form.env) or "none"
            raise ExecRefused(f"env.{name} is not allowed for {command} (allowed: {allowed})")
        if not pattern.fullmatch(value):
            raise ExecRefused(f"env.{name} has not the shape {command} takes there")


def exec_user(command: str, args: list[str], env: Mapping[str, str], api_version: str) -> dict[str, Any]:
    """The kubeconfig `exec` of a checked plugin: the runner, with an isolated interpreter, runs
    it with the minimal environment; the Secret's variables go through the kubernetes client's
    environment and are named for the runner (SECRET_NAMES)."""
    checked_args(command, args)
    checked_env(command, args, env)
    names = ",".join(env)
    return {
        "apiVersion": api_version,
        "command": sys.executable,
        "args": ["-I", str(RUNNER), ",".join(settings.OME_ARGOCD_EXEC_INHERIT), command, *args],
        "env": [*({"name": k, "value": v} for k, v in env.items()), {"name": SECRET_NAMES, "value": names}],
        "interactiveMode": "Never",
    }

"""Exec plugins from Argo CD cluster Secrets: every flag and variable of each allowed command's
template is accepted with a value of its shape and refused otherwise; every other flag (those
that name a file, a directory or a host: kubelogin's --federated-token-file, --authority-host,
--token-cache-dir, --client-certificate) and every other variable is refused, naming the Secret
and the key. The plugin really runs (through the kubernetes client) with a minimal environment:
none of the dashboard's variables reach it.

Flags and variables: Azure/kubelogin pkg/internal/token/options.go; argoproj/argo-cd
cmd/argocd-k8s-auth/commands/{argocd_k8s_auth,aws,azure}.go; kubernetes/cloud-provider-gcp
cmd/gke-gcloud-auth-plugin/main.go.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client
from kubernetes.config.kube_config import KubeConfigLoader
from pytest_django import Settings

from inventory.kube.argocd import ArgoCDSecretInvalid, kubeconfig_of
from inventory.kube.exec_plugins import PLUGINS

ARN = "arn:aws:iam::123456789012:role/argocd"
RESOURCE = "/subscriptions/0000/resourceGroups/rg/providers/Microsoft.ManagedIdentity/userAssignedIdentities/id"
# A value of the right shape for each flag and variable of every template.
GOOD = {
    "--login": "workloadidentity",
    "--server-id": "6dae42f8-4368-4678-94ff-3960e28e3630",
    "--client-id": "app-1",
    "--tenant-id": "tenant-1",
    "--environment": "AzurePublicCloud",
    "--identity-resource-id": RESOURCE,
    "--timeout": "30s",
    "--cluster-name": "prod",
    "--role-arn": ARN,
    "--profile": "hub",
    "AAD_LOGIN_METHOD": "spn",
    "AAD_SERVICE_PRINCIPAL_CLIENT_ID": "app-1",
    "AAD_SERVICE_PRINCIPAL_CLIENT_SECRET": "s3cr3t~value",
    "AZURE_CLIENT_ID": "app-1",
    "AZURE_CLIENT_SECRET": "s3cr3t~value",
    "AZURE_TENANT_ID": "tenant-1",
    "AAD_SERVER_APPLICATION_ID": "6dae42f8-4368-4678-94ff-3960e28e3630",
    "AAD_ENVIRONMENT_NAME": "AzureChinaCloud",
}


def exec_secret(command: str, args: list[str], env: dict[str, str] | None = None) -> dict[str, Any]:
    return {"execProviderConfig": {"command": command, "args": args, "env": env or {}}}


def forms() -> list[tuple[str, str]]:
    return [(command, prefix) for command, by in PLUGINS.items() if command != "aws" for prefix in by]


def every_flag() -> list[tuple[str, str, str]]:
    return [(c, p, flag) for c, p in forms() for flag in PLUGINS[c][p].flags]


def every_variable() -> list[tuple[str, str, str]]:
    return [(c, p, name) for c, p in forms() for name in PLUGINS[c][p].env]


@pytest.mark.parametrize(("command", "prefix", "flag"), every_flag())
def test_every_flag_of_a_template_is_accepted_with_a_value_of_its_shape(command: str, prefix: str, flag: str) -> None:
    switch = PLUGINS[command][prefix].flags[flag] is None
    args = [*prefix.split(), flag, *([] if switch else [GOOD[flag]])]
    user = kubeconfig_of("argocd/x", "https://k", exec_secret(command, args))["users"][0]["user"]["exec"]
    assert user["args"][-len(args) :] == args
    if not switch:
        with pytest.raises(ArgoCDSecretInvalid, match=f"value of {flag} has not the shape"):
            kubeconfig_of("argocd/x", "https://k", exec_secret(command, [*prefix.split(), flag, "../../etc/x y"]))


@pytest.mark.parametrize(("command", "prefix", "name"), every_variable())
def test_every_variable_of_a_template_is_accepted_with_a_value_of_its_shape(
    command: str, prefix: str, name: str
) -> None:
    secret = exec_secret(command, prefix.split(), {name: GOOD[name]})
    exec_config = kubeconfig_of("argocd/x", "https://k", secret)["users"][0]["user"]["exec"]
    assert {"name": name, "value": GOOD[name]} in exec_config["env"]
    with pytest.raises(ArgoCDSecretInvalid, match=f"env.{name} has not the shape"):
        kubeconfig_of("argocd/x", "https://k", exec_secret(command, prefix.split(), {name: "a b\nc"}))


@pytest.mark.parametrize(
    ("command", "args", "env", "why"),
    [
        # The audit's attack: read the hub's kubeconfig and post it elsewhere.
        (
            "kubelogin",
            ["get-token", "--federated-token-file", "/etc/ome/kubeconfigs/hub.yaml"],
            {},
            "flag '--federated-token-file' is not allowed",
        ),
        (
            "kubelogin",
            ["get-token", "--authority-host", "https://elsewhere/"],
            {},
            "flag '--authority-host' is not allowed",
        ),
        (
            "kubelogin",
            ["get-token", "--authority-host=https://elsewhere/"],
            {},
            "flag '--authority-host' is not allowed",
        ),
        ("kubelogin", ["get-token", "--token-cache-dir", "/tmp"], {}, "flag '--token-cache-dir' is not allowed"),
        (
            "kubelogin",
            ["get-token", "--client-certificate", "/etc/ome/k.pfx"],
            {},
            "flag '--client-certificate' is not allowed",
        ),
        ("kubelogin", ["get-token", "--client-secret", "x"], {}, "flag '--client-secret' is not allowed"),
        ("kubelogin", ["get-token", "--username", "u", "--password", "p"], {}, "flag '--username' is not allowed"),
        ("kubelogin", ["get-token", "--use-azurerm-env-vars"], {}, "flag '--use-azurerm-env-vars' is not allowed"),
        ("kubelogin", ["get-token", "--pop-enabled"], {}, "flag '--pop-enabled' is not allowed"),
        ("kubelogin", ["get-token", "-l", "msi"], {}, "flag '-l' is not allowed"),
        ("kubelogin", ["get-token", "--login", "devicecode"], {}, "value of --login has not the shape"),
        ("kubelogin", ["get-token", "--login", "ropc"], {}, "value of --login has not the shape"),
        ("kubelogin", ["convert-kubeconfig"], {}, "kubelogin needs one of the subcommands get-token"),
        ("kubelogin", ["get-token", "extra"], {}, "argument 'extra' is not allowed"),
        ("kubelogin", ["get-token", "--server-id"], {}, "--server-id needs a value"),
        ("kubelogin", ["get-token", "--legacy=/etc/x"], {}, "--legacy is a switch"),
        (
            "kubelogin",
            ["get-token"],
            {"AZURE_FEDERATED_TOKEN_FILE": "/etc/ome/kubeconfigs/hub.yaml"},
            "env.AZURE_FEDERATED_TOKEN_FILE is not allowed",
        ),
        (
            "kubelogin",
            ["get-token"],
            {"AZURE_AUTHORITY_HOST": "https://elsewhere/"},
            "env.AZURE_AUTHORITY_HOST is not allowed",
        ),
        (
            "kubelogin",
            ["get-token"],
            {"AZURE_CLIENT_CERTIFICATE_PATH": "/k.pfx"},
            "env.AZURE_CLIENT_CERTIFICATE_PATH is not allowed",
        ),
        ("kubelogin", ["get-token"], {"AZURE_CONFIG_DIR": "/tmp"}, "env.AZURE_CONFIG_DIR is not allowed"),
        ("kubelogin", ["get-token"], {"PATH": "/tmp/elsewhere"}, "env.PATH is not allowed"),
        ("kubelogin", ["get-token"], {"LD_PRELOAD": "/tmp/x.so"}, "env.LD_PRELOAD is not allowed"),
        ("kubelogin", ["get-token"], {"HOME": "/tmp"}, "env.HOME is not allowed"),
        ("argocd-k8s-auth", ["aws", "--cluster-name", "p", "--role-arn", "not-an-arn"], {}, "value of --role-arn"),
        ("argocd-k8s-auth", ["aws", "--region", "x"], {}, "flag '--region' is not allowed"),
        ("argocd-k8s-auth", ["gcp", "--cluster-name", "p"], {}, "flag '--cluster-name' is not allowed"),
        ("argocd-k8s-auth", ["oidc"], {}, "needs one of the subcommands"),
        (
            "argocd-k8s-auth",
            ["azure"],
            {"AZURE_FEDERATED_TOKEN_FILE": "/x"},
            "env.AZURE_FEDERATED_TOKEN_FILE is not allowed",
        ),
        (
            "argocd-k8s-auth",
            ["gcp"],
            {"GOOGLE_APPLICATION_CREDENTIALS": "/x"},
            "env.GOOGLE_APPLICATION_CREDENTIALS is not allowed",
        ),
        ("gke-gcloud-auth-plugin", ["--project", "p"], {}, "flag '--project' is not allowed"),
        ("gke-gcloud-auth-plugin", [], {"CLOUDSDK_CONFIG": "/tmp"}, "env.CLOUDSDK_CONFIG is not allowed"),
    ],
)
def test_flags_and_variables_outside_the_template_are_refused_naming_the_secret(
    command: str, args: list[str], env: dict[str, str], why: str
) -> None:
    with pytest.raises(ArgoCDSecretInvalid) as refused:
        kubeconfig_of("argocd/x", "https://k", exec_secret(command, args, env))
    assert "Argo CD cluster Secret argocd/x: config.execProviderConfig." in refused.value.message
    assert why in refused.value.message


def test_an_aws_auth_config_value_of_the_wrong_shape_is_refused() -> None:
    with pytest.raises(ArgoCDSecretInvalid, match=r"config\.awsAuthConfig\.args: the value of --profile"):
        kubeconfig_of("argocd/x", "https://k", {"awsAuthConfig": {"clusterName": "p", "profile": "--debug"}})


def test_an_allowed_command_without_a_template_is_refused(settings: Settings) -> None:
    settings.OME_ARGOCD_EXEC_COMMANDS = ["kubelogin", "aws-iam-authenticator"]
    with pytest.raises(ArgoCDSecretInvalid, match="'aws-iam-authenticator' has no argument template"):
        kubeconfig_of("argocd/x", "https://k", exec_secret("aws-iam-authenticator", ["token", "-i", "c"]))


PLUGIN = """#!/bin/sh
# A stand-in kubelogin: records its arguments and environment, answers an ExecCredential.
printf '%s\\n' "$@" > "$RECORD_DIR/args"
env > "$RECORD_DIR/env"
echo '{"apiVersion": "client.authentication.k8s.io/v1beta1", "kind": "ExecCredential", "status": {"token": "t0"}}'
"""


def test_the_plugin_runs_with_a_minimal_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, settings: Settings
) -> None:
    """Run by the real kubernetes client: the plugin sees its checked arguments, PATH, HOME, the
    inherited workload-identity variable and the Secret's variable, and nothing else of the
    dashboard's environment (DATABASE_URL, the OIDC secret, PYTHONPATH)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    plugin = bin_dir / "kubelogin"
    plugin.write_text(PLUGIN.replace("$RECORD_DIR", str(tmp_path)))
    plugin.chmod(plugin.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("DATABASE_URL", "postgres://dashboard:hunter2@db/ome")
    monkeypatch.setenv("OIDC_RP_CLIENT_SECRET", "oidc-secret")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    monkeypatch.setenv("AZURE_FEDERATED_TOKEN_FILE", "/var/run/secrets/azure/tokens/azure-identity-token")
    settings.OME_ARGOCD_EXEC_INHERIT = ["AZURE_FEDERATED_TOKEN_FILE"]
    args = ["get-token", "--login", "workloadidentity", "--server-id", "6dae42f8-4368-4678-94ff-3960e28e3630"]
    kubeconfig = kubeconfig_of("argocd/x", "https://k", exec_secret("kubelogin", args, {"AZURE_TENANT_ID": "t-1"}))
    configuration = client.Configuration()
    KubeConfigLoader(config_dict=kubeconfig).load_and_set(configuration)

    assert configuration.api_key == {"BearerToken": "Bearer t0"}
    assert (tmp_path / "args").read_text().split("\n")[:-1] == args
    seen = dict(line.split("=", 1) for line in (tmp_path / "env").read_text().splitlines() if "=" in line)
    assert seen["AZURE_TENANT_ID"] == "t-1"
    assert seen["AZURE_FEDERATED_TOKEN_FILE"] == "/var/run/secrets/azure/tokens/azure-identity-token"
    assert json.loads(seen["KUBERNETES_EXEC_INFO"])["kind"] == "ExecCredential"
    withheld = {"DATABASE_URL", "OIDC_RP_CLIENT_SECRET", "PYTHONPATH", "DJANGO_SETTINGS_MODULE"}
    assert withheld.isdisjoint(seen)
    assert set(seen) - {"PWD", "SHLVL", "_", "OLDPWD"} == {
        "PATH",
        "HOME",
        "KUBERNETES_EXEC_INFO",
        "AZURE_TENANT_ID",
        "AZURE_FEDERATED_TOKEN_FILE",
    }

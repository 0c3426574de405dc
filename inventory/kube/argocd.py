"""Argo CD's cluster Secrets on a hub cluster: list them, and turn one into the kubeconfig of
the member cluster it registers, read at use and kept in memory only.

Argo CD registers a cluster as a Secret labelled `argocd.argoproj.io/secret-type: cluster`
with data keys `name`, `server` and `config`, a JSON object: `bearerToken`, `tlsClientConfig`
(`insecure`, `caData`, `certData`, `keyData`, `serverName`), `execProviderConfig` (`command`,
`args`, `env`, `apiVersion`) or `awsAuthConfig` (`clusterName`, `roleARN`, `profile`; run as
`aws eks get-token`). Anything else (basic auth, a proxy, unknown keys) is refused with a
message naming the Secret and the key, never a value. An exec command must be one of
settings.OME_ARGOCD_EXEC_COMMANDS (by default not `aws`, whose arguments can copy files
anywhere), and its arguments and environment must fit the command's template
(inventory.kube.exec_plugins); it runs with a minimal environment (exec_runner.py). Whoever may
write Argo CD's Secrets must not choose what the dashboard runs, what it reads or where it sends it.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from kubernetes import client

from ..kube_errors import KubeConfigError
from ..models import Cluster
from . import _CLIENT_ERRORS, CONNECT_TIMEOUT, READ_TIMEOUT, _translated, configuration_for
from .exec_plugins import ExecRefused, exec_user

SECRET_TYPE_LABEL = "argocd.argoproj.io/secret-type"
EXEC_API_VERSION = "client.authentication.k8s.io/v1beta1"
_CONFIG_KEYS = frozenset({"bearerToken", "tlsClientConfig", "execProviderConfig", "awsAuthConfig"})
_TLS_KEYS = frozenset({"insecure", "caData", "certData", "keyData", "serverName"})
# awsAuthConfig's keys and the options of `aws eks get-token` they become.
_AWS_OPTIONS = {"clusterName": "--cluster-name", "roleARN": "--role-arn", "profile": "--profile"}


class ArgoCDSecretInvalid(KubeConfigError):
    """A cluster Secret this dashboard cannot build a client from (the message says why)."""

    code = "bad_argocd_secret"


@dataclass(frozen=True)
class ArgoCluster:
    """A member cluster as its Secret registers it: `secret` is NAMESPACE/NAME."""

    secret: str
    name: str
    server: str


def hub() -> Cluster:
    """The hub cluster of settings.OME_ARGOCD_HUB, a live source as OME_CLUSTERS writes it
    (`in-cluster` or `kubeconfig:PATH[#CONTEXT]`), as an unsaved Cluster for `configuration_for`."""
    # Imported here: the sources, Argo CD's among them, build on this module.
    from ..services import parse_cluster_setting

    text = settings.OME_ARGOCD_HUB.strip()
    refused = KubeConfigError(f"OME_ARGOCD_HUB {text!r}: expected in-cluster or kubeconfig:PATH[#CONTEXT]")
    try:
        [spec] = parse_cluster_setting(f"argocd-hub={text}")
    except ValueError:
        raise refused from None
    found = Cluster(name="argocd-hub", source=spec.source, kubeconfig=spec.kubeconfig, context=spec.context)
    if not found.is_live:  # a manifest folder has no Secrets to read
        raise refused
    return found


def _core_api() -> client.CoreV1Api:
    return client.CoreV1Api(client.ApiClient(configuration_for(hub())))


def _text(secret: str, data: Mapping[str, bytes | str], key: str) -> str:
    try:
        return base64.b64decode(data.get(key) or b"", validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        raise ArgoCDSecretInvalid(f"Argo CD cluster Secret {secret}: data.{key} is not base64 of UTF-8 text") from None


def _is_cluster_secret(secret: client.V1Secret) -> bool:
    labels = (secret.metadata.labels if secret.metadata else None) or {}
    return bool(labels.get(SECRET_TYPE_LABEL) == "cluster")


def cluster_secrets(namespace: str) -> list[ArgoCluster]:
    """The member clusters registered by the cluster Secrets of `namespace` on the hub (the
    `name` key, else the server, names one). Reads names and servers only."""
    api = _core_api()
    try:
        listed = api.list_namespaced_secret(
            namespace, label_selector=f"{SECRET_TYPE_LABEL}=cluster", _request_timeout=(CONNECT_TIMEOUT, READ_TIMEOUT)
        )
    except _CLIENT_ERRORS as error:
        raise _translated(error, plural="secrets", collection=False) from None
    finally:
        api.api_client.close()
    found = []
    for item in listed.items or []:
        if item.metadata is None or not _is_cluster_secret(item):
            continue
        ref = f"{namespace}/{item.metadata.name}"
        data = item.data or {}
        server = _text(ref, data, "server")
        found.append(ArgoCluster(ref, _text(ref, data, "name") or server, server))
    return found


def member_kubeconfig(cluster: Cluster) -> dict[str, Any]:
    """The kubeconfig (a dict, in memory only) of the member cluster that `cluster`'s Secret
    registers, read from the hub now. Only a cluster Secret is read (the hub's Role can read
    every Secret of the namespace; `argocd_secret` can be edited in the admin)."""
    namespace, _, name = cluster.argocd_secret.partition("/")
    api = _core_api()
    try:
        secret = api.read_namespaced_secret(name, namespace, _request_timeout=(CONNECT_TIMEOUT, READ_TIMEOUT))
    except _CLIENT_ERRORS as error:
        # Of the same class (a hub that is down is worth retrying), naming the hub's Secret.
        found = _translated(error, plural="secrets", collection=False)
        raise type(found)(
            f"Argo CD cluster Secret {cluster.argocd_secret}: the hub: {found.message}",
            http_status=found.http_status,
            cluster_wide=found.cluster_wide,
        ) from None
    finally:
        api.api_client.close()
    if not _is_cluster_secret(secret):
        raise ArgoCDSecretInvalid(
            f"Argo CD cluster Secret {cluster.argocd_secret}: not labelled {SECRET_TYPE_LABEL}: cluster"
        )
    data = secret.data or {}
    server = _text(cluster.argocd_secret, data, "server")
    try:
        config = json.loads(_text(cluster.argocd_secret, data, "config") or "{}")
    except ValueError:
        raise ArgoCDSecretInvalid(f"Argo CD cluster Secret {cluster.argocd_secret}: data.config is not JSON") from None
    return kubeconfig_of(cluster.argocd_secret, server, config)


def kubeconfig_of(secret: str, server: str, config: Any) -> dict[str, Any]:
    """A kubeconfig dict from a cluster Secret's `server` and `config` (see the module docstring)."""

    def refuse(why: str) -> ArgoCDSecretInvalid:
        return ArgoCDSecretInvalid(f"Argo CD cluster Secret {secret}: {why}")

    if not server.startswith("https://") and not server.startswith("http://"):
        raise refuse("data.server is not an http(s) URL")
    if not isinstance(config, dict):
        raise refuse("data.config is not a JSON object")
    if "username" in config or "password" in config:
        raise refuse("basic authentication (config.username/password) is not supported by the kubernetes client")
    unknown = sorted(set(config) - _CONFIG_KEYS)
    if unknown:
        raise refuse(f"config.{unknown[0]} is not supported (supported: {', '.join(sorted(_CONFIG_KEYS))})")
    tls = config.get("tlsClientConfig") or {}
    if not isinstance(tls, dict) or set(tls) - _TLS_KEYS:
        raise refuse(f"config.tlsClientConfig: only {', '.join(sorted(_TLS_KEYS))} are supported")
    cluster: dict[str, Any] = {"server": server}
    if tls.get("insecure"):
        cluster["insecure-skip-tls-verify"] = True
    for key, field in (("caData", "certificate-authority-data"), ("serverName", "tls-server-name")):
        if tls.get(key):
            cluster[field] = tls[key]
    user = _user(config, tls, refuse)
    if not user:
        raise refuse(
            "no credentials (bearerToken, tlsClientConfig.certData/keyData, execProviderConfig or awsAuthConfig)"
        )
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "member", "cluster": cluster}],
        "users": [{"name": "member", "user": user}],
        "contexts": [{"name": "member", "context": {"cluster": "member", "user": "member"}}],
        "current-context": "member",
    }


def _user(config: dict[str, Any], tls: dict[str, Any], refuse: Any) -> dict[str, Any]:
    user: dict[str, Any] = {}
    if config.get("bearerToken"):
        user["token"] = config["bearerToken"]
    if tls.get("certData") or tls.get("keyData"):
        if not (tls.get("certData") and tls.get("keyData")):
            raise refuse("config.tlsClientConfig: certData and keyData go together")
        user["client-certificate-data"], user["client-key-data"] = tls["certData"], tls["keyData"]
    exec_config, aws = config.get("execProviderConfig"), config.get("awsAuthConfig")
    if exec_config and aws:
        raise refuse("config.execProviderConfig and config.awsAuthConfig exclude each other")
    if aws:
        user["exec"] = _aws_exec(aws, refuse)
    elif exec_config:
        user["exec"] = _exec(exec_config, refuse)
    return user


def _aws_exec(aws: Any, refuse: Any) -> dict[str, Any]:
    """`awsAuthConfig` as the exec command `aws eks get-token`: its arguments are built here,
    so `aws` need not (and by default may not) be an exec command a Secret chooses."""
    if not isinstance(aws, dict) or not aws.get("clusterName"):
        raise refuse("config.awsAuthConfig.clusterName is required")
    unknown = sorted(set(aws) - set(_AWS_OPTIONS))
    if unknown:
        raise refuse(f"config.awsAuthConfig.{unknown[0]} is not supported (supported: {', '.join(_AWS_OPTIONS)})")
    options = [[_AWS_OPTIONS[key], str(aws[key])] for key in _AWS_OPTIONS if aws.get(key)]
    args = ["eks", "get-token", *(word for option in options for word in option)]
    return _plugin("aws", args, {}, EXEC_API_VERSION, refuse, "config.awsAuthConfig")


def _exec(exec_config: Any, refuse: Any) -> dict[str, Any]:
    if not isinstance(exec_config, dict) or not isinstance(exec_config.get("command"), str):
        raise refuse("config.execProviderConfig.command is required")
    command = exec_config["command"]
    allowed = settings.OME_ARGOCD_EXEC_COMMANDS
    if os.path.basename(command) != command or command not in allowed:
        raise refuse(
            f"config.execProviderConfig.command {command!r} is not one of OME_ARGOCD_EXEC_COMMANDS "
            f"({', '.join(allowed) or 'none'})"
        )
    env = exec_config.get("env") or {}
    args = exec_config.get("args") or []
    if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
        raise refuse("config.execProviderConfig.env is not a mapping of names to strings")
    if not isinstance(args, list) or not all(isinstance(arg, str) for arg in args):
        raise refuse("config.execProviderConfig.args is not a list of strings")
    api_version = str(exec_config.get("apiVersion") or EXEC_API_VERSION)
    return _plugin(command, args, {str(k): v for k, v in env.items()}, api_version, refuse, "config.execProviderConfig")


def _plugin(command: str, args: list[str], env: dict[str, str], api_version: str, refuse: Any, key: str) -> Any:
    """The exec entry of a plugin checked against its template (inventory.kube.exec_plugins)."""
    try:
        return exec_user(command, args, env, api_version)
    except ExecRefused as refused:
        raise refuse(f"{key}.{refused}") from None

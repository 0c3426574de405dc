"""A context of a kubeconfig file of the kubeconfig directory (inventory.kubeconfigs), read at use."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..kubeconfigs import KubeconfigInvalid, kubeconfig_dir, kubeconfig_read
from .base import ClientConfig, ClusterSource, ClusterSpec, Offer

if TYPE_CHECKING:
    from ..models import Cluster


class KubeconfigSource(ClusterSource):
    key = "kubeconfig"
    member = "KUBECONFIG"
    label = "Kubeconfig"
    order = 10
    live = True
    command_noun = "a kubeconfig context"
    page_label = "A context of a kubeconfig file"
    field_label = "Kubeconfig and context"
    none_offered = "no kubeconfig file in the kubeconfig directory"
    setting_syntax = "kubeconfig:PATH[#CONTEXT]"
    api_registrable = True

    def describe(self, cluster: Cluster) -> str:
        return f"kubeconfig {cluster.kubeconfig}" + (f" (context {cluster.context})" if cluster.context else "")

    def offer(self) -> Offer:
        """Every context of every file of the directory, by file and context name only; a file
        that cannot be used is named as a problem."""
        found = Offer()
        folder = kubeconfig_dir()
        for path in sorted(folder.iterdir()) if folder.is_dir() else []:
            if path.name.startswith(".") or not path.is_file():
                continue
            try:
                _, data = kubeconfig_read(path.name)
            except KubeconfigInvalid as error:
                found.problems.append(error.message)
                continue
            for context in data.get("contexts") or []:
                name = str(context.get("name") or "")
                found.choices.append((f"{path.name}#{name}", f"{path.name}: context {name}"))
        return found

    def spec_from_page(self, name: str, value: str, offer: Offer) -> ClusterSpec:
        path, _, context = value.partition("#")
        kubeconfig_read(path, context)
        return ClusterSpec(name, self.key, kubeconfig=path, context=context)

    def spec_from_setting(self, name: str, argument: str) -> ClusterSpec | None:
        if not argument:
            return None
        path, _, context = argument.partition("#")
        return ClusterSpec(name, self.key, kubeconfig=path.strip(), context=context.strip())

    def add_arguments(self, sources: argparse._MutuallyExclusiveGroup, parser: argparse.ArgumentParser) -> None:
        sources.add_argument(
            "--kubeconfig",
            metavar="PATH",
            help="a kubeconfig file inside the kubeconfig directory (OME_KUBECONFIG_DIR, default kubeconfigs/); "
            "a relative path starts from the current directory",
        )
        parser.add_argument("--context", default="", help="kubeconfig context (with --kubeconfig)")

    def spec_from_options(self, name: str, options: dict[str, Any]) -> ClusterSpec | None:
        if not options["kubeconfig"]:
            return None
        # As any command line does: relative to where it runs (the directory check follows).
        kubeconfig = str(Path(options["kubeconfig"]).absolute())
        return ClusterSpec(name, self.key, kubeconfig, options["context"])

    def cluster_fields(self, spec: ClusterSpec) -> dict[str, Any]:
        """KubeconfigInvalid unless the file is in the kubeconfig directory and defines the context."""
        path, _ = kubeconfig_read(spec.kubeconfig, spec.context)
        return {**super().cluster_fields(spec), "kubeconfig": str(path)}

    def client_config(self, cluster: Cluster) -> ClientConfig:
        path, data = kubeconfig_read(cluster.kubeconfig, cluster.context)
        return ClientConfig(data, cluster.context or None, str(path.parent))


SOURCE = KubeconfigSource()

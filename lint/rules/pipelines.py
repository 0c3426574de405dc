"""Diffusion-pipeline findings: `pipeline-would-exclude` (adding diffusionPipeline to a runtime
would stop it matching models that have no recorded pipeline, the seed page's pvc:// warning)
and `pipeline-missing-on-model` (a runtime with diffusionPipeline excludes models only for want
of a recorded pipeline; `matching.pipeline_patch` fixes them)."""

from __future__ import annotations

from collections.abc import Iterable

import matching
from inventory.parsed import Inventory
from matching import CandidateIndex, Model, ObjectKey, Runtime, key_dict, key_text

from .report import Finding, key_names
from .selections import Rows

_DIFFUSERS = "diffusers"


def _scheme(model: Model) -> str:
    uri = model.storage_uri or ""
    return uri.split("://", 1)[0] + "://" if "://" in uri else ""


def _serves_diffusion(runtime: Runtime, models: Iterable[Model]) -> bool:
    for entry in runtime.entries:
        names = {ref.name for ref in (entry.format, entry.framework) if ref is not None}
        if entry.pipeline is not None or _DIFFUSERS in names or (entry.architecture or "").endswith("Pipeline"):
            return True
    return any(model.pipeline is not None or model.format.name == _DIFFUSERS for model in models)


def pipeline_would_exclude(rows: Rows) -> list[Finding]:
    inventory = rows.inventory
    findings = []
    for runtime_key, runtime in sorted(inventory.runtimes.items()):
        if runtime.is_disabled:
            continue
        matched = [inventory.models[key] for key in rows.matched_models(runtime_key)]
        if not matched or not _serves_diffusion(runtime, matched):
            continue
        bare = [model for model in matched if model.pipeline is None]
        if not bare:
            continue
        bare_keys = [model.key for model in bare]
        picked = sorted({item.model for item in rows.ranked.get(runtime_key, ()) if item.rank == 0} & set(bare_keys))
        schemes = sorted({_scheme(model) for model in bare if _scheme(model)})
        via = f" ({', '.join(schemes)})" if schemes else ""
        findings.append(
            Finding(
                "warning" if picked else "info",
                "pipeline-would-exclude",
                f"adding diffusionPipeline to the matching entries of {key_text(runtime_key)} would stop it matching "
                f"{len(bare)} model(s) with no recorded pipeline{via}: {key_names(bare_keys)}"
                + (f"; OME picks it today for {key_names(picked)}" if picked else "")
                + ". Set spec.diffusionPipeline on those models first",
                runtimes=[runtime_key],
                models=bare_keys,
                details={"selected_for": [key_dict(key) for key in picked], "storage_schemes": schemes},
            )
        )
    return findings


def pipeline_missing_on_model(inventory: Inventory, index: CandidateIndex) -> list[Finding]:
    findings = []
    for runtime_key, runtime in sorted(inventory.runtimes.items()):
        if runtime.is_disabled or not any(entry.pipeline is not None for entry in runtime.entries):
            continue
        pipeline_entries = [entry for entry in runtime.entries if entry.pipeline is not None]
        fixable: list[tuple[ObjectKey, dict[str, object] | None, bool]] = []
        for model_key in index.candidates(runtime, pipeline_entries):
            model = inventory.models[model_key]
            if not model.format.name or inventory.grid.verdict(model_key, runtime_key)[0]:
                continue
            plan = matching.pipeline_patch(model, runtime, behaviour=inventory.behaviour)
            if plan.patch is not None:
                fixable.append((model_key, plan.patch, model.pipeline is None))
        if not fixable:
            continue
        models = [key for key, _patch, _bare in fixable]
        missing = [key for key, _patch, bare in fixable if bare]
        partial = [key for key, _patch, bare in fixable if not bare]
        parts = []
        if missing:
            parts.append(f"{key_names(missing)} (no recorded pipeline)")
        if partial:
            parts.append(f"{key_names(partial)} (recorded pipeline lacks required fields)")
        findings.append(
            Finding(
                "warning",
                "pipeline-missing-on-model",
                f"{key_text(runtime_key)} excludes {len(models)} model(s) only because of their diffusionPipeline: "
                f"{'; '.join(parts)}. A merge patch of the model's spec.diffusionPipeline makes it match",
                runtimes=[runtime_key],
                models=models,
                details={"patches": [{"model": key_dict(key), "patch": patch} for key, patch, _bare in fixable]},
            )
        )
    return findings

"""Findings about a runtime alone: `half-open-size-range` (Q22), `empty-size-range`,
`inverted-size-range`, `unparsable-size-bound`, `unknown-operator`, `unparsable-version`,
`entry-without-format` (Q23), `no-supported-formats`, `priority-below-1`, `negative-weight`,
`empty-pipeline-requirement` (Q10)."""

from __future__ import annotations

from matching import FormatRef, Runtime, go_parse_float, key_text, operator_problem, version_problem

from .report import Finding


def _size_bound_unparsable(text: str) -> bool:
    number = text[:-1] if text.endswith(("T", "B", "M")) else text
    value = go_parse_float(number)
    return value is None


def runtime_findings(runtime: Runtime) -> list[Finding]:
    key = runtime.key
    name = key_text(key)
    found = []

    def add(severity: str, code: str, message: str, **details: object) -> None:
        found.append(Finding(severity, code, f"{name}: {message}", runtimes=[key], details=dict(details)))

    if not runtime.entries:
        add("error", "no-supported-formats", "no supportedModelFormats: it matches no model")
    size_range = runtime.size_range
    if size_range is not None:
        if size_range.min_text is None and size_range.max_text is None:
            add(
                "warning",
                "empty-size-range",
                "modelSizeRange sets neither min nor max: OME since v1.3 admits every size, older OME dereferences "
                "the missing bounds and crashes on any model with a size (Q22)",
            )
        elif size_range.min_text is None or size_range.max_text is None:
            missing = "min" if size_range.min_text is None else "max"
            add(
                "warning",
                "half-open-size-range",
                f"modelSizeRange has no {missing}: OME since v1.3 treats it as open ({size_range.describe()}), "
                "older OME (v1.2.x) crashes with a nil-pointer panic on any model with a size (Q22); set both bounds",
                range=size_range.to_dict(),
            )
        for bound, text in (("min", size_range.min_text), ("max", size_range.max_text)):
            if text is not None and _size_bound_unparsable(text):
                add(
                    "warning",
                    "unparsable-size-bound",
                    f"modelSizeRange.{bound} {text!r} does not parse (a number with an upper-case T, B or M), "
                    "so OME reads it as 0",
                    bound=bound,
                    value=text,
                )
        low, high = size_range.min_value, size_range.max_value
        if low is not None and high is not None and low > high:
            add(
                "error",
                "inverted-size-range",
                f"modelSizeRange min {size_range.min_text} is above max {size_range.max_text}: "
                "every model with a size is rejected",
                range=size_range.to_dict(),
            )
    for index, entry in enumerate(runtime.entries):
        where = f"supportedModelFormats[{index}]"
        if entry.format is None:
            add("error", "entry-without-format", f"{where} has no modelFormat and never matches (Q23)", entry=index)
        refs: list[tuple[str, FormatRef | None]] = [("modelFormat", entry.format), ("modelFramework", entry.framework)]
        for label, ref in refs:
            if ref is None:
                continue
            problem = operator_problem(ref.operator)
            if problem:
                add("warning", "unknown-operator", f"{where}.{label}.operator: {problem}", entry=index, field=label)
            if ref.version is not None:
                problem = version_problem(ref.version)
                if problem:
                    add(
                        "warning",
                        "unparsable-version",
                        f"{where}.{label}.version {ref.version!r} does not parse ({problem}): the entry matches no "
                        "model that has a version, and rejects models without one",
                        entry=index,
                        field=label,
                    )
            if ref.weight < 0:
                add(
                    "warning",
                    "negative-weight",
                    f"{where}.{label}.weight is {ref.weight}: negative weights lower the score, and a score of 0 "
                    "or below is never auto-selected",
                    entry=index,
                    field=label,
                )
        if entry.priority is not None and entry.priority < 1:
            add(
                "warning",
                "priority-below-1",
                f"{where}.priority is {entry.priority}: the CRD requires at least 1 and the entry scores 0 or below",
                entry=index,
            )
        if entry.pipeline is not None and entry.pipeline.to_dict() == {}:
            add(
                "info",
                "empty-pipeline-requirement",
                f"{where}.diffusionPipeline is {{}}: it still rejects every model without a recorded pipeline, "
                "including pvc:// and vendor:// models and every LLM (Q10)",
                entry=index,
            )
    return found

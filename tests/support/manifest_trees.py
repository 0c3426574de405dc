"""Two manifest trees for the packaged command line and the GitHub Action: in BASE the seed
page's model is served by `srt-qwen-image`; in HEAD that runtime is disabled, so the model
loses its runtime. HEAD keeps both objects in one file, the runtime as its second document."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SEED_MODEL = ROOT / "demo/seed/clusterbasemodel-qwen-image-pvc.yaml"
SEED_RUNTIME = ROOT / "demo/seed/clusterservingruntime-srt-qwen-image-pipeline.yaml"
RUNTIME = ROOT / "catalog/runtimes/srt/Qwen/Qwen-Image-rt.yaml"
HEAD_FILE = "manifests/qwen-image.yaml"


def write_trees(folder: Path) -> tuple[Path, Path, int]:
    """(base, head, line of the disabled runtime in HEAD_FILE) under `folder`."""
    model, runtime = SEED_MODEL.read_text(), RUNTIME.read_text()
    assert "  disabled: false\n" in runtime
    base, head = folder / "base", folder / "head"
    for tree, text in ((base, runtime), (head, runtime.replace("  disabled: false\n", "  disabled: true\n"))):
        (tree / "manifests").mkdir(parents=True)
        (tree / HEAD_FILE).write_text(model.rstrip("\n") + "\n---\n" + text)
    runtime_line = len(model.rstrip("\n").splitlines()) + 2
    return base, head, runtime_line

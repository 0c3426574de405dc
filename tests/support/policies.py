"""Policy documents shared by tests."""

from __future__ import annotations

DIFFUSION_POLICY = """apiVersion: compat.ome.io/v1alpha1
kind: RuntimePolicy
metadata: {name: diffusion}
spec:
  assertions:
    - name: every-diffusion-model-has-a-runtime
      assert: hasRuntime
      scope: {models: {formats: [diffusers]}}
"""
"""Issue 33's three-line policy (docs/policies.md): every diffusion model has an auto-selected runtime."""

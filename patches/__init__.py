"""Pipeline patches: plan, preview and apply `spec.diffusionPipeline` merge patches, audited.

Every write to a cluster goes through `patches.services.patch_apply`.
"""

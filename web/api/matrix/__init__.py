"""The matrix's JSON API: cells (paged, exported), one cell's trace, a model's selection,
history and builds.

Every response here says which OME behaviour profile judged the cluster, and why: the
`X-OME-Behaviour` header (profile, commit, how it was chosen) and, for a published build,
`X-OME-Build`; JSON envelopes also carry `ome` (inventory.ome_release.ome_description) and
`build`.
"""

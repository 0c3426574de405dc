"""Operations: liveness and readiness probes (probes), Prometheus metrics (metrics), the
middleware that answers them before the host check (middleware), and log formatters that write
JSON lines and blank out secrets (logs).

This package imports nothing itself: LOGGING loads ome_dashboard.ops.logs before the apps are
ready, so importing the package must not reach any model.
"""

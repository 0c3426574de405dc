"""Keeping the inventory of a live cluster current: full resyncs, and watches applying each change.

A resync (resync) lists a kind and makes the stored objects equal to the list (pruning the rest).
A watch (watch) applies every ADDED, MODIFIED and DELETED event as it comes (events), from the
resourceVersion stored in SyncState, which it advances after each event and BOOKMARK so that the
next watch resumes there. Watch leases (leases) keep one watch per kind; manage.py sync_cluster
watches every kind of a cluster until stopped (cluster_watch).

Resyncs and watches of the same kind may run at the same time (beat's resync while a watch task
runs). Both write under a lock on the kind's SyncState row, and SyncState.resource_version is the
point of the cluster's history the stored objects reflect: an event at or before it is already
included (skipped), and a list older than it would undo newer events (listed again).
"""

"""The read path: scan planning (snapshot -> manifests -> splits), reading splits, read-only metadata queries."""

"""The provider's Airflow UI plugin: a read-only page of the ``paimon`` connections' tables (docs/ui.md)."""

URL_PREFIX = "/paimon"
"""Where the API server mounts the pages' app (and the UI's nav link points)."""

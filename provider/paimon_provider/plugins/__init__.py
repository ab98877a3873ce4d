"""The provider's Airflow UI plugin: a read-only page of the ``paimon`` connections' tables (docs/ui.md)."""

"""The provider's helpers beside its Airflow components (as the databricks and amazon providers keep them): the
connection, Assets and partition keys, the job spec and its renderer, lineage, table metadata checks, upkeep and
write-audit-publish DAG builders, the run identity and the application's packaging. Nothing here is found by
Airflow through a dotted path except :func:`paimon_provider.utils.assets.sanitize_uri` and
:func:`paimon_provider.utils.lineage.asset_to_openlineage` (provider info, ``asset-uris``)."""

"""Hooks: :class:`~paimon_provider.hooks.table.PaimonTableHook` (read-only table access through the engine) and
:class:`~paimon_provider.hooks.spark.PaimonSparkHook` (spark-submit of the Paimon Spark application)."""

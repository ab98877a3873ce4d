"""Spark integration of the table engine, in two rooms and a runtime.

* :mod:`table_engine.spark.datasource`: the ``paimon`` Python data source (batch and streaming reads and writes;
  :func:`register` makes it available in a session), the writes routed by key (:func:`prepare_write`, as
  dynamic-bucket tables need) and :func:`read_table` (batch reads whose raw-convertible files go through Spark's
  native Parquet reader);
* :mod:`table_engine.spark.jobs`: the Spark jobs of the application's commands (write, compact,
  consume-changelog), the small ones on the driver, and :func:`write_dataframe`;
* the runtime, at this package's top: ``table_engine/spark/app.py``, the one spark-submit application, with the
  subcommands of ``table-engine`` (and Spark Connect's :func:`~table_engine.spark.app.run_connected`);
  :mod:`table_engine.spark.compat` (what differs between Spark 3.5, 4.x and Spark Connect, used by both rooms and
  the provider); :mod:`table_engine.spark.connect_server` (``python -m table_engine.spark.connect_server``). These
  three are paths users and the provider name (spark-submit's application file, a ``python -m`` command), so they
  keep their places instead of moving into a third room of three; none of them shadows a standard module (Python
  puts this directory first on ``sys.path`` when spark-submit runs ``app.py``).

Imports of pyspark stay inside this package (the rest of ``table_engine`` never needs it). Spark 3.5 and 4.x:
the application's commands and :func:`write_dataframe` need nothing from Spark 4 (``mapInArrow`` tasks, RDDs); the
``paimon`` data source uses Spark 4's Python Data Source API (``pyspark.sql.datasource``), so only :func:`register`
and reads that fall back to the source need Spark 4.0+, and say so in one error on 3.5
(:mod:`table_engine.spark.compat`). The modules that import ``pyspark.sql.datasource`` at their top (``source``,
``reader``, ``source_writer``, ``filters`` of :mod:`table_engine.spark.datasource`) are imported only from those
places.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

FILTER_PUSHDOWN_CONF = "spark.sql.python.filterPushdown.enabled"
LEAF_PARALLELISM_CONF = "spark.sql.leafNodeDefaultParallelism"


def register(spark: SparkSession, filter_pushdown: bool = True) -> None:
    """Register the ``paimon`` data source with ``spark``.

    With ``filter_pushdown`` (default) this also sets ``spark.sql.python.filterPushdown.enabled=true`` for the
    session, so that Spark hands the source its filters (partition, file and row pruning). A session that keeps the
    setting off must read with ``.option("filterPushdown", "false")``: Spark refuses readers that accept filters
    while pushdown is off.

    Append-table scans are cut into pieces of at most ``total size / parallelism`` (whole files), with parallelism
    the session's ``spark.sql.leafNodeDefaultParallelism`` (else its default parallelism), read here once: the
    source plans outside the session.
    """
    from table_engine.spark.compat import default_parallelism, require_data_sources

    require_data_sources()
    from table_engine.spark.datasource.source import PaimonDataSource

    if filter_pushdown:
        spark.conf.set(FILTER_PUSHDOWN_CONF, "true")
    parallelism = int(spark.conf.get(LEAF_PARALLELISM_CONF, None) or default_parallelism(spark))
    # a subclass per session, pickled by value with the registration: it carries the parallelism to the planner
    source = type(PaimonDataSource.__name__, (PaimonDataSource,), {"parallelism": parallelism,
                                                                     "__module__": __name__})
    spark.dataSource.register(source)


def __getattr__(name: str) -> object:
    if name in ("prepare_write", "write_dataframe"):
        from table_engine.spark.jobs import run

        return getattr(run, name)
    if name == "read_table":
        from table_engine.spark.datasource import native_read

        return native_read.read_table
    raise AttributeError(f"module 'table_engine.spark' has no attribute {name!r}")

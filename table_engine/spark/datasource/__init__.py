"""The ``paimon`` Python data source and what Spark reads and writes through: one room of :mod:`table_engine.spark`.

* :mod:`~table_engine.spark.datasource.source`: ``spark.read/readStream/write/writeStream.format("paimon")``
  (Spark 4.0+), built from
* :mod:`~table_engine.spark.datasource.reader` (batch and streaming readers) with
  :mod:`~table_engine.spark.datasource.filters` (Spark's pushed-down filters as the engine's), and
  :mod:`~table_engine.spark.datasource.source_writer` (the source's writers) over
  :mod:`~table_engine.spark.datasource.writer` (the task and commit side of every DataFrame write, and the routing
  of rows by key, :func:`~table_engine.spark.datasource.writer.prepare_write`, that the jobs use too);
* :mod:`~table_engine.spark.datasource.options`: the source's options and how it finds its table;
* :mod:`~table_engine.spark.datasource.spark_types`: Paimon types <-> Spark SQL types, Arrow batches in Spark's
  layout (not ``types``, so that no module of the package shadows the standard one);
* :mod:`~table_engine.spark.datasource.native_read`: batch reads whose raw-convertible files go through Spark's
  native Parquet reader, the rest through the source.

``source``, ``reader``, ``source_writer`` and ``filters`` import ``pyspark.sql.datasource`` (Spark 4.0+) at their
top; the application's jobs import only the others. The writer's commit and task helpers are the jobs' own
(:mod:`table_engine.spark.jobs.commit`, :mod:`~table_engine.spark.jobs.task_env`, and
:mod:`~table_engine.spark.jobs.de_write` for data-evolution tables): a write through the source commits exactly as a
job does.
"""

"""The Spark jobs of the application's commands: one room of :mod:`table_engine.spark`.

* :mod:`~table_engine.spark.jobs.run`: the Spark runner of the ``spark_job`` commands (``write``, ``compact``,
  ``consume-changelog``; registered as each command entry's ``spark``), and
  :func:`~table_engine.spark.jobs.run.write_dataframe`;
* :mod:`~table_engine.spark.jobs.driver_jobs`: the same commands run on the driver when their input is small (each
  entry's ``input_size``);
* the ways a job writes: :mod:`~table_engine.spark.jobs.map_write` (a DataFrame through ``mapInArrow`` tasks),
  :mod:`~table_engine.spark.jobs.file_write` (source files and change splits, without Spark rows) and
  :mod:`~table_engine.spark.jobs.de_write` (data-evolution tables);
* :mod:`~table_engine.spark.jobs.compact_job`: compaction in Spark tasks;
* :mod:`~table_engine.spark.jobs.commit`: the one exactly-once commit of the tasks' files, on the driver;
* :mod:`~table_engine.spark.jobs.task_env`: what a task sets up and how it writes its rows.

The spark-submit application that runs them stays at ``table_engine/spark/app.py`` (the path users and the provider
give spark-submit). This package's ``__init__`` imports nothing: executors unpickle task functions of single
modules here without loading the others.
"""

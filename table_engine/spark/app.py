"""The Spark application: ``spark-submit table_engine/spark/app.py <command> --warehouse W --table db.t ...``.

Arguments are exactly those of the ``table-engine`` console script (:mod:`table_engine.cli`), or the whole command
as one JSON object: ``app.py --command-json '<json>'`` (what the provider sends). The commands that are Spark jobs
(``spark_job`` in :mod:`table_engine.ops`: write, compact, consume-changelog) run with
:mod:`table_engine.spark.jobs`; the other commands change only table metadata and run on the driver. The master
comes from spark-submit. The job logs to stderr and prints one JSON object line to stdout, last (spark-submit
merges the Python driver's stderr into its stdout); the exit code is non-zero when it failed.
"""

from __future__ import annotations

import os
import sys

if __package__ in (None, ""):
    # run as a script by spark-submit: Python put this file's directory first on sys.path, where its neighbours
    # (types.py) would shadow standard modules not imported yet (``typing`` imports ``types``); replace it by the
    # directory that contains the package, so that ``table_engine`` is importable
    _here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _here]
    sys.path.insert(0, os.path.dirname(os.path.dirname(_here)))

from collections.abc import Sequence  # noqa: E402
from typing import TYPE_CHECKING, Any  # noqa: E402

from table_engine.cli import run, setup_logging  # noqa: E402
from table_engine.ops import REGISTRY, Command  # noqa: E402
from table_engine.ops.argv import parse_invocation  # noqa: E402
from table_engine.ops.run import run_command  # noqa: E402

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

SPARK_COMMANDS = tuple(name for name, cls in REGISTRY.items() if cls.spark_job)


def main(argv: Sequence[str] | None = None) -> int:
    """The spark-submit application: run one command, with a SparkSession when it is a Spark job; the exit code.

    Metadata-only commands, and Spark-job commands small enough for the driver
    (:mod:`table_engine.spark.driver_jobs`), run without starting a SparkContext."""
    inv = parse_invocation(argv, prog="app.py")
    cmd = inv.command
    setup_logging(inv.log_level)
    session = _Session(f"paimon-{cmd.name}-{cmd.table}")

    def runner(c: Command) -> dict[str, Any]:
        if not c.spark_job:
            return run_command(c)
        from table_engine.spark import driver_jobs

        if driver_jobs.runs_on_driver(c, driver_jobs.max_input_size(submitted_conf())):
            return driver_jobs.run_on_driver(c)
        from table_engine.spark import jobs

        return jobs.run_spark_job(c, session.get())

    return run(cmd, runner, before_output=session.stop, verbose=inv.verbose)


def submitted_conf() -> dict[str, str]:
    """The Spark conf the application was submitted with (``spark-submit --conf``, ``spark-defaults.conf``),
    read through the JVM without starting a SparkContext."""
    from pyspark import SparkConf, SparkContext

    SparkContext._ensure_initialized()
    return dict(SparkConf().getAll())


class _Session:
    """The application's SparkSession, started when a command first needs it."""

    def __init__(self, app_name: str) -> None:
        self.app_name = app_name
        self._spark: SparkSession | None = None

    def get(self) -> SparkSession:
        if self._spark is None:
            from pyspark.sql import SparkSession

            from table_engine.spark import register
            from table_engine.spark.compat import has_data_sources

            spark = SparkSession.builder.appName(self.app_name).getOrCreate()
            spark.sparkContext.setLogLevel("WARN")
            if has_data_sources():  # Spark 4 (the jobs use the source); 3.5 runs them without it
                register(spark)
            self._spark = spark
        return self._spark

    def stop(self) -> None:
        if self._spark is not None:
            self._spark.stop()


if __name__ == "__main__":
    sys.exit(main())

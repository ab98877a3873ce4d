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
from collections.abc import Sequence
from typing import Any

if __package__ in (None, ""):
    # run as a script by spark-submit: make the package that contains this file importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from table_engine.cli import run, setup_logging  # noqa: E402
from table_engine.ops import REGISTRY, Command  # noqa: E402
from table_engine.ops.argv import parse_invocation  # noqa: E402
from table_engine.ops.run import run_command  # noqa: E402

SPARK_COMMANDS = tuple(name for name, cls in REGISTRY.items() if cls.spark_job)


def main(argv: Sequence[str] | None = None) -> int:
    """The spark-submit application: run one command with a SparkSession; the exit code."""
    inv = parse_invocation(argv, prog="app.py")
    cmd = inv.command
    setup_logging(inv.log_level)
    from pyspark.sql import SparkSession

    from table_engine.spark import jobs, register

    spark = SparkSession.builder.appName(f"paimon-{cmd.name}-{cmd.table}").getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    register(spark)

    def runner(c: Command) -> dict[str, Any]:
        return jobs.run_spark_job(c, spark) if c.spark_job else run_command(c)

    return run(cmd, runner, before_output=spark.stop, verbose=inv.verbose)


if __name__ == "__main__":
    sys.exit(main())

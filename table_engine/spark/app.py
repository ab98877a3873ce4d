"""The Spark application: ``spark-submit table_engine/spark/app.py <command> --warehouse W --table db.t ...``.

Arguments are exactly those of the ``table-engine`` console script (:mod:`table_engine.cli`). ``write``,
``compact`` and ``consume-changelog`` run as Spark jobs (:mod:`table_engine.spark.jobs`); the other commands
change only table metadata and run on the driver. The master comes from spark-submit. The job logs to stderr and
prints one JSON object line to stdout, last (spark-submit merges the Python driver's stderr into its stdout);
the exit code is non-zero when it failed.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

if __package__ in (None, ""):
    # run as a script by spark-submit: make the package that contains this file importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from table_engine.cli import LOCAL_COMMANDS, build_parser, run, setup_logging  # noqa: E402

SPARK_COMMANDS = ("write", "compact", "consume-changelog")


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser(prog="app.py").parse_args(argv)
    setup_logging(args.log_level)
    from pyspark.sql import SparkSession

    from table_engine.spark import jobs, register

    spark = SparkSession.builder.appName(f"paimon-{args.command}-{args.table}").getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    register(spark)
    spark_jobs: dict[str, Callable[[argparse.Namespace, Any], dict[str, Any]]] = {
        "write": jobs.spark_write, "compact": jobs.spark_compact, "consume-changelog": jobs.spark_consume_changelog,
    }
    commands: dict[str, Callable[[argparse.Namespace], dict[str, Any]]] = dict(LOCAL_COMMANDS)
    for name, job in spark_jobs.items():
        commands[name] = lambda a, job=job: job(a, spark)  # type: ignore[misc]
    return run(args, commands, before_output=spark.stop)


if __name__ == "__main__":
    sys.exit(main())

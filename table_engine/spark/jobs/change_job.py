"""``merge-into`` as a Spark job: its source read with Spark (``--sql``, or files in any format Spark reads) and
collected to the driver as Arrow, where the engine merges it (``delete`` and ``update`` are not Spark jobs: the
Spark application runs them with the engine on the driver, as the CLI does). Not spread over tasks yet: the source
must fit in the driver's memory (docs/row-level-changes.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from table_engine.ops.base import registers
from table_engine.ops.change_commands import MergeInto
from table_engine.ops.run import run_command
from table_engine.ops.run_changes import already_done, merge_source
from table_engine.spark.jobs.run import driver_catalog, source_frame

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["spark_merge_into"]


@registers("spark", MergeInto)
def spark_merge_into(args: MergeInto, spark: SparkSession) -> dict[str, Any]:
    """``merge-into`` of a source Spark reads (``--sql`` or files), merged by the engine on the driver."""
    catalog = driver_catalog(args)
    if args.source_table:
        return run_command(args, catalog)
    table = catalog.get_table(args.table)
    done = already_done(args, table)
    if done is not None:
        return done
    return merge_source(args, table, source_frame(spark, args).toArrow())

"""What this PySpark can do: Spark 3.5 and 4.x run the application's commands alike; the ``paimon`` data source
needs Spark 4's Python Data Source API (see :mod:`table_engine.spark`)."""

from __future__ import annotations

import importlib.util

from table_engine.errors import UnsupportedError

DATA_SOURCE_SPARK_VERSION = "4.0"
"""The first Spark version with Python data sources (``pyspark.sql.datasource``), which the ``paimon`` source needs."""


def has_data_sources() -> bool:
    """Whether this PySpark has the Python Data Source API (Spark 4.0+) that the ``paimon`` source is built on."""
    return importlib.util.find_spec("pyspark.sql.datasource") is not None


def require_data_sources() -> None:
    """Raise :class:`~table_engine.errors.UnsupportedError` (one line: the version needed, this version, what to use
    instead) when this PySpark has no Python data sources (Spark 3.5)."""
    if has_data_sources():
        return
    import pyspark

    raise UnsupportedError(
        f'the "paimon" data source (format("paimon"), table_engine.spark.register) needs Spark '
        f"{DATA_SOURCE_SPARK_VERSION} or later (Python data sources); this is pyspark {pyspark.__version__}: on "
        "Spark 3.5 use table_engine.spark.write_dataframe or the Spark application's commands (write, compact, "
        "consume-changelog, maintenance)")

"""What this PySpark can do: Spark 3.5 and 4.x run the application's commands alike; the ``paimon`` data source
needs Spark 4's Python Data Source API (see :mod:`table_engine.spark`); a Spark Connect session
(:func:`is_connect`) has no SparkContext (:func:`default_parallelism`)."""

from __future__ import annotations

import importlib.util
import os
import re
import urllib.parse
from typing import TYPE_CHECKING, Any

from table_engine.errors import CommandError, UnsupportedError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

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


# ---- Spark Connect: a client session has no SparkContext ---------------------------------------------------------
_PARALLELISM_PROBE_ROWS = 1 << 16
_connect_parallelism: dict[str, int] = {}


def is_connect(spark: SparkSession) -> bool:
    """Whether ``spark`` is a Spark Connect client session (``SparkSession.builder.remote(...)``): it has no
    SparkContext, RDDs or accumulators; DataFrames, ``mapInArrow`` and Python data sources work."""
    return type(spark).__module__.startswith("pyspark.sql.connect")


def _probed_parallelism(spark: SparkSession) -> int:
    """The default parallelism of a Spark Connect session's server, measured by a bare ``spark.range``."""
    key = str(spark.conf.get("spark.app.id", None) or getattr(spark, "session_id", None) or id(spark))
    if key not in _connect_parallelism:
        from pyspark.sql import functions as F

        probe = spark.range(0, _PARALLELISM_PROBE_ROWS).select(F.spark_partition_id().alias("p"))
        row = probe.agg(F.max("p")).first()
        _connect_parallelism[key] = int(row[0]) + 1 if row is not None and row[0] is not None else 1
    return _connect_parallelism[key]


CONNECT_CLIENT_ENV = ("SPARK_CONNECT_MODE_ENABLED", "SPARK_REMOTE", "SPARK_LOCAL_REMOTE")
"""What PySpark's Spark Connect client sets in ``os.environ``: a child process (spark-submit, the CLI) that inherits
them takes itself for a Connect client."""

CONNECT_DEFAULT_PORT = 15002
"""Spark Connect's port when a URL names none."""


def connect_address(url: str) -> tuple[str, int]:
    """``(host, port)`` of a Spark Connect URL ``sc://host[:port][/;params]`` (port :data:`CONNECT_DEFAULT_PORT`
    by default); a :class:`~table_engine.errors.CommandError` naming a URL that is not one."""
    parsed = urllib.parse.urlparse(url)
    try:
        port = parsed.port or CONNECT_DEFAULT_PORT
    except ValueError:
        port = -1
    if parsed.scheme != "sc" or not parsed.hostname or port <= 0:
        raise CommandError(f"Spark Connect URL {redacted_url(url)!r} is not sc://host[:port]")
    return parsed.hostname, port


def redacted_url(url: str) -> str:
    """``url`` without its parameters (a ``token`` may be among them): what logs and errors show."""
    return url.split(";", 1)[0].split("/;", 1)[0].rstrip("/")


def conf_value(spark: SparkSession, key: str) -> str | None:
    """A Spark conf value, None when unset: through ``spark.conf`` (a classic session and Spark Connect alike)."""
    try:
        value: Any = spark.conf.get(key, None)
    except Exception:  # noqa: BLE001  (Connect raises its own error types for keys it refuses to read)
        return None
    return None if value is None else str(value)


_LOCAL = re.compile(r"local(?:-cluster)?\[(\*|\d+)")


def default_parallelism(spark: SparkSession) -> int:
    """How many tasks the session's cores run at once: a classic session's ``sparkContext.defaultParallelism``.
    Over Spark Connect, where the client has no SparkContext, from the conf: ``spark.default.parallelism`` (a local
    server of :mod:`table_engine.spark.connect_server` sets it); ``local[n]`` / ``local[*]`` / ``local``;
    ``spark.cores.max``; ``spark.executor.instances`` x ``spark.executor.cores``; else the number of partitions of a
    bare ``spark.range`` (which Spark splits into exactly the default parallelism), measured once per server
    application in this process."""
    if not is_connect(spark):
        return max(1, int(spark.sparkContext.defaultParallelism))
    given = conf_value(spark, "spark.default.parallelism")
    if given and given.isdigit() and int(given) > 0:
        return int(given)
    master = conf_value(spark, "spark.master") or ""
    local = _LOCAL.match(master)
    if local:
        return (os.cpu_count() or 1) if local.group(1) == "*" else max(1, int(local.group(1)))
    if master == "local":
        return 1
    cores_max = conf_value(spark, "spark.cores.max")
    if cores_max and cores_max.isdigit() and int(cores_max) > 0:
        return int(cores_max)
    instances, cores = conf_value(spark, "spark.executor.instances"), conf_value(spark, "spark.executor.cores")
    if instances and cores and instances.isdigit() and cores.isdigit():
        return max(1, int(instances) * int(cores))
    return _probed_parallelism(spark)


_SIZE = re.compile(r"^\s*(\d+)\s*([kmgtp]?)b?\s*$", re.IGNORECASE)


def parse_memory(text: str) -> int | None:
    """Bytes of a JVM memory string (``512m``, ``4g``, ``1024k``; a bare number is MiB, as Spark reads it)."""
    m = _SIZE.match(text)
    if m is None:
        return None
    unit = str(m.group(2)).lower()
    power = "kmgtp".index(unit) + 1 if unit else 2
    return int(m.group(1)) * int(1024 ** power)


def executor_memory(spark: SparkSession) -> tuple[int, str] | None:
    """The memory an executor's Python tasks may use, in bytes, with the conf key that says so:
    ``spark.executor.pyspark.memory`` when set (Spark then caps the Python workers at it), else
    ``spark.executor.memory`` (Spark's default 1g when unset), in local mode ``spark.driver.memory`` (the tasks run
    beside the driver's JVM; None when unset: no limit is known)."""
    master = conf_value(spark, "spark.master") or ""
    local = master.startswith("local")
    for key in ("spark.executor.pyspark.memory", "spark.driver.memory" if local else "spark.executor.memory"):
        text = conf_value(spark, key)
        size = parse_memory(text) if text else None
        if size is not None:
            return size, key
    return None if local else (1 << 30, "spark.executor.memory")

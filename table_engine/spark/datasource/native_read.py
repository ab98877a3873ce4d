"""Batch reads with Spark's native Parquet reader for raw-convertible files: :func:`read_table`.

The engine plans the scan (time travel, tags, partition and file pruning, exactly as the ``paimon`` source does);
:func:`~table_engine.store.reading.raw_files.plan_raw` divides the planned files into raw files (read as they
are: append tables, deletion-vector tables, primary-key files alone in their key range) and the rest. Raw files are
read by ``spark.read.parquet`` (in the JVM, vectorized), one read per (schema id, with or without deletion
vectors, with or without -U/-D records), each mapped to the current schema by field id (renamed columns, added
columns as nulls, widened types cast). Files with a deletion vector go to the Python source by default (measured
faster); with ``native_deletion_vectors`` their vectors apply as row positions: a left anti-join on
(``_metadata.file_name``, ``_metadata.row_index``) with a broadcast DataFrame of the deleted positions. Only the
rest goes through the ``paimon`` Python data source (option ``read.files``), and the parts are unioned by name.

Falls back to the Python source alone (same rows, slower) for what the native reader cannot take: incremental and
audit-log reads, system tables, object-store tables (the engine's S3 FileIO is not Hadoop's S3A), and columns
whose Parquet encoding Spark's reader does not map to the Python source's types (TIME, TIMESTAMP precision above
6, nested types). ORC and Avro data files always go through the Python source.

Spark's own Parquet reader is used through the DataFrame API: a Python data source cannot hand its scan to it, so
``spark.read.format("paimon")`` and SQL over the source stay on the Python path; ``read_table(...)
.createOrReplaceTempView(name)`` gives SQL the fast path.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlparse

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from table_engine.core_options import SCAN_FALLBACK_BRANCH
from table_engine.format.data_file_meta import DataFileMeta
from table_engine.format.formats import format_of
from table_engine.spark.datasource import options as o
from table_engine.spark.datasource.spark_types import to_spark_type
from table_engine.store.indexes.deletion_vectors import VectorCache
from table_engine.store.paths import file_path_in
from table_engine.store.reading.raw_files import RawFile, RawPlan, plan_raw
from table_engine.store.reading.scan import Split
from table_engine.table import Table
from table_engine.types import DataField, DataType

log = logging.getLogger(__name__)

_VALUE_KIND = "_VALUE_KIND"
_FILE = "__paimon_file"
_POS = "__paimon_pos"
_ATOMIC_OK = frozenset({"BOOLEAN", "TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "DECIMAL", "CHAR",
                        "VARCHAR", "BINARY", "VARBINARY", "DATE"})
_LOCAL_SCHEMES = ("", "file")
# characters Hadoop paths or Spark's glob expansion would read differently
_UNSAFE_PATH_CHARS = frozenset(":*?[]{}\\%,")
_FALLBACK_OPTIONS = (o.INCREMENTAL_BETWEEN, o.INCREMENTAL_BETWEEN_TIMESTAMP, o.READ_FILES)


@dataclass(frozen=True)
class NativeReadPlan:
    """What :func:`read_table` decided: the raw files read natively, the files left to the Python source, and
    the number of native Parquet reads (groups). ``reason``: why nothing went native, if so."""

    native_files: int
    python_files: int
    native_groups: int
    reason: str | None = None


def read_table(spark: SparkSession, table: str, *, columns: Sequence[str] | None = None,
               filter: Sequence[Sequence[Any]] | None = None, native_deletion_vectors: bool = False,
               **options: str) -> DataFrame:
    """The rows of ``table`` (a table path, or ``db.table`` with option ``warehouse``) as the ``paimon`` source
    reads them with ``options`` (``scan.snapshot-id``, ``scan.tag-name``, ``scan.timestamp-millis``, storage
    options...), raw-convertible files read by Spark's Parquet reader (see the module docstring).

    ``columns``: the columns to return (default all); ``filter``: ``(column, op, value)`` tuples (ANDed, the ops of
    :meth:`Table.read`) that prune partitions and files while planning and filter the rows (Spark's semantics).
    ``native_deletion_vectors``: read files that have a deletion vector natively too (an anti-join on row
    positions); by default they go through the Python source, which measured faster (``BENCHMARKS.md``).
    Option keys with dots are passed as ``**{"scan.snapshot-id": "3"}``."""
    return read_table_planned(spark, table, columns=columns, filter=filter,
                              native_deletion_vectors=native_deletion_vectors, **options)[0]


def read_table_planned(spark: SparkSession, table: str, *, columns: Sequence[str] | None = None,
                       filter: Sequence[Sequence[Any]] | None = None, native_deletion_vectors: bool = False,
                       **options: str) -> tuple[DataFrame, NativeReadPlan]:
    """:func:`read_table`, and what went where (for tests and benchmarks)."""
    opts = {str(k): str(v) for k, v in options.items() if v is not None}
    opts[o.PATH] = table
    t = o.TableLocation.of(opts).open()
    engine_filter = [tuple(f) for f in filter or ()]
    reason = _fallback_reason(t, opts)
    if reason is not None:
        return _finish(_python_read(spark, table, opts), t, columns, engine_filter), NativeReadPlan(0, -1, 0, reason)
    splits = t.plan(engine_filter or None, o.get_int(opts, o.SCAN_SNAPSHOT_ID), o.get(opts, o.SCAN_TAG_NAME),
                    o.get_int(opts, o.SCAN_TIMESTAMP_MILLIS))
    if not splits:
        return _finish(_python_read(spark, table, opts), t, columns, engine_filter), NativeReadPlan(0, 0, 0)
    def readable(split: Split, f: DataFileMeta) -> bool:
        if not native_deletion_vectors and split.deletion_files and f.file_name in split.deletion_files:
            return False
        if format_of(f.file_name) != "parquet":  # ORC and Avro files go through the paimon source
            return False
        return _native_path_ok(_file_path(t, split, f))

    plan = plan_raw(splits, t.schema, readable)
    needed = set(columns if columns is not None else t.schema.field_names()) | {str(f[0]) for f in engine_filter}
    fields = [f for f in t.schema.fields if f.name in needed]
    parts: list[DataFrame] = []
    groups = _groups(plan)
    for key, group in list(groups.items()):
        if not _timestamps_native(t, group[0]):  # the whole group to the Python source
            del groups[key]
            moved = {id(r) for r in group}
            plan = RawPlan([r for r in plan.raw if id(r) not in moved],
                           plan.rest + [replace(r.split, files=[r.file]) for r in group])
            continue
        parts.append(_native_group(spark, t, group, fields))
    if plan.rest:
        py_opts = dict(opts)
        if not any(o.get(opts, k) is not None for k in (o.SCAN_SNAPSHOT_ID, o.SCAN_TAG_NAME, o.SCAN_TIMESTAMP_MILLIS)):
            py_opts[o.SCAN_SNAPSHOT_ID] = str(splits[0].snapshot_id)  # the snapshot planned here
        py_opts[o.READ_FILES] = ",".join(plan.rest_file_names)
        parts.append(_python_read(spark, table, py_opts).select(*[f.name for f in fields]))
    df = parts[0]
    for p in parts[1:]:
        df = df.unionByName(p)
    info = NativeReadPlan(len(plan.raw), len(plan.rest_file_names), len(groups))
    log.info("%s: %d files read natively (%d Parquet reads), %d through the paimon source", t.identifier,
             info.native_files, info.native_groups, info.python_files)
    return _finish(df, t, columns, engine_filter), info


# ---- decisions ----------------------------------------------------------------------------------------------------
def _fallback_reason(t: Table, opts: Mapping[str, str]) -> str | None:
    if any(o.get(opts, k) is not None for k in _FALLBACK_OPTIONS):
        return "incremental read"
    if o.get_bool(opts, o.AUDIT_LOG, False):
        return "audit-log read"
    if t.source is not None:
        return "system table"
    if t.options.get(SCAN_FALLBACK_BRANCH):
        return "scan.fallback-branch table (splits of two branches)"
    if urlparse(t.path).scheme not in _LOCAL_SCHEMES:
        return "object-store table"
    bad = [f.name for f in t.schema.fields if not native_type_ok(f.type)]
    if bad:
        return f"columns {bad} have types the native reader does not map"
    return None


def native_type_ok(t: DataType) -> bool:
    """Whether Spark's Parquet reader reads a column of type ``t`` (as this engine writes it) as the Python source
    returns it."""
    if t.root in _ATOMIC_OK:
        return True
    return t.root in ("TIMESTAMP", "TIMESTAMP_LTZ") and (t.precision if t.precision is not None else 6) <= 6


def _native_path_ok(path: str) -> bool:
    local = urlparse(path).path if path.startswith("file:") else path
    return not (_UNSAFE_PATH_CHARS & set(local))


def _timestamps_native(t: Table, raw: RawFile) -> bool:
    """Whether Spark reads the timestamp columns of this file (and of its group: one writer, one schema) as the
    source's types: micro- or millisecond units, and UTC-adjusted exactly for TIMESTAMP_LTZ (Spark refuses to read
    an adjusted column as TimestampNTZ). Other writers (Paimon's Java writer, pypaimon) may differ from this
    engine; a footer read tells."""
    fields = t.store.schema_by_id(raw.file.schema_id).fields
    stamps = [f for f in fields if f.type.root in ("TIMESTAMP", "TIMESTAMP_LTZ")]
    if not stamps:
        return True
    path = _file_path(t, raw.split, raw.file)
    schema = pq.read_schema(urlparse(path).path if path.startswith("file:") else path)
    for f in stamps:
        at = schema.field(f.name).type if f.name in schema.names else None
        if at is None or not pa.types.is_timestamp(at) or at.unit == "ns":
            return False
        if (at.tz is not None) != (f.type.root == "TIMESTAMP_LTZ"):
            return False
    return True


def _file_path(t: Table, split: Split, f: DataFileMeta) -> str:
    return file_path_in(t.path, t.schema, split.partition_values, split.bucket, f,
                        t.options.partition_default_name())


def _groups(plan: RawPlan) -> dict[tuple[int, bool, bool], list[RawFile]]:
    """Raw files by (schema id, has a deletion vector, drops -U/-D records): one Parquet read each."""
    out: dict[tuple[int, bool, bool], list[RawFile]] = {}
    for r in plan.raw:
        out.setdefault((r.file.schema_id, r.deletion_file is not None, r.drop_deletes), []).append(r)
    return out


# ---- reads --------------------------------------------------------------------------------------------------------
def _python_read(spark: SparkSession, table: str, opts: Mapping[str, str]) -> DataFrame:
    from table_engine.spark.compat import require_data_sources

    require_data_sources()  # Spark 3.5: one clear error instead of Spark's "data source not found"
    return spark.read.format(o.SOURCE_NAME).options(**{k: v for k, v in opts.items() if k != o.PATH}).load(table)


def _native_group(spark: SparkSession, t: Table, group: Sequence[RawFile], fields: Sequence[DataField]
                  ) -> DataFrame:
    """One Parquet read of files written under one schema, as the current schema's ``fields``."""
    first = group[0]
    file_schema = t.store.schema_by_id(first.file.schema_id)
    by_id = file_schema.fields_by_id()
    read_fields = [by_id[f.id] for f in fields if f.id in by_id]
    spark_fields = [T.StructField(f.name, to_spark_type(f.type), True) for f in read_fields]
    if first.drop_deletes:
        spark_fields.append(T.StructField(_VALUE_KIND, T.ByteType(), True))
    paths = [_file_path(t, r.split, r.file) for r in group]
    df = spark.read.schema(T.StructType(spark_fields)).parquet(*paths)
    if first.drop_deletes:
        df = df.filter(F.col(_VALUE_KIND).isin(0, 2))
    if first.deletion_file is not None:
        df = df.select("*", F.col("_metadata.file_name").alias(_FILE), F.col("_metadata.row_index").alias(_POS))
        df = df.join(F.broadcast(_deleted_positions(spark, t, group)), on=[_FILE, _POS], how="left_anti")
    out: list[Column] = []
    for f in fields:
        old = by_id.get(f.id)
        target = to_spark_type(f.type)
        if old is None:
            out.append(F.lit(None).cast(target).alias(f.name))
        elif to_spark_type(old.type) != target:
            out.append(F.col(_quoted(old.name)).cast(target).alias(f.name))
        else:
            out.append(F.col(_quoted(old.name)).alias(f.name))
    return df.select(*out)


def _deleted_positions(spark: SparkSession, t: Table, group: Sequence[RawFile]) -> DataFrame:
    """(file name, row position) of every row the deletion vectors of ``group`` delete."""
    cache = VectorCache(t.file_io)
    names: list[np.ndarray] = []
    positions: list[np.ndarray] = []
    for r in group:
        assert r.deletion_file is not None
        bitmap = cache.vector(r.deletion_file)
        to_array = getattr(bitmap, "to_array", None)
        pos = np.asarray(to_array() if to_array is not None else list(bitmap), dtype=np.int64)
        positions.append(pos)
        names.append(np.full(len(pos), r.file.file_name, dtype=object))
    arrow = pa.table({_FILE: pa.array(np.concatenate(names) if names else [], pa.string()),
                      _POS: pa.array(np.concatenate(positions) if positions else [], pa.int64())})
    return spark.createDataFrame(arrow)


def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _finish(df: DataFrame, t: Table, columns: Sequence[str] | None, engine_filter: Sequence[tuple[Any, ...]]
            ) -> DataFrame:
    cond = [_condition(f) for f in engine_filter]
    for c in cond:
        df = df.filter(c)
    return df.select(*[_quoted(c) for c in columns]) if columns is not None else df


def _condition(f: tuple[Any, ...]) -> Column:
    """Spark's condition for an engine filter tuple."""
    col = F.col(_quoted(str(f[0])))
    op = str(f[1]).lower()
    if op == "is null":
        return col.isNull()
    if op == "is not null":
        return col.isNotNull()
    value = f[2]
    if op == "in":
        return col.isin(list(value))
    if op == "not in":
        return ~col.isin(list(value))
    ops = {"=": col == value, "==": col == value, "!=": col != value, "<": col < value, "<=": col <= value,
           ">": col > value, ">=": col >= value}
    if op not in ops:
        raise o.DataSourceOptionError(f"unknown filter operator {f[1]!r} in {tuple(f)!r}")
    cond: Column = ops[op]
    return cond

"""Table schemas: the ``schema/schema-N`` JSON files.

A :class:`TableSchema` is immutable; schema evolution writes ``schema-(N+1)`` with the atomic create-if-absent.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from table_engine import clock
from table_engine.core_options import (
    BLOB_FIELD,
    BUCKET,
    BUCKET_KEY,
    CLUSTERING_INCREMENTAL,
    CLUSTERING_STRATEGY,
    POSTPONE_DEFAULT_BUCKET_NUM,
    POSTPONE_TARGET_ROW_NUM_PER_BUCKET,
    POSTPONE_TARGET_SIZE_PER_BUCKET,
    CoreOptions,
)
from table_engine.errors import CorruptMetadataError, OptionError, SchemaError, UnsupportedError
from table_engine.format.file_index.index_options import validate_file_index_options
from table_engine.io.file_io import FileIO
from table_engine.sort import clustering_strategy
from table_engine.types import DataField, DataType, max_field_id, to_arrow_schema

SCHEMA_VERSION = 3


@dataclass(frozen=True)
class TableSchema:
    """One version of a table's schema (fields with stable ids, keys and options)."""

    id: int
    fields: tuple[DataField, ...]
    highest_field_id: int
    partition_keys: tuple[str, ...] = ()
    primary_keys: tuple[str, ...] = ()
    options: Mapping[str, str] = field(default_factory=dict)
    comment: str | None = None
    time_millis: int = 0
    version: int = SCHEMA_VERSION

    # ---- derived views -----------------------------------------------------------------------------------------
    def field_names(self) -> list[str]:
        return [f.name for f in self.fields]

    def field(self, name: str) -> DataField:
        for f in self.fields:
            if f.name == name:
                return f
        raise SchemaError(f"no column {name!r}; columns are {self.field_names()}")

    def fields_by_id(self) -> dict[int, DataField]:
        return {f.id: f for f in self.fields}

    def trimmed_primary_keys(self) -> list[str]:
        """Primary keys minus partition keys (the key stored in data files as ``_KEY_<name>``)."""
        if not self.primary_keys:
            return []
        trimmed = [k for k in self.primary_keys if k not in self.partition_keys]
        if not trimmed:
            raise SchemaError(
                f"primary key {list(self.primary_keys)} must contain a column that is not a partition key"
            )
        return trimmed

    def cross_partition_update(self) -> bool:
        """A primary key that does not contain every partition field (Paimon's ``crossPartitionUpdate``)."""
        return bool(self.primary_keys) and bool(self.partition_keys) \
            and not set(self.partition_keys) <= set(self.primary_keys)

    def bucket_keys(self) -> list[str]:
        """``bucket-key`` option, else the trimmed primary keys, else (append tables) empty."""
        raw = self.options.get("bucket-key")
        if raw:
            return [k.strip() for k in raw.split(",") if k.strip()]
        return self.trimmed_primary_keys()

    def arrow_schema(self) -> pa.Schema:
        return to_arrow_schema(self.fields)

    def partition_fields(self) -> list[DataField]:
        return [self.field(k) for k in self.partition_keys]

    def key_fields(self) -> list[DataField]:
        return [self.field(k) for k in self.trimmed_primary_keys()]

    # ---- JSON --------------------------------------------------------------------------------------------------
    def to_json(self) -> str:
        data: dict[str, Any] = {
            "version": self.version,
            "id": self.id,
            "fields": [f.to_json() for f in self.fields],
            "highestFieldId": self.highest_field_id,
            "partitionKeys": list(self.partition_keys),
            "primaryKeys": list(self.primary_keys),
            "options": dict(self.options),
            "comment": self.comment,
            "timeMillis": self.time_millis,
        }
        return json.dumps(data, indent=2, ensure_ascii=False)

    @staticmethod
    def from_json(text: str, path: str = "<schema>") -> TableSchema:
        try:
            d = json.loads(text)
            fields = tuple(DataField.from_json(f) for f in d["fields"])
            return TableSchema(
                id=int(d["id"]),
                fields=fields,
                highest_field_id=int(d.get("highestFieldId", max_field_id(fields))),
                partition_keys=tuple(d.get("partitionKeys") or ()),
                primary_keys=tuple(d.get("primaryKeys") or ()),
                options={str(k): str(v) for k, v in (d.get("options") or {}).items()},
                comment=d.get("comment"),
                time_millis=int(d.get("timeMillis") or 0),
                version=int(d.get("version") or 1),
            )
        except (ValueError, KeyError, TypeError) as e:
            raise CorruptMetadataError(f"cannot parse schema file {path}: {e}") from e


def new_schema(
    schema_id: int,
    fields: Sequence[DataField],
    partition_keys: Sequence[str],
    primary_keys: Sequence[str],
    options: Mapping[str, str],
    comment: str | None = None,
    highest_field_id: int | None = None,
) -> TableSchema:
    """Validate and build a schema: keys exist, key columns become NOT NULL, names are unique."""
    names = [f.name for f in fields]
    _check_names_and_keys(names, partition_keys, primary_keys)
    pk = set(primary_keys)
    fixed = _not_null_primary_keys(fields, pk)
    schema = TableSchema(
        id=schema_id,
        fields=tuple(fixed),
        highest_field_id=max_field_id(fixed) if highest_field_id is None else highest_field_id,
        partition_keys=tuple(partition_keys),
        primary_keys=tuple(primary_keys),
        options=dict(options),
        comment=comment,
        time_millis=clock.now_millis(),
    )
    schema.trimmed_primary_keys()  # validates that something remains
    _check_bucket_and_partition_keys(schema, names, partition_keys, primary_keys)
    validate_file_index_options(schema.fields, schema.options)
    validate_cross_partition(schema)
    return schema


def _check_names_and_keys(names: Sequence[str], partition_keys: Sequence[str], primary_keys: Sequence[str]) -> None:
    """Column names are unique; partition and primary keys are columns, each listed once."""
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise SchemaError(f"duplicate column names {dupes}")
    for kind, keys in (("partition key", partition_keys), ("primary key", primary_keys)):
        for k in keys:
            if k not in names:
                raise SchemaError(f"{kind} {k!r} is not a column; columns are {list(names)}")
        if len(set(keys)) != len(keys):
            raise SchemaError(f"duplicate {kind}s in {list(keys)}")


def _not_null_primary_keys(fields: Sequence[DataField], pk: set[str]) -> list[DataField]:
    """``fields`` with the primary key columns NOT NULL; a SchemaError for a key column of a complex type."""
    fixed = []
    for f in fields:
        if f.name in pk:
            if f.type.is_complex:
                raise SchemaError(f"primary key column {f.name!r} has type {f.type}, which cannot be a key")
            fixed.append(DataField(f.id, f.name, f.type.copy(nullable=False), f.description))
        else:
            fixed.append(f)
    return fixed


def _check_bucket_and_partition_keys(schema: TableSchema, names: Sequence[str], partition_keys: Sequence[str],
                                     primary_keys: Sequence[str]) -> None:
    """Bucket keys are columns, not partition keys and (with a primary key) part of it; partition keys are not of a
    complex type."""
    for k in schema.bucket_keys():
        if k not in names:
            raise SchemaError(f"bucket-key {k!r} is not a column; columns are {list(names)}")
        if k in partition_keys:
            raise SchemaError(f"bucket-key {k!r} cannot be a partition key")
        if primary_keys and k not in primary_keys:
            raise SchemaError(f"bucket-key {k!r} must be part of the primary key {list(primary_keys)}")
    for k in partition_keys:
        if schema.field(k).type.is_complex:
            raise SchemaError(f"partition key {k!r} has type {schema.field(k).type}, which cannot be a partition key")


def validate_cross_partition(schema: TableSchema) -> None:
    """Paimon's ``SchemaValidation`` rules for a primary key without every partition field (cross-partition
    upsert): it needs dynamic bucket mode (``bucket`` = -1) and cannot have ``sequence.field``."""
    if not schema.cross_partition_update():
        return
    where = f"primary key {list(schema.primary_keys)} does not include all partition fields " \
            f"{list(schema.partition_keys)}"
    bucket = schema.options.get("bucket", "-1").strip()
    try:
        fixed = int(bucket) != -1
    except ValueError:
        fixed = False  # an unparsable value is the options validation's to report
    if fixed:
        raise SchemaError(f"option 'bucket' = {bucket}: cross-partition upsert ({where}) needs dynamic bucket "
                          "mode (bucket = -1)")
    if schema.options.get("sequence.field"):
        raise SchemaError(f"option 'sequence.field' cannot be used with cross-partition upsert ({where})")


def validate_bucket(schema: TableSchema) -> None:
    """Paimon's ``SchemaValidation.validateBucket`` at create and alter time: ``bucket`` is a positive count, -1 or,
    on a primary-key table, -2 (postpone bucket mode, see :mod:`table_engine.store.writing.postpone`);
    ``bucket-key`` needs a fixed bucket count, names existing non-partition columns (primary-key columns for a
    primary-key table), and a fixed-bucket append table must have one. Raises OptionError naming the option."""
    bucket = BUCKET.value_from(schema.options)  # OptionError for 0 and negative values Paimon does not define
    if bucket == -2:
        validate_postpone(schema)
    has_bucket_key = BUCKET_KEY.is_set(schema.options)
    if bucket == -1 and has_bucket_key:
        raise OptionError(f"bucket-key = {schema.options['bucket-key']!r} needs a fixed bucket count: cannot define "
                          "'bucket-key' with bucket -1, set 'bucket' to a positive number")
    if bucket > 0 and not schema.primary_keys and not schema.bucket_keys():
        raise OptionError(f"bucket = {bucket} on an append table needs the 'bucket-key' option (the columns whose "
                          "hash picks the bucket)")
    names = schema.field_names()
    for k in schema.bucket_keys() if has_bucket_key else ():
        if k not in names:
            raise OptionError(f"bucket-key {k!r} is not a column; columns are {names}")
        if k in schema.partition_keys:
            raise OptionError(f"bucket-key {k!r} cannot be a partition key")
        if schema.primary_keys and k not in schema.primary_keys:
            raise OptionError(f"bucket-key {k!r} must be part of the primary key {list(schema.primary_keys)}")


def clustering_columns(schema: TableSchema) -> tuple[str, ...]:
    """``clustering.columns`` of ``schema`` (:meth:`CoreOptions.clustering_columns`)."""
    return CoreOptions(schema.options).clustering_columns()


def validate_clustering(schema: TableSchema) -> None:
    """Paimon's ``SchemaValidation`` rules for ``clustering.incremental`` at create and alter time (an append table,
    no data evolution), what this engine builds (``bucket`` = -1: a bucketed clustering table, Paimon 1.4, is not
    built), and ``clustering.columns`` / ``clustering.strategy`` naming columns and a strategy."""
    opts = CoreOptions(schema.options)
    columns = clustering_columns(schema)
    names = schema.field_names()
    for c in columns:
        if c not in names:
            raise OptionError(f"clustering.columns {c!r} is not a column; columns are {names}")
    if columns:
        clustering_strategy(CLUSTERING_STRATEGY.value_from(schema.options), len(columns))  # OptionError
    if not CLUSTERING_INCREMENTAL.value_from(schema.options):
        return
    if schema.primary_keys:
        raise SchemaError("Cannot define primary-key for incremental clustering table.")
    if opts.data_evolution_enabled():
        raise SchemaError("Data evolution config must disabled with clustering.incremental")
    if BUCKET.value_from(schema.options) != -1:
        raise UnsupportedError("clustering.incremental with bucket != -1 (Paimon 1.4's bucketed clustering) is not "
                               "built: use bucket = -1")
    if not columns:
        raise OptionError("clustering.incremental = true needs clustering.columns (the columns to cluster by)")


def with_blob_fields(fields: Sequence[DataField], options: Mapping[str, str]) -> list[DataField]:
    """``fields`` with the binary columns ``blob-field`` names made BLOB (as Paimon's Flink and Spark catalogs do);
    an OptionError names a column that is missing or not binary."""
    names = CoreOptions(options).blob_fields()
    by_name = {f.name: f for f in fields}
    for n in names:
        f = by_name.get(n)
        if f is None or not (f.type.is_binary or f.type.root == "BLOB"):
            what = "not a column" if f is None else f"of type {f.type.root}, not binary"
            raise OptionError(f"{BLOB_FIELD.key} column {n!r} is {what}")
    return [DataField(f.id, f.name, DataType("BLOB", f.type.nullable), f.description) if f.name in names else f
            for f in fields]


def validate_blob(schema: TableSchema) -> None:
    """Paimon's rules for BLOB columns: an append table with ``row-tracking.enabled`` and ``data-evolution.enabled``,
    other columns besides, and no BLOB partition column; ``blob-field`` names only BLOB columns. Raises SchemaError
    (OptionError for ``blob-field``) naming the rule."""
    blobs = [f.name for f in schema.fields if f.type.root == "BLOB"]
    opts = CoreOptions(schema.options)
    not_blob = [n for n in opts.blob_fields() if n not in blobs]
    if not_blob:
        raise OptionError(f"{BLOB_FIELD.key} names column(s) {not_blob} that are not BLOB columns")
    if not blobs:
        return
    if schema.primary_keys:
        raise SchemaError(f"BLOB column(s) {blobs} cannot be in a primary-key table")
    if not (opts.row_tracking_enabled() and opts.data_evolution_enabled()):
        raise SchemaError(f"BLOB column(s) {blobs} need row-tracking.enabled = true and data-evolution.enabled = "
                          "true")
    if len(blobs) == len(schema.fields):
        raise SchemaError(f"a table with BLOB column(s) {blobs} needs other columns too")
    parts = [b for b in blobs if b in schema.partition_keys]
    if parts:
        raise SchemaError(f"BLOB column(s) {parts} cannot be partition keys")


def validate_postpone(schema: TableSchema) -> None:
    """What Paimon's ``SchemaValidation`` allows with ``bucket`` = -2: primary-key tables only (an append table has
    no key to assign a bucket by later), and not with a cross-partition key (that needs ``bucket`` = -1)."""
    if not schema.primary_keys:
        raise OptionError("bucket = -2 (postpone bucket mode) needs a primary-key table: set 'bucket' to -1 or a "
                          "positive count with 'bucket-key' on an append table")
    for option in (POSTPONE_DEFAULT_BUCKET_NUM, POSTPONE_TARGET_ROW_NUM_PER_BUCKET, POSTPONE_TARGET_SIZE_PER_BUCKET):
        option.value_from(schema.options)  # OptionError naming the option


# ---- files -----------------------------------------------------------------------------------------------------

def schema_dir(table_path: str) -> str:
    """``<table>/schema``."""
    return f"{table_path}/schema"


def schema_path(table_path: str, schema_id: int) -> str:
    """``<table>/schema/schema-<id>``."""
    return f"{table_path}/schema/schema-{schema_id}"


def list_schema_ids(file_io: FileIO, table_path: str) -> list[int]:
    """Ids of the ``schema-<id>`` files, ascending."""
    ids = []
    for st in file_io.list_status(schema_dir(table_path)):
        name = st.path.rsplit("/", 1)[-1]
        if name.startswith("schema-") and name[7:].isdigit():
            ids.append(int(name[7:]))
    return sorted(ids)


def read_schema(file_io: FileIO, table_path: str, schema_id: int) -> TableSchema:
    """Schema ``schema_id`` of the table; CorruptMetadataError if its file does not exist."""
    p = schema_path(table_path, schema_id)
    try:
        text = file_io.read_text(p)
    except FileNotFoundError:
        raise CorruptMetadataError(f"schema file {p} does not exist") from None
    return TableSchema.from_json(text, p)


def latest_schema(file_io: FileIO, table_path: str) -> TableSchema | None:
    """The schema with the highest id, or None for a table without schema files."""
    ids = list_schema_ids(file_io, table_path)
    return read_schema(file_io, table_path, ids[-1]) if ids else None


def try_commit_schema(file_io: FileIO, table_path: str, schema: TableSchema) -> bool:
    """Publish ``schema-<id>`` if that id is free (atomic); False if another writer took it."""
    return file_io.write_if_absent(schema_path(table_path, schema.id), schema.to_json().encode("utf-8"))

"""The fixed schema of an object table: Paimon's ``ObjectTable.SCHEMA`` (Java 1.0 to 1.2), field for field.

Paimon 1.0 to 1.2 keep an object table's index in an ordinary append table with these thirteen columns, filled by
``ObjectRefresh`` (``CALL sys.refresh_object_table``). The field ids are the ones ``RowType.builder()`` gives them
(0 to 12 in order) and the types are Java's, so a schema file this engine writes is the one Java's
``ObjectTable.Builder`` accepts (it checks that the table's fields are a subset of ``SCHEMA``, ids and types
included).

Paimon 1.3 replaced this design (apache/paimon#5848) by a virtual table with six columns
(``path``, ``name``, ``length``, ``mtime``, ``atime`` as BIGINT milliseconds, ``owner``) that lists the location on
every read and has no refresh; pypaimon 2.1 implements only that one, and the REST catalog holds it
(:mod:`table_engine.object_table.virtual`). :data:`VIRTUAL_FIELDS` (:data:`VIRTUAL_ARROW_SCHEMA`) and
:func:`virtual_rows` give that shape of the same listing (docs/object-tables.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import pyarrow as pa
import pyarrow.compute as pc

from table_engine.errors import SchemaError
from table_engine.types import MAX_LENGTH, DataField, DataType, to_arrow_schema

__all__ = [
    "ARROW_SCHEMA",
    "FIELD_NAMES",
    "FIELDS",
    "VIRTUAL_ARROW_SCHEMA",
    "VIRTUAL_FIELDS",
    "check_columns",
    "check_index_fields",
    "check_virtual_columns",
    "virtual_rows",
]


def _string(nullable: bool) -> DataType:
    return DataType("VARCHAR", nullable, length=MAX_LENGTH)


def _timestamp_ltz_millis() -> DataType:
    return DataType("TIMESTAMP_LTZ", True, precision=3)


FIELDS: tuple[DataField, ...] = (
    DataField(0, "path", _string(False)),
    DataField(1, "parent_path", _string(False)),
    DataField(2, "name", _string(False)),
    DataField(3, "length", DataType("BIGINT", False)),
    DataField(4, "mtime", _timestamp_ltz_millis()),
    DataField(5, "atime", _timestamp_ltz_millis()),
    DataField(6, "owner", _string(True)),
    DataField(7, "generation", DataType("INT", True)),
    DataField(8, "content_type", _string(True)),
    DataField(9, "storage_class", _string(True)),
    DataField(10, "md5_hash", _string(True)),
    DataField(11, "metadata_mtime", _timestamp_ltz_millis()),
    DataField(12, "metadata", DataType("MAP", True, key=_string(True), value=_string(True))),
)
"""Paimon's ``ObjectTable.SCHEMA`` (1.0-1.2): ``path`` is the object's full path as the FileIO names it
(``file:/...``, ``s3://bucket/...``), ``parent_path`` its directory, ``name`` its last segment, ``length`` its size
in bytes, ``mtime``/``atime`` its modification/access time (TIMESTAMP_LTZ(3)); the rest is what some object stores
report (a generation, a content type, a storage class, an MD5, user metadata) and null otherwise."""

FIELD_NAMES: tuple[str, ...] = tuple(f.name for f in FIELDS)

ARROW_SCHEMA: pa.Schema = to_arrow_schema(FIELDS)
"""The Arrow schema of the index rows (``mtime``: ``timestamp[ms, tz=UTC]``; ``metadata``: ``map<string, string>``,
whose key Arrow always declares non-null)."""

VIRTUAL_FIELDS: tuple[DataField, ...] = (
    DataField(0, "path", _string(False)),
    DataField(1, "name", _string(False)),
    DataField(2, "length", DataType("BIGINT", False)),
    DataField(3, "mtime", DataType("BIGINT", False)),
    DataField(4, "atime", DataType("BIGINT", False)),
    DataField(5, "owner", _string(True)),
)
"""Paimon 1.3+'s ``ObjectTable.SCHEMA`` (and pypaimon 2.1's): the virtual object table of a REST catalog, listed at
every read. ``path`` is relative to the table's location, ``mtime``/``atime`` are epoch milliseconds."""

VIRTUAL_ARROW_SCHEMA: pa.Schema = to_arrow_schema(VIRTUAL_FIELDS)
"""The Arrow schema of :data:`VIRTUAL_FIELDS` (``mtime``/``atime``: ``int64``)."""


def _same_type(ours: DataType, paimon: DataType) -> bool:
    """Equal types, except that a MAP key may be NOT NULL where Paimon's is nullable: Arrow cannot declare a nullable
    map key, so a table created from an Arrow schema has ``MAP<STRING NOT NULL, STRING>``."""
    if ours.root == "MAP" and paimon.root == "MAP" and ours.key is not None and paimon.key is not None:
        return replace(ours, key=ours.key.copy(paimon.key.nullable)) == paimon
    return ours == paimon


def check_columns(schema: pa.Schema | None) -> pa.Schema:
    """The schema an object table is created with, for the columns a user declared: none, or some of Paimon's
    (same names and types), as Paimon's ``AbstractCatalog.createObjectTable`` accepts; it always becomes the full
    :data:`ARROW_SCHEMA`. Anything else: one :class:`SchemaError` naming the columns that are not Paimon's."""
    if schema is None or len(schema) == 0:
        return ARROW_SCHEMA
    wrong = []
    for f in schema:
        idx = ARROW_SCHEMA.get_field_index(f.name)
        if idx < 0:
            wrong.append(f"{f.name} (not a column of an object table)")
        elif not f.type.equals(ARROW_SCHEMA.field(idx).type):
            wrong.append(f"{f.name} {f.type} (an object table's is {ARROW_SCHEMA.field(idx).type})")
    if wrong:
        raise SchemaError("Schema of Object Table can be empty or Paimon's " + _describe() + ", but "
                          + ", ".join(wrong))
    return ARROW_SCHEMA


def check_virtual_columns(schema: pa.Schema | None, identifier: str) -> None:
    """The columns declared for a REST catalog's (virtual) object table: none, or some of :data:`VIRTUAL_FIELDS`
    (same names and types); it always has all six. Anything else: one :class:`SchemaError` naming the columns that
    are not Paimon 1.3+'s."""
    wrong = []
    for f in schema or ():
        idx = VIRTUAL_ARROW_SCHEMA.get_field_index(f.name)
        if idx < 0:
            wrong.append(f"{f.name} (not a column of an object table)")
        elif not f.type.equals(VIRTUAL_ARROW_SCHEMA.field(idx).type):
            wrong.append(f"{f.name} {f.type} (an object table's is {VIRTUAL_ARROW_SCHEMA.field(idx).type})")
    if wrong:
        described = ", ".join(f"{f.name} {f.type.sql()}" for f in VIRTUAL_FIELDS)
        raise SchemaError(f"table {identifier}: the schema of a REST catalog's object table can be empty or Paimon "
                          f"1.3+'s ({described}), but " + ", ".join(wrong))


def check_index_fields(fields: Sequence[DataField], identifier: str) -> None:
    """Refuse (:class:`SchemaError`, naming every difference) a table whose fields are not the object table's
    :data:`FIELDS`, in order: the index rows are written whole."""
    names = [f.name for f in fields]
    if names != list(FIELD_NAMES):
        raise SchemaError(f"table {identifier} is not an object table: its columns are {names}, an object table's "
                          f"are {list(FIELD_NAMES)}")
    wrong = [f"{ours.name} {ours.type.sql()} (expected {paimon.type.sql()})"
             for ours, paimon in zip(fields, FIELDS, strict=True) if not _same_type(ours.type, paimon.type)]
    if wrong:
        raise SchemaError(f"table {identifier} is not an object table: " + ", ".join(wrong))


def _describe() -> str:
    return "(" + ", ".join(f"{f.name} {f.type.sql()}" for f in FIELDS) + ")"


def virtual_rows(rows: pa.Table, location_path: str) -> pa.Table:
    """The index ``rows`` in Paimon 1.3+'s virtual shape (:data:`VIRTUAL_ARROW_SCHEMA`): ``path`` relative to
    ``location_path`` (the qualified location the rows were listed from, as their ``path`` starts), times as epoch
    milliseconds."""
    prefix = location_path.rstrip("/") + "/"
    relative = pc.utf8_slice_codeunits(rows.column("path"), len(prefix))
    millis = [pc.fill_null(rows.column(c).cast(pa.int64()), 0) for c in ("mtime", "atime")]
    return pa.Table.from_arrays([relative, rows.column("name"), rows.column("length"), *millis, rows.column("owner")],
                                schema=VIRTUAL_ARROW_SCHEMA)

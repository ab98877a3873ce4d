"""A format table as a catalog holds it: a schema (columns, partition keys, options; Paimon's ``TableSchema`` with
``type`` = ``format-table``) and a location, and the :class:`~table_engine.format_table.FormatTable` of both.

Paimon keeps no schema file for a format table: the catalog's registration is its definition (the Hive catalog's
table of the format's serde, the REST catalog's table response). :func:`format_table_from_schema` is the one way a
catalog turns such a definition into the table object, and :func:`format_table_schema` the way it turns a new
table's Arrow schema and options into the definition it registers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pyarrow as pa

from table_engine.core_enums import TableType
from table_engine.format.schema_file import TableSchema, new_schema
from table_engine.format_table.options import NOT_IMPLEMENTED, REGISTRY
from table_engine.format_table.table import FormatTable
from table_engine.io.base import FileIO
from table_engine.io.file_io import LocalFileIO
from table_engine.types import fields_from_arrow_schema, to_arrow_schema

__all__ = ["format_table_from_schema", "format_table_options", "format_table_schema"]


def format_table_options(options: Mapping[str, str]) -> dict[str, str]:
    """The format-table options among a registration's ``options``: the keys of the format-table registry (and the
    Paimon keys it refuses, so that they are refused, not dropped). Every other key is the catalog's or the
    metastore's bookkeeping, not the table's (``path``, ``comment``, Hive's ``table_type``, ``EXTERNAL``,
    ``transient_lastDdlTime``, statistics, ...) and is left out."""
    return {k: v for k, v in options.items() if REGISTRY.find(k) is not None or k in NOT_IMPLEMENTED}


def format_table_from_schema(file_io: FileIO, location: str, schema: TableSchema) -> FormatTable:
    """The format table a catalog registered: ``schema``'s columns (all of them, partition keys included, in
    order) and partition keys, its format-table options (:func:`format_table_options`), the files at ``location``
    through ``file_io``. Bad options or columns raise the FormatTable's one-line errors."""
    arrow = to_arrow_schema(schema.fields)
    return FormatTable(file_io, location, arrow, schema.partition_keys, format_table_options(schema.options))


def format_table_schema(arrow_schema: pa.Schema, partition_keys: Sequence[str], options: Mapping[str, str],
                        comment: str | None) -> TableSchema:
    """The definition of a new format table (schema id 0, ``type`` = ``format-table``), checked first by building
    the table object on nothing (options, partition key types, csv/json column types): an error leaves nothing
    registered."""
    opts = {**options, "type": TableType.FORMAT_TABLE.value}
    fields, highest = fields_from_arrow_schema(arrow_schema)
    schema = new_schema(0, fields, list(partition_keys), [], opts, comment, highest)
    # the constructor checks and does no I/O: any FileIO serves
    FormatTable(LocalFileIO(), "/", to_arrow_schema(schema.fields), schema.partition_keys, format_table_options(opts))
    return schema

"""The key-value layout of a table's rows: which columns are the key, the partition, the values and the BLOBs.

Derived once per :class:`~table_engine.store.context.StoreContext` (:attr:`StoreContext.layout`) from its current
schema, and read by the table writer and the data-file writer alike (Paimon's ``KeyValueFieldsExtractor`` and the
``keyType``/``valueType`` of ``KeyValueFileStore``).
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

from table_engine.format.schema_file import TableSchema
from table_engine.types import DataField

__all__ = ["KeyValueLayout"]


@dataclass(frozen=True)
class KeyValueLayout:
    """The columns of one schema as the write path splits them."""

    has_pk: bool
    key_names: tuple[str, ...]
    """The trimmed primary key (primary keys minus partition keys): the ``_KEY_<name>`` columns of data files."""
    key_fields: tuple[DataField, ...]
    partition_fields: tuple[DataField, ...]
    arrow_schema: pa.Schema
    """Every table column, in schema order."""
    blob_fields: tuple[DataField, ...]
    """BLOB columns: written to ``.blob`` files of their own."""
    value_fields: tuple[DataField, ...]
    """The value columns data files hold (the table columns but the BLOB ones)."""

    @classmethod
    def of(cls, schema: TableSchema) -> KeyValueLayout:
        return cls(
            has_pk=bool(schema.primary_keys),
            key_names=tuple(schema.trimmed_primary_keys()),
            key_fields=tuple(schema.key_fields()),
            partition_fields=tuple(schema.partition_fields()),
            arrow_schema=schema.arrow_schema(),
            blob_fields=tuple(f for f in schema.fields if f.type.root == "BLOB"),
            value_fields=tuple(f for f in schema.fields if f.type.root != "BLOB"),
        )

    @property
    def blob_names(self) -> frozenset[str]:
        return frozenset(f.name for f in self.blob_fields)

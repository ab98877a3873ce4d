"""What a metastore keeps for a catalog: databases, table registrations, views, partitions and the commit lock.

The table files stay where the filesystem catalog keeps them (``<warehouse>/<db>.db/<table>``), so a metastore holds
registrations only, as in Paimon (``AbstractCatalog`` over ``JdbcCatalog`` / ``HiveCatalog``). One implementation per
metastore: :mod:`table_engine.catalog.jdbc` and :mod:`table_engine.catalog.hive`; the catalog
(:class:`table_engine.catalog.metastore_catalog.MetastoreCatalog`) drives them, so each says only how it stores a fact.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from table_engine.format.schema_file import TableSchema
from table_engine.types import DataField


@dataclass(frozen=True)
class ViewDef:
    """A view as Paimon keeps it (``org.apache.paimon.view.ViewImpl``): its columns, query, dialect queries,
    comment and options."""

    database: str
    name: str
    fields: tuple[DataField, ...]
    query: str
    dialects: Mapping[str, str] = field(default_factory=dict)
    comment: str | None = None
    options: Mapping[str, str] = field(default_factory=dict)


class Metastore(Protocol):
    """The registrations of one catalog in one metastore. Names arrive already checked
    (:func:`table_engine.catalog.parse_identifier`); ``location`` is the table's or database's directory as the
    catalog computes it. A failure to reach or use the metastore is one ``CatalogError`` naming the metastore and
    the problem, never a secret."""

    def list_databases(self) -> list[str]: ...
    def database_exists(self, db: str) -> bool: ...
    def create_database(self, db: str, location: str, properties: Mapping[str, str]) -> None: ...
    def database_properties(self, db: str) -> dict[str, str]: ...
    def drop_database(self, db: str) -> None: ...

    def list_tables(self, db: str) -> list[str]: ...
    def table_exists(self, db: str, table: str) -> bool: ...
    def register_table(self, db: str, table: str, location: str, schema: TableSchema) -> None: ...
    def alter_table(self, db: str, table: str, location: str, schema: TableSchema) -> None: ...
    def drop_table(self, db: str, table: str) -> None: ...
    def rename_table(self, db: str, table: str, new_table: str, new_location: str) -> None: ...

    def add_partitions(self, db: str, table: str, location: str, schema: TableSchema,
                       partitions: Sequence[Mapping[str, str]]) -> None: ...
    def drop_partitions(self, db: str, table: str, partitions: Sequence[Mapping[str, str]]) -> None: ...

    def create_view(self, view: ViewDef) -> None: ...
    def get_view(self, db: str, name: str) -> ViewDef | None: ...
    def list_views(self, db: str) -> list[str]: ...
    def drop_view(self, db: str, name: str) -> None: ...

    def lock(self, db: str, table: str) -> AbstractContextManager[None]:
        """The catalog's lock on one table (``lock.enabled``), held around a snapshot commit and ``create_table``'s
        schema commit, exactly as Paimon Java's ``CatalogLock``."""
        ...

    def close(self) -> None: ...


@runtime_checkable
class FormatTableMetastore(Protocol):
    """A metastore that also holds format tables (Paimon's Hive catalog with ``format-table.enabled``): their
    definition is the registration itself (no schema file). ``format_table_schema`` is None for anything that is
    not a format table."""

    def format_table_schema(self, db: str, table: str) -> TableSchema | None: ...
    def register_format_table(self, db: str, table: str, location: str, schema: TableSchema) -> None: ...
    def drop_format_table(self, db: str, table: str) -> bool:
        """Unregister it; whether it was external (its files are kept)."""
        ...

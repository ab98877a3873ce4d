"""A dict-backed :class:`~table_engine.catalog.metastore.Metastore` for the catalog's tests: it implements the
protocol exactly, and its lock is a real lock per table, recording when it is taken and released."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from table_engine.catalog.metastore import Metastore, ViewDef
from table_engine.catalog.options import CatalogOptions
from table_engine.errors import CatalogError
from table_engine.format.schema_file import TableSchema


@dataclass
class Registration:
    """A table as the fake keeps it."""

    location: str
    schema: TableSchema
    partitions: list[dict[str, str]] = field(default_factory=list)


class FakeMetastore:
    """Registrations in dicts. ``events`` records ``("acquire" | "release", db, table)`` of the lock and anything a
    test appends; ``altered`` the schemas ``alter_table`` got; ``fail_register`` makes ``register_table`` fail."""

    def __init__(self, options: Mapping[str, str] | CatalogOptions | None = None, warehouse: str = "") -> None:
        self.options = dict(options.raw if isinstance(options, CatalogOptions) else options or {})
        self.warehouse = warehouse
        self.databases: dict[str, tuple[str, dict[str, str]]] = {}
        self.tables: dict[tuple[str, str], Registration] = {}
        self.views: dict[tuple[str, str], ViewDef] = {}
        self.altered: list[tuple[str, str, TableSchema]] = []
        self.partition_calls: list[tuple[str, list[dict[str, str]]]] = []
        self.events: list[tuple[str, ...]] = []
        self.fail_register = False
        self.fail_partitions = False
        self.closed = False
        self._guard = threading.Lock()
        self._locks: dict[tuple[str, str], threading.Lock] = {}
        self.holder: dict[tuple[str, str], int | None] = {}

    def list_databases(self) -> list[str]:
        return list(self.databases)

    def database_exists(self, db: str) -> bool:
        return db in self.databases

    def create_database(self, db: str, location: str, properties: Mapping[str, str]) -> None:
        if db in self.databases:
            raise CatalogError(f"fake metastore: database {db} exists")
        self.databases[db] = (location, {"location": location, **properties})

    def database_properties(self, db: str) -> dict[str, str]:
        return dict(self.databases[db][1])

    def drop_database(self, db: str) -> None:
        del self.databases[db]

    def list_tables(self, db: str) -> list[str]:
        return [t for (d, t) in self.tables if d == db]

    def table_exists(self, db: str, table: str) -> bool:
        return (db, table) in self.tables

    def register_table(self, db: str, table: str, location: str, schema: TableSchema) -> None:
        if self.fail_register:
            raise CatalogError("fake metastore: registration refused")
        if (db, table) in self.tables:
            raise CatalogError(f"fake metastore: table {db}.{table} exists")
        self.tables[(db, table)] = Registration(location, schema)

    def alter_table(self, db: str, table: str, location: str, schema: TableSchema) -> None:
        self.tables[(db, table)].schema = schema
        self.altered.append((db, table, schema))

    def drop_table(self, db: str, table: str) -> None:
        del self.tables[(db, table)]

    def rename_table(self, db: str, table: str, new_table: str, new_location: str) -> None:
        if (db, new_table) in self.tables:
            raise CatalogError(f"fake metastore: table {db}.{new_table} exists")
        reg = self.tables.pop((db, table))
        self.tables[(db, new_table)] = Registration(new_location, reg.schema, reg.partitions)

    def add_partitions(self, db: str, table: str, location: str, schema: TableSchema,
                       partitions: Sequence[Mapping[str, str]]) -> None:
        self.partition_calls.append(("add", [dict(p) for p in partitions]))
        if self.fail_partitions:
            raise CatalogError("fake metastore: add_partitions refused")
        reg = self.tables[(db, table)]
        reg.partitions += [dict(p) for p in partitions if dict(p) not in reg.partitions]  # if not exists

    def drop_partitions(self, db: str, table: str, partitions: Sequence[Mapping[str, str]]) -> None:
        self.partition_calls.append(("drop", [dict(p) for p in partitions]))
        reg = self.tables[(db, table)]
        reg.partitions = [p for p in reg.partitions if p not in [dict(q) for q in partitions]]

    def create_view(self, view: ViewDef) -> None:
        self.views[(view.database, view.name)] = view

    def get_view(self, db: str, name: str) -> ViewDef | None:
        return self.views.get((db, name))

    def list_views(self, db: str) -> list[str]:
        return [v for (d, v) in self.views if d == db]

    def drop_view(self, db: str, name: str) -> None:
        del self.views[(db, name)]

    @contextlib.contextmanager
    def lock(self, db: str, table: str) -> Iterator[None]:
        with self._guard:
            lock = self._locks.setdefault((db, table), threading.Lock())
        with lock:
            self.holder[(db, table)] = threading.get_ident()
            self.events.append(("acquire", db, table))
            try:
                yield
            finally:
                self.events.append(("release", db, table))
                self.holder[(db, table)] = None

    def held_by_me(self, db: str, table: str) -> bool:
        """Whether this thread holds the lock on ``db.table``."""
        return self.holder.get((db, table)) == threading.get_ident()

    def close(self) -> None:
        self.closed = True


def _conforms(m: FakeMetastore) -> Metastore:
    return m  # mypy checks that the fake implements the protocol

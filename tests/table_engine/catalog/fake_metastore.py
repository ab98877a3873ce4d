"""Dict-backed :class:`~table_engine.catalog.metastore.Metastore` implementations: :class:`DictMetastore`, the
registrations (every call of the protocol but the lock), and :class:`FakeMetastore`, the catalog tests' metastore,
whose lock is a real lock per table recording when it is taken and released. The simulation's metastore
(``tests/simulation/sim_metastore.py``) is a :class:`DictMetastore` with a lock of its own."""

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


class DictMetastore:
    """Registrations in dicts: ``databases`` (name -> location and properties), ``tables`` (:class:`Registration`,
    partitions kept as ``add_partitions`` / ``drop_partitions`` say), ``views``; ``partition_calls`` records the
    partition calls. A subclass adds the lock. Errors name the metastore as :attr:`NAME`."""

    NAME = "dict metastore"

    def __init__(self) -> None:
        self.databases: dict[str, tuple[str, dict[str, str]]] = {}
        self.tables: dict[tuple[str, str], Registration] = {}
        self.views: dict[tuple[str, str], ViewDef] = {}
        self.partition_calls: list[tuple[str, list[dict[str, str]]]] = []

    def list_databases(self) -> list[str]:
        return list(self.databases)

    def database_exists(self, db: str) -> bool:
        return db in self.databases

    def create_database(self, db: str, location: str, properties: Mapping[str, str]) -> None:
        if db in self.databases:
            raise CatalogError(f"{self.NAME}: database {db} exists")
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
        if (db, table) in self.tables:
            raise CatalogError(f"{self.NAME}: table {db}.{table} exists")
        self.tables[(db, table)] = Registration(location, schema)

    def alter_table(self, db: str, table: str, location: str, schema: TableSchema) -> None:
        self.tables[(db, table)].schema = schema

    def drop_table(self, db: str, table: str) -> None:
        del self.tables[(db, table)]

    def rename_table(self, db: str, table: str, new_table: str, new_location: str) -> None:
        if (db, new_table) in self.tables:
            raise CatalogError(f"{self.NAME}: table {db}.{new_table} exists")
        reg = self.tables.pop((db, table))
        self.tables[(db, new_table)] = Registration(new_location, reg.schema, reg.partitions)

    def add_partitions(self, db: str, table: str, location: str, schema: TableSchema,
                       partitions: Sequence[Mapping[str, str]]) -> None:
        self.partition_calls.append(("add", [dict(p) for p in partitions]))
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

    def close(self) -> None:
        """Nothing to close."""


class FakeMetastore(DictMetastore):
    """The catalog tests' metastore. ``events`` records ``("acquire" | "release", db, table)`` of the lock and
    anything a test appends; ``altered`` the schemas ``alter_table`` got; ``fail_register`` makes
    ``register_table`` fail, ``fail_partitions`` ``add_partitions`` (after recording the call)."""

    NAME = "fake metastore"

    def __init__(self, options: Mapping[str, str] | CatalogOptions | None = None, warehouse: str = "") -> None:
        super().__init__()
        self.options = dict(options.raw if isinstance(options, CatalogOptions) else options or {})
        self.warehouse = warehouse
        self.altered: list[tuple[str, str, TableSchema]] = []
        self.events: list[tuple[str, ...]] = []
        self.fail_register = False
        self.fail_partitions = False
        self.closed = False
        self._guard = threading.Lock()
        self._locks: dict[tuple[str, str], threading.Lock] = {}
        self.holder: dict[tuple[str, str], int | None] = {}

    def register_table(self, db: str, table: str, location: str, schema: TableSchema) -> None:
        if self.fail_register:
            raise CatalogError(f"{self.NAME}: registration refused")
        super().register_table(db, table, location, schema)

    def alter_table(self, db: str, table: str, location: str, schema: TableSchema) -> None:
        super().alter_table(db, table, location, schema)
        self.altered.append((db, table, schema))

    def add_partitions(self, db: str, table: str, location: str, schema: TableSchema,
                       partitions: Sequence[Mapping[str, str]]) -> None:
        if self.fail_partitions:
            self.partition_calls.append(("add", [dict(p) for p in partitions]))
            raise CatalogError(f"{self.NAME}: add_partitions refused")
        super().add_partitions(db, table, location, schema, partitions)

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

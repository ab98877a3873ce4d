"""Fixtures of the catalog tests: a fresh JDBC catalog database per test, on SQLite (a file in ``tmp_path``) and on
PostgreSQL (a new database on the session's server, the ``postgres`` fixture of tests/conftest.py)."""

from __future__ import annotations

import pathlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest

from table_engine.catalog.jdbc import JdbcMetastore
from tests import postgres_server
from tests.postgres_server import PostgresServer


@dataclass(frozen=True)
class JdbcDatabase:
    """One empty catalog database: its dialect and the catalog options that reach it (credentials included)."""

    dialect: str
    options: dict[str, str]
    warehouse: str


# the PostgreSQL cases take ~10 s in all (the server's start and stop, a database per test): the integration tier
@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.integration)])
def jdbc_db(request: pytest.FixtureRequest, tmp_path: pathlib.Path) -> JdbcDatabase:
    """A fresh catalog database on SQLite, then on PostgreSQL."""
    warehouse = str(tmp_path / "warehouse")
    if request.param == "sqlite":
        return JdbcDatabase("sqlite", {"uri": f"jdbc:sqlite:{tmp_path / 'catalog.db'}"}, warehouse)
    server: PostgresServer = request.getfixturevalue("postgres")
    options = {"uri": server.jdbc_uri(server.new_database()), "jdbc.user": postgres_server.USER,
               "jdbc.password": postgres_server.PASSWORD}
    return JdbcDatabase("postgresql", options, warehouse)


@pytest.fixture
def open_metastore(jdbc_db: JdbcDatabase) -> Iterator[Callable[..., JdbcMetastore]]:
    """Opens JdbcMetastores on ``jdbc_db`` with extra catalog options; all are closed after the test."""
    opened: list[JdbcMetastore] = []

    def open_(options: dict[str, str] | None = None) -> JdbcMetastore:
        metastore = JdbcMetastore({**jdbc_db.options, **(options or {})}, jdbc_db.warehouse)
        opened.append(metastore)
        return metastore

    try:
        yield open_
    finally:
        for metastore in opened:
            metastore.close()

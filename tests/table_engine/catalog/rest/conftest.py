"""Fixtures of the REST catalog tests: one test server per session, a fresh ``RestApi`` per test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from table_engine.catalog.rest.api import RestApi
from tests.rest_server import FAST_RETRY, RestCatalogServer


@pytest.fixture(scope="session")
def rest_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RestCatalogServer]:
    server = RestCatalogServer(Path(tmp_path_factory.mktemp("rest-warehouse")))
    with server:
        yield server


@pytest.fixture
def server(rest_server: RestCatalogServer) -> Iterator[RestCatalogServer]:
    """The session server, its switches reset around each test."""
    rest_server._faults.clear()
    rest_server._expired.clear()
    yield rest_server
    rest_server._faults.clear()
    rest_server._expired.clear()


@pytest.fixture
def api(server: RestCatalogServer) -> Iterator[RestApi]:
    client = RestApi(server.options(), retry=FAST_RETRY)
    try:
        yield client
    finally:
        client.close()

"""Fixtures of the REST catalog tests: one test server per session, a fresh ``RestApi`` per test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from table_engine.catalog.rest.api import RestApi
from table_engine.catalog.rest.client import RetryPolicy
from tests.rest_server import RestCatalogServer

FAST_RETRY = RetryPolicy(max_retries=3, initial_backoff=0.01, max_backoff=0.2, jitter=0.0)


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

"""Shared fixtures: a fresh warehouse per test, on local disk or on the session's S3 server; the session's
PostgreSQL 15 server and Hive Metastore 2.3.10 (catalogs), each started when a test first asks for it; and
``metastore``, one catalog definition per metastore the engine implements (a test that asks for it runs once each)."""

from __future__ import annotations

import pathlib
import sys
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pytest

from tests import postgres_server
from tests.hive_metastore import HiveMetastore, java, pyspark_jars
from tests.postgres_server import PostgresServer
from tests.s3_server import S3Server

# the DAG folder on sys.path, as Airflow puts it there: the DAGs' helper module (dags/example_lake.py) is imported by
# its top-level name
DAGS_FOLDER = pathlib.Path(__file__).resolve().parents[1] / "dags"
if str(DAGS_FOLDER) not in sys.path:
    sys.path.insert(0, str(DAGS_FOLDER))

if TYPE_CHECKING:
    from table_engine import Catalog


class StrictlyIncreasingClock:
    """The system clock, except that two readings never share a millisecond: a reading in the same (or an
    earlier) millisecond as the previous one returns the previous one plus one. It runs ahead of the system clock
    only for as long as readings come faster than one per millisecond."""

    def __init__(self) -> None:
        self._last = 0
        self._lock = threading.Lock()

    def __call__(self) -> int:
        from table_engine.clock import system_millis

        with self._lock:
            self._last = max(system_millis(), self._last + 1)
            return self._last


@pytest.fixture(scope="session", autouse=True)
def _strictly_increasing_engine_clock() -> Iterator[None]:
    """The tests' engine clock (in this process; subprocesses keep the system clock): a commit and the expiry that
    follows it never read the same millisecond, so ``time_retained=0`` expires every snapshot but the retained
    minimum, as the tests mean. In one millisecond the commit is not older than the cut-off and its predecessor
    stays, which is Paimon's rule and made such tests fail rarely (tests of that rule set a ``ManualClock``)."""
    from table_engine.clock import use_clock

    with use_clock(StrictlyIncreasingClock()):
        yield


@pytest.fixture
def warehouse(tmp_path: pathlib.Path) -> str:
    return str(tmp_path / "warehouse")


@pytest.fixture
def catalog(warehouse: str) -> Catalog:
    from table_engine import Catalog

    return Catalog(warehouse)


@pytest.fixture(scope="session")
def s3_server() -> Iterator[S3Server]:
    """The session's S3 API server (moto) on 127.0.0.1, stopped at the end of the session."""
    server = S3Server().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def s3_bucket(s3_server: S3Server) -> str:
    """The session's bucket."""
    return s3_server.new_bucket()


@pytest.fixture
def s3_options(s3_server: S3Server) -> dict[str, str]:
    """Catalog options reaching the session's S3 server."""
    return s3_server.options()


@pytest.fixture
def s3_warehouse(s3_bucket: str) -> str:
    """A fresh warehouse prefix in the session's bucket: ``s3://<bucket>/<uuid>/warehouse``."""
    return f"s3://{s3_bucket}/{uuid.uuid4().hex}/warehouse"


@pytest.fixture
def s3_catalog(s3_warehouse: str, s3_options: dict[str, str]) -> Catalog:
    from table_engine import Catalog

    return Catalog(s3_warehouse, s3_options)


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """The session's PostgreSQL 15 server on 127.0.0.1, stopped (and its cluster removed) at the end."""
    if not postgres_server.available():
        pytest.skip(f"PostgreSQL 15 is not installed ({postgres_server.BIN})")
    server = PostgresServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def hive_metastore() -> Iterator[HiveMetastore]:
    """One Hive Metastore for the session, on a free port (clients use 127.0.0.1); stopped at the end."""
    if java() is None or pyspark_jars() is None:
        pytest.skip("the Hive Metastore needs java and pyspark's jars (make install)")
    server = HiveMetastore().start()
    print(f"Hive Metastore listening on {server.uri} after {server.started_in:.1f} s", file=sys.stderr)
    try:
        yield server
    finally:
        server.stop()


@dataclass(frozen=True)
class MetastoreDefinition:
    """A catalog's metastore options (``metastore``, ``uri`` and credentials; no warehouse) and its test id."""

    kind: str
    """``jdbc-sqlite``, ``jdbc-postgresql`` or ``hive``."""
    options: dict[str, str]


@pytest.fixture(params=["jdbc-sqlite", pytest.param("jdbc-postgresql", marks=pytest.mark.integration),
                        pytest.param("hive", marks=pytest.mark.integration)])
def metastore(request: pytest.FixtureRequest, tmp_path: pathlib.Path) -> MetastoreDefinition:
    """Each metastore in turn: JDBC on a fresh SQLite file, JDBC on a fresh database of the session's PostgreSQL,
    the session's Hive Metastore (shared: a test there uses databases of its own)."""
    if request.param == "jdbc-sqlite":
        return MetastoreDefinition(request.param, {"metastore": "jdbc",
                                                   "uri": f"jdbc:sqlite:{tmp_path / 'catalog.db'}"})
    if request.param == "jdbc-postgresql":
        server: PostgresServer = request.getfixturevalue("postgres")
        return MetastoreDefinition(request.param, {
            "metastore": "jdbc", "uri": server.jdbc_uri(server.new_database()), "jdbc.user": postgres_server.USER,
            "jdbc.password": postgres_server.PASSWORD})
    hms: HiveMetastore = request.getfixturevalue("hive_metastore")
    return MetastoreDefinition(request.param, {"metastore": "hive", "uri": hms.uri})

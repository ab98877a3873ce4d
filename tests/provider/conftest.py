"""Provider tests: a session Airflow home (env only; the DB is migrated by ``airflow_db`` when needed) and
connections pointing at a fresh warehouse per test."""

from __future__ import annotations

import pathlib
from collections.abc import Iterator

import pytest

from tests import airflow_env

airflow_env.configure()


@pytest.fixture(scope="session")
def airflow_db() -> None:
    airflow_env.migrate()


@pytest.fixture
def paimon_conn(monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path) -> Iterator[str]:
    """``paimon_default`` -> a fresh warehouse; ``spark_default`` -> ``local[2]``. Yields the warehouse."""
    warehouse = str(tmp_path / "warehouse")
    monkeypatch.setenv("AIRFLOW_CONN_PAIMON_DEFAULT", airflow_env.paimon_connection(warehouse))
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_DEFAULT", airflow_env.spark_connection("local[2]"))
    yield warehouse

"""One Airflow home per test session for the provider and DAG tests (imported by their conftests only).

Airflow reads ``AIRFLOW_HOME`` and its configuration when ``airflow`` is first imported, so :func:`configure`
runs at conftest import, before any test module imports Airflow. It only sets environment variables (cheap); the
SQLite metadata database is migrated lazily, once, by the ``airflow_db`` fixture, for the tests that need it.
"""

from __future__ import annotations

import atexit
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parents[1]
DAGS_FOLDER = REPO / "dags"

_home: pathlib.Path | None = None


def configure() -> pathlib.Path:
    """Point Airflow at a fresh temporary home (idempotent within a session)."""
    global _home
    if _home is not None:
        return _home
    _home = pathlib.Path(tempfile.mkdtemp(prefix="airflow-home-"))
    atexit.register(shutil.rmtree, _home, ignore_errors=True)
    os.environ.update({
        "AIRFLOW_HOME": str(_home),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__CORE__DAGS_FOLDER": str(DAGS_FOLDER),
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{_home}/airflow.db",
        "AIRFLOW__CORE__UNIT_TEST_MODE": "False",
        # DAGs run by dag.test() are active, so an Asset event queues the DAGs scheduled on it (as in a deployment)
        "AIRFLOW__CORE__DAGS_ARE_PAUSED_AT_CREATION": "False",
        "AIRFLOW__LOGGING__LOGGING_LEVEL": "INFO",
    })
    return _home


def migrate() -> None:
    """``airflow db migrate`` into the session's SQLite database (~3 s), in a subprocess."""
    home = configure()
    marker = home / ".migrated"
    if marker.exists():
        return
    airflow = pathlib.Path(sys.executable).with_name("airflow")
    subprocess.run([str(airflow), "db", "migrate"], check=True, env=dict(os.environ), capture_output=True,
                   timeout=300)
    marker.touch()


def paimon_connection(warehouse: str, spark_conn_id: str = "spark_default", **extra: object) -> str:
    """``AIRFLOW_CONN_...`` JSON of a ``paimon`` connection."""
    return json.dumps({"conn_type": "paimon", "extra": {"warehouse": warehouse, "spark_conn_id": spark_conn_id,
                                                        **extra}})


def spark_connection(master: str = "local[2]", **extra: object) -> str:
    return json.dumps({"conn_type": "spark", "host": master, "extra": extra})

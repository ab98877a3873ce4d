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
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pytest

REPO = pathlib.Path(__file__).resolve().parents[1]
DAGS_FOLDER = REPO / "dags"

_home: pathlib.Path | None = None

TEST_FERNET_KEY = "cGFpbW9uLXRlc3RzLWZlcm5ldC1rZXktMzItYnl0ZXM="
"""The test session's Fernet key (32 bytes, url-safe base64): a test value, not a secret."""


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
        # one key for every process of the session (this one, `airflow db migrate`, the lineage runner...): a process
        # that found a generated key in airflow.cfg would encrypt what another, with none, cannot read
        "AIRFLOW__CORE__FERNET_KEY": TEST_FERNET_KEY,
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
    """``AIRFLOW_CONN_...`` JSON of a ``paimon`` connection, its extra as the UI's form stores it."""
    from paimon_provider.utils.connection import form_extra

    return json.dumps({"conn_type": "paimon", "extra": form_extra(warehouse, spark_conn_id=spark_conn_id, **extra)})


def paimon_s3_connection(warehouse: str, endpoint: str, spark_conn_id: str = "spark_default",
                         **extra: object) -> str:
    """``AIRFLOW_CONN_...`` JSON of a ``paimon`` connection on an S3 warehouse of the test server at ``endpoint``:
    the access key in the login, the secret key in the password (``tests.s3_server`` credentials)."""
    from paimon_provider.utils.connection import form_extra

    from tests.s3_server import ACCESS_KEY, REGION, SECRET_KEY

    return json.dumps({"conn_type": "paimon", "login": ACCESS_KEY, "password": SECRET_KEY,
                       "extra": form_extra(warehouse, spark_conn_id=spark_conn_id, s3_endpoint=endpoint,
                                           s3_region=REGION, s3_path_style_access="true", **extra)})


def without_aws_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Remove every ``AWS_*`` variable from this process's environment (credentials must come from the
    connection), and point the instance-metadata lookup of a credential chain at a closed loopback port, so a broken
    credential route fails fast instead of calling out to 169.254.169.254."""
    for name in [n for n in os.environ if n.startswith("AWS_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_METADATA_ENDPOINT", "http://127.0.0.1:9")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


def spark_connection(master: str = "local[2]", **extra: object) -> str:
    return json.dumps({"conn_type": "spark", "host": master, "extra": extra})

"""The connection list's Test button on a connection without a port, through Airflow's real API app: Airflow 3.3.2
refuses it (its UI sends port 0, the stored port is NULL); with the provider's root middleware it is tested."""

from __future__ import annotations

import json
import pathlib
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from paimon_provider.plugins import test_button

from tests import airflow_env

JWT_SECRET = "test-button-jwt-secret-" + "y" * 48


@pytest.fixture
def api(airflow_db: None, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[TestClient]:
    """Airflow's core API app (with the plugins installed in this environment) and an admin's bearer token; a
    ``paimon`` connection without a port on an existing local warehouse."""
    from airflow.api_fastapi.app import create_app, init_auth_manager
    from airflow.api_fastapi.auth.managers.simple.user import SimpleAuthManagerUser

    (tmp_path / "warehouse").mkdir()
    monkeypatch.setenv("AIRFLOW_CONN_PAIMON_NO_PORT", airflow_env.paimon_connection(str(tmp_path / "warehouse")))
    port_zero = json.loads(airflow_env.paimon_connection(str(tmp_path / "warehouse")))
    monkeypatch.setenv("AIRFLOW_CONN_PAIMON_PORT_ZERO", json.dumps({**port_zero, "port": 0}))
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_DEFAULT", airflow_env.spark_connection("local[2]"))
    monkeypatch.setenv("AIRFLOW__CORE__TEST_CONNECTION", "Enabled")
    monkeypatch.setenv("AIRFLOW__API_AUTH__JWT_SECRET", JWT_SECRET)
    token = init_auth_manager().generate_jwt(SimpleAuthManagerUser(username="admin", role="admin"))
    client = TestClient(create_app("core"))
    client.headers["Authorization"] = f"Bearer {token}"
    yield client


def as_the_list_sends_it(conn_id: str, stored: str) -> dict[str, Any]:
    """The body of the connection list's Test button for a listed connection without a port (Airflow 3.3.2): its
    fields as listed, the password masked, ``port: Number(null)``."""
    return {"connection_id": conn_id, "conn_type": "paimon", "host": "", "port": 0, "login": "", "password": "***",
            "schema": "", "extra": json.dumps(json.loads(stored)["extra"]), "description": ""}


@pytest.mark.filterwarnings("ignore:ProvidersManager.hooks is deprecated")  # Airflow's own route, 3.3.2
def test_the_test_button_tests_a_connection_without_a_port(api: TestClient) -> None:
    if not test_button.needed():
        pytest.skip("this Airflow treats port 0 as no port itself (apache/airflow#73298)")
    import os

    for conn_id in ("paimon_no_port", "paimon_port_zero"):  # no port (the form's), and port 0 (the demo's)
        body = as_the_list_sends_it(conn_id, os.environ[f"AIRFLOW_CONN_{conn_id.upper()}"])
        answer = api.post("/api/v2/connections/test", json=body)
        assert answer.status_code == 200, answer.text
        result = answer.json()
        assert result["status"] is True and "lists databases" in result["message"], result


def test_only_port_zero_of_the_test_route_is_rewritten() -> None:
    assert json.loads(test_button.without_port_zero(b'{"port": 0, "host": ""}') or b"{}") == {"port": None,
                                                                                             "host": ""}
    for body in (b'{"port": 5432}', b'{"port": null}', b'{"port": false}', b"not json", b"[0]"):
        assert test_button.without_port_zero(body) is None, body
    # a connection stored with port 0 (the demo's were) is tested with 0, as stored
    assert test_button.without_port_zero(b'{"connection_id": "c", "port": 0}', lambda conn_id: 0) is None

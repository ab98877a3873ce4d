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


@pytest.mark.filterwarnings("ignore:ProvidersManager.hooks is deprecated")
def test_the_test_button_tests_a_spark_connect_server(api: TestClient) -> None:
    """The Spark provider's SparkConnectHook has no test: Airflow answers "doesn't implement"; the provider's
    middleware answers whether the server the form names accepts a connection (a listener on 127.0.0.1 here, then
    the same port closed)."""
    import socket

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]

    def test(host: str, port: int | None) -> dict[str, Any]:
        body = {"connection_id": "spark_connect_probe", "conn_type": "spark_connect", "host": host, "port": port,
                "login": "", "password": "", "schema": "", "extra": "{}", "description": ""}
        answer = api.post("/api/v2/connections/test", json=body)
        assert answer.status_code == 200, answer.text
        return dict(answer.json())

    try:
        result = test("sc://127.0.0.1", port)
        assert result == {"status": True, "message": f"sc://127.0.0.1:{port} (a Spark Connect server, answering): "
                                                     "its port accepts connections (tested by the Paimon provider; "
                                                     "the Spark provider's hook has no test)"}, result
        assert test(f"127.0.0.1:{port}", None)["status"] is True  # host without a scheme, port in the host
    finally:
        listener.close()
    closed = test("sc://127.0.0.1", port)
    assert closed["status"] is False and f"sc://127.0.0.1:{port} is not reachable" in closed["message"], closed
    assert test("", None)["message"].startswith("no Host"), "an empty host is named"
    # another connection type's answer is Airflow's own
    other = api.post("/api/v2/connections/test", json={"connection_id": "x", "conn_type": "spark", "host": "local[2]"})
    assert "Paimon provider" not in other.text

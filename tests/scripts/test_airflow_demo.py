"""``make airflow`` (scripts/airflow_demo.py serve): connections in the metadata database (visible in the UI, a
user's edit wins, the Test button enabled and passing), a login, generated secrets, no log server."""

from __future__ import annotations

import json
import pathlib
import sqlite3
import stat
import subprocess

import pytest

from scripts import airflow_demo as demo


def test_the_demo_environment_has_a_login_generated_secrets_and_no_connection_variables(
        tmp_path: pathlib.Path) -> None:
    env = demo.demo_env(tmp_path / "home", tmp_path / "lake")
    assert not any(k.startswith("AIRFLOW_CONN_") for k in env)
    assert env["AIRFLOW__CORE__TEST_CONNECTION"] == "Enabled"
    assert env["AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS"] == "False"
    assert env["AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS"] == "admin:admin"
    secrets_file = tmp_path / "home" / "demo-secrets.json"
    assert stat.S_IMODE(secrets_file.stat().st_mode) == 0o600
    assert json.loads(secrets_file.read_text())["jwt_secret"] == env["AIRFLOW__API_AUTH__JWT_SECRET"]
    # stable across starts of one home, different in another home; never the old fixed values
    again = demo.demo_env(tmp_path / "home", tmp_path / "lake")
    other = demo.demo_env(tmp_path / "home2", tmp_path / "lake")
    for key in ("AIRFLOW__API__SECRET_KEY", "AIRFLOW__API_AUTH__JWT_SECRET"):
        assert again[key] == env[key] != other[key] and len(env[key]) >= 40 and "demo" not in env[key]
    # the login: the password is shown the first time only, and is what the simple auth manager reads
    first = demo.demo_login(tmp_path / "home")
    password = json.loads(demo.passwords_file(tmp_path / "home").read_text())["admin"]
    assert password in first and "shown once" in first
    assert password not in demo.demo_login(tmp_path / "home")
    assert stat.S_IMODE(demo.passwords_file(tmp_path / "home").stat().st_mode) == 0o600
    assert env["AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE"] == str(demo.passwords_file(tmp_path / "home"))
    # the api-server on loopback; the scheduler and the triggerer start no log server (it would bind every interface)
    components = {args[0]: args[1:] for args in demo.serve_components(8080)}
    assert components["api-server"] == ["--host", "127.0.0.1", "--port", "8080"]
    assert components["scheduler"] == components["triggerer"] == ["--skip-serve-logs"]


@pytest.mark.slow  # over 10 s: make test runs it, make test-fast does not
def test_the_demo_creates_its_connections_in_the_database_and_a_users_edit_wins(tmp_path: pathlib.Path) -> None:
    home, lake = tmp_path / "home", tmp_path / "lake"
    env = demo.demo_env(home, lake)
    demo.migrate(env)
    connections = demo.demo_connections(lake)
    out = demo.create_connections(env, home, connections)
    assert "Imported connection paimon_default" in out and "Imported connection spark_default" in out
    db = home / "airflow.db"

    def rows() -> dict[str, tuple[str, str | None]]:  # (the extra is encrypted: the test below reads it)
        with sqlite3.connect(db) as c:
            return {r[0]: (r[1], r[2]) for r in c.execute("select conn_id, conn_type, host from connection")}

    assert rows() == {"spark_default": ("spark", "local[*]"), "paimon_default": ("paimon", None)}
    with sqlite3.connect(db) as c:  # a user edits the Spark connection in the UI
        c.execute("update connection set host = 'spark://edited:7077' where conn_id = 'spark_default'")
    out = demo.create_connections(env, home, connections)  # the next `make airflow`
    assert "Connection spark_default exists already: kept as it is" in out and "Could not" not in out
    assert rows()["spark_default"][1] == "spark://edited:7077"
    # the Test button's check (the CLI runs the same hook.test_connection; refused unless test_connection=Enabled)
    (lake / "warehouse").mkdir(parents=True)
    test = subprocess.run([demo.airflow_bin(), "connections", "test", "paimon_default"], env=env,
                          capture_output=True, text=True, timeout=300)
    assert "Connection success!" in test.stdout, test.stdout + test.stderr
    with sqlite3.connect(db) as c:  # its message on a failure: the warehouse listed, the Spark connection missing
        c.execute("delete from connection where conn_id = 'spark_default'")
    test = subprocess.run([demo.airflow_bin(), "connections", "test", "paimon_default"], env=env,
                          capture_output=True, text=True, timeout=300)
    said = " ".join(test.stdout.split())  # Airflow's console wraps lines at the terminal's width (none: 80)
    assert "Connection failed!" in said and f"warehouse {lake / 'warehouse'} lists databases" in said
    assert "but Spark connection 'spark_default'" in said


def test_a_failed_warm_up_is_only_said(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The Spark Connect warm-up is best effort: nothing answering is one line, not an error (the first job then
    starts the server's workers); its success path runs in every `make airflow` and in the live benchmark."""
    from scripts.airflow_demo import warm_up_server
    from tests.live_airflow import free_port

    warm_up_server(f"sc://127.0.0.1:{free_port()}", str(tmp_path / "warehouse"))
    out = capsys.readouterr().out
    assert out.startswith("Spark Connect warm-up failed (the first job will start the server's workers): ") and \
        "is not reachable" in out, out

"""PaimonSparkHook: exact spark-submit argv from the Spark connection's fields (rendered by job_spec.render_job,
no private API of the Spark provider), the client-mode runner, kill."""

from __future__ import annotations

import dataclasses
import json
import os
import pathlib
import stat
import sys
import threading
import time

import pytest
from paimon_provider.hooks import spark as spark_hook_module
from paimon_provider.hooks.spark import PaimonSparkHook, spark_master
from paimon_provider.utils.job_spec import SparkJobSpec

from table_engine.ops import Compact, CreateTag, ExpireSnapshots, ExpireTags, Write, from_json
from table_engine.ops.argv import command_argv
from table_engine.ops.secrets import SECRETS_ENV, with_environment_secrets
from tests import airflow_env

APP = "/opt/engine/table_engine/spark/app.py"
PY = sys.executable


@pytest.fixture
def app(monkeypatch: pytest.MonkeyPatch) -> str:
    """The application path, fixed (its real location is tested in test_job_spec.py)."""
    monkeypatch.setattr(spark_hook_module, "application_path", lambda: APP)
    return APP


def shown(argv: list[str]) -> list[str]:
    """``argv`` with the command sent as ``--command-json '<json>'`` shown as its command line."""
    if "--command-json" not in argv:
        return argv
    i = argv.index("--command-json")
    return [*argv[:i], *command_argv(from_json(argv[i + 1])), *argv[i + 2:]]


def submission(spec: SparkJobSpec, conn: str = "paimon_default") -> list[str]:
    return shown(PaimonSparkHook(paimon_conn_id=conn).build_submission(spec).argv)


def test_local_master_argv(paimon_conn: str, app: str) -> None:
    spec = SparkJobSpec(command=Compact(warehouse=paimon_conn, table="dwd.orders", full=True))
    assert submission(spec) == [
        "spark-submit", "--master", "local[2]",
        "--conf", f"spark.pyspark.python={PY}", "--conf", f"spark.pyspark.driver.python={PY}",
        "--name", "paimon-compact-dwd.orders",
        app, "compact", "--warehouse", paimon_conn, "--table", "dwd.orders", "--full"]


def test_cluster_master_ships_the_engine_and_uses_connection_settings(
        monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path, app: str) -> None:
    monkeypatch.setenv("AIRFLOW_CONN_PAIMON_LAKE", airflow_env.paimon_connection(
        "s3://lake/wh", spark_conn_id="spark_cluster", catalog_options={"fs.s3.region": "eu-west-1"},
        python="/usr/local/bin/python3", spark_conf={"spark.executor.memory": "2g"}))
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_CLUSTER", airflow_env.spark_connection(
        "spark://spark-master:7077", **{"deploy-mode": "client"}))
    monkeypatch.setattr(spark_hook_module, "engine_archive", lambda: "/tmp/table_engine-abc.zip")
    spec = SparkJobSpec(command=Write(warehouse="s3://lake/wh", table="ods.events", source="/data/x"),
                        args=["--format", "parquet"],
                        conf={"spark.sql.shuffle.partitions": "8"}, py_files=["/deps/extra.zip"],
                        driver_memory="1g", executor_cores=2, total_executor_cores=4, env_vars={"TZ": "UTC"})
    sub = PaimonSparkHook(paimon_conn_id="paimon_lake").build_submission(spec)
    assert sub.argv == [
        "spark-submit", "--master", "spark://spark-master:7077",
        "--conf", "spark.executor.memory=2g", "--conf", "spark.sql.shuffle.partitions=8",
        "--conf", "spark.pyspark.python=/usr/local/bin/python3", "--conf", f"spark.pyspark.driver.python={PY}",
        "--py-files", "/tmp/table_engine-abc.zip,/deps/extra.zip",
        "--total-executor-cores", "4", "--executor-cores", "2", "--driver-memory", "1g",
        "--name", "paimon-write-ods.events", "--deploy-mode", "client",
        app, "write", "--warehouse", "s3://lake/wh", "--table", "ods.events",
        "--catalog-option", "fs.s3.region=eu-west-1", "--source", "/data/x", "--format", "parquet"]
    assert sub.master == "spark://spark-master:7077" and not sub.cluster_mode
    assert sub.env["TZ"] == "UTC" and "SPARK_LOCAL_IP" not in sub.env or os.environ.get("SPARK_LOCAL_IP")


def test_spec_overrides_master_warehouse_and_spark_connection(paimon_conn: str, app: str,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_OTHER", airflow_env.spark_connection("yarn", queue="etl"))
    spec = SparkJobSpec(command=ExpireTags(warehouse="/other", table="db.t"), master="local[1]",
                        spark_conn_id="spark_other", runner="spark")
    argv = submission(spec)
    assert argv[:3] == ["spark-submit", "--master", "local[1]"]
    assert "--queue" in argv and argv[argv.index("--queue") + 1] == "etl"
    assert argv[-5:] == ["expire-tags", "--warehouse", "/other", "--table", "db.t"]


def test_missing_spark_connection_is_an_error_not_yarn(paimon_conn: str, app: str,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from airflow.sdk.exceptions import AirflowException

    monkeypatch.delenv("AIRFLOW_CONN_SPARK_DEFAULT")
    with pytest.raises(AirflowException, match="spark_default.*not defined"):
        submission(SparkJobSpec(command=Compact(warehouse=paimon_conn, table="db.t")))
    # an explicit master needs no connection
    argv = submission(SparkJobSpec(command=Compact(warehouse=paimon_conn, table="db.t"), master="local[*]"))
    assert argv[1:3] == ["--master", "local[*]"]


def test_metadata_commands_run_the_engine_cli_unless_the_driver_is_on_the_cluster(
        paimon_conn: str, app: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Metadata-only commands run on the application's driver without Spark: in client mode that driver is this
    machine, so the engine's CLI runs them here (no JVM); in cluster mode, or with runner='spark', spark-submit."""
    spec = SparkJobSpec(command=CreateTag(warehouse=paimon_conn, table="db.t", tag="t1"), env_vars={"TZ": "UTC"})
    sub = PaimonSparkHook().build_submission(spec)
    assert sub.local and sub.route == "cli"
    assert shown(sub.argv) == [PY, "-m", "table_engine.cli", "create-tag", "--warehouse", paimon_conn,
                               "--table", "db.t", "--tag", "t1"]
    assert sub.env["TZ"] == "UTC" and sub.application == "table_engine.cli"
    forced = PaimonSparkHook().build_submission(dataclasses.replace(spec, runner="spark"))
    assert not forced.local and forced.argv[0] == "spark-submit"
    assert shown(forced.argv)[-8:] == [app, "create-tag", "--warehouse", paimon_conn, "--table", "db.t", "--tag", "t1"]
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_DEFAULT", airflow_env.spark_connection("yarn",
                                                                                  **{"deploy-mode": "cluster"}))
    on_cluster = PaimonSparkHook().build_submission(spec)
    assert not on_cluster.local and on_cluster.cluster_mode and on_cluster.argv[0] == "spark-submit"
    # runner='local' needs no Spark connection at all
    monkeypatch.delenv("AIRFLOW_CONN_SPARK_DEFAULT")
    assert PaimonSparkHook().build_submission(dataclasses.replace(spec, runner="local")).local
    with pytest.raises(ValueError, match="Spark job"):
        SparkJobSpec(command=Compact(warehouse=paimon_conn, table="db.t"), runner="local")
    with pytest.raises(ValueError, match="runner must be one of"):
        SparkJobSpec(command=ExpireTags(warehouse=paimon_conn, table="db.t"), runner="driver")


def test_missing_paimon_connection_or_warehouse(monkeypatch: pytest.MonkeyPatch, app: str) -> None:
    from airflow.sdk.exceptions import AirflowNotFoundException

    with pytest.raises(AirflowNotFoundException):
        submission(SparkJobSpec(command=Compact(warehouse="/wh", table="db.t")), conn="paimon_nowhere")
    monkeypatch.setenv("AIRFLOW_CONN_PAIMON_EMPTY", json.dumps({"conn_type": "paimon", "extra": {}}))
    with pytest.raises(ValueError, match="no warehouse"):
        submission(SparkJobSpec(command=Compact(warehouse="/wh", table="db.t")), conn="paimon_empty")


@pytest.mark.parametrize(("conn_type", "host", "port", "extra"), [
    ("spark", "local[*]", None, {}),
    ("spark", "spark://m:7077", None, {}),
    ("spark", "m", 7077, {}),
    ("spark", "yarn", None, {"deploy-mode": "cluster", "queue": "q"}),
])
def test_master_rule_agrees_with_spark_submit_hook(monkeypatch: pytest.MonkeyPatch, conn_type: str, host: str,
                                                   port: int | None, extra: dict[str, str]) -> None:
    from airflow.providers.apache.spark.hooks.spark_submit import SparkSubmitHook

    monkeypatch.setenv("AIRFLOW_CONN_SPARK_PROBE", json.dumps(
        {"conn_type": conn_type, "host": host, "port": port, "extra": extra}))
    argv = SparkSubmitHook(conn_id="spark_probe")._build_spark_submit_command("app.py")
    assert argv[argv.index("--master") + 1] == spark_master(conn_type, host, port)


# ---- running (a fake spark-submit on PATH) --------------------------------------------------------------------


def fake_spark_submit(directory: pathlib.Path, body: str) -> None:
    script = directory / "spark-submit"
    script.write_text(f"#!{sys.executable}\nimport sys, time, json, os\n{body}\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)


@pytest.fixture
def fake_bin(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, paimon_conn: str, app: str) -> pathlib.Path:
    directory = tmp_path / "bin"
    directory.mkdir()
    monkeypatch.setenv("PATH", f"{directory}{os.pathsep}{os.environ['PATH']}")
    return directory


def test_submit_returns_the_final_json_line(fake_bin: pathlib.Path, paimon_conn: str) -> None:
    fake_spark_submit(fake_bin, """
print("log line on stderr", file=sys.stderr)
print(json.dumps({"status": "ok", "snapshot_id": 1}))
print("chatter")
print(json.dumps({"command": json.loads(sys.argv[-1])["command"], "status": "ok", "snapshot_id": 7,
                  "args": sys.argv[1:]}))
""")
    result = PaimonSparkHook().submit(SparkJobSpec(command=Compact(warehouse=paimon_conn, table="db.t")))
    assert result is not None
    assert result["snapshot_id"] == 7 and result["command"] == "compact"
    assert shown(result["args"])[-5:] == ["compact", "--warehouse", paimon_conn, "--table", "db.t"]


def test_submit_failure_reports_the_application_error(fake_bin: pathlib.Path, paimon_conn: str) -> None:
    from airflow.sdk.exceptions import AirflowException

    fake_spark_submit(fake_bin, """
print("Traceback: boom", file=sys.stderr)
print(json.dumps({"status": "error", "error": "TableNotExistError: table 'db.t' does not exist"}))
sys.exit(1)
""")
    with pytest.raises(AirflowException, match="(?s)exit code 1: TableNotExistError.*Traceback: boom"):
        PaimonSparkHook().submit(SparkJobSpec(command=Compact(warehouse=paimon_conn, table="db.t")))


def test_submit_without_result_line_returns_none(fake_bin: pathlib.Path, paimon_conn: str) -> None:
    fake_spark_submit(fake_bin, "print('no json here')")
    assert PaimonSparkHook().submit(SparkJobSpec(command=Compact(warehouse=paimon_conn, table="db.t"))) is None


def test_on_kill_stops_the_whole_process_group(fake_bin: pathlib.Path, paimon_conn: str,
                                               tmp_path: pathlib.Path) -> None:
    """spark-submit starts a JVM which starts the Python driver: killing must reach the grandchildren."""
    from airflow.sdk.exceptions import AirflowException

    pid_file = tmp_path / "child.pid"
    fake_spark_submit(fake_bin, f"""
import subprocess
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
open({str(pid_file)!r}, "w").write(str(child.pid))
time.sleep(120)
""")
    hook = PaimonSparkHook()
    errors: list[BaseException] = []

    def run() -> None:
        try:
            hook.submit(SparkJobSpec(command=Compact(warehouse=paimon_conn, table="db.t")))
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    worker = threading.Thread(target=run)
    worker.start()
    deadline = time.monotonic() + 30
    while not pid_file.exists() or not pid_file.read_text():
        assert time.monotonic() < deadline, "the fake job did not start"
        time.sleep(0.1)
    child = int(pid_file.read_text())
    started = time.monotonic()
    hook.on_kill()
    worker.join(timeout=30)
    assert not worker.is_alive()
    assert time.monotonic() - started < 15
    assert errors and isinstance(errors[0], AirflowException) and "was killed" in str(errors[0])
    deadline = time.monotonic() + 10
    while alive(child):
        assert time.monotonic() < deadline, f"grandchild {child} survived the kill"
        time.sleep(0.1)


def alive(pid: int) -> bool:
    """Running (a zombie waiting for a parent that does not reap it counts as dead)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        state = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state not in ("Z", "X")


# ---- credentials: never in an argv, given to the job process's environment ----------------------------------------
SECRET = "sEcReT-in-connection-9d2e"
TOKEN = "session-token-4b7c"
JDBC_SECRET = "jdbc-pAsSwOrD-71f3"


@pytest.fixture
def s3_conn(monkeypatch: pytest.MonkeyPatch) -> str:
    """A paimon connection on an S3 warehouse whose credentials are in login/password and the session-token
    field, with a JDBC catalog whose password is in the jdbc_password field (credentials in catalog_options are
    refused: tests/provider/test_connection.py)."""
    monkeypatch.setenv("AIRFLOW_CONN_PAIMON_S3", json.dumps({
        "conn_type": "paimon", "login": "AKID-conn", "password": SECRET, "extra": {
            "warehouse": "s3://bucket/wh", "s3_endpoint": "http://127.0.0.1:9", "s3_session_token": TOKEN,
            "metastore": "jdbc", "uri": "jdbc:postgresql://127.0.0.1:9/lake", "jdbc_user": "etl",
            "jdbc_password": JDBC_SECRET, "catalog_options": {"s3.region": "eu-west-1"}}}))
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.setenv(name, "worker-own-value")
    return "paimon_s3"


S3_WH = "s3://bucket/wh"


@pytest.mark.parametrize(("spec", "master", "local"), [
    (SparkJobSpec(command=Compact(warehouse=S3_WH, table="db.t", full=True)), "local[2]", False),
    (SparkJobSpec(command=Compact(warehouse=S3_WH, table="db.t"), args=["--full"]), "local[2]", False),
    (SparkJobSpec(command=Compact(warehouse=S3_WH, table="db.t", full=True), args=["--partition", "dt=1"]), "yarn",
     False),
    (SparkJobSpec(command=CreateTag(warehouse=S3_WH, table="db.t", tag="t1")), "local[2]", True),
    (SparkJobSpec(command=CreateTag(warehouse=S3_WH, table="db.t", tag="t1"), runner="spark"), "yarn", False),
    (SparkJobSpec(command=ExpireSnapshots(warehouse=S3_WH, table="db.t"), args=["--retain-max", "3"]), "local[2]",
     True),
])
def test_credentials_are_in_the_job_environment_not_in_its_argv(
        s3_conn: str, app: str, monkeypatch: pytest.MonkeyPatch, spec: SparkJobSpec, master: str, local: bool) -> None:
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_DEFAULT", airflow_env.spark_connection(master))
    sub = PaimonSparkHook(paimon_conn_id=s3_conn).build_submission(spec)
    assert sub.local is local
    text = " ".join(sub.argv)
    for secret in (SECRET, TOKEN, "AKID-conn", JDBC_SECRET):
        assert secret not in text and secret not in repr(sub) and secret not in sub.command.to_json()
    assert "http://127.0.0.1:9" in text and "eu-west-1" in text  # non-secret catalog options still travel
    assert "jdbc:postgresql://127.0.0.1:9/lake" in text and "etl" in text  # so does the catalog
    # the JDBC password: in the job's environment, where its command line parser finds it (ops/secrets.py)
    assert json.loads(sub.env[SECRETS_ENV]) == {"jdbc.password": JDBC_SECRET}
    assert with_environment_secrets(sub.command, sub.env).catalog_options["jdbc.password"] == JDBC_SECRET
    assert sub.env["AWS_ACCESS_KEY_ID"] == "AKID-conn" and sub.env["AWS_SECRET_ACCESS_KEY"] == SECRET
    assert sub.env["AWS_SESSION_TOKEN"] == TOKEN and "AWS_PROFILE" not in sub.env
    assert sub.env["AWS_ENDPOINT_URL"] == "http://127.0.0.1:9" and sub.env["AWS_REGION"] == "eu-west-1"


def test_a_connection_without_credentials_leaves_the_workers_aws_environment(
        paimon_conn: str, app: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "worker-own-value")
    monkeypatch.setenv("AWS_SESSION_TOKEN", "worker-own-token")
    for spec in (SparkJobSpec(command=Compact(warehouse=paimon_conn, table="db.t")),
                 SparkJobSpec(command=CreateTag(warehouse=paimon_conn, table="db.t", tag="t"))):
        sub = PaimonSparkHook().build_submission(spec)
        assert sub.env["AWS_ACCESS_KEY_ID"] == "worker-own-value"
        assert sub.env["AWS_SESSION_TOKEN"] == "worker-own-token"


def test_the_spark_connections_kerberos_fields(paimon_conn: str, app: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """``principal`` and the base64 ``keytab`` extra (as the Spark provider documents them): the keytab is written
    to a file only this user can read, and both reach spark-submit."""
    import base64

    monkeypatch.setenv("AIRFLOW_CONN_SPARK_DEFAULT", airflow_env.spark_connection(
        "yarn", principal="etl@REALM", keytab=base64.b64encode(b"keytab-bytes").decode()))
    argv = submission(SparkJobSpec(command=Compact(warehouse=paimon_conn, table="db.t")))
    keytab = pathlib.Path(argv[argv.index("--keytab") + 1])
    assert keytab.read_bytes() == b"keytab-bytes" and stat.S_IMODE(keytab.stat().st_mode) == 0o600
    assert argv[argv.index("--principal") + 1] == "etl@REALM"

"""Pure rendering of Spark jobs: the typed command in the spec, the route and argv of :func:`render_job`,
application arguments, Spark conf, partitions, engine packaging."""

from __future__ import annotations

import dataclasses
import pathlib
import sys
import zipfile
from collections.abc import Mapping
from typing import Any

import pytest
from paimon_provider.utils import packaging
from paimon_provider.utils.connection import PaimonConnectionConfig
from paimon_provider.utils.job_spec import (
    COMMANDS,
    CONNECT_MODULE,
    SPARK_JOB_COMMANDS,
    SparkConnection,
    SparkJobSpec,
    application_args,
    is_local_master,
    local_argv,
    render_job,
    should_ship_engine,
    spark_conf,
)

from table_engine.ops import Compact, CreateTag, ExpireSnapshots, ExpireTags, Write
from table_engine.ops.result import last_json_object


def compact(warehouse: str = "/wh", table: str = "db.t", **fields: object) -> Compact:
    return Compact(warehouse=warehouse, table=table, **fields)  # type: ignore[arg-type]


def test_application_args_follow_the_cli_grammar() -> None:
    spec = SparkJobSpec(command=compact(), args=["--full"])
    assert application_args(spec, {"b": "2", "a": "1"}) == [
        "compact", "--warehouse", "/wh", "--table", "db.t",
        "--catalog-option", "a=1", "--catalog-option", "b=2", "--full"]
    spec = SparkJobSpec(command=compact("s3://b/wh"), args=["--full"])
    assert application_args(spec) == ["compact", "--warehouse", "s3://b/wh", "--table", "db.t", "--full"]


def test_application_args_parse_with_the_engines_own_grammar() -> None:
    from table_engine.cli import build_parser

    spec = SparkJobSpec(command=compact(), args=["--full", "--partition", "dt=1,h=2"])
    args = build_parser().parse_args(application_args(spec, {"k": "v"}))
    assert (args.command, args.warehouse, args.table, args.full) == ("compact", "/wh", "db.t", True)
    assert args.catalog_option == [("k", "v")] and args.partition == [{"dt": "1", "h": "2"}]


def test_spec_takes_a_typed_command_only() -> None:
    from table_engine.errors import CommandError

    with pytest.raises(TypeError, match="must be a table_engine.ops command"):
        SparkJobSpec(command="vacuum")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="must be a table_engine.ops command"):
        SparkJobSpec(command={"command": "compact", "full": True})  # type: ignore[arg-type]
    with pytest.raises(CommandError, match="--table must not be empty"):
        SparkJobSpec(command=compact(table=""))
    write = Write(warehouse="/wh", table="db.t", source="/in")
    assert SparkJobSpec(command=write).app_name == "paimon-write-db.t"
    assert SparkJobSpec(command=write, name="n").app_name == "n"
    assert SparkJobSpec(command=write).table == "db.t" and SparkJobSpec(command=write).command_name == "write"


@pytest.mark.parametrize(("master", "local"), [("local", True), ("local[*]", True), ("local[4,2]", True),
                                              ("spark://h:7077", False), ("yarn", False), ("localhost", False)])
def test_is_local_master(master: str, local: bool) -> None:
    assert is_local_master(master) is local
    assert should_ship_engine(SparkJobSpec(command=compact()), master) is (not local)
    assert should_ship_engine(SparkJobSpec(command=compact(), ship_engine=True), master) is True


def test_spark_conf_layers_connection_spec_and_interpreters() -> None:
    spec = SparkJobSpec(command=compact(), conf={"a": "spec", "b": 1})  # type: ignore[dict-item]
    assert spark_conf(spec, master="local[2]", cluster_mode=False, connection_conf={"a": "conn", "c": "conn"},
                      connection_python="/cluster/python", local_python="/venv/python") == {
        "a": "spec", "c": "conn", "b": "1", "spark.pyspark.python": "/venv/python",
        "spark.pyspark.driver.python": "/venv/python"}
    # a cluster runs the connection's python; the driver is here in client mode, on the cluster in cluster mode
    assert spark_conf(spec, master="spark://h:7077", cluster_mode=False, connection_python="/cluster/python",
                      local_python="/venv/python")["spark.pyspark.python"] == "/cluster/python"
    cluster = spark_conf(spec, master="yarn", cluster_mode=True, local_python="/venv/python")
    assert cluster["spark.pyspark.python"] == "/venv/python" and "spark.pyspark.driver.python" not in cluster
    explicit = SparkJobSpec(command=compact(), python="/x/python",
                            conf={"spark.pyspark.driver.python": "/y"})
    conf = spark_conf(explicit, master="yarn", cluster_mode=False, connection_python="/cluster/python")
    assert conf["spark.pyspark.python"] == "/x/python" and conf["spark.pyspark.driver.python"] == "/y"


def test_last_json_object_skips_logs_and_non_objects() -> None:
    lines = ["INFO starting", '{"status": "ok", "snapshot_id": 3}', "[1, 2]", "{not json}", "done"]
    assert last_json_object(lines) == {"status": "ok", "snapshot_id": 3}
    assert last_json_object(["no json"]) is None
    assert last_json_object(['{"a": 1}', ' {"b": 2} ']) == {"b": 2}


def test_engine_archive_holds_the_engine_sources(tmp_path: pathlib.Path) -> None:
    path = packaging.engine_archive(str(tmp_path))
    again = packaging.engine_archive(str(tmp_path))
    assert path == again and pathlib.Path(path).parent == tmp_path
    with zipfile.ZipFile(path) as zf:
        names = set(zf.namelist())
    assert {"table_engine/__init__.py", "table_engine/catalog/__init__.py", "table_engine/py.typed"} <= names
    assert not any("__pycache__" in n for n in names)
    # importable from the zip alone (what executors do with --py-files)
    code = f"import sys; sys.path.insert(0, {path!r}); import table_engine.format.snapshot as m; print(m.__file__)"
    import subprocess

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert path in out.stdout, out.stderr


def test_application_path_is_the_engines_spark_app() -> None:
    expected = packaging.engine_package_dir() / "spark" / "app.py"
    if not expected.exists():
        with pytest.raises(FileNotFoundError, match="app.py"):
            packaging.application_path()
        pytest.skip("table_engine/spark/app.py is not written yet")
    assert packaging.application_path() == str(expected)


def test_a_spec_sends_its_command_as_json() -> None:
    from table_engine.ops import from_json
    from table_engine.ops.argv import parse_command

    spec = SparkJobSpec(command=Compact(warehouse="/wh", table="db.t", full=True, partitions=({"dt": "1"},)))
    argv = application_args(spec, {"k": "v"})
    assert argv[0] == "--command-json" and len(argv) == 2
    cmd = Compact(warehouse="/wh", table="db.t", catalog_options={"k": "v"}, full=True, partitions=({"dt": "1"},))
    assert from_json(argv[1]) == cmd and parse_command(argv) == cmd
    # the command's own catalog options win over the connection's
    own = SparkJobSpec(command=Compact(warehouse="/wh", table="db.t", catalog_options={"k": "mine"}))
    assert from_json(application_args(own, {"k": "v", "j": "1"})[1]).catalog_options == {"k": "mine", "j": "1"}
    # extra options: the command line derived from the command, then the extra options
    spec = SparkJobSpec(command=compact(full=True), args=["--parallelism", "2"])
    assert application_args(spec) == ["compact", "--warehouse", "/wh", "--table", "db.t", "--full",
                                      "--parallelism", "2"]
    with pytest.raises(ValueError, match="compact: --parallelism must be at least 1"):
        compact(parallelism=0)


def test_commands_come_from_the_registry_and_dag_files_load_no_engine() -> None:
    import subprocess

    from table_engine.ops import REGISTRY

    assert COMMANDS == set(REGISTRY) and SPARK_JOB_COMMANDS == {n for n, c in REGISTRY.items() if c.spark_job}
    code = ("import sys, paimon_provider.utils.job_spec, paimon_provider.operators; "
            "assert not [m for m in sys.modules if m.split('.')[0] in ('pyarrow', 'table_engine')], sys.modules")
    root = pathlib.Path(__file__).resolve().parents[3]
    subprocess.run([sys.executable, "-c", code], check=True, timeout=300, cwd=root)


@pytest.mark.parametrize(("command", "args"), [
    (compact("s3://b/wh"), ["--full"]),
    (compact("s3://b/wh", full=True), []),
    (compact("s3://b/wh", full=True), ["--partition", "dt=1"]),
    (CreateTag(warehouse="s3://b/wh", table="db.t", tag="t1"), []),
])
def test_argv_never_holds_credentials_even_when_catalog_options_do(command: Compact | CreateTag,
                                                                    args: list[str]) -> None:
    from table_engine.options.storage import S3_ACCESS_KEY, secret_keys

    secret = "sEcReT-9f1c"
    options = {**dict.fromkeys(secret_keys() | set(S3_ACCESS_KEY.keys), secret), "s3.endpoint": "http://127.0.0.1:9"}
    for spec in (SparkJobSpec(command=command, args=args),  # in the connection, or in the command itself
                 SparkJobSpec(command=dataclasses.replace(command, catalog_options=options), args=args)):
        check_no_secret(spec, options, secret)


def check_no_secret(spec: SparkJobSpec, options: dict[str, str], secret: str) -> None:
    from table_engine.ops.argv import parse_command

    for argv in (application_args(spec, options), local_argv(spec, options)[3:]):
        assert not any(secret in a for a in argv)
        # what is left still parses, with the non-secret options
        assert dict(parse_command(argv).catalog_options) == {"s3.endpoint": "http://127.0.0.1:9"}


def test_driver_job_argv_only_for_small_local_jobs_with_the_conf(tmp_path: pathlib.Path) -> None:
    import pyarrow as pa
    from paimon_provider.utils.job_spec import DRIVER_JOB_CONF, DRIVER_JOBS_MODULE

    from table_engine import Catalog
    from table_engine.ops import Command
    from table_engine.spark.jobs import driver_jobs

    warehouse = str(tmp_path / "wh")
    Catalog(warehouse).create_table("db.t", pa.schema([("id", pa.int64()), ("v", pa.string())]),
                                    primary_keys=["id"], options={"bucket": "1"}).write(
        pa.table({"id": [1, 2], "v": ["a", "b"]}))
    spec = SparkJobSpec(command=compact(warehouse, full=True))
    small = {DRIVER_JOB_CONF: "1 mb"}
    secret = {"s3.secret-key": "SECRET", "s3.region": "eu-west-1"}  # a secret and a plain catalog option

    def small_job(cmd: Command, conf: Mapping[str, str]) -> bool:
        return driver_jobs.runs_on_driver(cmd, driver_jobs.max_input_size(dict(conf)))

    def argv(s: SparkJobSpec = spec, conf: dict[str, str] = small, master: str = "local[*]",
             cluster_mode: bool = False) -> list[str] | None:
        s = dataclasses.replace(s, master=master, deploy_mode="cluster" if cluster_mode else None)
        paimon = PaimonConnectionConfig(conn_id="p", warehouse=warehouse, catalog_options=secret, spark_conf=conf)
        job = render_job(s, paimon, None, application="app.py", engine_archive=lambda: "e.zip", python="py",
                         small_job=small_job)
        return job.argv if job.route == "driver" else None

    out = argv()
    assert out is not None and out[:3] == ["py", "-m", DRIVER_JOBS_MODULE] and out[3] == "--command-json"
    assert "SECRET" not in " ".join(out)
    assert argv(conf={}) is None and argv(conf={DRIVER_JOB_CONF: "0"}) is None  # off unless set
    assert argv(conf={DRIVER_JOB_CONF: "10"}) is None  # more input than that
    assert argv(master="spark://127.0.0.1:7077") is None and argv(cluster_mode=True) is None  # a driver elsewhere
    assert argv(SparkJobSpec(command=compact(warehouse, full=True), runner="spark")) is None
    assert argv(SparkJobSpec(command=compact(warehouse), args=["--full"])) is None  # command line: submitted
    assert argv(SparkJobSpec(command=compact(warehouse, table="db.missing"))) is None  # the job reports it


PAIMON = PaimonConnectionConfig(conn_id="paimon_default", warehouse="/wh", catalog_options={"a": "1"})


def render(spec: SparkJobSpec, spark: SparkConnection | None, paimon: PaimonConnectionConfig = PAIMON) -> Any:
    return render_job(spec, paimon, spark, application="/app.py", engine_archive=lambda: "/engine.zip",
                      python="/py")


def test_render_job_routes_and_argv_without_airflow() -> None:
    """The one renderer: a spec and the resolved connections give the route and the exact argv."""
    from table_engine.ops import from_json

    local2 = SparkConnection(master="local[2]")
    tag = SparkJobSpec(command=CreateTag(warehouse="/wh", table="db.t", tag="t1"))
    job = render(tag, local2)  # metadata only, client mode: the engine's CLI here
    assert job.route == "cli" and job.local and job.argv[:4] == ["/py", "-m", "table_engine.cli", "--command-json"]
    assert from_json(job.argv[4]) == CreateTag(warehouse="/wh", table="db.t", tag="t1", catalog_options={"a": "1"})
    assert job.command == from_json(job.argv[4])
    # runner='local' needs no Spark connection; without one, any other route needs a master
    assert render(dataclasses.replace(tag, runner="local"), None).route == "cli"
    with pytest.raises(ValueError, match="no Spark connection and no master"):
        render(tag, None)
    cluster = render(tag, SparkConnection(master="yarn", deploy_mode="cluster", queue="etl"))
    assert cluster.route == "spark-submit" and cluster.cluster_mode
    assert cluster.argv == ["spark-submit", "--master", "yarn", "--conf", "spark.pyspark.python=/py",
                            "--py-files", "/engine.zip", "--name", "paimon-create-tag-db.t", "--queue", "etl",
                            "--deploy-mode", "cluster", "/app.py", "--command-json", cluster.argv[-1]]
    job = render(SparkJobSpec(command=compact(full=True), driver_memory="1g", verbose=True), local2)
    assert job.route == "spark-submit" and not job.local and job.conf["spark.pyspark.driver.python"] == "/py"
    assert job.argv == ["spark-submit", "--master", "local[2]", "--conf", "spark.pyspark.python=/py",
                        "--conf", "spark.pyspark.driver.python=/py", "--driver-memory", "1g",
                        "--name", "paimon-compact-db.t", "--verbose", "/app.py", "--command-json", job.argv[-1]]
    # the spec's master and deploy mode win over the connection's
    assert render(SparkJobSpec(command=compact(), master="local[1]"), None).argv[:3] == [
        "spark-submit", "--master", "local[1]"]


def test_render_job_follows_the_spark_connection_fields() -> None:
    """YARN and Kubernetes drivers get env_vars as conf, Kubernetes its namespace; principal, keytab, binary."""
    spec = SparkJobSpec(command=compact(), env_vars={"TZ": "UTC"}, runner="spark")
    yarn = render(spec, SparkConnection(master="yarn", principal="etl@REALM", keytab="/k.keytab",
                                        spark_binary="spark3-submit"))
    assert yarn.argv[0] == "spark3-submit" and yarn.env == {"TZ": "UTC"}
    assert "spark.yarn.appMasterEnv.TZ=UTC" in yarn.argv
    assert yarn.argv[yarn.argv.index("--keytab"):yarn.argv.index("--keytab") + 4] == [
        "--keytab", "/k.keytab", "--principal", "etl@REALM"]
    k8s = render(spec, SparkConnection(master="k8s://https://h:443", namespace="lake"))
    assert "spark.kubernetes.driverEnv.TZ=UTC" in k8s.argv and "spark.kubernetes.namespace=lake" in k8s.argv
    with pytest.raises(ValueError, match="env_vars cannot reach the driver"):
        render(spec, SparkConnection(master="spark://m:7077", deploy_mode="cluster"))
    conn = SparkConnection.from_fields("spark", "yarn", None, {"deploy-mode": "cluster", "queue": "q",
                                                               "namespace": "", "spark-binary": "spark2-submit"})
    assert conn == SparkConnection(master="yarn", deploy_mode="cluster", queue="q", spark_binary="spark2-submit")
    assert SparkConnection.from_fields("spark", "m", 7077, None).master == "spark://m:7077"
    with pytest.raises(ValueError, match="spark-binary must be one of"):
        SparkConnection.from_fields("spark", "yarn", None, {"spark-binary": "/bin/sh"})


def test_metadata_commands_and_small_jobs_pick_their_route() -> None:
    local2 = SparkConnection(master="local[2]")
    expire = SparkJobSpec(command=ExpireTags(warehouse="/wh", table="db.t"), runner="spark")
    assert render(expire, local2).route == "spark-submit"
    spec = SparkJobSpec(command=ExpireSnapshots(warehouse="/wh", table="db.t", retain_max=3))
    assert render(spec, SparkConnection(master="yarn", deploy_mode="cluster")).route == "spark-submit"
    with pytest.raises(ValueError, match="cannot run with runner='local'"):
        SparkJobSpec(command=compact(), runner="local")

    def small(cmd: object, conf: Mapping[str, str]) -> bool:
        return conf.get("spark.paimon.driver-job.max-input-size") == "1mb"

    paimon = dataclasses.replace(PAIMON, spark_conf={"spark.paimon.driver-job.max-input-size": "1mb"})
    job = render_job(SparkJobSpec(command=compact()), paimon, local2, application="/app.py",
                     engine_archive=lambda: "/engine.zip", python="/py", small_job=small)
    assert job.route == "driver" and job.argv[:3] == ["/py", "-m", "table_engine.spark.jobs.driver_jobs"]
    job = render_job(SparkJobSpec(command=compact()), PAIMON, local2, application="/app.py",
                     engine_archive=lambda: "/engine.zip", python="/py", small_job=small)
    assert job.route == "spark-submit"


def test_one_commit_user_rule() -> None:
    """The engine decides the commit user (``core_options.default_commit_user``); the operators only name theirs."""
    import inspect

    import paimon_provider.operators.base as base
    from paimon_provider import operators

    assert not hasattr(base, "default_commit_user")
    for module in {inspect.getmodule(cls) for cls in vars(operators).values() if inspect.isclass(cls)}:
        assert "default_commit_user(" not in inspect.getsource(module)  # type: ignore[arg-type]


def test_connect_runs_spark_jobs_in_process_and_keeps_metadata_commands_on_the_cli() -> None:
    """``spark={"connect": ...}`` or a ``spark_connect`` connection: Spark jobs route ``connect`` (no argv; the URL
    shown without its token; the small-job rule does not apply), metadata-only commands stay ``cli``; a URL that
    is not ``sc://`` is refused naming it."""
    paimon = PaimonConnectionConfig(conn_id="p", warehouse="/wh", spark_conf={
        "spark.paimon.driver-job.max-input-size": "8mb", "spark.sql.shuffle.partitions": "2"})

    def render(spec: SparkJobSpec, spark: SparkConnection | None = None) -> Any:
        return render_job(spec, paimon, spark, application="app.py", engine_archive=lambda: "e.zip", python="py",
                          small_job=lambda cmd, conf: True)

    write = Write(warehouse="/wh", table="db.t", source="/in")
    job = render(SparkJobSpec(command=write, connect="sc://127.0.0.1:15002", conf={"spark.sql.ansi.enabled": "true"}))
    assert (job.route, job.argv, job.master, job.application, job.local) == (
        "connect", [], "sc://127.0.0.1:15002", CONNECT_MODULE, True)
    assert job.connect_url == "sc://127.0.0.1:15002" and job.conf["spark.sql.ansi.enabled"] == "true"
    via_connection = render(SparkJobSpec(command=compact()), SparkConnection(
        master="", connect="sc://h:15002/;token=s3cr3t;use_ssl=true"))
    assert via_connection.route == "connect" and via_connection.master == "sc://h:15002"
    assert "s3cr3t" not in repr(via_connection) and "s3cr3t" not in repr(SparkConnection(master="", connect="t=s3cr3t"))
    tag = render(SparkJobSpec(command=CreateTag(warehouse="/wh", table="db.t", tag="t"), connect="sc://h:1"))
    assert tag.route == "cli" and tag.argv[1:3] == ["-m", "table_engine.cli"]
    assert render(SparkJobSpec(command=CreateTag(warehouse="/wh", table="db.t", tag="t"), connect="sc://h:1",
                               runner="spark")).route == "connect"
    with pytest.raises(ValueError, match="'http://h:1' is not sc://host"):
        render(SparkJobSpec(command=write, connect="http://h:1"))
    with pytest.raises(ValueError, match="extra_args cannot be given"):
        render(SparkJobSpec(command=write, connect="sc://h:1", args=["--parallelism", "2"]))

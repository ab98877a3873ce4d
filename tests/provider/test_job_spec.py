"""Pure rendering of Spark jobs: application arguments, Spark conf, partitions, engine packaging."""

from __future__ import annotations

import pathlib
import sys
import zipfile

import pytest
from paimon_provider import packaging
from paimon_provider.job_spec import (
    COMMANDS,
    SPARK_JOB_COMMANDS,
    SparkJobSpec,
    application_args,
    is_local_master,
    local_argv,
    render_partitions,
    should_ship_engine,
    spark_conf,
)
from paimon_provider.results import last_json_object


def test_application_args_follow_the_cli_grammar() -> None:
    spec = SparkJobSpec(command="compact", table="db.t", args=["--full"])
    assert application_args(spec, "/wh", {"b": "2", "a": "1"}) == [
        "compact", "--warehouse", "/wh", "--table", "db.t",
        "--catalog-option", "a=1", "--catalog-option", "b=2", "--full"]
    assert application_args(spec, "s3://b/wh") == ["compact", "--warehouse", "s3://b/wh", "--table", "db.t", "--full"]


def test_application_args_parse_with_the_engines_own_grammar() -> None:
    from table_engine.cli import build_parser

    spec = SparkJobSpec(command="compact", table="db.t", args=["--full", "--partition", "dt=1,h=2"])
    args = build_parser().parse_args(application_args(spec, "/wh", {"k": "v"}))
    assert (args.command, args.warehouse, args.table, args.full) == ("compact", "/wh", "db.t", True)
    assert args.catalog_option == [("k", "v")] and args.partition == [{"dt": "1", "h": "2"}]


def test_spec_rejects_unknown_commands_and_missing_tables() -> None:
    with pytest.raises(ValueError, match="unknown Paimon Spark command"):
        SparkJobSpec(command="vacuum", table="db.t")
    with pytest.raises(ValueError, match="needs a table"):
        SparkJobSpec(command="compact", table="")
    assert SparkJobSpec(command="write", table="db.t").app_name == "paimon-write-db.t"
    assert SparkJobSpec(command="write", table="db.t", name="n").app_name == "n"


@pytest.mark.parametrize(("master", "local"), [("local", True), ("local[*]", True), ("local[4,2]", True),
                                              ("spark://h:7077", False), ("yarn", False), ("localhost", False)])
def test_is_local_master(master: str, local: bool) -> None:
    assert is_local_master(master) is local
    assert should_ship_engine(SparkJobSpec(command="compact", table="db.t"), master) is (not local)
    assert should_ship_engine(SparkJobSpec(command="compact", table="db.t", ship_engine=True), master) is True


def test_spark_conf_layers_connection_spec_and_interpreters() -> None:
    spec = SparkJobSpec(command="compact", table="db.t", conf={"a": "spec", "b": 1})  # type: ignore[dict-item]
    assert spark_conf(spec, master="local[2]", cluster_mode=False, connection_conf={"a": "conn", "c": "conn"},
                      connection_python="/cluster/python", local_python="/venv/python") == {
        "a": "spec", "c": "conn", "b": "1", "spark.pyspark.python": "/venv/python",
        "spark.pyspark.driver.python": "/venv/python"}
    # a cluster runs the connection's python; the driver is here in client mode, on the cluster in cluster mode
    assert spark_conf(spec, master="spark://h:7077", cluster_mode=False, connection_python="/cluster/python",
                      local_python="/venv/python")["spark.pyspark.python"] == "/cluster/python"
    cluster = spark_conf(spec, master="yarn", cluster_mode=True, local_python="/venv/python")
    assert cluster["spark.pyspark.python"] == "/venv/python" and "spark.pyspark.driver.python" not in cluster
    explicit = SparkJobSpec(command="compact", table="db.t", python="/x/python",
                            conf={"spark.pyspark.driver.python": "/y"})
    conf = spark_conf(explicit, master="yarn", cluster_mode=False, connection_python="/cluster/python")
    assert conf["spark.pyspark.python"] == "/x/python" and conf["spark.pyspark.driver.python"] == "/y"


def test_render_partitions() -> None:
    assert render_partitions(None) == [] and render_partitions("") == [] and render_partitions([]) == []
    assert render_partitions({"dt": "2024-01-01", "h": 3}) == ["--partition", "dt=2024-01-01,h=3"]
    assert render_partitions([{"dt": "a"}, {"dt": "b"}]) == ["--partition", "dt=a", "--partition", "dt=b"]
    assert render_partitions(" dt=a,h=1 ; dt=b ") == ["--partition", "dt=a,h=1", "--partition", "dt=b"]


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
    assert {"table_engine/__init__.py", "table_engine/catalog.py", "table_engine/py.typed"} <= names
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


def test_a_spec_with_fields_sends_the_command_as_json() -> None:
    from table_engine.ops import Compact, from_json
    from table_engine.ops.argv import parse_command

    spec = SparkJobSpec(command="compact", table="db.t", fields={"full": True, "partitions": [{"dt": "1"}]})
    argv = application_args(spec, "/wh", {"k": "v"})
    assert argv[0] == "--command-json" and len(argv) == 2
    cmd = Compact(warehouse="/wh", table="db.t", catalog_options={"k": "v"}, full=True, partitions=({"dt": "1"},))
    assert from_json(argv[1]) == cmd and parse_command(argv) == cmd
    # extra options: the command line derived from the command, then the extra options
    spec = SparkJobSpec(command="compact", table="db.t", fields={"full": True}, args=["--parallelism", "2"])
    assert application_args(spec, "/wh") == ["compact", "--warehouse", "/wh", "--table", "db.t", "--full",
                                             "--parallelism", "2"]
    with pytest.raises(ValueError, match="compact: --parallelism must be at least 1"):
        application_args(SparkJobSpec(command="compact", table="db.t", fields={"parallelism": 0}), "/wh")


def test_commands_come_from_the_registry_and_dag_files_load_no_engine() -> None:
    import subprocess

    from table_engine.ops import REGISTRY

    assert COMMANDS == set(REGISTRY) and SPARK_JOB_COMMANDS == {n for n, c in REGISTRY.items() if c.spark_job}
    code = ("import sys, paimon_provider.job_spec, paimon_provider.operators; "
            "assert not [m for m in sys.modules if m.split('.')[0] in ('pyarrow', 'table_engine')], sys.modules")
    root = pathlib.Path(__file__).resolve().parents[2]
    subprocess.run([sys.executable, "-c", code], check=True, timeout=300, cwd=root)


@pytest.mark.parametrize("spec", [
    SparkJobSpec(command="compact", table="db.t", args=["--full"]),
    SparkJobSpec(command="compact", table="db.t", fields={"full": True}),
    SparkJobSpec(command="compact", table="db.t", fields={"full": True}, args=["--partition", "dt=1"]),
    SparkJobSpec(command="create-tag", table="db.t", fields={"tag": "t1"}),
])
def test_argv_never_holds_credentials_even_when_catalog_options_do(spec: SparkJobSpec) -> None:
    from table_engine.ops.argv import parse_command
    from table_engine.options.storage import S3_ACCESS_KEY, secret_keys

    secret = "sEcReT-9f1c"
    options = {**dict.fromkeys(secret_keys() | set(S3_ACCESS_KEY.keys), secret), "s3.endpoint": "http://127.0.0.1:9"}
    for argv in (application_args(spec, "s3://b/wh", options), local_argv(spec, "s3://b/wh", options)[3:]):
        assert not any(secret in a for a in argv)
        # what is left still parses, with the non-secret options
        assert dict(parse_command(argv).catalog_options) == {"s3.endpoint": "http://127.0.0.1:9"}


def test_driver_job_argv_only_for_small_local_jobs_with_the_conf(tmp_path: pathlib.Path) -> None:
    import pyarrow as pa
    from paimon_provider.job_spec import DRIVER_JOB_CONF, DRIVER_JOBS_MODULE, driver_job_argv

    from table_engine import Catalog

    warehouse = str(tmp_path / "wh")
    Catalog(warehouse).create_table("db.t", pa.schema([("id", pa.int64()), ("v", pa.string())]),
                                    primary_keys=["id"], options={"bucket": "1"}).write(
        pa.table({"id": [1, 2], "v": ["a", "b"]}))
    spec = SparkJobSpec(command="compact", table="db.t", fields={"full": True})
    small = {DRIVER_JOB_CONF: "1 mb"}
    secret = {"s3.secret-key": "SECRET", "a": "1"}

    def argv(s: SparkJobSpec = spec, conf: dict[str, str] = small, master: str = "local[*]",
             cluster_mode: bool = False) -> list[str] | None:
        return driver_job_argv(s, warehouse, secret, conf, master=master, cluster_mode=cluster_mode, python="py")

    out = argv()
    assert out is not None and out[:3] == ["py", "-m", DRIVER_JOBS_MODULE] and out[3] == "--command-json"
    assert "SECRET" not in " ".join(out)
    assert argv(conf={}) is None and argv(conf={DRIVER_JOB_CONF: "0"}) is None  # off unless set
    assert argv(conf={DRIVER_JOB_CONF: "10"}) is None  # more input than that
    assert argv(master="spark://127.0.0.1:7077") is None and argv(cluster_mode=True) is None  # a driver elsewhere
    assert argv(SparkJobSpec(command="compact", table="db.t", fields={"full": True}, runner="spark")) is None
    assert argv(SparkJobSpec(command="compact", table="db.t", args=["--full"])) is None  # command line: submitted
    assert argv(SparkJobSpec(command="compact", table="db.missing", fields={})) is None  # the job reports it

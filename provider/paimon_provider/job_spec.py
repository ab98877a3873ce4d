"""The one typed description of a Spark job of the Paimon application, and the pure functions that render it.

An operator turns its (templated) arguments into a :class:`SparkJobSpec`; the hook resolves connections and hands
the spec to :func:`application_args` and :func:`spark_conf`, which are pure and unit-tested. Nothing here touches
Airflow or Spark.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

# COMMANDS: the commands of ``table_engine/spark/app.py`` and ``table_engine/cli.py`` (the registry of
# :mod:`table_engine.ops`). SPARK_JOB_COMMANDS: those that run Spark jobs; the others change table metadata only:
# the application runs them on its driver, exactly as the engine's CLI (``python -m table_engine.cli``) does.
# Both are read from the registry when first used (module ``__getattr__``): DAG files import this module and must
# not load the engine when parsed.


def commands() -> frozenset[str]:
    """The registered commands (:data:`COMMANDS`)."""
    from table_engine.ops import REGISTRY

    return frozenset(REGISTRY)


def spark_job_commands() -> frozenset[str]:
    """The registered commands that are Spark jobs (:data:`SPARK_JOB_COMMANDS`)."""
    from table_engine.ops import REGISTRY

    return frozenset(name for name, cls in REGISTRY.items() if cls.spark_job)


def __getattr__(name: str) -> frozenset[str]:
    if name == "COMMANDS":
        return commands()
    if name == "SPARK_JOB_COMMANDS":
        return spark_job_commands()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

RUNNERS = ("auto", "spark", "local")
"""Where a metadata-only command runs; see :attr:`SparkJobSpec.runner`."""

CLI_MODULE = "table_engine.cli"
DRIVER_JOBS_MODULE = "table_engine.spark.driver_jobs"
DRIVER_JOB_CONF = "spark.paimon.driver-job.max-input-size"
"""Spark conf: Spark-job commands with at most this much input run with the engine on the driver
(:mod:`table_engine.spark.driver_jobs`); where the driver is this machine, without spark-submit
(:func:`driver_job_argv`)."""


@dataclass(frozen=True, kw_only=True)
class SparkJobSpec:
    """One spark-submit of the Paimon Spark application.

    :param command: the application's subcommand (one of :data:`COMMANDS`).
    :param table: ``database.table``.
    :param fields: the command's own fields (of its :mod:`table_engine.ops` dataclass, e.g. ``{"full": True}``):
        the application gets the whole command as one JSON object, ``--command-json '<json>'``. Operators set this.
    :param args: without ``fields``: the command's options as command-line text (``["--full", "--partition",
        "dt=2024-01-01"]``); with ``fields``: options appended to the command line derived from them (the command
        is then sent as a command line, not as JSON).
    :param warehouse: overrides the Paimon connection's warehouse URI.
    :param spark_conn_id: the Spark connection (master, deploy mode, queue, ...); default: the one the Paimon
        connection names.
    :param master: overrides the Spark connection's master (``local[2]``, ``spark://host:7077``).
    :param deploy_mode: overrides the Spark connection's deploy mode.
    :param conf: Spark configuration; wins over the Paimon connection's ``spark_conf``.
    :param py_files: extra ``--py-files`` (zip, egg, wheel, py).
    :param files: extra ``--files``.
    :param jars: extra ``--jars``.
    :param name: the Spark application name (default ``paimon-<command>-<table>``).
    :param driver_memory: ``--driver-memory``.
    :param executor_memory: ``--executor-memory``.
    :param executor_cores: ``--executor-cores``.
    :param num_executors: ``--num-executors`` (YARN, Kubernetes).
    :param total_executor_cores: ``--total-executor-cores`` (standalone).
    :param env_vars: environment of spark-submit (client mode) or of the driver (YARN, Kubernetes).
    :param python: the Python interpreter of the executors (``spark.pyspark.python``); default: the Paimon
        connection's ``python``, else the interpreter running Airflow.
    :param ship_engine: send a zip of ``table_engine`` with ``--py-files``; default: when the master is not local.
    :param verbose: ``spark-submit --verbose``.
    :param runner: where a metadata-only command (not in :data:`SPARK_JOB_COMMANDS`) runs: ``spark`` (spark-submit;
        the application runs it on the driver), ``local`` (the engine's CLI in a subprocess of the worker: the same
        code and result line without starting a JVM and a SparkContext for nothing), or ``auto`` (default):
        ``local`` unless the deploy mode is ``cluster``, where the driver, and so the command, would run on the
        cluster. Spark-job commands go through spark-submit, except small ones when the Spark conf sets
        :data:`DRIVER_JOB_CONF` (:func:`driver_job_argv`); ``spark`` submits those too.
    """

    command: str
    table: str
    fields: Mapping[str, Any] | None = None
    args: Sequence[str] = ()
    warehouse: str | None = None
    spark_conn_id: str | None = None
    master: str | None = None
    deploy_mode: str | None = None
    conf: Mapping[str, str] = field(default_factory=dict)
    py_files: Sequence[str] = ()
    files: Sequence[str] = ()
    jars: Sequence[str] = ()
    name: str | None = None
    driver_memory: str | None = None
    executor_memory: str | None = None
    executor_cores: int | None = None
    num_executors: int | None = None
    total_executor_cores: int | None = None
    env_vars: Mapping[str, str] = field(default_factory=dict)
    python: str | None = None
    ship_engine: bool | None = None
    verbose: bool = False
    runner: str = "auto"

    def __post_init__(self) -> None:
        if self.command not in commands():
            raise ValueError(f"unknown Paimon Spark command {self.command!r}; expected one of {sorted(commands())}")
        if not self.table or not isinstance(self.table, str):
            raise ValueError("a Paimon Spark job needs a table ('database.table')")
        if self.runner not in RUNNERS:
            raise ValueError(f"runner must be one of {RUNNERS}, not {self.runner!r}")
        if self.runner == "local" and self.command in spark_job_commands():
            raise ValueError(f"{self.command!r} is a Spark job: it cannot run with runner='local'")

    @property
    def app_name(self) -> str:
        return self.name or f"paimon-{self.command}-{self.table}"


def application_args(spec: SparkJobSpec, warehouse: str, catalog_options: Mapping[str, str] | None = None) -> list[str]:
    """The application's argv: ``--command-json '<json>'`` (the command of ``spec.fields``, validated here), or
    ``<command> --warehouse W --table T [--catalog-option k=v ...] <args>``.

    Credentials (``s3.access-key``, ``s3.secret-key``, ``s3.session.token`` and their aliases) are dropped from
    ``catalog_options``: an argv is readable by every user of the host. Jobs get them from their environment."""
    from paimon_provider.connection import without_credentials

    catalog_options = without_credentials(catalog_options)
    if spec.fields is not None:
        from table_engine.ops import command_class  # imported here: see COMMANDS

        cmd = command_class(spec.command)(warehouse=warehouse, table=spec.table,
                                          catalog_options={str(k): str(v) for k, v in (catalog_options or {}).items()},
                                          **spec.fields)
        if spec.args:
            from table_engine.ops.argv import command_argv

            return [*command_argv(cmd), *map(str, spec.args)]
        return ["--command-json", cmd.to_json()]
    argv = [spec.command, "--warehouse", warehouse, "--table", spec.table]
    for key, value in sorted((catalog_options or {}).items()):
        argv += ["--catalog-option", f"{key}={value}"]
    argv += [str(a) for a in spec.args]
    return argv


def runs_locally(spec: SparkJobSpec, *, cluster_mode: bool) -> bool:
    """Whether the job runs as the engine's CLI here instead of spark-submit (see :attr:`SparkJobSpec.runner`)."""
    if spec.command in spark_job_commands() or spec.runner == "spark":
        return False
    return spec.runner == "local" or not cluster_mode


def local_argv(spec: SparkJobSpec, warehouse: str, catalog_options: Mapping[str, str] | None = None,
               python: str = sys.executable) -> list[str]:
    """The engine CLI's argv for a metadata-only command: the application's arguments, run by ``python``."""
    return [python, "-m", CLI_MODULE, *application_args(spec, warehouse, catalog_options)]


def driver_job_argv(spec: SparkJobSpec, warehouse: str, catalog_options: Mapping[str, str] | None,
                    conf: Mapping[str, str], *, master: str, cluster_mode: bool,
                    python: str = sys.executable) -> list[str] | None:
    """The argv of a small Spark-job command run here with the engine (``python -m table_engine.spark.driver_jobs``,
    same result line) instead of spark-submit, or None for a spark-submit. Only where the application's driver
    would be this machine anyway (client mode, a local master), for a command given as ``fields``, when ``conf``
    sets :data:`DRIVER_JOB_CONF` and the command's input is at most that size
    (:func:`table_engine.spark.driver_jobs.runs_on_driver`; it reads the table, with ``catalog_options``, here).
    ``runner="spark"`` always submits."""
    if cluster_mode or not is_local_master(master) or spec.runner == "spark" or spec.fields is None or spec.args \
            or spec.command not in spark_job_commands():
        return None
    from table_engine.spark import driver_jobs  # imported here: see COMMANDS

    limit = driver_jobs.max_input_size(dict(conf))
    if limit <= 0:
        return None
    from table_engine.ops import command_class

    cmd = command_class(spec.command)(warehouse=warehouse, table=spec.table,
                                      catalog_options={str(k): str(v) for k, v in (catalog_options or {}).items()},
                                      **spec.fields)
    if not driver_jobs.runs_on_driver(cmd, limit):
        return None
    return [python, "-m", DRIVER_JOBS_MODULE, *application_args(spec, warehouse, catalog_options)]


def is_local_master(master: str) -> bool:
    """``local``, ``local[4]``, ``local[*]``, ``local[*,3]``: the driver and executors are this machine."""
    return master == "local" or master.startswith("local[")


def spark_conf(spec: SparkJobSpec, *, master: str, cluster_mode: bool, connection_conf: Mapping[str, str] | None = None,
               connection_python: str | None = None, local_python: str = sys.executable) -> dict[str, str]:
    """Spark conf of the submit: the connection's ``spark_conf``, then the spec's ``conf``, then the interpreters.

    Executors run ``spec.python`` or the connection's ``python`` (on a cluster), else ``local_python`` (the
    interpreter running Airflow, right for local masters and for clusters built from the same image). In client
    mode the driver runs here, so it gets ``local_python``; an explicit conf always wins.
    """
    conf = {str(k): str(v) for k, v in (connection_conf or {}).items()}
    conf.update({str(k): str(v) for k, v in spec.conf.items()})
    executor_python = spec.python or (None if is_local_master(master) else connection_python) or local_python
    conf.setdefault("spark.pyspark.python", executor_python)
    if not cluster_mode:
        conf.setdefault("spark.pyspark.driver.python", local_python)
    return conf


def should_ship_engine(spec: SparkJobSpec, master: str) -> bool:
    """Ship ``table_engine`` as a zip unless told otherwise or the master is local."""
    return spec.ship_engine if spec.ship_engine is not None else not is_local_master(master)


def render_partitions(partitions: Sequence[Mapping[str, object]] | Mapping[str, object] | str | None) -> list[str]:
    r"""``--partition k=v,k2=v2`` options from partition specs (a mapping, a list of mappings, or ``k=v,..`` text;
    several specs in text are separated by ``;``). The text is the engine's one form
    (:func:`~table_engine.store.partition_spec.format_partition_text`): values holding ``,``, ``=``, ``;`` or ``\``
    are escaped, and the CLI's parser reads back exactly these values."""
    if partitions is None or partitions == "" or partitions == []:
        return []
    # imported here: DAG files import this module and must not load pyarrow or the engine when parsed
    from table_engine.store.partition_spec import format_partition_text, parse_partition_texts

    specs: list[Mapping[str, object]]
    if isinstance(partitions, str):
        specs = list(parse_partition_texts(partitions))
    elif isinstance(partitions, Mapping):
        specs = [partitions]
    else:
        specs = list(partitions)
    out: list[str] = []
    for s in specs:
        out += ["--partition", format_partition_text(s)]
    return out

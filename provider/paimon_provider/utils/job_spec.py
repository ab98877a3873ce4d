"""The one typed description of a job of the Paimon application, and the one pure function that renders it.

An operator builds the command's dataclass (:mod:`table_engine.ops`, e.g. ``Compact(full=True, ...)``) and wraps it
in a :class:`SparkJobSpec` with the Spark settings. The hook (:mod:`paimon_provider.hooks.spark`) resolves the
Paimon and Spark connections and hands everything to :func:`render_job`, which decides the route (the engine's
CLI on the worker, a small job with the engine on the worker, or spark-submit) and builds the argv; it is pure
(no Airflow, no process, no connection lookup) and unit-tested. The hook then runs, watches and kills the process.

DAG files import this module when they are parsed: it loads no pyarrow and nothing of the engine at import time
(the command classes are imported where a spec is built or rendered).
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from paimon_provider.utils.connection import PaimonConnectionConfig, without_credentials

if TYPE_CHECKING:
    from table_engine.ops import Command

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

ROUTES = ("cli", "driver", "spark-submit", "connect")
"""How a job runs (:attr:`RenderedJob.route`): the engine's CLI on the worker (a metadata-only command), the engine
on the worker as the application's driver would run a small Spark-job command (:data:`DRIVER_JOB_CONF`),
spark-submit of the application, or in the worker's process as a Spark Connect client (:attr:`SparkJobSpec.connect`,
:func:`table_engine.spark.app.run_connected`)."""

CONNECT_MODULE = "table_engine.spark.app"
SPARK_CONNECT_CONN_TYPE = "spark_connect"
"""The apache-spark provider's Spark Connect connection type: a Spark connection of this type makes jobs route
``connect``."""

CLI_MODULE = "table_engine.cli"
DRIVER_JOBS_MODULE = "table_engine.spark.jobs.driver_jobs"
DRIVER_JOB_CONF = "spark.paimon.driver-job.max-input-size"
"""Spark conf: Spark-job commands with at most this much input run with the engine on the driver
(:mod:`table_engine.spark.jobs.driver_jobs`); where the driver is this machine, without spark-submit (route
``driver``)."""

SPARK_BINARIES = ("spark-submit", "spark2-submit", "spark3-submit")
"""The ``spark-binary`` values a Spark connection may name (as the Spark provider allows)."""


@dataclass(frozen=True, kw_only=True)
class SparkJobSpec:
    """One job of the Paimon Spark application: the typed command and how to submit it.

    :param command: the command, a :mod:`table_engine.ops` dataclass (``Compact(warehouse=..., table="db.t",
        full=True)``); its ``catalog_options`` are added to the Paimon connection's (credentials are dropped from
        both: they never travel in an argv). The application gets it as one JSON object, ``--command-json``.
    :param args: more options appended verbatim to the command line derived from the command (the command is
        then sent as a command line, not as JSON; such a job always goes through spark-submit or the CLI).
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
    :param connect: a Spark Connect URL (``sc://127.0.0.1:15002``): Spark-job commands run in the worker's process
        as a Spark Connect client of that long-lived server (route ``connect``; no spark-submit, no JVM per task;
        the small-job rule does not apply); a Spark connection of type ``spark_connect`` (the apache-spark
        provider's) does the same. The master, deploy mode and submit options are the server's then; ``conf``
        sets the session's runtime conf.
    :param runner: where a metadata-only command (not in :data:`SPARK_JOB_COMMANDS`) runs: ``spark`` (spark-submit;
        the application runs it on the driver), ``local`` (on the worker without Spark: with the engine in the
        task's process, or, with ``env_vars`` or ``args``, the engine's CLI as a process of its own; the same code
        and result line without starting a JVM and a SparkContext for nothing), or ``auto`` (default):
        ``local`` unless the deploy mode is ``cluster``, where the driver, and so the command, would run on the
        cluster. Spark-job commands go through spark-submit, except small ones when the Spark conf sets
        :data:`DRIVER_JOB_CONF` (route ``driver``); ``spark`` submits those too.
    """

    command: Command
    args: Sequence[str] = ()
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
    connect: str | None = None
    runner: str = "auto"

    def __post_init__(self) -> None:
        from table_engine.ops import Command  # imported here: see COMMANDS

        if not isinstance(self.command, Command):
            raise TypeError(f"SparkJobSpec.command must be a table_engine.ops command (e.g. Compact(...)), "
                            f"got {self.command!r}")
        if self.runner not in RUNNERS:
            raise ValueError(f"runner must be one of {RUNNERS}, not {self.runner!r}")
        if self.runner == "local" and self.command.needs_spark():
            raise ValueError(f"{self.command.name!r} is a Spark job: it cannot run with runner='local'")

    @property
    def command_name(self) -> str:
        """The command's name (``compact``)."""
        return self.command.name

    @property
    def table(self) -> str:
        """The command's table (``database.table``)."""
        return self.command.table

    @property
    def app_name(self) -> str:
        """The Spark application name."""
        return self.name or f"paimon-{self.command.name}-{self.table}"


def spark_master(conn_type: str, host: str | None, port: int | None) -> str:
    """The master URL of a Spark connection, as the Spark connection's documentation describes its fields.

    A ``spark`` connection whose host holds a full URL (or has no port) uses the host (``local[*]``,
    ``spark://h:7077``, ``yarn``, ``k8s://https://h``); otherwise ``<conn_type>://<host>``; then ``:<port>``.
    """
    if conn_type == "spark" and host and ("://" in host or not port):
        master = host
    else:
        master = f"{conn_type}://{host or ''}"
    return f"{master}:{port}" if port else master


@dataclass(frozen=True)
class SparkConnection:
    """The fields of an Airflow Spark connection that shape a spark-submit (see the Spark provider's connection
    docs): the master (host, port), and the extras ``deploy-mode``, ``queue``, ``spark-binary``, ``namespace``
    (Kubernetes) and ``principal``; ``keytab`` is a path here (the hook writes the extra's base64 content to a
    file)."""

    master: str
    deploy_mode: str | None = None
    queue: str | None = None
    spark_binary: str = "spark-submit"
    namespace: str | None = None
    principal: str | None = None
    keytab: str | None = None
    connect: str | None = field(default=None, repr=False)
    """The Spark Connect URL of a ``spark_connect`` connection (may carry a token: hidden from repr)."""

    @classmethod
    def from_fields(cls, conn_type: str | None, host: str | None, port: int | None,
                    extra: Mapping[str, Any] | None) -> SparkConnection:
        """The connection of an Airflow Connection's fields; a ValueError naming a bad extra."""
        extra = dict(extra or {})
        binary = str(extra.get("spark-binary") or "spark-submit")
        if binary not in SPARK_BINARIES:
            raise ValueError(f"Spark connection: spark-binary must be one of {', '.join(SPARK_BINARIES)}, "
                             f"got {binary!r}")
        if extra.get("spark-home"):
            raise ValueError("Spark connection: the spark-home extra is not supported; put spark-submit on the "
                             "PATH and set spark-binary if needed")

        def text(key: str) -> str | None:
            value = extra.get(key)
            return str(value) if value not in (None, "") else None

        return cls(master=spark_master(conn_type or "spark", host, port), deploy_mode=text("deploy-mode"),
                   queue=text("queue"), spark_binary=binary, namespace=text("namespace"),
                   principal=text("principal"))


@dataclass(frozen=True)
class RenderedJob:
    """What runs: the route (one of :data:`ROUTES`), the argv, the command as sent, where, and the environment the
    spec adds (the hook adds the worker's and the connection's credentials)."""

    route: str
    argv: list[str]
    command: Command
    master: str
    cluster_mode: bool
    application: str
    env: dict[str, str] = field(default_factory=dict, repr=False)
    conf: dict[str, str] = field(default_factory=dict)
    """The Spark conf of a spark-submit (route ``spark-submit``); the session conf of route ``connect``."""
    connect_url: str | None = field(default=None, repr=False)
    """The Spark Connect URL of route ``connect`` (``master`` shows it without parameters)."""

    @property
    def local(self) -> bool:
        """The engine runs here, without spark-submit (routes ``cli``, ``driver`` and ``connect``)."""
        return self.route != "spark-submit"


def bind_command(spec: SparkJobSpec, catalog_options: Mapping[str, str] | None = None) -> Command:
    """The spec's command with the connection's ``catalog_options`` under its own, without any credential."""
    options = {**without_credentials(catalog_options), **without_credentials(spec.command.catalog_options)}
    if options == spec.command.catalog_options:
        return spec.command
    return dataclasses.replace(spec.command, catalog_options=options)


def application_args(spec: SparkJobSpec, catalog_options: Mapping[str, str] | None = None) -> list[str]:
    """The application's argv: ``--command-json '<json>'``, or with ``spec.args`` the command line derived from the
    command followed by them.

    Credentials (``s3.access-key``, ``s3.secret-key``, ``s3.session.token`` and their aliases) are dropped from
    the catalog options: an argv is readable by every user of the host. Jobs get them from their environment."""
    cmd = bind_command(spec, catalog_options)
    if spec.args:
        from table_engine.ops.argv import command_argv  # imported here: see COMMANDS

        return [*command_argv(cmd), *map(str, spec.args)]
    return ["--command-json", cmd.to_json()]


def runs_locally(spec: SparkJobSpec, *, cluster_mode: bool) -> bool:
    """Whether the job runs as the engine's CLI here instead of spark-submit (see :attr:`SparkJobSpec.runner`)."""
    if spec.command.spark_job or spec.runner == "spark":
        return False
    return spec.runner == "local" or not cluster_mode


def local_argv(spec: SparkJobSpec, catalog_options: Mapping[str, str] | None = None,
               python: str = sys.executable) -> list[str]:
    """The engine CLI's argv for a metadata-only command: the application's arguments, run by ``python``."""
    return [python, "-m", CLI_MODULE, *application_args(spec, catalog_options)]


SmallJobRule = Callable[["Command", Mapping[str, str]], bool]
"""Whether a Spark-job command is small enough, under a Spark conf's :data:`DRIVER_JOB_CONF`, to run with the
engine on the driver (the engine's rule: :func:`table_engine.spark.jobs.driver_jobs.runs_on_driver`; it reads the
table)."""


def render_job(spec: SparkJobSpec, paimon: PaimonConnectionConfig, spark: SparkConnection | None, *,
               application: str, engine_archive: Callable[[], str], python: str = sys.executable,
               small_job: SmallJobRule | None = None) -> RenderedJob:
    """The route and the argv of ``spec`` with the resolved Paimon connection and Spark connection (None: not
    defined, then ``spec.master`` must be given; not needed with ``runner="local"``).

    :param application: the application file spark-submit runs.
    :param engine_archive: builds the zip of ``table_engine`` shipped with ``--py-files`` (called only then).
    :param python: the interpreter running Airflow (the CLI's, and the local driver's).
    :param small_job: the small-job rule (route ``driver``); None: never.
    """
    env = {str(k): str(v) for k, v in spec.env_vars.items()}
    if spec.runner == "local":  # no Spark involved: the Spark connection does not matter
        return RenderedJob("cli", local_argv(spec, paimon.catalog_options, python), bind_command(
            spec, paimon.catalog_options), "", False, CLI_MODULE, env)
    connect = spec.connect or (spark.connect if spark is not None else None)
    if connect and (spec.command.spark_job or spec.runner == "spark"):
        from table_engine.spark.compat import connect_address, redacted_url

        connect_address(connect)  # a URL that is not sc://host[:port]: a one-line error naming it, here
        if spec.args:
            raise ValueError(f"extra_args cannot be given to {spec.command.name} over Spark Connect (connect="
                             f"{redacted_url(connect)}): the command runs in process, from its typed arguments")
        cmd = bind_command(spec, paimon.catalog_options)
        conf = {**{str(k): str(v) for k, v in (paimon.spark_conf or {}).items()},
                **{str(k): str(v) for k, v in spec.conf.items()}}
        return RenderedJob("connect", [], cmd, redacted_url(connect), False, CONNECT_MODULE, env, conf,
                           connect_url=connect)
    if connect and spark is None and not spec.master:  # a metadata-only command: the engine's CLI here
        return RenderedJob("cli", local_argv(spec, paimon.catalog_options, python), bind_command(
            spec, paimon.catalog_options), "", False, CLI_MODULE, env)
    if spark is None and not spec.master:
        raise ValueError(f"no Spark connection and no master for {spec.command.name} of {spec.table}")
    master = spec.master or (spark.master if spark is not None else "")
    deploy_mode = spec.deploy_mode or (spark.deploy_mode if spark is not None else None)
    cluster_mode = deploy_mode == "cluster"
    cmd = bind_command(spec, paimon.catalog_options)
    if runs_locally(spec, cluster_mode=cluster_mode):
        return RenderedJob("cli", local_argv(spec, paimon.catalog_options, python), cmd, master, False, CLI_MODULE,
                           env)
    conf = spark_conf(spec, master=master, cluster_mode=cluster_mode, connection_conf=paimon.spark_conf,
                      connection_python=paimon.python, local_python=python)
    if (small_job is not None and not cluster_mode and is_local_master(master) and spec.runner != "spark"
            and not spec.args and spec.command.spark_job and small_job(cmd, conf)):
        # a small job, and the driver would be this machine: no JVM, no SparkContext
        argv = [python, "-m", DRIVER_JOBS_MODULE, *application_args(spec, paimon.catalog_options)]
        return RenderedJob("driver", argv, cmd, master, False, DRIVER_JOBS_MODULE, env)
    argv = spark_submit_argv(spec, spark or SparkConnection(master=master), master=master, deploy_mode=deploy_mode,
                             conf=conf, engine_archive=engine_archive)
    argv += [application, *application_args(spec, paimon.catalog_options)]
    return RenderedJob("spark-submit", argv, cmd, master, cluster_mode, application, env, conf)


def spark_submit_argv(spec: SparkJobSpec, spark: SparkConnection, *, master: str, deploy_mode: str | None,
                      conf: Mapping[str, str], engine_archive: Callable[[], str]) -> list[str]:
    """spark-submit and its options, before the application (in the order the Spark provider gives them)."""
    argv = [spark.spark_binary, "--master", master]
    for key, value in conf.items():
        argv += ["--conf", f"{key}={value}"]
    argv += _cluster_manager_conf(spec, spark, master, deploy_mode)
    py_files = [*([engine_archive()] if should_ship_engine(spec, master) else []), *spec.py_files]
    for flag, values in (("--files", spec.files), ("--py-files", py_files), ("--jars", spec.jars)):
        if values:
            argv += [flag, ",".join(values)]
    options: tuple[tuple[str, object], ...] = (
        ("--num-executors", spec.num_executors), ("--total-executor-cores", spec.total_executor_cores),
        ("--executor-cores", spec.executor_cores), ("--executor-memory", spec.executor_memory),
        ("--driver-memory", spec.driver_memory), ("--keytab", spark.keytab), ("--principal", spark.principal),
        ("--name", spec.app_name))
    for option, setting in options:
        if setting:
            argv += [option, str(setting)]
    if spec.verbose:
        argv.append("--verbose")
    if spark.queue:
        argv += ["--queue", spark.queue]
    if deploy_mode:
        argv += ["--deploy-mode", deploy_mode]
    return argv


def _cluster_manager_conf(spec: SparkJobSpec, spark: SparkConnection, master: str, deploy_mode: str | None
                          ) -> list[str]:
    """The ``--conf`` arguments of YARN and Kubernetes masters: the driver's environment (it may run elsewhere) and
    the namespace; a ValueError for ``env_vars`` that cannot reach a driver in cluster mode on another master."""
    argv: list[str] = []
    is_yarn, is_k8s = "yarn" in master, "k8s" in master
    if spec.env_vars and (is_yarn or is_k8s):
        template = "spark.yarn.appMasterEnv.{}={}" if is_yarn else "spark.kubernetes.driverEnv.{}={}"
        for key, value in spec.env_vars.items():
            argv += ["--conf", template.format(key, value)]
    elif spec.env_vars and deploy_mode == "cluster":
        raise ValueError(f"env_vars cannot reach the driver in cluster deploy mode on {master}")
    if is_k8s and spark.namespace:
        argv += ["--conf", f"spark.kubernetes.namespace={spark.namespace}"]
    return argv


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

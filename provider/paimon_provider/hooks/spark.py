"""spark-submit of the Paimon Spark application, built on the Spark provider's ``SparkSubmitHook``.

:meth:`PaimonSparkHook.build_submission` turns one :class:`~paimon_provider.job_spec.SparkJobSpec` into the exact argv
and environment (resolving the Paimon and Spark connections, the application file, the interpreters and the engine
archive); ``SparkSubmitHook`` contributes the Spark-connection handling (master, deploy mode, queue, Kerberos,
namespace, spark binary). In client mode this hook runs the command itself, so it can return the application's
final JSON line (``SparkSubmitHook.submit`` only logs the output); in cluster mode the driver's stdout is not
here, so it delegates to ``SparkSubmitHook.submit`` (driver tracking, kill) and returns ``None``.

Commands that only change table metadata (tags, expiry, rollback, orphan files) run on the application's driver
without using Spark; where that driver would be this machine anyway (client mode), the hook runs the engine's CLI
(same arguments, same result line) instead of paying for a JVM and a SparkContext: ``SparkJobSpec.runner``. Small
Spark jobs alike, when the Spark conf sets ``spark.paimon.driver-job.max-input-size`` and the master is local:
:func:`~paimon_provider.job_spec.driver_job_argv`.

Credentials: the ``paimon`` connection's object-store credentials never go into the argv (visible to every user of
the host in ``/proc/<pid>/cmdline`` and logged by this hook): :func:`~paimon_provider.job_spec.application_args` drops
every credential key from the catalog options, and the job process (spark-submit, or the engine's CLI) gets them as
``AWS_ACCESS_KEY_ID`` / ``AWS_SECRET_ACCESS_KEY`` / ``AWS_SESSION_TOKEN`` in its environment
(:attr:`SparkSubmission.env`, hidden from repr), which the engine reads when its catalog options carry no keys.
With a local master the driver and the executors inherit that environment. On a cluster (a non-local master, or
cluster deploy mode) the executors, and in cluster mode the driver, run elsewhere: they need the cluster's own
credentials (instance role, IRSA, ``spark.executorEnv``/``spark.yarn.appMasterEnv`` set in the cluster's
``spark-defaults.conf``); this hook does not put credentials in ``--conf`` (that is argv too).
"""

from __future__ import annotations

import collections
import os
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any

from airflow.providers.apache.spark.hooks.spark_submit import SparkSubmitHook
from airflow.sdk import BaseHook
from airflow.sdk.exceptions import AirflowException, AirflowNotFoundException

from paimon_provider.connection import CONN_TYPE, DEFAULT_CONN_ID, PaimonConnectionConfig
from paimon_provider.hooks.table import load_connection_config
from paimon_provider.job_spec import (
    CLI_MODULE,
    DRIVER_JOB_CONF,
    DRIVER_JOBS_MODULE,
    SparkJobSpec,
    application_args,
    driver_job_argv,
    is_local_master,
    local_argv,
    runs_locally,
    should_ship_engine,
    spark_conf,
)
from paimon_provider.packaging import application_path, engine_archive
from paimon_provider.results import JobFailedError, is_retryable_failure, last_json_object

if TYPE_CHECKING:
    from airflow.sdk import Connection

_KILL_GRACE_SECONDS = 10.0
_TAIL_LINES = 40


def spark_master(conn_type: str, host: str | None, port: int | None) -> str:
    """The master URL of a Spark connection, by the rule ``SparkSubmitHook`` applies.

    A ``spark`` connection whose host holds a full URL (or has no port) uses the host (``local[*]``,
    ``spark://h:7077``, ``yarn``); otherwise ``<conn_type>://<host>[:port]``.
    """
    if conn_type == "spark" and host and ("://" in host or not port):
        master = host
    else:
        master = f"{conn_type}://{host or ''}"
    return f"{master}:{port}" if port else master


@dataclass(frozen=True)
class SparkSubmission:
    """A fully resolved job: what runs, where, and with which environment (client mode). ``local``: the engine's
    CLI runs a metadata-only command here instead of spark-submit (see ``SparkJobSpec.runner``)."""

    argv: list[str]
    env: dict[str, str] = field(repr=False)
    master: str
    cluster_mode: bool
    application: str
    spark_conn_id: str
    local: bool = False


class PaimonSparkHook(BaseHook):
    """Submits Paimon Spark jobs described by a :class:`~paimon_provider.job_spec.SparkJobSpec`.

    :param paimon_conn_id: the ``paimon`` connection: warehouse, catalog options, Spark connection, cluster Python.
    """

    conn_name_attr = "paimon_conn_id"
    default_conn_name = DEFAULT_CONN_ID
    conn_type = CONN_TYPE
    hook_name = "Apache Paimon (Spark jobs)"

    def __init__(self, paimon_conn_id: str = DEFAULT_CONN_ID) -> None:
        super().__init__()
        self.paimon_conn_id = paimon_conn_id
        self._config: PaimonConnectionConfig | None = None
        self._process: subprocess.Popen[str] | None = None
        self._spark_hook: SparkSubmitHook | None = None
        self._killed = False

    def get_conn(self) -> PaimonConnectionConfig:
        if self._config is None:
            self._config = load_connection_config(self.paimon_conn_id)
        return self._config

    # ---- building ----------------------------------------------------------------------------------------------
    def _spark_connection(self, conn_id: str, spec: SparkJobSpec) -> Connection | None:
        try:
            return BaseHook.get_connection(conn_id)
        except AirflowNotFoundException:
            if spec.master:
                return None
            raise AirflowException(
                f"Spark connection {conn_id!r} is not defined (the Spark provider would silently submit to YARN). "
                f"Define it, e.g. AIRFLOW_CONN_{conn_id.upper()}='{{\"conn_type\": \"spark\", \"host\": "
                f"\"local[*]\"}}', name another one in the Paimon connection's spark_conn_id, or set master="
            ) from None

    def build_submission(self, spec: SparkJobSpec) -> SparkSubmission:
        """Resolve connections and render the argv and environment of the job (no process is started): the
        spark-submit of the application, or for a metadata-only command the engine's CLI (see ``spec.runner``)."""
        config = self.get_conn()
        spark_conn_id = spec.spark_conn_id or config.spark_conn_id
        if spec.runner == "local":  # no Spark involved: the Spark connection does not matter
            return self._local_submission(spec, config, spark_conn_id)
        spark_conn = self._spark_connection(spark_conn_id, spec)
        extra = spark_conn.extra_dejson if spark_conn is not None else {}
        if spec.master:
            master = spec.master
        else:
            assert spark_conn is not None  # _spark_connection raises when there is neither
            master = spark_master(spark_conn.conn_type or "spark", spark_conn.host, spark_conn.port)
        deploy_mode = spec.deploy_mode or extra.get("deploy-mode")
        cluster_mode = deploy_mode == "cluster"
        if runs_locally(spec, cluster_mode=cluster_mode):
            return self._local_submission(spec, config, spark_conn_id, master)
        if config.credentials and cluster_mode:
            # client mode needs nothing more: the driver gets them in its environment, and the data source ships
            # what the driver has to the executors inside the serialized tasks
            self.log.warning("the driver on %s (cluster deploy mode) does not get connection %s's object-store "
                             "credentials: it needs the cluster's own", master, config.conn_id)
        conf = spark_conf(spec, master=master, cluster_mode=cluster_mode, connection_conf=config.spark_conf,
                          connection_python=config.python)
        warehouse = spec.warehouse or config.warehouse
        driver_argv = driver_job_argv(spec, warehouse, config.catalog_options, conf, master=master,
                                      cluster_mode=cluster_mode)
        if driver_argv is not None:  # a small job, and the driver would be this machine: no JVM, no SparkContext
            env = _with_credentials(dict(os.environ), config)
            env.update({str(k): str(v) for k, v in spec.env_vars.items()})
            return SparkSubmission(driver_argv, env, master, False, DRIVER_JOBS_MODULE, spark_conn_id, local=True)
        py_files = [*([engine_archive()] if should_ship_engine(spec, master) else []), *spec.py_files]
        application = application_path()
        hook = SparkSubmitHook(
            conf=conf,
            conn_id=spark_conn_id,
            files=",".join(spec.files) or None,
            py_files=",".join(py_files) or None,
            jars=",".join(spec.jars) or None,
            total_executor_cores=spec.total_executor_cores,
            executor_cores=spec.executor_cores,
            executor_memory=spec.executor_memory,
            driver_memory=spec.driver_memory,
            name=spec.app_name,
            num_executors=spec.num_executors,
            application_args=application_args(spec, spec.warehouse or config.warehouse, config.catalog_options),
            env_vars=dict(spec.env_vars) or None,
            verbose=spec.verbose,
            deploy_mode=spec.deploy_mode,
        )
        # The Spark provider exposes no public "build the command" method; this private one is stable across its
        # releases and pinned by tests/provider/hooks/test_spark.py against the installed version.
        argv = list(hook._build_spark_submit_command(application))
        if spec.master:
            argv[argv.index("--master") + 1] = spec.master
        self._spark_hook = hook
        return SparkSubmission(argv, self._client_env(spec, master, argv[0], config), master, cluster_mode,
                               application, spark_conn_id)

    @staticmethod
    def _local_submission(spec: SparkJobSpec, config: PaimonConnectionConfig, spark_conn_id: str,
                          master: str = "") -> SparkSubmission:
        env = _with_credentials(dict(os.environ), config)
        env.update({str(k): str(v) for k, v in spec.env_vars.items()})
        argv = local_argv(spec, spec.warehouse or config.warehouse, config.catalog_options)
        return SparkSubmission(argv, env, master, False, CLI_MODULE, spark_conn_id, local=True)

    @staticmethod
    def _client_env(spec: SparkJobSpec, master: str, binary: str,
                    config: PaimonConnectionConfig | None = None) -> dict[str, str]:
        env = _with_credentials(dict(os.environ), config)
        env.update({str(k): str(v) for k, v in spec.env_vars.items()})
        if is_local_master(master):
            env.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        # spark-submit ships with the pyspark wheel next to this interpreter; an unactivated venv lacks it on PATH
        here = os.path.dirname(sys.executable)
        if shutil.which(binary, path=env.get("PATH")) is None and os.path.exists(os.path.join(here, binary)):
            env["PATH"] = os.pathsep.join([here, env.get("PATH", "")])
        return env

    # ---- running -----------------------------------------------------------------------------------------------
    def submit(self, spec: SparkJobSpec) -> dict[str, Any] | None:
        """Run the job to completion; the application's final JSON object (client mode), else ``None``.

        Raises :class:`~paimon_provider.results.JobFailedError` (an AirflowException) when the job fails, with the last
        lines of its output, its one-line reason and whether retrying may help.
        """
        sub = self.build_submission(spec)
        if sub.application == DRIVER_JOBS_MODULE:
            self.log.info("%s of %s: a small job (%s): running it with the engine here, not spark-submit",
                          spec.command, spec.table, DRIVER_JOB_CONF)
        elif sub.local:
            self.log.info("%s changes table metadata only: running the engine's CLI here, not spark-submit",
                          spec.command)
        elif sub.cluster_mode:
            assert self._spark_hook is not None
            self.log.info("cluster deploy mode: delegating to SparkSubmitHook (no result line is available)")
            self._spark_hook.submit(sub.application)
            return None
        return self._run_client(sub)

    def _run_client(self, sub: SparkSubmission) -> dict[str, Any] | None:
        self.log.info("%s: %s", "command" if sub.local else "spark-submit", " ".join(sub.argv))
        self._killed = False
        process = subprocess.Popen(sub.argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=sub.env,
                                   text=True, bufsize=1, start_new_session=True)
        self._process = process
        tail: collections.deque[str] = collections.deque(maxlen=_TAIL_LINES)
        stdout_lines: collections.deque[str] = collections.deque(maxlen=1000)
        assert process.stdout is not None and process.stderr is not None
        with process.stdout, process.stderr:
            pump = threading.Thread(target=self._pump, args=(process.stderr, tail, None), daemon=True)
            pump.start()
            self._pump(process.stdout, tail, stdout_lines)
            returncode = process.wait()
            pump.join(timeout=30)
        result = last_json_object(stdout_lines)
        if returncode != 0 or (result is not None and result.get("status") == "error"):
            what = "was killed" if self._killed else f"failed with exit code {returncode}"
            error = f": {result.get('error')}" if result and result.get("error") else ""
            job = sub.application if sub.local else f"spark-submit of {sub.application}"
            reason = failure_reason(tail, result) or f"error: {job} {what}"
            self.log.error("%s", reason)
            # the message ends with the job's one-line reason: the last line of the task's failure in the log
            raise JobFailedError(f"{job} {what}{error}. Last output:\n" + "\n".join(tail) + f"\n{reason}",
                                 summary=f"{job} {what}{error}", reason=reason.removeprefix("error: "),
                                 retryable=not self._killed and is_retryable_failure(result, returncode))
        if result is None:
            self.log.warning("the Spark application printed no final JSON line; no result to return")
        return result

    def _pump(self, stream: IO[str], tail: collections.deque[str], keep: collections.deque[str] | None) -> None:
        for raw in _lines(stream):
            line = raw.rstrip("\n")
            tail.append(line)
            if keep is not None:
                keep.append(line)
            self.log.info("%s", line)

    def on_kill(self) -> None:
        """Stop the running job: the whole spark-submit process group (JVM, Python driver and workers) in client
        mode, SparkSubmitHook's kill in cluster mode."""
        process = self._process
        if process is not None and process.poll() is None:
            self._killed = True
            self.log.info("killing spark-submit process group %d", process.pid)
            _signal_group(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=_KILL_GRACE_SECONDS)
            except subprocess.TimeoutExpired:
                _signal_group(process.pid, signal.SIGKILL)
                process.wait()
        elif self._spark_hook is not None and process is None:
            self._spark_hook.on_kill()


def _with_credentials(env: dict[str, str], config: PaimonConnectionConfig | None) -> dict[str, str]:
    """``env`` with the connection's object-store credentials, endpoint and region as AWS environment variables
    (:meth:`PaimonConnectionConfig.job_environment`). Credentials from the connection replace the worker's own
    AWS_* keys as a whole (a session token of other keys would not match)."""
    if config is None:
        return env
    if config.credentials:
        for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
            env.pop(name, None)
    env.update(config.job_environment())
    return env


def failure_reason(output: Iterable[str], result: dict[str, Any] | None) -> str | None:
    """The job's one-line failure reason: its last ``error: <message>`` line (what the engine's CLI and the Spark
    application print on stderr), else ``error: <the result line's error>``."""
    reason = None
    for line in output:
        if line.startswith("error: "):
            reason = line.strip()
    if reason is None and result is not None and result.get("error"):
        reason = f"error: {result['error']}"
    return reason


def _lines(stream: IO[str]) -> Iterable[str]:
    yield from iter(stream.readline, "")


def _signal_group(pid: int, sig: signal.Signals) -> None:
    try:
        os.killpg(pid, sig)
    except ProcessLookupError:
        pass

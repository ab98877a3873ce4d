"""Runs the jobs of the Paimon Spark application: resolves connections, starts, watches and kills the job.

:meth:`PaimonSparkHook.build_submission` resolves the Paimon and Spark connections of one
:class:`~paimon_provider.utils.job_spec.SparkJobSpec` and hands them to the pure renderer,
:func:`~paimon_provider.utils.job_spec.render_job`, which decides the route and builds the argv: spark-submit of the
application (its options built from the Spark connection's documented fields: master, ``deploy-mode``, ``queue``,
``spark-binary``, ``namespace``, ``principal``, ``keytab``), the engine's CLI on the worker for a metadata-only
command in client mode (no JVM and SparkContext for nothing; ``SparkJobSpec.runner``; run in this process unless
the spec has ``env_vars`` or ``args``), or the engine on the worker for a small Spark job
(``spark.paimon.driver-job.max-input-size``, local master), or, with ``spark={"connect": "sc://..."}`` or a
``spark_connect`` Spark connection, the job in this process as a Spark Connect client
(:func:`table_engine.spark.app.run_connected`; the credentials go into the command's catalog options in memory,
docs/adr/0037-spark-connect.md). :meth:`PaimonSparkHook.submit` runs it with its route's runner
(:mod:`paimon_provider.hooks.runners`): in client mode the process, or the engine here, and returns the
application's final JSON line; in cluster mode the driver's stdout is not here, so it hands the submission to the
Spark provider's public ``SparkSubmitHook.submit`` (driver tracking, YARN/Kubernetes kill) and returns ``None``.

Credentials: the ``paimon`` connection's object-store credentials never go into the argv (visible to every user of
the host in ``/proc/<pid>/cmdline`` and logged by this hook): :func:`~paimon_provider.utils.job_spec.application_args`
drops
every credential key from the catalog options, and the job process (spark-submit, or the engine's CLI) gets them as
``AWS_ACCESS_KEY_ID`` / ``AWS_SECRET_ACCESS_KEY`` / ``AWS_SESSION_TOKEN`` in its environment
(:attr:`SparkSubmission.env`, hidden from repr), which the engine reads when its catalog options carry no keys.
With a local master the driver and the executors inherit that environment. On a cluster (a non-local master, or
cluster deploy mode) the executors, and in cluster mode the driver, run elsewhere: they need the cluster's own
credentials (instance role, IRSA, ``spark.executorEnv``/``spark.yarn.appMasterEnv`` set in the cluster's
``spark-defaults.conf``); this hook does not put credentials in ``--conf`` (that is argv too).
"""

from __future__ import annotations

import dataclasses
import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from airflow.sdk import BaseHook
from airflow.sdk.exceptions import AirflowException, AirflowNotFoundException

from paimon_provider.hooks.runners import JobRunner, ProcessRunner, failure_reason, job_log_record, runner_for
from paimon_provider.hooks.table import load_connection_config
from paimon_provider.utils.connection import CONN_TYPE, DEFAULT_CONN_ID, PaimonConnectionConfig
from paimon_provider.utils.job_spec import (
    SPARK_CONNECT_CONN_TYPE,
    RenderedJob,
    SparkConnection,
    SparkJobSpec,
    is_local_master,
    render_job,
    spark_master,
)
from paimon_provider.utils.packaging import application_path, engine_archive
from table_engine.spark.compat import CONNECT_CLIENT_ENV

if TYPE_CHECKING:
    from airflow.providers.apache.spark.hooks.spark_submit import SparkSubmitHook

    from table_engine.ops import Command

_PANDAS_WARNING = "ignore:PySpark does not yet fully support pandas:FutureWarning"


__all__ = ["PaimonSparkHook", "SparkSubmission", "failure_reason", "job_log_record", "spark_master"]

SparkSubmission = RenderedJob
"""A fully resolved job (:class:`~paimon_provider.utils.job_spec.RenderedJob`) with the process environment."""


class PaimonSparkHook(BaseHook):
    """Submits Paimon Spark jobs described by a :class:`~paimon_provider.utils.job_spec.SparkJobSpec`.

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
        self._spark_hook: SparkSubmitHook | None = None
        self._runner: JobRunner | None = None

    def get_conn(self) -> PaimonConnectionConfig:
        if self._config is None:
            self._config = load_connection_config(self.paimon_conn_id)
        return self._config

    # ---- building ----------------------------------------------------------------------------------------------
    def spark_connection(self, conn_id: str, spec: SparkJobSpec) -> SparkConnection | None:
        """The Spark connection ``conn_id`` (None when it is not defined and ``spec.master`` is given)."""
        try:
            conn = BaseHook.get_connection(conn_id)
        except AirflowNotFoundException:
            if spec.master:
                return None
            raise AirflowException(
                f"Spark connection {conn_id!r} is not defined (the Spark provider would silently submit to YARN). "
                f"Define it, e.g. AIRFLOW_CONN_{conn_id.upper()}='{{\"conn_type\": \"spark\", \"host\": "
                f"\"local[*]\"}}', name another one in the Paimon connection's spark_conn_id, or set master="
            ) from None
        extra = conn.extra_dejson
        if conn.conn_type == SPARK_CONNECT_CONN_TYPE:  # the apache-spark provider's Spark Connect connection
            from airflow.providers.apache.spark.hooks.spark_connect import SparkConnectHook

            return SparkConnection(master="", connect=SparkConnectHook(conn_id).get_connection_url())
        spark = SparkConnection.from_fields(conn.conn_type, conn.host, conn.port, extra)
        if extra.get("keytab"):
            spark = dataclasses.replace(spark, keytab=_keytab_file(str(extra["keytab"]), spark.principal))
        return spark

    def build_submission(self, spec: SparkJobSpec) -> RenderedJob:
        """Resolve connections and render the job (no process is started): the spark-submit of the application,
        the engine's CLI for a metadata-only command, or the engine for a small job (see ``spec.runner``); its
        ``env`` is the process environment (the worker's, the spec's and the connection's credentials)."""
        config = self.get_conn()
        spark_conn_id = spec.spark_conn_id or config.spark_conn_id
        spark = None if spec.runner == "local" or spec.connect else self.spark_connection(spark_conn_id, spec)
        job = render_job(spec, config, spark, application=application_path(), engine_archive=engine_archive,
                         small_job=functools.partial(_small_job, credentials=config.credentials))
        if config.credentials and job.cluster_mode:
            # client mode needs nothing more: the driver gets them in its environment, and the data source ships
            # what the driver has to the executors inside the serialized tasks
            self.log.warning("the driver on %s (cluster deploy mode) does not get connection %s's object-store "
                             "credentials: it needs the cluster's own", job.master, config.conn_id)
        env = _with_credentials(dict(os.environ), config)
        for name in CONNECT_CLIENT_ENV:  # a Spark Connect client of this process (route connect) left them
            env.pop(name, None)
        env.update(job.env)
        if job.route == "spark-submit":
            if is_local_master(job.master):
                env.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
            # PySpark 4 warns on pandas 3 in every Python process of the job (the driver and each worker), though
            # the application uses no pandas API: a filter in the environment reaches all of them
            env["PYTHONWARNINGS"] = ",".join(w for w in (env.get("PYTHONWARNINGS"), _PANDAS_WARNING) if w)
            # spark-submit ships with the pyspark wheel next to this interpreter; an unactivated venv lacks it on PATH
            here = os.path.dirname(sys.executable)
            binary = job.argv[0]
            if shutil.which(binary, path=env.get("PATH")) is None and os.path.exists(os.path.join(here, binary)):
                env["PATH"] = os.pathsep.join([here, env.get("PATH", "")])
        if job.cluster_mode:
            self._spark_hook = self._cluster_hook(spec, job, spark_conn_id)
        return dataclasses.replace(job, env=env)

    @staticmethod
    def _cluster_hook(spec: SparkJobSpec, job: RenderedJob, spark_conn_id: str) -> SparkSubmitHook:
        """The Spark provider's hook for a cluster-mode submission (it tracks the driver and kills it remotely);
        it builds the same command from the same connection, so a master override cannot apply there."""
        from airflow.providers.apache.spark.hooks.spark_submit import SparkSubmitHook

        if spec.master:
            raise ValueError(f"master={spec.master!r} cannot override the Spark connection {spark_conn_id!r} in "
                             "cluster deploy mode: name a Spark connection with that master instead")
        i = job.argv.index(job.application)
        py_files = job.argv[job.argv.index("--py-files") + 1] if "--py-files" in job.argv[:i] else None
        return SparkSubmitHook(
            conf=dict(job.conf), conn_id=spark_conn_id, files=",".join(spec.files) or None, py_files=py_files,
            jars=",".join(spec.jars) or None, total_executor_cores=spec.total_executor_cores,
            executor_cores=spec.executor_cores, executor_memory=spec.executor_memory,
            driver_memory=spec.driver_memory, name=spec.app_name, num_executors=spec.num_executors,
            application_args=job.argv[i + 1:], env_vars=dict(spec.env_vars) or None, verbose=spec.verbose,
            deploy_mode=spec.deploy_mode)

    # ---- running -----------------------------------------------------------------------------------------------
    def submit(self, spec: SparkJobSpec) -> dict[str, Any] | None:
        """Run the job to completion with its route's runner (:func:`~paimon_provider.hooks.runners.runner_for`);
        the application's final JSON object (client mode), else ``None``.

        Raises :class:`~paimon_provider.utils.results.JobFailedError` (an AirflowException) when the job fails, with
        the last lines of its output, its one-line reason and whether retrying may help.
        """
        sub = self.build_submission(spec)
        self._runner = runner_for(spec, sub, self.log, self.get_conn().credentials, self._spark_hook)
        return self._runner.run(spec, sub)

    @property
    def _process(self) -> subprocess.Popen[str] | None:
        """The job's process, while a route that starts one runs it."""
        return self._runner.process if isinstance(self._runner, ProcessRunner) else None

    def on_kill(self) -> None:
        """Stop the running job: the whole spark-submit process group (JVM, Python driver and workers) in client
        mode, SparkSubmitHook's kill in cluster mode, the job's operations on a Spark Connect server."""
        if self._runner is not None:
            self._runner.kill()


def _with_credentials(env: dict[str, str], config: PaimonConnectionConfig | None) -> dict[str, str]:
    """``env`` with the connection's object-store credentials, endpoint and region as AWS environment variables
    (:meth:`PaimonConnectionConfig.job_environment`). Credentials from the connection replace the worker's own
    AWS_* keys as a whole (a session token of other keys would not match)."""
    from table_engine.options.storage import AWS_PRINCIPAL_VARIABLES

    if config is None:
        return env
    if config.credentials:
        for name in AWS_PRINCIPAL_VARIABLES:
            env.pop(name, None)
    env.update(config.job_environment())
    return env


def _small_job(cmd: Command, conf: Mapping[str, str], credentials: Mapping[str, str] | None = None) -> bool:
    """The engine's small-job rule (:func:`~table_engine.spark.jobs.driver_jobs.runs_on_driver`; reads the table, here,
    with the connection's object-store ``credentials`` added to the catalog options of a copy of ``cmd`` that
    only this sizing sees: the job's own command never carries them)."""
    from table_engine.spark.jobs.driver_jobs import max_input_size, runs_on_driver

    if credentials:
        cmd = dataclasses.replace(cmd, catalog_options={**cmd.catalog_options, **credentials})
    return runs_on_driver(cmd, max_input_size(dict(conf)))


def _keytab_file(base64_keytab: str, principal: str | None) -> str:
    """The Spark connection's ``keytab`` extra (base64 content, as the Spark provider documents it) written to a
    file only this user can read; its path."""
    import base64
    import hashlib
    import tempfile

    data = base64.b64decode(base64_keytab)
    path = os.path.join(tempfile.gettempdir(), f"paimon-{principal or 'spark'}-{hashlib.sha256(data).hexdigest()[:16]}"
                                               ".keytab")
    if not os.path.exists(path):
        fd = os.open(path + ".tmp", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(path + ".tmp", path)
    return path

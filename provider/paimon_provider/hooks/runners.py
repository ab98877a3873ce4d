"""One runner per execution route of a rendered job: how :class:`~paimon_provider.hooks.spark.PaimonSparkHook` runs
it and how it stops it.

The hook renders the job (:func:`~paimon_provider.utils.job_spec.render_job`: route and argv) and :func:`runner_for`
picks its runner, the one place that looks at the route:

* :class:`SparkSubmitRunner`: spark-submit in client mode, a process group of this worker whose stdout carries the
  application's result line;
* :class:`WorkerProcessRunner`: the engine's CLI (route ``cli``) or a small job (route ``driver``) in a process of
  its own on the worker, when the spec asks for one (``env_vars`` or raw ``extra_args``);
* :class:`InProcessRunner`: the same two routes in the task's process (docs/adr/0042-metadata-commands-in-the-task-
  process.md);
* :class:`ConnectRunner`: route ``connect``, the job in this process as a Spark Connect client
  (docs/adr/0037-spark-connect.md);
* :class:`ClusterRunner`: cluster deploy mode, handed to the Spark provider's ``SparkSubmitHook`` (no result line).
"""

from __future__ import annotations

import collections
import dataclasses
import logging
import os
import re
import signal
import subprocess
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from typing import IO, TYPE_CHECKING, Any, Protocol

from paimon_provider.utils.job_spec import DRIVER_JOB_CONF, RenderedJob, SparkJobSpec
from paimon_provider.utils.results import JobFailedError
from table_engine.ops.result import JobResult

if TYPE_CHECKING:
    from airflow.providers.apache.spark.hooks.spark_submit import SparkSubmitHook

    from table_engine.ops import Command

__all__ = ["ClusterRunner", "ConnectRunner", "InProcessRunner", "JobLog", "JobRunner", "ProcessRunner",
           "SparkSubmitRunner", "WorkerProcessRunner", "failure_reason", "in_task_process", "job_log_record",
           "runner_for"]

_KILL_GRACE_SECONDS = 10.0
_TAIL_LINES = 40


class JobLog(Protocol):
    """What a runner logs through: the hook's logger (a standard or a structured one)."""

    def info(self, event: Any, /, *args: Any) -> Any: ...
    def warning(self, event: Any, /, *args: Any) -> Any: ...
    def log(self, level: int, event: Any, /, *args: Any) -> Any: ...


class JobRunner(ABC):
    """How one route runs a rendered job, and stops it when the task is killed.

    :param log: the hook's logger (the job's lines are logged as the hook's).
    """

    def __init__(self, log: JobLog) -> None:
        self.log = log
        self.killed = False

    @abstractmethod
    def run(self, spec: SparkJobSpec, job: RenderedJob) -> dict[str, Any] | None:
        """Run ``job`` (rendered from ``spec``) to completion: the application's final JSON object, None when there
        is none; a :class:`~paimon_provider.utils.results.JobFailedError` when the job fails."""

    def kill(self) -> None:  # noqa: B027 - a route whose job runs in the task's own thread has nothing to stop
        """Stop the running job (called from another thread)."""


class ProcessRunner(JobRunner):
    """A job in a process of its own, started here: its output logged line by line, its process group killed."""

    def __init__(self, log: JobLog) -> None:
        super().__init__(log)
        self.process: subprocess.Popen[str] | None = None

    def announce(self, spec: SparkJobSpec, job: RenderedJob) -> None:
        """Log why the job runs this way, before its command line."""

    def run(self, spec: SparkJobSpec, job: RenderedJob) -> dict[str, Any] | None:
        self.announce(spec, job)
        self.log.info("%s: %s", "command" if job.local else "spark-submit", " ".join(job.argv))
        self.killed = False
        process = subprocess.Popen(job.argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=job.env,
                                   text=True, bufsize=1, start_new_session=True)
        self.process = process
        tail: collections.deque[str] = collections.deque(maxlen=_TAIL_LINES)
        stdout_lines: collections.deque[str] = collections.deque(maxlen=1000)
        assert process.stdout is not None and process.stderr is not None
        with process.stdout, process.stderr:
            pump = threading.Thread(target=self._pump, args=(process.stderr, tail, None), daemon=True)
            pump.start()
            self._pump(process.stdout, tail, stdout_lines)
            returncode = process.wait()
            pump.join(timeout=30)
        result = JobResult.parse(stdout_lines)
        if returncode != 0 or (result is not None and result.is_error):
            what = "was killed" if self.killed else f"failed with exit code {returncode}"
            error = f": {result.error}" if result is not None and result.error else ""
            name = job.application if job.local else f"spark-submit of {job.application}"
            reason = failure_reason(tail, result) or f"error: {name} {what}"
            # not logged here: the operator's failure logs the summary and this reason once, as the log's last lines
            # the message ends with the job's one-line reason: the last line of the task's failure in the log
            raise JobFailedError(f"{name} {what}{error}. Last output:\n" + "\n".join(tail) + f"\n{reason}",
                                 summary=f"{name} {what}{error}", reason=reason.removeprefix("error: "),
                                 retryable=not self.killed and JobResult.worth_retrying(result, returncode))
        if result is None:
            self.log.warning("the Spark application printed no final JSON line; no result to return")
            return None
        self.log.info("result: %s", result.to_line())
        return result.to_dict()

    def _pump(self, stream: IO[str], tail: collections.deque[str], keep: collections.deque[str] | None) -> None:
        for raw in _lines(stream):
            line = raw.rstrip("\n")
            tail.append(line)
            if keep is not None:
                keep.append(line)
            level, text = job_log_record(line)
            if level is not None:
                self.log.log(level, "%s", text)

    def kill(self) -> None:
        """The whole process group (spark-submit's JVM, Python driver and workers): SIGTERM, then SIGKILL."""
        process = self.process
        if process is None or process.poll() is not None:
            return
        self.killed = True
        self.log.info("killing spark-submit process group %d", process.pid)
        _signal_group(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=_KILL_GRACE_SECONDS)
        except subprocess.TimeoutExpired:
            _signal_group(process.pid, signal.SIGKILL)
            process.wait()


class SparkSubmitRunner(ProcessRunner):
    """spark-submit of the application in client mode (route ``spark-submit``)."""


class WorkerProcessRunner(ProcessRunner):
    """The engine's CLI (route ``cli``) or a small job (route ``driver``) in a process of its own on the worker."""

    def announce(self, spec: SparkJobSpec, job: RenderedJob) -> None:
        if job.route == "driver":
            self.log.info("%s of %s: a small job (%s): running it with the engine here, not spark-submit",
                          spec.command_name, spec.table, DRIVER_JOB_CONF)
        else:
            self.log.info("%s changes table metadata only: running the engine's CLI here, not spark-submit",
                          spec.command_name)


def _with_credentials(cmd: Command, credentials: Mapping[str, str]) -> Command:
    """``cmd`` with the connection's object-store credentials in its catalog options, in memory only."""
    return dataclasses.replace(cmd, catalog_options={**cmd.catalog_options, **credentials}) if credentials else cmd


class InProcessRunner(JobRunner):
    """A metadata-only command (route ``cli``) or a small job (route ``driver``) in this (the task's) process: the
    engine is imported here already (the worker's checks read the table first, the small-job rule sizes the input),
    so no second interpreter imports it again for milliseconds of work (ADR 0042). The connection's object-store
    credentials go into the command's catalog options in memory, as for route ``connect``; the result and the
    failure are the CLI's (:func:`table_engine.cli.outcome`), a small job's those of the driver.

    :param credentials: the connection's object-store credentials by catalog option.
    """

    def __init__(self, log: JobLog, credentials: Mapping[str, str]) -> None:
        super().__init__(log)
        self.credentials = credentials

    def run(self, spec: SparkJobSpec, job: RenderedJob) -> dict[str, Any]:
        from table_engine.cli import outcome
        from table_engine.ops.run import run_command
        from table_engine.spark.jobs.driver_jobs import run_on_driver

        cmd = _with_credentials(job.command, self.credentials)
        if job.route == "driver":
            self.log.info("%s of %s: a small job (%s): running it with the engine in this task's process (no "
                          "subprocess, no spark-submit)", spec.command_name, spec.table, DRIVER_JOB_CONF)
        else:
            self.log.info("%s of %s changes table metadata only: running it with the engine in this task's process "
                          "(no subprocess, no spark-submit)", spec.command_name, spec.table)
        runner = run_on_driver if job.route == "driver" else run_command
        result, reason = outcome(cmd, runner, show=lambda text: self.log.info("%s", text), log_errors=False)
        if result.is_error:
            error = result.error or "an error"
            reason = reason or error
            summary = error.split(": ", 1)[0]  # the exception's type: the reason line says the rest
            raise JobFailedError(f"{summary}\nerror: {reason}", summary=summary, reason=reason,
                                 retryable=bool(result.retryable))
        self.log.info("result: %s", result.to_line())
        return result.to_dict()


class ConnectRunner(JobRunner):
    """Route ``connect``: the job runs in this process as a Spark Connect client of the server; the connection's
    object-store credentials go into the catalog options of the command in memory (never an argv or a log), from
    where the tasks get them as with spark-submit. Killed by interrupting its operations on the server.

    :param credentials: the connection's object-store credentials by catalog option.
    """

    def __init__(self, log: JobLog, credentials: Mapping[str, str]) -> None:
        super().__init__(log)
        self.credentials = credentials
        self.interrupt: Callable[[], object] | None = None

    def run(self, spec: SparkJobSpec, job: RenderedJob) -> dict[str, Any]:
        from table_engine.spark.app import run_connected

        assert job.connect_url is not None
        cmd = _with_credentials(job.command, self.credentials)
        self.log.info("%s of %s: running here as a Spark Connect client of %s (no spark-submit)", spec.command_name,
                      spec.table, job.master)
        self.killed = False
        result = run_connected(cmd, job.connect_url, app_name=spec.app_name, conf=job.conf,
                               on_session=self._set_interrupt)
        if result.is_error:
            what = "was killed" if self.killed else "failed"
            name = f"{spec.command_name} over Spark Connect ({job.master})"
            reason = result.error or f"{name} {what}"
            raise JobFailedError(f"{name} {what}: {reason}\nerror: {reason}", summary=f"{name} {what}: {reason}",
                                 reason=reason, retryable=not self.killed and bool(result.retryable))
        self.log.info("result: %s", result.to_line())
        return result.to_dict()

    def _set_interrupt(self, interrupt: Callable[[], object] | None) -> None:
        self.interrupt = interrupt

    def kill(self) -> None:
        """Cancel this job's running operations on the Spark Connect server."""
        interrupt = self.interrupt
        if interrupt is None:
            return
        self.killed = True
        self.log.info("interrupting the job's operations on the Spark Connect server")
        interrupt()


class ClusterRunner(JobRunner):
    """Cluster deploy mode: the driver's stdout is not here, so the submission goes to the Spark provider's public
    ``SparkSubmitHook.submit`` (driver tracking, YARN/Kubernetes kill), and there is no result.

    :param spark_hook: the Spark provider's hook of this submission.
    """

    def __init__(self, log: JobLog, spark_hook: SparkSubmitHook) -> None:
        super().__init__(log)
        self.spark_hook = spark_hook

    def run(self, spec: SparkJobSpec, job: RenderedJob) -> None:
        self.log.info("cluster deploy mode: delegating to SparkSubmitHook (no result line is available)")
        self.spark_hook.submit(job.application)

    def kill(self) -> None:
        """SparkSubmitHook's kill (of the driver on the cluster)."""
        self.spark_hook.on_kill()


def in_task_process(spec: SparkJobSpec) -> bool:
    """Whether a metadata-only command (route ``cli``) or a small job (route ``driver``) runs in the task's process:
    unless the spec asks for what only a process of its own has (``env_vars``, or raw ``extra_args`` for the
    CLI's parser)."""
    return not spec.env_vars and not spec.args


def runner_for(spec: SparkJobSpec, job: RenderedJob, log: JobLog, credentials: Mapping[str, str],
               spark_hook: SparkSubmitHook | None) -> JobRunner:
    """The runner of ``job``'s route: the one place that decides how a rendered job runs.

    :param credentials: the connection's object-store credentials (in memory, for the routes in this process).
    :param spark_hook: the Spark provider's hook of a cluster-mode submission.
    """
    if job.route == "connect":
        return ConnectRunner(log, credentials)
    if job.route in ("cli", "driver"):
        return InProcessRunner(log, credentials) if in_task_process(spec) else WorkerProcessRunner(log)
    if job.cluster_mode:
        assert spark_hook is not None
        return ClusterRunner(log, spark_hook)
    return SparkSubmitRunner(log)


def failure_reason(output: Iterable[str], result: JobResult | None) -> str | None:
    """The job's one-line failure reason: its last ``error: <message>`` line (what the engine's CLI and the Spark
    application print on stderr), else ``error: <the result line's error>``."""
    reason = None
    for line in output:
        if line.startswith("error: "):
            reason = line.strip()
    if reason is None and result is not None and result.error:
        reason = f"error: {result.error}"
    return reason


_STAMPED = re.compile(
    r"^(?:\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[,.]\d+)?|\d{2}/\d{2}/\d{2} \d{2}:\d{2}:\d{2})\s+"
    r"(?P<level>TRACE|DEBUG|INFO|WARN|WARNING|ERROR|FATAL|CRITICAL)\s+(?P<rest>.*)$")
_LEVELS = {"TRACE": logging.DEBUG, "DEBUG": logging.DEBUG, "INFO": logging.INFO, "WARN": logging.WARNING,
           "WARNING": logging.WARNING, "ERROR": logging.ERROR, "FATAL": logging.CRITICAL,
           "CRITICAL": logging.CRITICAL}


def job_log_record(line: str) -> tuple[int | None, str]:
    """How the hook re-logs one line of a job's output: ``(level, text)``, level None for a line it leaves out.

    A line stamped by the job's logger (the engine's ``<date> <time> LEVEL name: message``, Spark's
    ``yy/MM/dd HH:mm:ss LEVEL Class: message``) keeps its level and loses its stamp (Airflow stamps it once); the
    job's ``error: <message>`` line and its JSON result line are left out (the operator logs the one-line error
    last, the hook the result of a successful job); anything else is INFO.
    """
    if line.startswith("error: ") or (line.startswith("{") and line.rstrip().endswith("}")):
        return None, line
    m = _STAMPED.match(line)
    if m is None:
        return logging.INFO, line
    return _LEVELS[m.group("level")], m.group("rest")


def _lines(stream: IO[str]) -> Iterable[str]:
    yield from iter(stream.readline, "")


def _signal_group(pid: int, sig: signal.Signals) -> None:
    try:
        os.killpg(pid, sig)
    except ProcessLookupError:
        pass

"""The Spark application: ``spark-submit table_engine/spark/app.py <command> --warehouse W --table db.t ...``.

Arguments are exactly those of the ``table-engine`` console script (:mod:`table_engine.cli`), or the whole command
as one JSON object: ``app.py --command-json '<json>'`` (what the provider sends). The commands that are Spark jobs
(``spark_job`` in :mod:`table_engine.ops`: write, compact, consume-changelog) run with
:mod:`table_engine.spark.jobs.run`; the other commands change only table metadata and run on the driver. The master
comes from spark-submit. The job logs to stderr and prints one JSON object line to stdout, last (spark-submit
merges the Python driver's stderr into its stdout); the exit code is non-zero when it failed.

Spark Connect (:func:`run_connected`): the same commands run in the calling process as a Spark Connect client of a
long-lived server (``sc://host:port``), with the session of :func:`connect_session`: no spark-submit, no JVM here;
the tasks' Python code runs in the server's Python workers (``table_engine`` must be importable there:
:mod:`table_engine.spark.connect_server` starts a local server so). The caller gives the object-store credentials
in the command's catalog options, in memory (docs/adr/0037-spark-connect.md).
"""

from __future__ import annotations

import functools
import hashlib
import logging
import os
import socket
import sys
import time
import uuid
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from table_engine.cli import run, setup_logging
from table_engine.errors import SparkConnectError, TableEngineError, is_retryable
from table_engine.ops import Command
from table_engine.ops.argv import one_line, parse_invocation
from table_engine.ops.result import JobResult
from table_engine.ops.run import run_command
from table_engine.spark.compat import CONNECT_CLIENT_ENV, connect_address, redacted_url

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = logging.getLogger(__name__)

CONNECT_TIMEOUT_SECONDS = 5.0
"""How long :func:`connect_session` waits for the Spark Connect server's port before it gives up (the Connect
client itself would retry an unreachable server for minutes)."""

SHARED_SESSION_SECONDS = 3600
"""How long the jobs of one URL share one server session (:func:`shared_session_url`)."""


def main(argv: Sequence[str] | None = None) -> int:
    """The spark-submit application: run one command, with a SparkSession when it is a Spark job; the exit code.

    Metadata-only commands, and Spark-job commands small enough for the driver
    (:mod:`table_engine.spark.jobs.driver_jobs`), run without starting a SparkContext."""
    inv = parse_invocation(argv, prog="app.py")
    cmd = inv.command
    setup_logging(inv.log_level)
    session = _Session(f"paimon-{cmd.name}-{cmd.table}")

    def runner(c: Command) -> dict[str, Any]:
        if not c.spark_job:
            return run_command(c)
        from table_engine.spark.jobs import driver_jobs

        if driver_jobs.runs_on_driver(c, driver_jobs.max_input_size(submitted_conf())):
            return driver_jobs.run_on_driver(c)
        from table_engine.spark.jobs.run import run_spark_job

        return run_spark_job(c, session.get())

    return run(cmd, runner, before_output=session.stop, verbose=inv.verbose)


def submitted_conf() -> dict[str, str]:
    """The Spark conf the application was submitted with (``spark-submit --conf``, ``spark-defaults.conf``),
    read through the JVM without starting a SparkContext."""
    from pyspark import SparkConf, SparkContext

    SparkContext._ensure_initialized()
    return dict(SparkConf().getAll())


class _Session:
    """The application's SparkSession, started when a command first needs it."""

    def __init__(self, app_name: str) -> None:
        self.app_name = app_name
        self._spark: SparkSession | None = None

    def get(self) -> SparkSession:
        if self._spark is None:
            from pyspark.sql import SparkSession

            from table_engine.spark import register
            from table_engine.spark.compat import has_data_sources

            spark = SparkSession.builder.appName(self.app_name).getOrCreate()
            spark.sparkContext.setLogLevel("WARN")
            if has_data_sources():  # Spark 4 (the jobs use the source); 3.5 runs them without it
                register(spark)
            self._spark = spark
        return self._spark

    def stop(self) -> None:
        if self._spark is not None:
            self._spark.stop()


def shared_session_url(url: str) -> str:
    """``url`` naming the jobs' shared server session (``session_id``, the same for every client of this URL within
    a clock hour) unless it names one: the server starts Python workers per session, so a session per task would
    pay their start (and the import of the engine) in every task, and leave their processes behind. A new session
    each hour: the server closes a session after an idle hour (``spark.connect.session.manager.
    defaultSessionTimeout``), and a closed session's id cannot be joined again."""
    if ";session_id=" in url:
        return url
    hour = int(time.time() // SHARED_SESSION_SECONDS)  # a new one each hour: never one the server closed when idle
    digest = hashlib.sha256(f"paimon-jobs:{redacted_url(url)}:{hour}".encode()).digest()[:16]
    session = uuid.UUID(bytes=digest, version=4)
    return f"{url.rstrip('/')}{';' if '/;' in url else '/;'}session_id={session}"


def connect_session(url: str, app_name: str, conf: dict[str, str] | None = None) -> SparkSession:
    """A Spark Connect client of ``url``'s shared session (:func:`shared_session_url`; a fresh one when the server
    closed that session) with the ``paimon`` data source registered and the runtime ``conf`` set (the session's:
    shared by its jobs; a conf the server fixes at its start, such as ``spark.executor.memory``, is logged and
    skipped); a :class:`~table_engine.errors.SparkConnectError` naming the URL when nothing answers there within
    :data:`CONNECT_TIMEOUT_SECONDS`. Its ``stop()`` closes the client and leaves the shared session open."""
    host, port = connect_address(url)
    try:
        socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_SECONDS).close()
    except OSError as e:
        raise SparkConnectError(f"Spark Connect server {redacted_url(url)} is not reachable: {e.strerror or e} "
                                "(start one: python -m table_engine.spark.connect_server start)") from None
    import warnings

    from pyspark.sql import SparkSession

    from table_engine.spark import register

    with warnings.catch_warnings():  # the Connect client checks pandas on import; the jobs use no pandas API
        warnings.filterwarnings("ignore", "PySpark does not yet fully support pandas", FutureWarning)
        import pyspark.sql.connect.session  # noqa: F401
    try:
        spark = SparkSession.builder.remote(shared_session_url(url)).appName(app_name).create()
        spark.conf.get("spark.app.id", None)  # the first call: a session the server closed (idle) fails here
    except Exception as e:  # noqa: BLE001 - only a closed shared session is retried, with a session of its own
        if "SESSION_CLOSED" not in str(e) or ";session_id=" in url:
            raise
        log.info("the shared Spark Connect session was closed by the server: this job uses its own")
        spark = SparkSession.builder.remote(url).appName(app_name).create()
    else:
        spark.release_session_on_close = False  # type: ignore[attr-defined]
    for key, value in (conf or {}).items():
        try:
            spark.conf.set(key, value)
        except Exception as e:  # noqa: BLE001 - the server's static conf: it ran with its own value
            log.warning("Spark conf %s is fixed by the Spark Connect server; not set for this job (%s)", key,
                        one_line(str(e))[:200])
    register(spark)
    return spark


def run_connected(cmd: Command, url: str, *, app_name: str | None = None, conf: dict[str, str] | None = None,
                  on_session: Callable[[Callable[[], object] | None], None] | None = None) -> JobResult:
    """Run ``cmd`` in this process as a Spark Connect client of ``url`` (a Spark job with
    :func:`table_engine.spark.jobs.run.run_spark_job`, another command as the application's driver runs it); its result,
    an error result when it failed (never raises for the job's own failure). The client is closed afterwards;
    ``on_session`` gets a function that interrupts this job's operations on the server (those tagged with the
    job's own tag, not other jobs' of the shared session) once the session is open, and None once it is closed."""
    started = time.monotonic()
    where = redacted_url(url)
    log.info("%s %s: starting on Spark Connect server %s", cmd.name, cmd.table, where)
    spark = None
    saved = {name: os.environ.get(name) for name in CONNECT_CLIENT_ENV}
    try:
        spark = connect_session(url, app_name or f"paimon-{cmd.name}-{cmd.table}", conf)
        tag = f"paimon-job-{uuid.uuid4().hex}"
        spark.addTag(tag)
        if on_session is not None:
            on_session(functools.partial(spark.interruptTag, tag))
        if cmd.spark_job:
            from table_engine.spark.jobs.run import run_spark_job

            fields = run_spark_job(cmd, spark)
        else:
            fields = run_command(cmd)
        log.info("%s %s: done", cmd.name, cmd.table)
        return JobResult.ok(cmd.name, cmd.table, fields, seconds=round(time.monotonic() - started, 3))
    except Exception as e:  # the job's result, as the application reports it
        expected = isinstance(e, TableEngineError)
        reason = one_line(str(e) if expected else f"{type(e).__name__}: {e}")
        log.error("%s %s failed: %s", cmd.name, cmd.table, reason, exc_info=not expected)
        return JobResult.failed(cmd.name, cmd.table, one_line(f"{type(e).__name__}: {e}"), retryable=is_retryable(e),
                                seconds=round(time.monotonic() - started, 3))
    finally:
        if on_session is not None:
            on_session(None)
        if spark is not None:
            try:
                spark.stop()
            except Exception as e:  # noqa: BLE001 - the result stands; the server drops the session later
                log.warning("could not close the Spark Connect session: %s", one_line(str(e))[:200])
        for name, value in saved.items():  # PySpark marks the process as a Connect client: undo it
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


if __name__ == "__main__":
    sys.exit(main())

"""``table-engine``: table jobs from the command line, with the grammar of the Spark application.

``table-engine <command> --warehouse W --table db.t [options]`` runs a job locally with the table engine;
``spark-submit table_engine/spark/app.py <command> ...`` takes exactly the same arguments and runs the data-heavy
commands (write, compact, consume-changelog) distributed. Both log progress to stderr and print one final JSON
object line to stdout (:class:`~table_engine.ops.result.JobResult`: ``"status": "ok"`` or ``"error"``, the table,
the snapshot id and counts); the exit code is
0 on success, 1 when the job failed, 2 for bad arguments; a failed job's line says whether running it again may
succeed (``"retryable"``, from :func:`table_engine.errors.is_retryable`). A failure (any ``TableEngineError``, or
bad arguments) is one line ``error: <message>`` on stderr, last; its traceback is logged only with ``--verbose``
(or when the failure is not a ``TableEngineError``, i.e. a bug).

The commands, their options and results are generated from the command registry (:mod:`table_engine.ops`) into
``docs/commands.md`` (``python -m table_engine.ops --markdown``); ``--help`` on each lists its options. Instead of
a command and its options, ``--command-json '<json>'`` takes the whole command as one JSON object (its
``to_json()``), as the provider's operators send it.

Catalogs: ``--catalog-option metastore=jdbc --catalog-option uri=jdbc:...`` (or ``metastore=hive``) opens the catalog
those options name (:func:`table_engine.catalog.create_catalog`; every option in docs/catalogs.md). A secret
catalog option (``jdbc.password``) is better kept off the command line, which every user of the host can read: the
environment variable ``PAIMON_CATALOG_SECRETS`` (a JSON object, ``{"jdbc.password": "..."}``) adds it to the
command's catalog options (:mod:`table_engine.ops.secrets`), as the provider passes it.

TIME is epoch milliseconds, an ISO-8601 date-time (UTC unless it has an offset) or ``'<duration> ago'``
(``'2 h ago'``). DURATION is Paimon's form (``'7 d'``, ``'12 h'``, ``'30 min'``).
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from table_engine.errors import TableEngineError, is_retryable
from table_engine.ops import REGISTRY, Command
from table_engine.ops.argv import build_parser, one_line, parse_command, parse_invocation, parse_time_millis
from table_engine.ops.result import JobResult
from table_engine.ops.run import run_command

log = logging.getLogger("table_engine.cli")

__all__ = ["COMMANDS", "build_parser", "main", "one_line", "outcome", "parse_command", "parse_time_millis", "run",
           "setup_logging"]

COMMANDS = tuple(REGISTRY)
"""The commands (the registry's names)."""


def setup_logging(level: str) -> None:
    """Log to stderr at ``level`` (py4j at WARNING)."""
    logging.basicConfig(level=getattr(logging, level.upper(), logging.INFO), stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("py4j").setLevel(logging.WARNING)


def outcome(cmd: Command, runner: Callable[[Command], dict[str, Any]] = run_command,
            show: Callable[[str], None] = print, *, verbose: bool = False,
            log_errors: bool = True) -> tuple[JobResult, str | None]:
    """Run ``cmd`` with ``runner``, logging its start and end (a failure as one ERROR line, its traceback only with
    ``verbose`` or for a bug), and ``show`` the readable form of a ``health`` or ``maintain`` result; its result
    and, when it failed, the one-line reason. The CLI prints both; the provider's operators call it in the task's
    process for a metadata-only command, with ``log_errors=False``: the task's failure says an engine error once
    (a bug, not a ``TableEngineError``, is still logged with its traceback)."""
    started = time.monotonic()
    log.info("%s %s: starting", cmd.name, cmd.table)
    try:
        fields = runner(cmd)
        if cmd.name == "health" and "health" in fields:  # a person runs it: the readable form first
            from table_engine.ops.health_text import render_health

            show(render_health(fields["health"]))
        if cmd.name == "maintain" and "plan" in fields:
            from table_engine.ops.maintain import render_plan

            show(render_plan(fields))
        log.info("%s %s: done", cmd.name, cmd.table)
        return JobResult.ok(cmd.name, cmd.table, fields, seconds=round(time.monotonic() - started, 3)), None
    except Exception as e:  # reported as the job's result: one line, the traceback only with --verbose or for a bug
        expected = isinstance(e, TableEngineError)
        reason = one_line(str(e) if expected else f"{type(e).__name__}: {e}")
        if log_errors or not expected:
            log.error("%s %s failed: %s", cmd.name, cmd.table, reason, exc_info=not expected or verbose)
        return JobResult.failed(cmd.name, cmd.table, one_line(f"{type(e).__name__}: {e}"),
                                retryable=is_retryable(e), seconds=round(time.monotonic() - started, 3)), reason


def run(cmd: Command, runner: Callable[[Command], dict[str, Any]] = run_command,
        before_output: Callable[[], None] | None = None, *, verbose: bool = False) -> int:
    """Run ``cmd`` with ``runner`` (:func:`outcome`) and print its one JSON result line (after ``before_output``,
    e.g. stopping Spark, so that the line comes last); the process exit code."""
    result, reason = outcome(cmd, runner, lambda text: print(text, flush=True), verbose=verbose)
    if before_output is not None:
        before_output()
    if reason is not None:
        print(f"error: {reason}", file=sys.stderr, flush=True)
    print(result.to_line(), flush=True)
    return 1 if result.is_error else 0


def main(argv: Sequence[str] | None = None) -> int:
    """``table-engine <command>``: parse ``argv``, run the command, print its result; the exit code."""
    inv = parse_invocation(argv)
    setup_logging(inv.log_level)
    return run(inv.command, verbose=inv.verbose)


if __name__ == "__main__":
    sys.exit(main())

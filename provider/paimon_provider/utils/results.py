"""A failed job, as the operators see it. The result line a job prints, and whether a failure is worth retrying, are
read with the engine's own type, :class:`table_engine.ops.result.JobResult` (imported where a job runs: DAG files
import this module)."""

from __future__ import annotations

from airflow.sdk.exceptions import AirflowException


class JobFailedError(AirflowException):
    """A job (spark-submit or the engine's CLI) failed. ``summary``: what failed how (``<job> failed with exit code
    1: <error type>: ...``); ``reason``: its one-line error (without ``error: ``); ``retryable``: whether running it
    again may succeed (:meth:`table_engine.ops.result.JobResult.worth_retrying`)."""

    def __init__(self, message: str, *, summary: str, reason: str, retryable: bool) -> None:
        super().__init__(message)
        self.summary = summary
        self.reason = reason
        self.retryable = retryable

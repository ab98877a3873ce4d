"""The Spark application prints one final JSON object line: find it in the job's stdout, and tell from it (or the
exit code) whether a failed job is worth retrying."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from airflow.sdk.exceptions import AirflowException

BAD_ARGUMENTS_EXIT_CODE = 2
"""The engine's CLI and the Spark application exit with 2 when their arguments do not parse (no result line)."""


def last_json_object(lines: Iterable[str]) -> dict[str, Any] | None:
    """The last line that parses as a JSON object (other output, logs included, is ignored)."""
    found: dict[str, Any] | None = None
    for line in lines:
        text = line.strip()
        if not (text.startswith("{") and text.endswith("}")):
            continue
        try:
            value = json.loads(text)
        except ValueError:
            continue
        if isinstance(value, dict):
            found = value
    return found


def is_retryable_failure(result: Mapping[str, Any] | None, returncode: int | None) -> bool:
    """Whether running a failed job again may succeed: the result line's ``retryable`` (the engine classifies its
    own exceptions, :func:`table_engine.errors.is_retryable`); without one, False for arguments that do not parse
    (exit code 2), else True (a killed or crashed job may succeed next time)."""
    if result is not None and isinstance(result.get("retryable"), bool):
        return bool(result["retryable"])
    return returncode != BAD_ARGUMENTS_EXIT_CODE


class JobFailedError(AirflowException):
    """A job (spark-submit or the engine's CLI) failed. ``summary``: what failed how (``<job> failed with exit code
    1: <error type>: ...``); ``reason``: its one-line error (without ``error: ``); ``retryable``: whether running it
    again may succeed (:func:`is_retryable_failure`)."""

    def __init__(self, message: str, *, summary: str, reason: str, retryable: bool) -> None:
        super().__init__(message)
        self.summary = summary
        self.reason = reason
        self.retryable = retryable

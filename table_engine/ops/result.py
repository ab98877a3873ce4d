"""The result-line protocol: every job (the ``table-engine`` CLI, the Spark application, a small job on the driver)
prints one JSON object line to stdout, last; the provider finds it in the job's output and reads it back with the
same type, :class:`JobResult`.

The line: ``{"command": ..., "table": ..., "status": "ok" | "error", <the command's own fields>, "error": ...,
"retryable": ..., "seconds": ...}``. The command's own fields (``snapshot_id``, ``rows``, ...) are documented per
command in ``docs/commands.md``. No pyarrow and no engine module here: the provider imports it on the worker.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["BAD_ARGUMENTS_EXIT_CODE", "JobResult", "last_json_object"]

BAD_ARGUMENTS_EXIT_CODE = 2
"""The engine's CLI and the Spark application exit with 2 when their arguments do not parse (no result line)."""

_HEAD = ("command", "table", "status")
_TAIL = ("error", "retryable", "seconds")


@dataclass(frozen=True)
class JobResult:
    """One job's result line.

    :param command: the command's name.
    :param table: ``database.table``.
    :param status: ``ok`` or ``error``.
    :param fields: the command's own result fields (``snapshot_id``, ``rows``, ...).
    :param error: a failed job's one-line error (``<ExceptionType>: <message>``).
    :param retryable: whether running a failed job again may succeed (:func:`table_engine.errors.is_retryable`).
    :param seconds: the job's wall time.
    """

    command: str | None
    table: str | None
    status: str | None
    fields: Mapping[str, Any] = field(default_factory=dict)
    error: str | None = None
    retryable: bool | None = None
    seconds: float | None = None

    @classmethod
    def ok(cls, command: str, table: str, fields: Mapping[str, Any], seconds: float | None = None) -> JobResult:
        """A successful job's result."""
        return cls(command, table, "ok", dict(fields), seconds=seconds)

    @classmethod
    def failed(cls, command: str, table: str, error: str, *, retryable: bool,
               seconds: float | None = None) -> JobResult:
        """A failed job's result."""
        return cls(command, table, "error", error=error, retryable=retryable, seconds=seconds)

    @property
    def is_error(self) -> bool:
        """The job reported a failure."""
        return self.status == "error"

    def to_dict(self) -> dict[str, Any]:
        """The line as a JSON object (keys without a value are left out)."""
        head = {"command": self.command, "table": self.table, "status": self.status}
        tail = {"error": self.error, "retryable": self.retryable, "seconds": self.seconds}
        return {**{k: v for k, v in head.items() if v is not None}, **self.fields,
                **{k: v for k, v in tail.items() if v is not None}}

    def to_line(self) -> str:
        """The line, as the job prints it."""
        return json.dumps(self.to_dict(), default=str)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> JobResult:
        """The result of a line's JSON object (what :meth:`to_dict` gives; unknown keys are the command's)."""
        def text(key: str) -> str | None:
            value = data.get(key)
            return value if isinstance(value, str) else None

        retryable = data.get("retryable")
        seconds = data.get("seconds")
        return cls(text("command"), text("table"), text("status"),
                   {k: v for k, v in data.items() if k not in _HEAD and k not in _TAIL},
                   error=None if data.get("error") is None else str(data["error"]),
                   retryable=retryable if isinstance(retryable, bool) else None,
                   seconds=float(seconds) if isinstance(seconds, (int, float)) and not isinstance(seconds, bool)
                   else None)

    @classmethod
    def parse(cls, lines: Iterable[str]) -> JobResult | None:
        """The result line among a job's output lines (the last JSON object; logs and other output are skipped)."""
        found = last_json_object(lines)
        return None if found is None else cls.from_dict(found)

    @staticmethod
    def worth_retrying(result: JobResult | None, returncode: int | None) -> bool:
        """Whether running a failed job again may succeed: the line's ``retryable`` (the engine classifies its own
        exceptions); without one, False for arguments that do not parse (exit code 2), else True (a killed or
        crashed job may succeed next time)."""
        if result is not None and result.retryable is not None:
            return result.retryable
        return returncode != BAD_ARGUMENTS_EXIT_CODE


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

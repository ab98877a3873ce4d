"""``PaimonTableCheckOperator``: data-quality checks on a table or branch (the ``check`` command, docs/checks.md)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from airflow.sdk.exceptions import AirflowException

from paimon_provider.operators.base import PaimonSparkOperator
from paimon_provider.utils.arguments import as_optional_int

if TYPE_CHECKING:
    from airflow.sdk import Context

    from table_engine.ops import CheckTable

__all__ = ["PaimonTableCheckOperator", "check_table_lines"]

_COLUMNS = ("check", "result", "observed", "expected", "message")


def _observed(value: Any) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def check_table_lines(checks: Sequence[Mapping[str, Any]]) -> list[str]:
    """The checks' results as an aligned text table (a header line, then one line per check)."""
    rows = [[str(c.get("name")), "passed" if c.get("passed") else "FAILED", _observed(c.get("observed")),
             str(c.get("expected")), str(c.get("message"))] for c in checks]
    widths = [max(len(r[i]) for r in [list(_COLUMNS), *rows]) for i in range(len(_COLUMNS) - 1)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join([*(cell.ljust(w) for cell, w in zip(cells, widths, strict=False)), cells[-1]]).rstrip()

    return [line(_COLUMNS), *(line(r) for r in rows)]


class PaimonTableCheckOperator(PaimonSparkOperator["CheckTable"]):
    """Run data-quality checks on one snapshot of a table or branch (``db.t$branch_b``) with the engine on the
    worker (no Spark), log each check's result as a table and fail the task when a check fails.

    Each check is a dict (docs/checks.md): ``{"check": "row_count", "min": 1}``,
    ``{"check": "no_duplicate_keys"}``, ``{"check": "null_fraction", "column": "email", "max": 0.01}``,
    ``{"check": "values_in_set", "column": "status", "values": ["new", "paid"]}``,
    ``{"check": "values_in_range", "column": "amount", "min": 0}``,
    ``{"check": "rows_added", "since_tag": "before-batch", "min": 1}``,
    ``{"check": "predicate", "filter": [["amount", ">=", 0]]}``; each takes ``name`` and ``where`` (engine
    filters choosing the rows it checks) too.

    The result line (XCom ``return_value``: ``snapshot_id``, ``passed``, ``failed``, ``checks``) is returned when
    every check passed; the checks' results are pushed as XCom ``checks`` either way. A failed check fails the task
    without retries (running the checks again on the same data gives the same result): the failure's last two log
    lines name the failed checks and what each found. A definition that does not fit the table (an unknown column, a
    value the column cannot hold) fails it the same way; an unreachable store is retried like any job.

    :param checks: the checks, a list of dicts, or their JSON text (templated, each value too).
    :param snapshot_id: the snapshot to check (default: the latest) (templated).
    :param since_snapshot: check only the rows added after this snapshot up to the checked one (Paimon's
        ``incremental-between``: the batch an audit branch adds on the snapshot it was made from, docs/wap.md);
        default (None, ``""`` or ``"None"``): every row of the checked snapshot (templated).
    :param outlets: Assets whose event (Airflow emits one per outlet when the task succeeds) carries the checks'
        results in its extra: ``table``, ``snapshot_id`` and ``checks`` (name, kind, observed value each), so a
        freshness or volume check can gate a DAG scheduled on that Asset.
    :param failure_note: a line logged at ERROR right above the failure's two lines when a check fails (what the
        failure leaves, e.g. write-audit-publish's kept branch), so that it is read where the failure is (templated).
    """

    template_fields: Sequence[str] = (*PaimonSparkOperator.template_fields, "checks", "snapshot_id", "since_snapshot",
                                      "failure_note")
    template_fields_renderers = {**PaimonSparkOperator.template_fields_renderers, "checks": "json"}
    ui_color = "#d7f2d0"

    def __init__(self, *, checks: Sequence[Mapping[str, Any]] | str, snapshot_id: int | str | None = None,
                 since_snapshot: int | str | None = None, failure_note: str | None = None, **kwargs: Any) -> None:
        spark = dict(kwargs.pop("spark", None) or {})
        spark.setdefault("runner", "local")  # metadata reads and a scan: the engine on the worker, never Spark
        super().__init__(spark=spark, **kwargs)
        self.checks = checks
        self.snapshot_id = snapshot_id
        self.since_snapshot = since_snapshot
        self.failure_note = failure_note

    def _check_dicts(self) -> tuple[dict[str, Any], ...]:
        checks: Any = self.checks
        if isinstance(checks, str):
            try:
                checks = json.loads(checks)
            except ValueError as e:
                raise ValueError(f"checks is not valid JSON: {e}") from None
        if isinstance(checks, Mapping):
            checks = [checks]
        if not isinstance(checks, (list, tuple)):
            raise ValueError(f"checks must be a list of check dicts, got {checks!r}")
        return tuple(dict(c) if isinstance(c, Mapping) else c for c in checks)

    def build_command(self, warehouse: str) -> CheckTable:
        from table_engine.ops import CheckTable

        return CheckTable(warehouse=warehouse, table=self.table, checks=self._check_dicts(),
                          snapshot=as_optional_int(self.snapshot_id, "snapshot_id"),
                          since_snapshot=as_optional_int(self.since_snapshot, "since_snapshot"))

    def execute(self, context: Context) -> dict[str, Any] | None:
        result = super().execute(context)
        checks = (result or {}).get("checks")
        if not isinstance(checks, list):
            raise AirflowException(f"check of table {self.table}: the job gave no check results (cluster deploy "
                                   "mode has no result line: run checks with spark={'runner': 'local'})")
        snapshot = (result or {}).get("snapshot_id")
        since = (result or {}).get("since_snapshot")
        rows = "" if since is None else f" (the rows added after snapshot {since})"
        self.log.info("checks on %s, snapshot %s%s:", self.table,
                      snapshot if snapshot is not None else "none (empty)", rows)
        for line in check_table_lines(checks):
            self.log.info("%s", line)
        context["ti"].xcom_push(key="checks", value=checks)
        failed = [c for c in checks if not c.get("passed")]
        if failed:
            names = ", ".join(str(c.get("name")) for c in failed)
            details = "; ".join(f"{c.get('name')}: {c.get('message')} (expected {c.get('expected')})"
                                for c in failed)
            where = (f"snapshot {snapshot}" if since is None
                     else f"the rows added after snapshot {since} up to snapshot {snapshot}")
            if self.failure_note:
                self.log.error("%s", self.failure_note)
            raise self.failure(f"{len(failed)} of {len(checks)} checks failed on {where}: {names}",
                               details, retryable=False)
        self._report_to_outlets(context, snapshot, checks)
        return result

    def _report_to_outlets(self, context: Context, snapshot: Any, checks: list[dict[str, Any]]) -> None:
        """The passed checks in the extra of the event of each Asset the task declares in ``outlets`` (e.g. a
        "fresh and complete" Asset that downstream DAGs are scheduled on): the table, the checked snapshot and per
        check its name, kind and observed value. A failed check fails the task, which emits no event."""
        from airflow.sdk import Asset

        extra = {"table": self.table, "snapshot_id": snapshot,
                 "checks": [{"name": c.get("name"), "check": c.get("check"), "observed": c.get("observed")}
                            for c in checks]}
        events = context["outlet_events"]
        for outlet in self.outlets:
            if isinstance(outlet, Asset):
                events[outlet].extra.update(extra)

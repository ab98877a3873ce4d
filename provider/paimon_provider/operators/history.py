"""``PaimonTableHistoryOperator``: a table's commits and the Airflow runs that made them (the ``history`` command)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from paimon_provider.operators.base import PaimonSparkOperator
from paimon_provider.utils.arguments import as_columns, as_optional_int, as_time_millis

if TYPE_CHECKING:
    import datetime

    from airflow.sdk import Context

    from table_engine.ops import History

__all__ = ["PaimonTableHistoryOperator"]


class PaimonTableHistoryOperator(PaimonSparkOperator["History"]):
    """List a table's retained commits, newest first, with the Airflow DAG, run, task and try that made each (from
    snapshot metadata only, on the worker; nothing written). The task log shows them as a table; XCom
    ``return_value`` holds the page (``commits``, ``next_before_snapshot``).

    :param kinds: only these commit kinds (``["COMPACT"]``, ``"APPEND,OVERWRITE"``) (templated).
    :param since: only commits at or after this time (a datetime, epoch milliseconds, ISO text, ``'2 d ago'``)
        (templated).
    :param until: only commits at or before this time (templated).
    :param before_snapshot: only snapshots older than this one: a previous page's ``next_before_snapshot``
        (templated).
    :param limit: commits per page (default 50) (templated).
    """

    template_fields: Sequence[str] = (*PaimonSparkOperator.template_fields, "kinds", "since", "until",
                                      "before_snapshot", "limit")
    ui_color = "#d7f2d0"

    def __init__(self, *, kinds: Sequence[str] | str = (), since: datetime.datetime | str | int | None = None,
                 until: datetime.datetime | str | int | None = None, before_snapshot: int | str | None = None,
                 limit: int | str = 50, **kwargs: Any) -> None:
        spark = dict(kwargs.pop("spark", None) or {})
        spark.setdefault("runner", "local")  # metadata reads only: the engine on the worker, never Spark
        super().__init__(spark=spark, **kwargs)
        self.kinds, self.since, self.until = kinds, since, until
        self.before_snapshot, self.limit = before_snapshot, limit

    def build_command(self, warehouse: str) -> History:
        from table_engine.ops import History

        return History(warehouse=warehouse, table=self.table, kinds=as_columns(self.kinds),
                       since_millis=as_time_millis(self.since, "since"),
                       until_millis=as_time_millis(self.until, "until"),
                       before_snapshot=as_optional_int(self.before_snapshot, "before_snapshot"),
                       limit=as_optional_int(self.limit, "limit") or 50)

    def execute(self, context: Context) -> dict[str, Any] | None:
        result = super().execute(context)
        from table_engine.ops.history import render_history

        for line in render_history((result or {}).get("commits", [])).splitlines():
            self.log.info("%s", line)
        return result

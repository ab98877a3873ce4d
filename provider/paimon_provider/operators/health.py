"""``PaimonTableHealthOperator``: a table's health from metadata only (the ``health`` command, docs/health.md)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from paimon_provider.operators.base import PaimonSparkOperator
from paimon_provider.utils.arguments import as_bool, as_optional_int, as_time_millis

if TYPE_CHECKING:
    import datetime

    from airflow.sdk import Context

    from table_engine.ops import Health

__all__ = ["PaimonTableHealthOperator"]


class PaimonTableHealthOperator(PaimonSparkOperator["Health"]):
    """Report a table's health with the engine on the worker (no Spark; metadata only, nothing written): per
    partition and bucket its files, level-0 files, sorted runs, small files, deletion-vector ratio and postpone
    backlog; snapshots and changelogs against retention, consumers and their lag, tags, branches, the last
    compaction, tag and expiry. The task log shows it as a table; XCom ``return_value`` holds it whole
    (``health``).

    :param partitions: only these partitions (``k=v,k2=v2`` texts or dicts) (templated).
    :param orphans: also list orphan candidates (slower) (templated).
    :param max_orphan_files: files the orphan listing looks at, at most (templated).
    :param orphans_older_than: only orphan candidates older than this time (default: one day ago) (templated).
    """

    template_fields: Sequence[str] = (*PaimonSparkOperator.template_fields, "partitions", "orphans",
                                      "max_orphan_files", "orphans_older_than")
    ui_color = "#d7f2d0"

    def __init__(self, *, partitions: Sequence[Any] | None = None, orphans: bool | str = False,
                 max_orphan_files: int | str | None = None,
                 orphans_older_than: datetime.datetime | str | int | None = None, **kwargs: Any) -> None:
        spark = dict(kwargs.pop("spark", None) or {})
        spark.setdefault("runner", "local")  # metadata reads only: the engine on the worker, never Spark
        super().__init__(spark=spark, **kwargs)
        self.partitions = partitions
        self.orphans = orphans
        self.max_orphan_files = max_orphan_files
        self.orphans_older_than = orphans_older_than

    def build_command(self, warehouse: str) -> Health:
        from table_engine import parse_partition_text
        from table_engine.ops import Health

        parts = tuple(parse_partition_text(p) if isinstance(p, str) else {k: str(v) for k, v in p.items()}
                      for p in (self.partitions or ()))
        return Health(warehouse=warehouse, table=self.table, partitions=parts, orphans=as_bool(self.orphans),
                      max_orphan_files=as_optional_int(self.max_orphan_files, "max_orphan_files"),
                      orphans_older_than_millis=as_time_millis(self.orphans_older_than, "orphans_older_than"))

    def execute(self, context: Context) -> dict[str, Any] | None:
        result = super().execute(context)
        health = (result or {}).get("health")
        if isinstance(health, dict):
            from table_engine.ops.health_text import render_health

            for line in render_health(health).splitlines():
                self.log.info("%s", line)
        return result

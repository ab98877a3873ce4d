"""``PaimonMaintenanceOperator``: the maintenance due on a table, planned from its health and run (the ``maintain``
command, docs/maintenance-planner.md)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from paimon_provider.operators.base import CommittingOperator
from paimon_provider.utils.arguments import as_bool, as_optional_text

if TYPE_CHECKING:
    from airflow.sdk import Context

    from table_engine.ops import Maintain

__all__ = ["PaimonMaintenanceOperator"]


class PaimonMaintenanceOperator(CommittingOperator["Maintain"]):
    """Plan the maintenance due on a table from its health and options (metadata only), then run only the due
    actions, in order: compaction, partition expiry, manifest compaction, snapshot, changelog and tag expiry, orphan
    files. The engine runs them on the worker (no Spark: the ``local`` runner, the code paths of the commands of
    the same names); a table with nothing due costs a metadata read. The task log shows the plan and each action's
    outcome side by side as a table; XCom ``return_value`` holds both (``plan``, ``results``, ``due``).

    :param dry_run_only: only plan, change nothing (``dry_run`` is Airflow's method) (templated).
    :param orphans: also look for orphan files (default: the table option
        ``maintenance.remove-orphan-files.enabled``) (templated).
    :param commit_user: the commit user (templated); default derived from the task instance.
    """

    template_fields: Sequence[str] = (*CommittingOperator.template_fields, "dry_run_only", "orphans")
    ui_color = "#d7f2d0"

    def __init__(self, *, dry_run_only: bool | str = False, orphans: bool | str = False,
                 commit_user: str | None = None, **kwargs: Any) -> None:
        spark = dict(kwargs.pop("spark", None) or {})
        spark.setdefault("runner", "local")  # the planner and the actions run with the engine on the worker
        super().__init__(spark=spark, **kwargs)
        self.dry_run_only = dry_run_only
        self.orphans = orphans
        self.commit_user = commit_user

    def build_command(self, warehouse: str) -> Maintain:
        from table_engine.ops import Maintain

        return Maintain(warehouse=warehouse, table=self.table, dry_run=as_bool(self.dry_run_only),
                        orphans=as_bool(self.orphans), commit_user=as_optional_text(self.commit_user))

    def execute(self, context: Context) -> dict[str, Any] | None:
        result = super().execute(context)
        if isinstance((result or {}).get("plan"), dict):
            from table_engine.ops.maintain import render_plan

            for line in render_plan(result or {}).splitlines():
                self.log.info("%s", line)
        return result

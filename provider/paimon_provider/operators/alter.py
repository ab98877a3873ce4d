"""``PaimonAlterTableOperator``: schema evolution of a table (the ``alter-table`` command, Paimon's ALTER TABLE)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from paimon_provider.operators.base import PaimonSparkOperator

if TYPE_CHECKING:
    from table_engine.ops import AlterTable

__all__ = ["PaimonAlterTableOperator"]


class PaimonAlterTableOperator(PaimonSparkOperator["AlterTable"]):
    """Change a table's schema as Paimon's ``ALTER TABLE`` does, all the changes in one new schema (all or none),
    with the engine on the worker (metadata only, no Spark). XCom ``return_value`` holds the new ``schema_id`` and
    its ``fields``.

    Each change is a dict with an ``action`` (docs/schema-evolution.md):
    ``{"action": "add-column", "name": "c", "type": "BIGINT", "comment": "...", "after": "b"}``,
    ``{"action": "rename-column", "name": "b", "new_name": "bee"}``, ``{"action": "drop-column", "name": "c"}``,
    ``{"action": "update-column-type", "name": "a", "type": "BIGINT"}``,
    ``{"action": "move-column", "name": "c", "first": true}``,
    ``{"action": "update-column-comment", "name": "c", "comment": "..."}``,
    ``{"action": "update-column-nullability", "name": "c", "nullable": true}``,
    ``{"action": "update-comment", "comment": "..."}``, ``{"action": "set-option", "key": "...", "value": "..."}``,
    ``{"action": "remove-option", "key": "..."}``. A change that does not apply fails the task without retries and
    leaves the table as it was; a retry of a try that committed them finds them applied (``already_done``). A schema
    change changes no data: no Asset event (ADR 0021); lineage names the table with ``lifecycleStateChange`` ALTER.

    :param changes: the changes, a list of dicts, or their JSON text (templated, each value too).
    """

    template_fields: Sequence[str] = (*PaimonSparkOperator.template_fields, "changes")
    template_fields_renderers = {**PaimonSparkOperator.template_fields_renderers, "changes": "json"}
    ui_color = "#f2e6d0"

    def __init__(self, *, changes: Sequence[Mapping[str, Any]] | str, **kwargs: Any) -> None:
        spark = dict(kwargs.pop("spark", None) or {})
        spark.setdefault("runner", "local")  # a schema file: the engine on the worker, never Spark
        super().__init__(spark=spark, **kwargs)
        self.changes = changes

    def _change_dicts(self) -> tuple[dict[str, Any], ...]:
        changes: Any = self.changes
        if isinstance(changes, str):
            try:
                changes = json.loads(changes)
            except ValueError as e:
                raise ValueError(f"changes is not valid JSON: {e}") from None
        if isinstance(changes, Mapping):
            changes = [changes]
        if not isinstance(changes, (list, tuple)):
            raise ValueError(f"changes must be a list of change dicts, got {changes!r}")
        return tuple(dict(c) if isinstance(c, Mapping) else c for c in changes)

    def build_command(self, warehouse: str) -> AlterTable:
        from table_engine.ops import AlterTable

        return AlterTable(warehouse=warehouse, table=self.table, changes=self._change_dicts())

"""Feed a downstream table (or files) from a table's changelog, with a consumer that records progress."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from paimon_provider.operators.base import PaimonSparkOperator, task_commit_user
from paimon_provider.utils.arguments import as_optional_int, as_optional_text

if TYPE_CHECKING:
    from airflow.sdk import Context

    from table_engine.ops import ConsumeChangelog


class PaimonConsumeChangelogOperator(PaimonSparkOperator["ConsumeChangelog"]):
    """Read the changes of ``table`` after consumer ``consumer_id``'s position (rows with their row kind) and apply
    them to ``target_table`` (or write them as files under ``output_path``), then advance the consumer. A consumer also
    protects the snapshots it has not read from expiry. Emits the target table's Asset (with its new snapshot id).

    Applying a primary-key table's changelog to an aggregation-engine table is how a DWS layer follows a DWD
    layer: ``-U``/``-D`` rows retract what ``sum`` (and the other retractable functions) had added.

    :param consumer_id: the consumer (templated).
    :param target_table: apply the changes to this table (templated).
    :param output_path: or write the change rows under this directory, one sub-directory per run (templated).
    :param output_format: ``parquet``, ``json`` or ``csv`` for ``output_path`` (templated).
    :param from_snapshot: first snapshot to read (default: the consumer's next) (templated).
    :param to_snapshot: last snapshot to read (default: the latest) (templated).

    A later try of the same task instance (a retry, or a re-run after clearing) returns the batch an earlier try
    delivered (the same rows, output directory or target snapshot), not the next one: the delivery carries the
    task instance (:func:`~paimon_provider.operators.base.task_commit_user`) as its retry key (docs/retries.md).
    """

    writes_table = True
    template_fields: Sequence[str] = (*PaimonSparkOperator.template_fields, "consumer_id", "target_table",
                                      "output_path", "output_format", "from_snapshot", "to_snapshot")

    def __init__(self, *, consumer_id: str, target_table: str | None = None, output_path: str | None = None,
                 output_format: str = "parquet", from_snapshot: int | str | None = None,
                 to_snapshot: int | str | None = None, **kwargs: Any) -> None:
        if (target_table is None) == (output_path is None):
            raise ValueError("PaimonConsumeChangelogOperator needs exactly one of target_table and output_path")
        self.target_table = target_table
        super().__init__(**kwargs)
        self.consumer_id = consumer_id
        self.output_path = output_path
        self.output_format = output_format
        self.from_snapshot = from_snapshot
        self.to_snapshot = to_snapshot
        self._retry_key: str | None = None

    def execute(self, context: Context) -> dict[str, Any] | None:
        self._retry_key = task_commit_user(context)
        return super().execute(context)

    @property
    def asset_table(self) -> str | None:
        return self.target_table

    def result_snapshot_id(self, result: Mapping[str, Any] | None) -> int | None:
        value = (result or {}).get("target_snapshot_id")
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    def build_command(self, warehouse: str) -> ConsumeChangelog:
        from table_engine.ops import ConsumeChangelog

        consumer = as_optional_text(self.consumer_id)
        if not consumer:
            raise ValueError("consume-changelog needs a consumer_id")
        target = as_optional_text(self.target_table)
        output = None if target is not None else self.output_path
        output_format = "parquet" if target is not None else self.output_format
        return ConsumeChangelog(warehouse=warehouse, table=self.table, consumer_id=consumer, target_table=target,
                                output=output, output_format=output_format,
                                from_snapshot=as_optional_int(self.from_snapshot, "from_snapshot"),
                                to_snapshot=as_optional_int(self.to_snapshot, "to_snapshot"),
                                retry_key=self._retry_key)

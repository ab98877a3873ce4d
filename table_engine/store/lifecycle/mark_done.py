"""Mark partitions done (Paimon's ``mark_partition_done`` procedure): tell downstream jobs a partition is complete.

The table's ``partition.mark-done-action`` (comma-separated) says how. The engine does ``success-file``: the
partition directory gets Paimon's ``_SUCCESS`` file (:mod:`table_engine.format.success_file`), which the
partition sensor waits for. The other actions of Paimon are refused before anything is written, naming the action:
``done-partition`` and ``mark-event`` write to a metastore (the engine's catalog is a file system catalog without
one, so Paimon refuses them there too), ``http-report`` and ``custom`` are Java-side integrations. Marking a
partition done commits no snapshot; running it again converges (the file keeps its creation time and gets a new
modification time, as in Paimon).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from table_engine import clock
from table_engine.errors import OptionError, PartitionSpecError, UnsupportedError
from table_engine.format.success_file import write_success_file
from table_engine.store.context import StoreContext
from table_engine.store.partition_spec import PartitionSpecs, format_partition_text, partition_specs
from table_engine.store.reading.table_metadata import TableMetadata

__all__ = ["MARK_DONE_ACTIONS", "SUPPORTED_MARK_DONE_ACTIONS", "MarkDoneResult", "mark_done_actions",
           "mark_partitions_done"]

log = logging.getLogger(__name__)

SUCCESS_FILE_ACTION = "success-file"

MARK_DONE_ACTIONS: dict[str, str | None] = {
    SUCCESS_FILE_ACTION: None,
    "done-partition": "adds a '<partition>.done' partition to a metastore, and this catalog (a file system "
                      "catalog) has none",
    "mark-event": "marks a partition event in a metastore, and this catalog (a file system catalog) has none",
    "http-report": "reports to an HTTP server from Paimon's Java jobs; the engine does not",
    "custom": "runs a Java class (partition.mark-done-action.custom.class); the engine cannot",
}
"""Paimon's mark-done actions (``CoreOptions.PartitionMarkDoneAction``): None for those the engine performs, else
why it refuses them."""

SUPPORTED_MARK_DONE_ACTIONS = tuple(a for a, why in MARK_DONE_ACTIONS.items() if why is None)


@dataclass(frozen=True)
class MarkDoneResult:
    """The partitions marked done (``k=v,...`` text, in the order given) and the actions performed."""

    partitions: list[str]
    actions: list[str]


def mark_done_actions(ctx: StoreContext) -> list[str]:
    """The table's ``partition.mark-done-action`` list; an error naming the first action the engine cannot do."""
    actions = [a.strip().lower() for a in ctx.options.partition_mark_done_action() if a.strip()]
    if not actions:
        raise OptionError(f"partition.mark-done-action of {ctx.table_path} is empty: name an action, "
                          f"e.g. {SUCCESS_FILE_ACTION}")
    for action in actions:
        if action not in MARK_DONE_ACTIONS:
            raise OptionError(f"partition.mark-done-action of {ctx.table_path}: unknown action {action!r} "
                              f"(Paimon's: {', '.join(MARK_DONE_ACTIONS)})")
        why = MARK_DONE_ACTIONS[action]
        if why is not None:
            raise UnsupportedError(f"partition.mark-done-action {action!r} of {ctx.table_path} is not supported: "
                                   f"it {why}; nothing marked (supported: {', '.join(SUPPORTED_MARK_DONE_ACTIONS)})")
    return list(dict.fromkeys(actions))


def mark_partitions_done(ctx: StoreContext, partitions: PartitionSpecs) -> MarkDoneResult:
    """Mark each partition (every partition column given) done by the table's actions. Every spec and the actions
    are checked before anything is written: a bad spec or action leaves the table unchanged."""
    fields = ctx.schema.partition_fields()
    if not fields:
        raise PartitionSpecError(f"{ctx.table_path} is not partitioned: there is no partition to mark done")
    specs = partition_specs(partitions, fields, ctx.options.partition_default_name())
    if not specs:
        raise PartitionSpecError(f"mark-partition-done of {ctx.table_path} needs at least one partition spec")
    for spec in specs:
        if not spec.is_full:
            missing = [f.name for f in fields if f.name not in spec.as_dict()]
            raise PartitionSpecError(f"partition spec {format_partition_text(spec.as_dict(), spec.default_name)!r} "
                                     f"of {ctx.table_path} misses partition keys {missing}: a partition is marked "
                                     "done whole; nothing marked")
    actions = mark_done_actions(ctx)
    metadata = TableMetadata(ctx)
    paths = [metadata.partition_path(spec) for spec in specs]  # all computed before the first write
    now = clock.now_millis()
    for path in paths:
        write_success_file(ctx.file_io, path, now)
    texts = [format_partition_text(spec.as_dict(), spec.default_name) for spec in specs]
    log.info("%s: marked partitions %s done (%s)", ctx.table_path, texts, ", ".join(actions))
    return MarkDoneResult(texts, actions)

"""Which table takes which row-level change: decided here, once, before anything is read or written.

Primary-key tables follow Paimon's Spark rules (``RowLevelOp.checkValidity``, ``PrimaryKeyTableUtils
.validatePKUpsertDeletable``), which the merge engine registry holds
(:func:`~table_engine.lsm.merge_engines.registry.row_level_refusal`): a change that deletes rows needs
``partial-update.remove-record-on-delete`` (or ``partial-update.remove-record-on-sequence-group``) on partial-update
and ``aggregation.remove-record-on-delete`` on aggregation. Beyond Paimon, refused by name rather than done wrongly:

* ``ignore-delete``: the table drops the deletes, so a DELETE would silently do nothing;
* ``first-row`` deletes (Paimon rewrites the key's files; not built here);
* ``bucket`` = -2 (postpone): rows not yet in a bucket are invisible to the read a change starts from;
* append tables with row tracking, but a DELETE with deletion vectors (a rewritten file's rows cannot keep their
  row ids; ADR 0049); data-evolution tables take DELETE through their own deletes by row id, not UPDATE or MERGE;
* BLOB columns (a row's BLOB lives in another file).
"""

from __future__ import annotations

from table_engine.core_enums import RowLevelOp
from table_engine.core_options import BUCKET, DELETION_VECTORS_ENABLED, IGNORE_DELETE, CoreOptions
from table_engine.errors import UnsupportedError
from table_engine.format.schema_file import TableSchema
from table_engine.lsm.merge_engines.registry import row_level_refusal
from table_engine.store.reading.data_evolution import data_evolution_enabled

__all__ = ["check_row_level"]

_POSTPONE_BUCKET = -2


def check_row_level(schema: TableSchema, op: RowLevelOp, table: str, deletes: bool) -> None:
    """UnsupportedError (one line naming the table, the change and why) unless a table of ``schema`` takes ``op``;
    ``deletes``: the change may delete rows (a DELETE, a MERGE with a delete clause)."""
    opts = CoreOptions(schema.options)
    what = f"{op.value.upper()} on table {table}"
    if any(f.type.root == "BLOB" for f in schema.fields):
        raise UnsupportedError(f"{what}: tables with BLOB columns take no row-level changes here")
    if schema.primary_keys:
        _check_primary_key(opts, op, what, deletes)
        return
    if data_evolution_enabled(schema.options) and op is not RowLevelOp.DELETE:
        raise UnsupportedError(f"{what}: a data-evolution table is changed by row id (table.data_evolution"
                               ".update_by_row_id / upsert_by_key), not by {op.value.upper()}")
    if opts.row_tracking_enabled() and not (op is RowLevelOp.DELETE and opts.deletion_vectors_enabled()):
        raise UnsupportedError(f"{what}: with row-tracking.enabled only a DELETE with "
                               f"{DELETION_VECTORS_ENABLED.key} = true keeps every other row's row id (a rewritten "
                               "file's rows cannot keep theirs)")


def _check_primary_key(opts: CoreOptions, op: RowLevelOp, what: str, deletes: bool) -> None:
    if opts.get(BUCKET) == _POSTPONE_BUCKET:
        raise UnsupportedError(f"{what}: bucket = -2 (postpone): rows not yet compacted into a bucket are invisible "
                               "to the read a change starts from; compact the table first or use a real bucket")
    why = row_level_refusal(opts, op, deletes)
    if why is not None:
        raise UnsupportedError(f"{what}: {why}")
    if deletes and opts.get(IGNORE_DELETE):
        raise UnsupportedError(f"{what}: {IGNORE_DELETE.key} = true drops deletes, so the change would not delete")

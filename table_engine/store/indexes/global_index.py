"""Global indexes (Paimon 1.4+): index files over row ids (BTree, bitmap, vector, full text), listed in the index
manifest with ``_GLOBAL_INDEX`` metadata (the row range they cover, the indexed field id). See docs/global_index.md
and ADR 0019.

Row ids are stable under every rewrite the engine does (compaction, deletion vectors, file-index rewrite: ADR 0016),
so an index stays valid as long as the values of its columns do not change: commits carry its entries forward
unchanged, rows appended later are simply not covered. The one write that changes indexed values in place is an
update by row id of an indexed column; :func:`stale_index_entries` applies Paimon's
``global-index.column-update-action`` to it.

Reads use BTree indexes: :mod:`table_engine.store.reading.global_index_read`.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence

from table_engine.core_enums import GlobalIndexColumnUpdateAction
from table_engine.errors import UnsupportedError
from table_engine.format.index_manifest import GlobalIndexMeta, IndexManifestEntry
from table_engine.format.snapshot import Snapshot
from table_engine.io.paths import index_file_path
from table_engine.store.context import StoreContext
from table_engine.types import DataField

__all__ = ["global_index_entries", "index_file_path", "indexed_field_ids", "stale_index_entries"]


def global_index_entries(entries: Iterable[IndexManifestEntry]) -> list[IndexManifestEntry]:
    """The entries of ``entries`` that are global indexes (``_GLOBAL_INDEX`` set)."""
    return [e for e in entries if e.index_file.global_index is not None]


def indexed_field_ids(meta: GlobalIndexMeta) -> set[int]:
    """The ids of the fields an index covers: its indexed field and its extra fields."""
    return {meta.index_field_id, *(meta.extra_field_ids or ())}


def stale_index_entries(ctx: StoreContext, base: Snapshot | None, fields: Sequence[DataField],
                        partitions: Collection[bytes], action: str) -> list[IndexManifestEntry]:
    """The global-index entries of ``base`` that an update of ``fields`` in ``partitions`` (serialized) would make
    stale, to be deleted in the update's commit, as ``global-index.column-update-action`` says: THROW_ERROR (the
    default) raises :class:`~table_engine.errors.UnsupportedError` naming the columns and index files (before
    anything is written), DROP_PARTITION_INDEX returns them, IGNORE returns none (they stay, stale)."""
    mode = ctx.options.global_index_column_update_action()
    if mode is GlobalIndexColumnUpdateAction.IGNORE:
        return []
    ids = {f.id: f.name for f in fields}
    affected: list[IndexManifestEntry] = []
    cols: set[str] = set()
    for e in global_index_entries(ctx.index_entries(base)):
        meta = e.index_file.global_index
        hit = indexed_field_ids(meta) & ids.keys() if meta is not None and e.partition in partitions else set()
        if hit:
            affected.append(e)
            cols.update(ids[i] for i in hit)
    if affected and mode is GlobalIndexColumnUpdateAction.THROW_ERROR:
        raise UnsupportedError(
            f"{action} of table {ctx.table_path}: column(s) {sorted(cols)} are covered by global index file(s) "
            f"{sorted(e.index_file.file_name for e in affected)[:3]}; set 'global-index.column-update-action' to "
            f"DROP_PARTITION_INDEX (the update drops those indexes) or IGNORE (they stay, stale)")
    return affected


"""The table facade: write, commit, scan, read, time travel, maintenance and schema evolution of one table.

:class:`Table` holds what Java's ``Table`` holds (data, metadata, tags, branches, ``rollback_to``,
``expire_snapshots``) and Paimon's maintenance procedures in one namespace, ``table.maintenance``; its implementation
is grouped by surface, one module each (docs/adr/0043-table-shape.md, superseding 0006).
"""

from __future__ import annotations

from table_engine.table.base import TableBase, is_mutating, mutating
from table_engine.table.branches import BranchSurface
from table_engine.table.maintenance import MaintenanceSurface, TableMaintenance
from table_engine.table.metadata import MetadataSurface
from table_engine.table.reading import ReadSurface
from table_engine.table.tags import TagSurface
from table_engine.table.writing import RowKinds, WriteSurface

__all__ = ["BranchSurface", "MaintenanceSurface", "MetadataSurface", "ReadSurface", "RowKinds", "Table", "TableBase",
           "TableMaintenance", "TagSurface", "WriteSurface", "is_mutating", "mutating"]


class Table(ReadSurface, TagSurface, BranchSurface, MetadataSurface, MaintenanceSurface, WriteSurface):
    """A Paimon table at ``path``. Cheap to create; reads metadata on demand. As Java's ``Table``, it holds data,
    metadata, tags and branches; Paimon's maintenance procedures are in the :attr:`maintenance` namespace
    (docs/adr/0043-table-shape.md). Its surfaces:

    - base (:mod:`~table_engine.table.base`): ``identifier``, ``path``, ``file_io``, ``store``, ``source``,
      ``schema``, ``options``, ``primary_keys``, ``partition_keys``, ``arrow_schema``, ``refresh``, ``alter``,
      ``copy``, ``read_only``, ``check_supported``.
    - read (:mod:`~table_engine.table.reading`): ``read``, ``to_batches``, ``plan``, ``new_read``,
      ``resolve_snapshot``, ``scan_snapshot``, ``new_stream_scan``, ``changelog_consumer``, ``read_optimized_view``,
      ``row_tracking_view``, ``plan_with_fallback``.
    - write (:mod:`~table_engine.table.writing`): ``write``, ``new_write``, ``new_commit``, ``commit``,
      ``update_by_row_id``, ``upsert_by_key``, ``delete_by_row_id``, ``delete_by_predicate``,
      ``commit_maintenance``.
    - maintenance (:mod:`~table_engine.table.maintenance`): ``expire_snapshots``, ``rollback_to``, ``maintenance``
      (:class:`TableMaintenance`: ``compact``, ``compact_manifest``, ``expire_changelogs``, ``expire_partitions``,
      ``drop_partitions``, ``mark_partitions_done``, ``rescale``, ``remove_orphan_files``,
      ``remove_unexisting_files``, ``repair``, ``rewrite_file_index``, ``create_tag_from_timestamp``,
      ``expire_tags``, ``create_auto_tags``, ``reset_consumer``, ``clear_consumers``, ``health``,
      ``after_commit``).
    - tags (:mod:`~table_engine.table.tags`): ``create_tag``, ``replace_tag``, ``rename_tag``, ``delete_tag``,
      ``list_tags``, ``tags``, ``tag_snapshot``, ``tag_manager``.
    - metadata (:mod:`~table_engine.table.metadata`): ``snapshot``, ``snapshots``, ``latest_snapshot``,
      ``latest_snapshot_id``, ``earliest_snapshot_id``, ``metadata``, ``consumers``, ``consumer_manager``.
    - branches (:mod:`~table_engine.table.branches`): ``branch``, ``create_branch``, ``delete_branch``,
      ``rename_branch``, ``fast_forward``, ``list_branches``, ``branches``, ``branch_table``, ``branch_manager``.

    Every method that changes the table is :func:`mutating` with its operation: on a read-only table (a system
    table, ``$ro``) it raises :class:`~table_engine.errors.ReadOnlyTableError` before doing anything, and on a
    table with a feature the engine cannot write or maintain :class:`~table_engine.errors.UnsupportedTableFeatureError`
    (the capability gate; reads check it too: docs/compatibility.md).
    """

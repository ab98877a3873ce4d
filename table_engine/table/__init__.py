"""The table facade: write, commit, scan, read, time travel, maintenance and schema evolution of one table.

:class:`Table` keeps Paimon's flat Table API (one object, ``create_tag``, ``rollback_to``, ``expire_snapshots``...);
its implementation is grouped by surface, one module each (docs/adr/0006-table-facade.md explains why).
"""

from __future__ import annotations

from table_engine.table.base import TableBase, is_mutating, mutating
from table_engine.table.branches import BranchSurface
from table_engine.table.maintenance import MaintenanceSurface
from table_engine.table.metadata import MetadataSurface
from table_engine.table.reading import ReadSurface
from table_engine.table.tags import TagSurface
from table_engine.table.writing import RowKinds, WriteSurface

__all__ = ["BranchSurface", "MaintenanceSurface", "MetadataSurface", "ReadSurface", "RowKinds", "Table", "TableBase",
           "TagSurface", "WriteSurface", "is_mutating", "mutating"]


class Table(ReadSurface, TagSurface, BranchSurface, MetadataSurface, MaintenanceSurface, WriteSurface):
    """A Paimon table at ``path``. Cheap to create; reads metadata on demand. Its surfaces:

    - base (:mod:`~table_engine.table.base`): ``identifier``, ``path``, ``file_io``, ``source``, ``schema``,
      ``options``, ``primary_keys``, ``partition_keys``, ``arrow_schema``, ``refresh``, ``schema_by_id``, ``alter``,
      ``copy``, ``read_only``, ``check_supported``.
    - read (:mod:`~table_engine.table.reading`): ``read``, ``to_batches``, ``plan``, ``new_read``,
      ``resolve_snapshot``, ``scan_snapshot``, ``new_stream_scan``, ``changelog_consumer``, ``read_optimized_view``,
      ``row_tracking_view``, ``plan_with_fallback``.
    - write (:mod:`~table_engine.table.writing`): ``write``, ``new_write``, ``new_commit``, ``commit``,
      ``update_by_row_id``, ``upsert_by_key``, ``delete_by_row_id``, ``delete_by_predicate``, ``maintain``,
      ``commit_maintenance``.
    - maintenance (:mod:`~table_engine.table.maintenance`): ``compact``, ``compact_manifest``,
      ``expire_snapshots``, ``expire_changelogs``, ``expire_partitions``, ``drop_partitions``,
      ``mark_partitions_done``, ``rescale``, ``remove_orphan_files``, ``remove_unexisting_files``, ``repair``,
      ``rollback_to``, ``rewrite_file_index``.
    - tags (:mod:`~table_engine.table.tags`): ``create_tag``, ``create_tag_from_timestamp``, ``replace_tag``,
      ``rename_tag``, ``delete_tag``, ``expire_tags``, ``create_auto_tags``, ``list_tags``, ``tags``,
      ``tag_snapshot``, ``tag_manager``.
    - metadata (:mod:`~table_engine.table.metadata`): ``snapshot``, ``snapshots``, ``latest_snapshot``,
      ``latest_snapshot_id``, ``earliest_snapshot_id``, ``metadata``, ``health``, ``consumers``, ``consumer_manager``,
      ``reset_consumer``, ``clear_consumers``.
    - branches (:mod:`~table_engine.table.branches`): ``branch``, ``create_branch``, ``delete_branch``,
      ``rename_branch``, ``fast_forward``, ``list_branches``, ``branches``, ``branch_exists``, ``branch_table``,
      ``branch_manager``.

    Every method that writes to the table is :func:`mutating`: on a read-only table (a system table, ``$ro``) it
    raises :class:`~table_engine.errors.ReadOnlyTableError` before doing anything, and on a table with a feature the
    engine cannot write or maintain :class:`~table_engine.errors.UnsupportedTableFeatureError` (the capability
    gate; reads check it too: docs/compatibility.md).
    """

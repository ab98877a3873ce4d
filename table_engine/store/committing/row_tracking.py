"""Row tracking at commit time (``row-tracking.enabled``, Paimon 1.3): row ids and sequence numbers of new files.

Paimon assigns them in the commit attempt, on top of the snapshot the attempt builds on, so that two concurrent
writers never hand out overlapping row ids (the loser of the race retries on the winner's ``nextRowId``):

* every ADD entry whose sequence numbers are still pending (``_MIN_SEQUENCE_NUMBER`` = 0) gets the new snapshot id
  (both bounds; only the maximum if just that is 0), so that ``_SEQUENCE_NUMBER`` of its rows is the snapshot id;
* every ADD entry of a file written by a write (``_FILE_SOURCE`` = APPEND) without a ``_FIRST_ROW_ID`` gets the
  next free row id, in entry order (grouped by partition with ``row-tracking.partition-group-on-commit``), and
  the snapshot's ``nextRowId`` moves past them. Files written by compaction carry the ids of the rows they hold.
  A ``.blob`` file (a BLOB column of the rows of the data file before it, ADR 0018) takes no new ids: it gets the
  next ids of its column within the range of the last data file, so rolled ``.blob`` files of one column get
  consecutive ranges that tile the data file's (Paimon's ``assignRowTrackingMeta``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from table_engine.errors import CorruptMetadataError
from table_engine.format.data_file_meta import FileSource
from table_engine.format.manifest import FileKind, ManifestEntry
from table_engine.format.snapshot import Snapshot
from table_engine.store.reading.data_evolution import is_blob_file
from table_engine.store.reading.row_tracking import ROW_ID

__all__ = ["assign_row_tracking", "next_row_id_start"]


def next_row_id_start(latest: Snapshot | None) -> int:
    """The first row id a commit on top of ``latest`` may hand out."""
    if latest is None or latest.next_row_id is None:
        return 0
    return latest.next_row_id


def _with_snapshot_id(entry: ManifestEntry, snapshot_id: int) -> ManifestEntry:
    f = entry.file
    if f.min_sequence_number == 0:
        f = dataclasses.replace(f, min_sequence_number=snapshot_id, max_sequence_number=snapshot_id)
    elif f.max_sequence_number == 0:
        f = dataclasses.replace(f, max_sequence_number=snapshot_id)
    else:
        return entry
    return dataclasses.replace(entry, file=f)


def _needs_row_id(entry: ManifestEntry) -> bool:
    f = entry.file
    return (entry.kind == FileKind.ADD and f.file_source == FileSource.APPEND and f.first_row_id is None
            and not (f.write_cols is not None and ROW_ID in f.write_cols))


def assign_row_tracking(snapshot_id: int, start: int, entries: Sequence[ManifestEntry],
                        group_by_partition: bool = False) -> tuple[list[ManifestEntry], int]:
    """The entries with sequence numbers and row ids assigned, and the snapshot's new ``nextRowId``."""
    out = [_with_snapshot_id(e, snapshot_id) if e.kind == FileKind.ADD else e for e in entries]
    if group_by_partition:
        order: dict[bytes, list[ManifestEntry]] = {}
        for e in out:
            order.setdefault(e.partition, []).append(e)
        out = [e for group in order.values() for e in group]
    result: list[ManifestEntry] = []
    blob_default = start
    blob_starts: dict[str, int] = {}
    for e in out:
        if not _needs_row_id(e):
            result.append(e)
        elif is_blob_file(e.file.file_name):
            column = (e.file.write_cols or [""])[0]
            first = blob_starts.get(column, blob_default)
            if first + e.file.row_count > start:
                raise CorruptMetadataError(f"blob file {e.file.file_name} of column {column!r} has rows past the "
                                           f"data file it belongs to (row ids {first}..{start - 1})")
            result.append(dataclasses.replace(e, file=dataclasses.replace(e.file, first_row_id=first)))
            blob_starts[column] = first + e.file.row_count
        else:
            result.append(dataclasses.replace(e, file=dataclasses.replace(e.file, first_row_id=start)))
            blob_default = start
            blob_starts.clear()
            start += e.file.row_count
    return result, start

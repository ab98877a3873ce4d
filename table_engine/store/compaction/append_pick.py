"""Which files of an append table to compact together: pure functions of file metadata and options (no IO).

Two modes, as in Paimon:

* **Fixed buckets** (``bucket`` > 0), Paimon's ``BucketedAppendCompactManager``: files are ordered by sequence number
  and only *consecutive* files are compacted together, so the rows of a bucket keep their write order.
  :func:`pick_bucketed` slides a window over the ordered files: it grows it by one file at a time; as soon as it holds
  ``compaction.min.file-num`` files it is a group; while it is shorter but already reaches ``target-file-size`` its
  first file is dropped (it is big enough to stay). A *full* compaction skips the leading files that are at least
  ``target-file-size`` (and have no deletion vector) and rewrites everything after them: with deletion vectors
  always, else when small files outnumber big ones and there are at least 3.
* **Unaware bucket** (``bucket`` = -1), Paimon's ``AppendCompactCoordinator``, per partition: candidates are files
  smaller than ``target-file-size`` x ``compaction.small-file-ratio`` and, with deletion vectors, files whose deleted
  rows exceed ``compaction.delete-ratio-threshold`` of their rows. Candidates are packed smallest first into bins
  (each file counting its size plus ``source.split.open-file-cost``); a bin of at least two files that reaches twice
  ``target-file-size`` is a group, and the last bin is one when it holds ``compaction.min.file-num`` files. With
  deletion vectors, the files that have one are packed first and always compacted (the last bin too); the other
  candidates are packed as above. A full compaction also compacts a last bin of two or more files.

A group never has fewer than two files unless a file of it has deleted rows (rewriting it drops them), no file is in
two groups, and groups keep the input order of their files (by sequence number for fixed buckets).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from table_engine.format.data_file_meta import DataFileMeta

__all__ = ["FULL_COMPACT_MIN_FILE", "AppendPickOptions", "pick_append", "pick_bucketed", "pick_unaware"]

FULL_COMPACT_MIN_FILE = 3
"""A full compaction of a fixed bucket without deletion vectors needs at least this many files (Paimon's value)."""

Group = tuple[DataFileMeta, ...]


@dataclass(frozen=True)
class AppendPickOptions:
    """The options that decide append compaction, resolved."""

    target_file_size: int
    """``target-file-size`` (default 256 mb for append tables)."""
    compaction_file_size: int
    """``target-file-size`` x ``compaction.small-file-ratio``: smaller files are compaction candidates (unaware)."""
    min_file_num: int = 5
    """``compaction.min.file-num``."""
    delete_ratio_threshold: float = 0.2
    """``compaction.delete-ratio-threshold``."""
    open_file_cost: int = 4 * 1024 * 1024
    """``source.split.open-file-cost``: added to each file's size when packing (unaware)."""
    deletion_vectors: bool = False
    """``deletion-vectors.enabled``."""


def pick_append(files: Sequence[DataFileMeta], opts: AppendPickOptions, bucketed: bool, full: bool = False,
                deleted: Mapping[str, int] | None = None) -> list[Group]:
    """The groups to compact of one bucket (``bucketed``) or of one partition of an unaware-bucket table.
    ``deleted``: file name -> rows its deletion vector marks (files without one are absent)."""
    deleted = deleted or {}
    if bucketed:
        return pick_bucketed(files, opts, full, deleted)
    return pick_unaware(files, opts, full, deleted)


def _by_sequence(files: Sequence[DataFileMeta]) -> list[DataFileMeta]:
    return sorted(files, key=lambda f: (f.min_sequence_number, f.max_sequence_number, f.file_name))


def pick_bucketed(files: Sequence[DataFileMeta], opts: AppendPickOptions, full: bool = False,
                  deleted: Mapping[str, int] | None = None) -> list[Group]:
    """Groups of consecutive files (by sequence number) of one fixed bucket."""
    deleted = deleted or {}
    ordered = _by_sequence(files)
    if full:
        return _full_bucketed(ordered, opts, deleted)
    groups: list[Group] = []
    queue = ordered
    while True:
        group, queue = _window(queue, opts)
        if group is None:
            return groups
        groups.append(group)


def _window(queue: list[DataFileMeta], opts: AppendPickOptions) -> tuple[Group | None, list[DataFileMeta]]:
    """One pick of the sliding window: (the group, the files after it) or (None, [])."""
    start = 0
    total = 0
    min_files = max(1, opts.min_file_num)
    for end, f in enumerate(queue, start=1):
        total += f.file_size
        if end - start >= min_files:
            return tuple(queue[start:end]), queue[end:]
        if total >= opts.target_file_size:  # the window is already big: its first file stays as it is
            total -= queue[start].file_size
            start += 1
    return None, []


def _full_bucketed(ordered: list[DataFileMeta], opts: AppendPickOptions, deleted: Mapping[str, int]) -> list[Group]:
    if not ordered or (not opts.deletion_vectors and len(ordered) < FULL_COMPACT_MIN_FILE):
        return []
    first = 0
    while first < len(ordered) and ordered[first].file_size >= opts.target_file_size \
            and not deleted.get(ordered[first].file_name):
        first += 1
    rest = ordered[first:]
    if not rest:
        return []
    if opts.deletion_vectors:
        if len(rest) == 1 and not deleted.get(rest[0].file_name):
            return []  # one file, nothing deleted: rewriting it would change nothing
        return [tuple(rest)]
    big = sum(1 for f in rest if f.file_size >= opts.target_file_size)
    if len(rest) - big > big and len(rest) >= FULL_COMPACT_MIN_FILE:
        return [tuple(rest)]
    return []


def pick_unaware(files: Sequence[DataFileMeta], opts: AppendPickOptions, full: bool = False,
                 deleted: Mapping[str, int] | None = None) -> list[Group]:
    """Groups of one partition of an unaware-bucket append table (each group in sequence order)."""
    deleted = deleted or {}
    candidates = [f for f in files if f.file_size < opts.compaction_file_size or _too_many_deleted(f, opts, deleted)]
    if opts.deletion_vectors:
        with_dv = [f for f in candidates if deleted.get(f.file_name)]
        rest = [f for f in candidates if not deleted.get(f.file_name)]
        groups = _pack(with_dv, opts, keep_last=lambda bin_: bool(bin_))
        if len(rest) > 1:
            groups += _pack(rest, opts, keep_last=lambda bin_: _last_bin_ok(bin_, opts, full))
    else:
        groups = _pack(candidates, opts, keep_last=lambda bin_: _last_bin_ok(bin_, opts, full))
    return [tuple(_by_sequence(g)) for g in groups]


def _too_many_deleted(f: DataFileMeta, opts: AppendPickOptions, deleted: Mapping[str, int]) -> bool:
    n = deleted.get(f.file_name)
    return opts.deletion_vectors and n is not None and n > f.row_count * opts.delete_ratio_threshold


def _last_bin_ok(bin_: list[DataFileMeta], opts: AppendPickOptions, full: bool) -> bool:
    return len(bin_) >= max(1, opts.min_file_num) or (full and len(bin_) >= 2)


def _pack(files: list[DataFileMeta], opts: AppendPickOptions,
          keep_last: Callable[[list[DataFileMeta]], bool]) -> list[list[DataFileMeta]]:
    """Smallest first into bins; a bin of 2+ files reaching twice the target size is a group."""
    out: list[list[DataFileMeta]] = []
    bin_: list[DataFileMeta] = []
    total = 0
    for f in sorted(files, key=lambda x: (x.file_size, x.min_sequence_number, x.file_name)):
        bin_.append(f)
        total += f.file_size + opts.open_file_cost
        if len(bin_) > 1 and total >= 2 * opts.target_file_size:
            out.append(bin_)
            bin_, total = [], 0
    if bin_ and keep_last(bin_):
        out.append(bin_)
    return out

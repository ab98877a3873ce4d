"""Executing a :class:`CompactUnit`: upgrade files that need no rewrite, merge and rewrite the others.

The rules are Paimon's ``MergeTreeCompactTask`` / ``FileRewriteCompactTask``:

* the unit's files are split into key-disjoint sections (:func:`interval_partition`); a section of several sorted
  runs is merged; in a section of one run, files of at least ``min_file_size`` (target-file-size x
  ``compaction.small-file-ratio``) are *upgraded* (same file, new level), smaller ones are rewritten together with
  their neighbours; a lone run left over is upgraded too;
* a file is rewritten instead of upgraded when it would reach the max level holding -U/-D records (or an unknown
  count of them), when it holds record-level-expired records, or with ``compaction.force-rewrite-all-files``; a file
  already at the output level stays as it is unless one of the last two applies;
* rewriting reads each file (dropping expired records), merges with the table's merge function (the one the write
  buffer and merge-on-read use), drops -U/-D records only when ``drop_delete`` (the output is the oldest data of the
  bucket: see the compaction manager), and writes files at the output level.

File reading and writing are injected (``read_file``, ``write_files``), so this module does no I/O of its own.
So is an optional :class:`LevelLookup` (lookup compaction, e.g. deletion vectors): a section holding level-0 files
that goes to a level above 0 is handed to it after merging, and a level-0 file is upgraded only if it agrees.
A :class:`~table_engine.lsm.compaction.changelog.ChangelogHook` (``changelog-producer`` lookup / full-compaction)
sees every merged section (before the level lookup and drop-delete) and every upgraded file, may demand a rewrite
instead of an upgrade, and writes the compaction's changelog files at the end.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import pyarrow as pa

from table_engine.format.data_file_meta import DataFileMeta
from table_engine.lsm.compaction.changelog import ChangelogHook
from table_engine.lsm.compaction.expire import RecordLevelExpire
from table_engine.lsm.compaction.universal import CompactUnit
from table_engine.lsm.key_value import VALUE_KIND, is_add
from table_engine.lsm.levels import KeyCodec, SortedRun, interval_partition
from table_engine.lsm.merge_engines.function import MergeFunction, sort_and_merge
from table_engine.lsm.sort import MergeOrder, concat_tables
from table_engine.lsm.streaming_merge import FileRoller, streaming_merge

#: reads one data file as key-value rows: every value column + ``_SEQUENCE_NUMBER`` + ``_VALUE_KIND``
ReadFile = Callable[[DataFileMeta], pa.Table]
#: writes key-value rows sorted by key (unique keys) as files at a level; returns their metadata
WriteFiles = Callable[[pa.Table, int], list[DataFileMeta]]
#: reads one data file as :data:`ReadFile` does, in chunks of bounded size (in key order)
ReadChunks = Callable[[DataFileMeta], Iterator[pa.Table]]


@dataclass(frozen=True)
class Streaming:
    """Rewrite by streaming: sorted runs are read chunk by chunk and merged with
    :func:`~table_engine.lsm.streaming_merge.streaming_merge`, output files are written (rolled at
    ``target_file_size`` of Arrow data) as they fill, so memory does not grow with the unit. Used when the rewriter
    has no level lookup and no changelog hook (those still read whole sections into memory)."""

    read_chunks: ReadChunks
    target_file_size: int


class LevelLookup(Protocol):
    """Lookup compaction, injected by the store layer (Paimon's ``LookupMergeTreeCompactRewriter``)."""

    def lookup_merged(self, output_level: int, files: Sequence[DataFileMeta], tables: Sequence[pa.Table],
                      merged: pa.Table) -> pa.Table:
        """A merged section (``files``, read as ``tables``) with level-0 records goes to ``output_level`` > 0:
        look its level-0-only keys up above ``output_level``; returns the rows to write (before drop-delete)."""
        ...

    def upgrade(self, output_level: int, f: DataFileMeta) -> bool:
        """Level-0 file ``f`` would be upgraded to ``output_level`` > 0: do its lookups and return True, or return
        False when it must be rewritten instead."""
        ...


@dataclass
class CompactResult:
    """Files a compaction removes (``before``) and adds (``after``); an upgraded file is in both, at two levels."""

    before: list[DataFileMeta] = field(default_factory=list)
    after: list[DataFileMeta] = field(default_factory=list)
    changelog: list[DataFileMeta] = field(default_factory=list)
    """Changelog files the compaction produced (``changelog-producer`` lookup / full-compaction)."""

    def merge(self, other: CompactResult) -> None:
        self.before.extend(other.before)
        self.after.extend(other.after)
        self.changelog.extend(other.changelog)

    def is_empty(self) -> bool:
        return not self.before and not self.after


class CompactRewriter:
    """Runs compact units of one bucket."""

    def __init__(self, codec: KeyCodec, read_file: ReadFile, write_files: WriteFiles, merge_function: MergeFunction,
                 order: MergeOrder, min_file_size: int, max_level: int, expire: RecordLevelExpire | None = None,
                 force_rewrite_all: bool = False, lookup: LevelLookup | None = None,
                 changelog: ChangelogHook | None = None, streaming: Streaming | None = None) -> None:
        self.codec = codec
        self.streaming = streaming if lookup is None and changelog is None else None
        self.lookup = lookup
        self.changelog = changelog
        self.read_file = read_file
        self.write_files = write_files
        self.merge_function = merge_function
        self.order = order
        self.min_file_size = min_file_size
        self.max_level = max_level
        self.expire = expire
        self.force_rewrite_all = force_rewrite_all

    def compact(self, unit: CompactUnit, drop_delete: bool) -> CompactResult:
        if unit.file_rewrite:
            result = CompactResult()
            for f in unit.files:
                result.merge(self.rewrite(unit.output_level, drop_delete, [[SortedRun.of(f)]]))
        else:
            result = _MergeTreeTask(self, unit.output_level, drop_delete).run(unit.files)
        if self.changelog is not None:
            result.changelog.extend(self.changelog.finish(unit.output_level))
        return result

    def rewrite(self, output_level: int, drop_delete: bool, sections: Sequence[Sequence[SortedRun]],
                with_changelog: bool = True) -> CompactResult:
        """Merge sections (key-disjoint, in key order) into new files at ``output_level``."""
        if self.streaming is not None:
            return self._rewrite_streaming(self.streaming, output_level, drop_delete, sections)
        merged: list[pa.Table] = []
        before: list[DataFileMeta] = []
        for section in sections:
            files = [f for run in section for f in run.files]
            before += files
            tables = [self._read(f) for f in files]
            kv = concat_tables(tables) if tables else None
            if kv is None or kv.num_rows == 0:
                continue
            if len(section) > 1:  # one run holds unique keys in key order already
                kv = sort_and_merge(kv, self.order, self.merge_function)
            if self.changelog is not None and with_changelog:
                self.changelog.on_section(output_level, files, tables, kv)
            if self.lookup is not None and output_level > 0 and any(f.level == 0 for f in files):
                kv = self.lookup.lookup_merged(output_level, files, tables, kv)
            merged.append(kv)
        out = concat_tables(merged) if merged else None
        if out is not None and drop_delete:
            out = out.filter(is_add(out.column(VALUE_KIND)))
        after = self.write_files(out, output_level) if out is not None and out.num_rows else []
        return CompactResult(before, after)

    def _rewrite_streaming(self, streaming: Streaming, output_level: int, drop_delete: bool,
                           sections: Sequence[Sequence[SortedRun]]) -> CompactResult:
        before: list[DataFileMeta] = []
        roller: FileRoller[DataFileMeta] = FileRoller(lambda t: self.write_files(t, output_level),
                                                      streaming.target_file_size)
        for section in sections:
            before += [f for run in section for f in run.files]
            runs = [self._run_chunks(streaming, run) for run in section]
            fn = self.merge_function if len(section) > 1 else None  # one run holds unique keys in key order
            for piece in streaming_merge(runs, self.order, fn):
                if drop_delete:
                    piece = piece.filter(is_add(piece.column(VALUE_KIND)))
                roller.add(piece)
        return CompactResult(before, roller.finish())

    def _run_chunks(self, streaming: Streaming, run: SortedRun) -> Iterator[pa.Table]:
        for f in run.files:
            for chunk in streaming.read_chunks(f):
                yield self.expire.filter(chunk) if self.expire is not None else chunk

    def upgrade(self, output_level: int, f: DataFileMeta) -> CompactResult:
        return CompactResult([f], [dataclasses.replace(f, level=output_level)])

    def has_expired_records(self, f: DataFileMeta) -> bool:
        return self.expire is not None and self.expire.is_expire_file(f)

    def _read(self, f: DataFileMeta) -> pa.Table:
        kv = self.read_file(f)
        return self.expire.filter(kv) if self.expire is not None else kv


class _MergeTreeTask:
    """One unit: sections with several runs are merged, large lone files upgraded, small ones rewritten."""

    def __init__(self, rw: CompactRewriter, output_level: int, drop_delete: bool) -> None:
        self.rw = rw
        self.output_level = output_level
        self.drop_delete = drop_delete
        self.result = CompactResult()

    def run(self, files: Sequence[DataFileMeta]) -> CompactResult:
        candidate: list[list[SortedRun]] = []
        for section in interval_partition(files, self.rw.codec):
            if len(section) > 1:
                candidate.append(list(section))
                continue
            for f in section[0].files:
                if f.file_size < self.rw.min_file_size:
                    candidate.append([SortedRun.of(f)])  # small: rewritten with its neighbours
                else:
                    self._rewrite(candidate)
                    self._upgrade(f)
        self._rewrite(candidate)
        return self.result

    def _upgrade(self, f: DataFileMeta) -> None:
        rw = self.rw
        must_rewrite = rw.force_rewrite_all or rw.has_expired_records(f)
        if f.level == self.output_level:
            if must_rewrite:
                self._rewrite_file(f)
            return
        if self.output_level != rw.max_level or f.delete_row_count == 0:
            if must_rewrite:
                self._rewrite_file(f)
            else:
                self._plain_upgrade(f)
        else:  # -U/-D records never reach the max level by an upgrade
            self._rewrite_file(f)

    def _plain_upgrade(self, f: DataFileMeta) -> None:
        lookup, changelog = self.rw.lookup, self.rw.changelog
        if changelog is not None:
            if changelog.needs_rewrite(self.output_level, f):
                self._rewrite_file(f)
                return
            changelog.on_upgrade(self.output_level, f)  # before the level lookup changes what lies above
        if lookup is not None and f.level == 0 and self.output_level > 0 and not lookup.upgrade(self.output_level, f):
            # rewritten after all; its changelog is recorded already
            self.result.merge(self.rw.rewrite(self.output_level, self.drop_delete, [[SortedRun.of(f)]],
                                              with_changelog=False))
        else:
            self.result.merge(self.rw.upgrade(self.output_level, f))

    def _rewrite(self, candidate: list[list[SortedRun]]) -> None:
        if not candidate:
            return
        if len(candidate) == 1 and len(candidate[0]) == 1:  # nothing to merge with: upgrade instead
            files = candidate[0][0].files
            candidate.clear()
            for f in files:
                self._upgrade(f)
            return
        self.result.merge(self.rw.rewrite(self.output_level, self.drop_delete, candidate))
        candidate.clear()

    def _rewrite_file(self, f: DataFileMeta) -> None:
        self.result.merge(self.rw.rewrite(self.output_level, self.drop_delete, [[SortedRun.of(f)]]))

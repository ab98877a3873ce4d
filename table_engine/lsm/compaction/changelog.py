"""Changelog producers that work at compaction time (pure: file reading and writing are injected).

:class:`LookupChangelog` (``changelog-producer = lookup``, Paimon's ``LookupMergeTreeCompactRewriter``): when a
compaction moves records out of level 0 (output level above 0; lookup tables always push level 0 up), each key
with level-0 records gets a changelog from its value before the compaction to its value after it. The value before
is the merge of the key's records outside level 0 -- those in the compacted section and those found by looking the
key up in the levels above the output level -- and the value after merges the level-0 records in as well. Data
files keep the ordinary LSM layout (each level holds merged partial results), so every reader merges them as
usual; the old and new *full* values are what the changelog carries, for every merge engine (first-row: ``+I``
for new keys only). A level-0 file is upgraded without rewriting (its changelog still produced) where Paimon
allows it: deduplicate without ``sequence.field``, or the max level; else it is rewritten.

:class:`FullCompactionChangelog` (``changelog-producer = full-compaction``, Paimon's
``FullChangelogMergeTreeCompactRewriter``): only full compactions write the max level, so a compaction whose
output level is the max level compares, for each key with records below the max level, the key's previous
max-level record (the result of the previous full compaction) with the new merged result. A file upgraded to the
max level gives ``+I`` rows.

Both collect the changelog of all sections of one compaction and write it, in key order, as changelog files at
the output level when the compaction finishes (:meth:`finish`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

import pyarrow as pa

from table_engine.format.data_file_meta import DataFileMeta
from table_engine.lsm.changelog import changelog_rows
from table_engine.lsm.levels import KeyCodec, Levels
from table_engine.lsm.lookup import find_keys_above, keys_not_in
from table_engine.lsm.merge_engines.function import MergeFunction, sort_and_merge
from table_engine.lsm.sort import MergeOrder, concat_tables, sort_indices

__all__ = ["ChangelogHook", "FullCompactionChangelog", "LookupChangelog"]

#: reads one data file as key-value rows (every value column + ``_SEQUENCE_NUMBER`` + ``_VALUE_KIND``)
ReadFile = Callable[[DataFileMeta], pa.Table]
#: writes changelog rows (sorted by key) as changelog files at a level; returns their metadata
WriteChangelog = Callable[[pa.Table, int], list[DataFileMeta]]


class ChangelogHook(Protocol):
    """What :class:`~table_engine.lsm.compaction.rewriter.CompactRewriter` tells a changelog producer."""

    def needs_rewrite(self, output_level: int, f: DataFileMeta) -> bool:
        """Whether ``f`` must be rewritten rather than upgraded to ``output_level`` (no side effects)."""
        ...

    def on_upgrade(self, output_level: int, f: DataFileMeta) -> None:
        """``f`` is upgraded to ``output_level`` without rewriting: record its changelog."""
        ...

    def on_section(self, output_level: int, files: Sequence[DataFileMeta], tables: Sequence[pa.Table],
                   merged: pa.Table) -> None:
        """A section (``files`` read as ``tables``) was merged into ``merged`` (before drop-delete)."""
        ...

    def finish(self, output_level: int) -> list[DataFileMeta]:
        """Write the changelog collected since the last call; the changelog files."""
        ...


class _Collector:
    def __init__(self, key_names: Sequence[str], write_changelog: WriteChangelog) -> None:
        self.key_names = list(key_names)
        self.write_changelog = write_changelog
        self.parts: list[pa.Table] = []

    def collect(self, rows: pa.Table) -> None:
        if rows.num_rows:
            self.parts.append(rows)

    def finish(self, output_level: int) -> list[DataFileMeta]:
        parts, self.parts = self.parts, []
        if not parts:
            return []
        rows = concat_tables([p.cast(parts[0].schema) for p in parts])
        rows = rows.take(sort_indices(rows, [(k, "ascending") for k in self.key_names]))  # stable
        return self.write_changelog(rows, output_level)


def _rows_with_keys(t: pa.Table, keys: pa.Table, key_names: Sequence[str]) -> pa.Table:
    """Rows of ``t`` whose key occurs in ``keys``."""
    if t.num_rows == 0 or keys.num_rows == 0:
        return t.slice(0, 0)
    return t.filter(pa.array(~keys_not_in(t, [keys], key_names)))


class LookupChangelog(_Collector):
    """``changelog-producer = lookup`` for the compactions of one bucket (``levels``: the bucket before)."""

    def __init__(self, levels: Levels, read_file: ReadFile, write_changelog: WriteChangelog,
                 merge_function: MergeFunction, order: MergeOrder, codec: KeyCodec, *,
                 compare: Sequence[str] | None, insert_only: bool, newest_wins: bool) -> None:
        super().__init__(order.key_cols, write_changelog)
        self.levels = levels
        self.read_file = read_file
        self.merge_function = merge_function
        self.order = order
        self.codec = codec
        self.compare = compare
        self.insert_only = insert_only  # the merge engine's changelog is insert-only (first-row)
        self.newest_wins = newest_wins  # deduplicate without sequence.field: the newest record is the value

    def needs_rewrite(self, output_level: int, f: DataFileMeta) -> bool:
        if f.level != 0 or output_level == 0:
            return False
        return not (self.newest_wins or output_level >= self.levels.max_level)

    def on_upgrade(self, output_level: int, f: DataFileMeta) -> None:
        if f.level == 0 and output_level > 0:
            t = self.read_file(f)
            self.on_section(output_level, [f], [t], t)

    def on_section(self, output_level: int, files: Sequence[DataFileMeta], tables: Sequence[pa.Table],
                   merged: pa.Table) -> None:
        if output_level == 0 or merged.num_rows == 0:
            return
        level0 = [t for f, t in zip(files, tables) if f.level == 0]
        if not level0:
            return
        changed = merged.filter(pa.array(~keys_not_in(merged, level0, self.key_names)))
        if changed.num_rows == 0:
            return
        above = self._lookup_above(output_level, changed)
        old_parts = [_rows_with_keys(t, changed, self.key_names) for f, t in zip(files, tables) if f.level > 0]
        if above is not None:
            above = above.select(changed.column_names).cast(changed.schema)
            old_parts.append(above)
        old_parts = [p.select(changed.column_names).cast(changed.schema) for p in old_parts if p.num_rows]
        before = sort_and_merge(concat_tables(old_parts), self.order, self.merge_function) if old_parts else None
        after = changed if above is None else sort_and_merge(concat_tables([above, changed]), self.order,
                                                             self.merge_function)
        self.collect(changelog_rows(before, after, self.key_names, self.compare, self.insert_only))

    def _lookup_above(self, output_level: int, keys: pa.Table) -> pa.Table | None:
        """Every record of ``keys`` in the levels above ``output_level`` (for deduplicate without sequence
        field only the first found, lowest level first: the newest)."""
        found = [rows.take(pa.array(hits.candidate_index)) for _, rows, hits in find_keys_above(
            self.levels, self.codec, self.key_names, output_level, keys, self.read_file, _same,
            newest_wins=self.newest_wins)]
        return concat_tables(found) if found else None



class FullCompactionChangelog(_Collector):
    """``changelog-producer = full-compaction`` for the compactions of one bucket."""

    def __init__(self, max_level: int, read_file: ReadFile, write_changelog: WriteChangelog,
                 key_names: Sequence[str], *, compare: Sequence[str] | None) -> None:
        super().__init__(key_names, write_changelog)
        self.max_level = max_level
        self.read_file = read_file
        self.compare = compare

    def needs_rewrite(self, output_level: int, f: DataFileMeta) -> bool:
        return False

    def on_upgrade(self, output_level: int, f: DataFileMeta) -> None:
        if output_level == self.max_level and f.level != self.max_level:
            self.collect(changelog_rows(None, self.read_file(f), self.key_names))

    def on_section(self, output_level: int, files: Sequence[DataFileMeta], tables: Sequence[pa.Table],
                   merged: pa.Table) -> None:
        if output_level != self.max_level or merged.num_rows == 0:
            return
        newer = [t for f, t in zip(files, tables) if f.level != self.max_level]
        if not newer:
            return  # the previous full compaction's result, unchanged
        changed = merged.filter(pa.array(~keys_not_in(merged, newer, self.key_names)))
        top = [t for f, t in zip(files, tables) if f.level == self.max_level]
        before = concat_tables([t.select(changed.column_names).cast(changed.schema) for t in top]) if top else None
        self.collect(changelog_rows(before, changed, self.key_names, self.compare))


def _same(rows: pa.Table) -> pa.Table:
    return rows

"""The levels of one bucket's LSM tree, built from file metadata alone (no I/O).

* Level 0: every file is its own sorted run, newest first (largest max sequence number first; equal ones by file
  name, as Paimon's ``Levels`` orders them).
* Level ``i > 0``: all files of the level form one sorted run; their key ranges never overlap.

Keys are compared as decoded ``_MIN_KEY``/``_MAX_KEY`` BinaryRows (one decode per file, cached), never per row.
:meth:`Levels.update` is pure: it returns new levels with compaction's ``before`` files replaced by ``after``.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from table_engine.errors import CorruptMetadataError
from table_engine.format.binary_row import decode_row
from table_engine.format.data_file_meta import DataFileMeta
from table_engine.types import DataType

Key = tuple[Any, ...]


class KeyCodec:
    """Decodes serialized key BinaryRows into comparable tuples (cached per distinct row)."""

    def __init__(self, key_types: Sequence[DataType]) -> None:
        self.key_types = list(key_types)
        self._cache: dict[bytes, Key] = {}

    def key(self, data: bytes) -> Key:
        hit = self._cache.get(data)
        if hit is None:
            hit = tuple(decode_row(data, self.key_types))
            self._cache[data] = hit
        return hit

    def min_key(self, f: DataFileMeta) -> Key:
        return self.key(f.min_key)

    def max_key(self, f: DataFileMeta) -> Key:
        return self.key(f.max_key)


def _file_id(f: DataFileMeta) -> tuple[str, int]:
    return f.file_name, f.level


@dataclass(frozen=True)
class SortedRun:
    """Files sorted by key whose ``[min_key, max_key]`` ranges do not overlap."""

    files: tuple[DataFileMeta, ...]

    @property
    def total_size(self) -> int:
        return sum(f.file_size for f in self.files)

    @staticmethod
    def of(*files: DataFileMeta) -> SortedRun:
        return SortedRun(tuple(files))

    @staticmethod
    def from_unsorted(files: Iterable[DataFileMeta], codec: KeyCodec, where: str = "") -> SortedRun:
        ordered = sorted(files, key=codec.min_key)
        for a, b in zip(ordered, ordered[1:]):
            if not codec.min_key(b) > codec.max_key(a):
                raise CorruptMetadataError(
                    f"data files {a.file_name} and {b.file_name}{where} overlap in key range although they are in "
                    f"one sorted run (level {b.level})")
        return SortedRun(tuple(ordered))


@dataclass(frozen=True)
class LevelSortedRun:
    """A sorted run and the level it is in."""

    level: int
    run: SortedRun


def _level0_order(f: DataFileMeta) -> tuple[int, str]:
    return -f.max_sequence_number, f.file_name


class Levels:
    """Level 0 files plus one sorted run per level ``1..max_level`` of one bucket. Immutable."""

    def __init__(self, files: Iterable[DataFileMeta], num_levels: int, codec: KeyCodec, where: str = "") -> None:
        files = list(files)
        # like Paimon: a table written with more levels than configured keeps its higher levels
        restored = max(num_levels, max((f.level for f in files), default=-1) + 1)
        if restored < 2:
            raise ValueError(f"num-levels must be at least 2, got {num_levels}")
        self.codec = codec
        self.where = where
        self.level0: tuple[DataFileMeta, ...] = tuple(sorted((f for f in files if f.level == 0), key=_level0_order))
        self.levels: tuple[SortedRun, ...] = tuple(
            SortedRun.from_unsorted((f for f in files if f.level == lv), codec, where) for lv in range(1, restored))

    @property
    def number_of_levels(self) -> int:
        return len(self.levels) + 1

    @property
    def max_level(self) -> int:
        return len(self.levels)

    def run_of_level(self, level: int) -> SortedRun:
        if level <= 0:
            raise ValueError("level 0 has no single sorted run")
        return self.levels[level - 1]

    def sorted_runs(self) -> list[LevelSortedRun]:
        """Every level-0 file as a run (newest first), then the non-empty levels 1..max in order."""
        runs = [LevelSortedRun(0, SortedRun.of(f)) for f in self.level0]
        runs += [LevelSortedRun(i + 1, r) for i, r in enumerate(self.levels) if r.files]
        return runs

    def number_of_sorted_runs(self) -> int:
        return len(self.level0) + sum(1 for r in self.levels if r.files)

    def non_empty_highest_level(self) -> int:
        """The highest level holding a file; -1 when there is none."""
        for i in range(len(self.levels) - 1, -1, -1):
            if self.levels[i].files:
                return i + 1
        return 0 if self.level0 else -1

    def all_files(self) -> list[DataFileMeta]:
        return [f for r in self.sorted_runs() for f in r.run.files]

    def total_size(self) -> int:
        return sum(f.file_size for f in self.all_files())

    def update(self, before: Sequence[DataFileMeta], after: Sequence[DataFileMeta]) -> Levels:
        """New levels with ``before`` removed and ``after`` added (files are matched by name and level)."""
        gone = {_file_id(f) for f in before}
        kept = [f for f in self.all_files() if _file_id(f) not in gone]
        present = {_file_id(f) for f in kept}
        kept += [f for f in after if _file_id(f) not in present]
        return Levels(kept, self.number_of_levels, self.codec, self.where)

    def __repr__(self) -> str:
        runs = ", ".join(f"L{r.level}:{[f.file_name for f in r.run.files]}" for r in self.sorted_runs())
        return f"Levels({runs})"


def interval_partition(files: Sequence[DataFileMeta], codec: KeyCodec) -> list[list[SortedRun]]:
    """Split files into key-disjoint sections (in key order), each as the fewest sorted runs.

    Sections: files sorted by (min key, max key); a file whose min key is above the running max key of the current
    section starts a new one. Runs inside a section: greedily append each file to the run that ends lowest, if that
    run ends below the file's min key, else open a new run.
    """
    ordered = sorted(files, key=lambda f: (codec.min_key(f), codec.max_key(f)))
    sections: list[list[SortedRun]] = []
    current: list[DataFileMeta] = []
    bound: Key | None = None
    for f in ordered:
        if current and bound is not None and codec.min_key(f) > bound:
            sections.append(_runs_of_section(current, codec))
            current, bound = [], None
        current.append(f)
        if bound is None or codec.max_key(f) > bound:
            bound = codec.max_key(f)
    if current:
        sections.append(_runs_of_section(current, codec))
    return sections


def _runs_of_section(files: list[DataFileMeta], codec: KeyCodec) -> list[SortedRun]:
    heap: list[tuple[Key, int]] = []  # (max key of the run's last file, run index)
    runs: list[list[DataFileMeta]] = []
    for f in files:
        if heap and codec.min_key(f) > heap[0][0]:
            _, i = heapq.heappop(heap)
            runs[i].append(f)
        else:
            i = len(runs)
            runs.append([f])
        heapq.heappush(heap, (codec.max_key(f), i))
    return [SortedRun(tuple(r)) for r in runs]


def overlapping_files(files: Iterable[DataFileMeta], codec: KeyCodec) -> tuple[DataFileMeta, DataFileMeta] | None:
    """Two files of one level above 0 whose key ranges overlap (an LSM conflict), or None."""
    by_level: dict[int, list[DataFileMeta]] = {}
    for f in files:
        if f.level > 0:
            by_level.setdefault(f.level, []).append(f)
    for level_files in by_level.values():
        ordered = sorted(level_files, key=codec.min_key)
        for a, b in zip(ordered, ordered[1:]):
            if not codec.min_key(b) > codec.max_key(a):
                return a, b
    return None

"""Which planned data files can be read as they are (Paimon's raw-convertible splits), and the rest.

A raw file is read on its own, without merging: its rows (minus those its deletion vector deletes, and for a
primary-key file minus -U/-D records) are exactly the rows :class:`~table_engine.store.reading.read.TableRead`
returns for it. Engines that read Parquet natively (Spark's reader,
:mod:`table_engine.spark.datasource.native_read`) read those and leave the rest to the engine.

The decision follows Paimon's (``DataSplit.rawConvertible``, ``MergeTreeSplitGenerator``) and this engine's batch
read (:meth:`TableRead._stream_split`):

* data-evolution tables: no file (rows are merged from column files by row id: :mod:`.data_evolution`);
* other append tables: every file (deletion vectors, e.g. pypaimon's delete-by-row-id, apply as row positions);
* primary-key splits planned ``raw`` (deletion-vector tables, level 0 skipped: ``Split.raw``): every file, its
  vector applied and, when it may hold -U/-D records (``delete_row_count`` not 0), only +I/+U rows kept, as the
  engine's raw read does;
* other primary-key splits (no deletion vectors, ``deletion-vectors.merge-on-read``, ``first-row`` tables whose
  level 0 is skipped): a file that is alone in its key section (no other file of the split overlaps its key range)
  and holds no delete rows (``delete_row_count == 0``, as Paimon's ``withoutDeleteRow``): the engine merges such
  a section as that one file. Every other file stays with the engine (the rest splits are the planned splits
  restricted to those files: key sections are disjoint, so a subset of sections reads the same rows).

This module is pure (no engine-specific imports): it is tested without Spark.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, replace

from table_engine.format.data_file_meta import DataFileMeta
from table_engine.format.schema_file import TableSchema
from table_engine.lsm.levels import KeyCodec, interval_partition
from table_engine.store.indexes.deletion_vectors import DeletionFile
from table_engine.store.reading.data_evolution import data_evolution_enabled
from table_engine.store.reading.scan import Split


@dataclass(frozen=True)
class RawFile:
    """A data file read as it is: ``deletion_file`` (if any) deletes rows by position; ``drop_deletes``: keep only
    +I/+U records (``_VALUE_KIND`` 0 or 2) of a primary-key file that may hold others."""

    split: Split
    file: DataFileMeta
    deletion_file: DeletionFile | None
    drop_deletes: bool


@dataclass(frozen=True)
class RawPlan:
    """Planned splits divided into raw files and the splits (restricted to their other files) to merge."""

    raw: list[RawFile]
    rest: list[Split]

    @property
    def rest_file_names(self) -> list[str]:
        return [f.file_name for s in self.rest for f in s.files]


def raw_files_of(split: Split, schema: TableSchema) -> tuple[list[DataFileMeta], list[DataFileMeta]]:
    """(raw files, files to merge) of one split of a table with ``schema`` (see the module docstring)."""
    if not split.files:
        return [], []
    if data_evolution_enabled(schema.options) or any(f.write_cols is not None for f in split.files):  # by row id
        return [], list(split.files)
    if not schema.primary_keys or split.raw:
        return list(split.files), []
    try:
        sections = interval_partition(split.files, KeyCodec([f.type for f in schema.key_fields()]))
    except Exception:  # undecodable or incomparable keys: the engine merges the split as one section
        return [], list(split.files)
    raw: list[DataFileMeta] = []
    merged: list[DataFileMeta] = []
    for section in sections:
        files = [f for run in section for f in run.files]
        if len(files) == 1 and files[0].delete_row_count == 0:
            raw.append(files[0])
        else:
            merged.extend(files)
    return raw, merged


def plan_raw(splits: Sequence[Split], schema: TableSchema,
             readable: Callable[[Split, DataFileMeta], bool] | None = None) -> RawPlan:
    """Divide ``splits`` of a table with ``schema``; ``readable`` (optional) may refuse a raw file (e.g. a path
    the native reader cannot take), which then stays with the engine."""
    raw: list[RawFile] = []
    rest: list[Split] = []
    has_pk = bool(schema.primary_keys)
    for split in splits:
        raw_files, merged = raw_files_of(split, schema)
        for f in raw_files:
            if readable is not None and not readable(split, f):
                merged.append(f)
                continue
            dv = split.deletion_files.get(f.file_name) if split.deletion_files else None
            raw.append(RawFile(split, f, dv, has_pk and f.delete_row_count != 0))
        if merged:
            rest.append(replace(split, files=merged))
    return RawPlan(raw, rest)


def restrict_splits(splits: Sequence[Split], file_names: Collection[str]) -> list[Split]:
    """``splits`` keeping only the files named (splits left without files are dropped)."""
    names = set(file_names)
    out = []
    for s in splits:
        files = [f for f in s.files if f.file_name in names]
        if files:
            out.append(replace(s, files=files))
    return out

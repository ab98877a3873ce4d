"""Data evolution (Paimon 1.3, ``data-evolution.enabled``): which data file supplies which column of which rows.

On a data-evolution table (an append table with row tracking) a write may hold only some columns over existing row
ids: an update of some columns by row id writes, for every row range it touches, a file with the same
``_FIRST_ROW_ID`` and row count as the range's first file and only those columns (``_WRITE_COLS``); an upsert by key
writes such a file with every column. A row is therefore merged from the files that share its range:

* files are grouped by ``_FIRST_ROW_ID`` (Paimon's ``DataEvolutionSplitRead.splitByRowId``); files of one group hold
  the same row count; ranges of different groups never overlap;
* each column of a group comes from the newest file (highest ``maxSequenceNumber``) whose columns contain it: its
  ``_WRITE_COLS`` when set, else every column of the file's schema. A column no file holds reads as nulls;
* a deletion vector of the group is stored under its *anchor*, its oldest file (lowest ``maxSequenceNumber``, then
  file name), and deletes row positions of the whole group;
* a BLOB column is a column file of its own, a ``.blob`` file (``_WRITE_COLS`` = the one column) over the same rows
  as the group's normal file (pypaimon 2.1.0 layout, ADR 0018). At an equal sequence number a normal file sorts
  before a ``.blob`` file (as Paimon's ``splitByRowId``), so the newest file of a group is a normal file where it
  can be; the anchor is the oldest normal file (a deletion vector is never stored under a ``.blob`` file).
  ``.blob`` files rolled into several files over one range are not read (the row-count check refuses them).

File statistics of such files describe only their own columns of a merged row, so a read prunes no file by value
statistics or file index (only by partition). This module is pure (file metadata only): :mod:`.read` reads the
files it picks.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from table_engine.core_options import DATA_EVOLUTION_ENABLED as DATA_EVOLUTION
from table_engine.errors import CorruptMetadataError
from table_engine.format.data_file_meta import DataFileMeta
from table_engine.format.schema_file import TableSchema
from table_engine.types import DataField

DATA_EVOLUTION_ENABLED = DATA_EVOLUTION.key
"""The table option that turns data evolution on (:data:`table_engine.core_options.DATA_EVOLUTION_ENABLED`)."""


BLOB_FILE_SUFFIX = ".blob"
"""The name suffix of a ``.blob`` column file (:mod:`table_engine.format.blob_file`)."""


def is_blob_file(file_name: str) -> bool:
    """Whether a data file is a ``.blob`` column file (one BLOB column over row ids)."""
    return file_name.endswith(BLOB_FILE_SUFFIX)


def data_evolution_enabled(options: Mapping[str, str]) -> bool:
    """Whether a table with these options merges column files by row id."""
    return str(options.get(DATA_EVOLUTION_ENABLED, "false")).strip().lower() == "true"


@dataclass(frozen=True)
class RowIdGroup:
    """The files over one row range: ``files`` newest first, all of ``row_count`` rows."""

    first_row_id: int | None
    row_count: int
    files: list[DataFileMeta]

    @property
    def anchor(self) -> DataFileMeta:
        """The file the group's deletion vector is stored under (the oldest one, a normal file where there is one)."""
        return min(self.files, key=lambda f: (is_blob_file(f.file_name), f.max_sequence_number, f.file_name))


def row_id_groups(files: Sequence[DataFileMeta]) -> list[RowIdGroup]:
    """The files of a split grouped by ``_FIRST_ROW_ID``, in row-id order (a file without one is its own group).

    Raises :class:`CorruptMetadataError` for files of a group with different row counts or overlapping ranges."""
    groups: list[RowIdGroup] = []
    by_first: dict[int, list[DataFileMeta]] = {}
    for f in files:
        if f.first_row_id is None:
            groups.append(RowIdGroup(None, f.row_count, [f]))
        else:
            by_first.setdefault(f.first_row_id, []).append(f)
    end = None
    for first in sorted(by_first):
        members = sorted(by_first[first], key=lambda f: (-f.max_sequence_number, is_blob_file(f.file_name),
                                                         f.file_name))
        count = members[0].row_count
        for f in members:
            if f.row_count != count:
                raise CorruptMetadataError(
                    f"data file {f.file_name} holds {f.row_count} rows from row id {first}, but "
                    f"{members[0].file_name} holds {count}: files over one row range must hold the same rows")
        if end is not None and first < end:
            raise CorruptMetadataError(f"data file {members[0].file_name} starts at row id {first}, inside the "
                                       f"range of another file (which ends before {end})")
        end = first + count
        groups.append(RowIdGroup(first, count, members))
    return groups


def file_field_ids(f: DataFileMeta, schema_of: Callable[[int], TableSchema]) -> set[int]:
    """The field ids a data file holds: its ``_WRITE_COLS`` (names of the file's schema) when set, else every field
    of its schema."""
    file_schema = schema_of(f.schema_id)
    if f.write_cols is None:
        return {fld.id for fld in file_schema.fields}
    by_name = {fld.name: fld.id for fld in file_schema.fields}
    return {by_name[c] for c in f.write_cols if c in by_name}


def column_sources(group: RowIdGroup, fields: Sequence[DataField], schema_of: Callable[[int], TableSchema]
                   ) -> list[tuple[DataFileMeta, list[DataField]]]:
    """Which file supplies which of ``fields`` (current schema) in ``group``: (file, its fields in ``fields``
    order), newest file first; a field no file holds is in no entry (it reads as nulls)."""
    holders = [(f, file_field_ids(f, schema_of)) for f in group.files]
    picked: dict[str, list[DataField]] = {}
    for fld in fields:
        for f, ids in holders:
            if fld.id in ids:
                picked.setdefault(f.file_name, []).append(fld)
                break
    return [(f, picked[f.file_name]) for f, _ in holders if f.file_name in picked]

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
  A writer rolls the ``.blob`` files of a column (``blob.target-file-size``): a range's files of one BLOB column
  then have consecutive ``_FIRST_ROW_ID`` s inside the range of its normal file and must tile it exactly; a group
  takes every ``.blob`` file that starts inside its range. ``.blob`` files that leave part of a range uncovered
  or overlap (a BLOB column added later, several generations of a column after pypaimon's update of a BLOB column
  by row id, whose placeholders fall back to older files) are refused (``UnsupportedError``), not misread.

File statistics of such files describe only their own columns of a merged row, so a read prunes no file by value
statistics or file index (only by partition). This module is pure (file metadata only): :mod:`.read` reads the
files it picks.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from table_engine.core_options import DATA_EVOLUTION_ENABLED as DATA_EVOLUTION
from table_engine.errors import CorruptMetadataError, UnsupportedError
from table_engine.format.blob_file import BLOB_FILE_SUFFIX
from table_engine.format.data_file_meta import DataFileMeta
from table_engine.format.schema_file import TableSchema
from table_engine.types import DataField

DATA_EVOLUTION_ENABLED = DATA_EVOLUTION.key
"""The table option that turns data evolution on (:data:`table_engine.core_options.DATA_EVOLUTION_ENABLED`)."""




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
    """The files of a split grouped by ``_FIRST_ROW_ID``, in row-id order (a file without one is its own group);
    ``.blob`` files join the group of the normal file whose range they start in.

    Raises :class:`CorruptMetadataError` for files of a group with different row counts or overlapping ranges, and
    :class:`UnsupportedError` for ``.blob`` files of a column that do not tile their group's range."""
    groups: list[RowIdGroup] = []
    by_first: dict[int, list[DataFileMeta]] = {}
    blobs: list[DataFileMeta] = []
    for f in files:
        if f.first_row_id is None:
            groups.append(RowIdGroup(None, f.row_count, [f]))
        elif is_blob_file(f.file_name):
            blobs.append(f)
        else:
            by_first.setdefault(f.first_row_id, []).append(f)
    firsts = sorted(by_first)
    counts = [by_first[first][0].row_count for first in firsts]
    for b in blobs:
        assert b.first_row_id is not None
        i = bisect.bisect_right(firsts, b.first_row_id) - 1
        if i >= 0 and b.first_row_id < firsts[i] + counts[i]:
            by_first[firsts[i]].append(b)
        else:  # no normal file over its rows: a group of its own (the row-count checks below judge it)
            by_first.setdefault(b.first_row_id, []).append(b)
    end = None
    for first in sorted(by_first):
        members = sorted(by_first[first], key=_newest_first)
        count = members[0].row_count
        for f in members:
            if f.row_count != count and not (is_blob_file(f.file_name) and not is_blob_file(members[0].file_name)):
                raise CorruptMetadataError(
                    f"data file {f.file_name} holds {f.row_count} rows from row id {first}, but "
                    f"{members[0].file_name} holds {count}: files over one row range must hold the same rows")
        _check_blob_tiling(first, count, members)
        if end is not None and first < end:
            raise CorruptMetadataError(f"data file {members[0].file_name} starts at row id {first}, inside the "
                                       f"range of another file (which ends before {end})")
        end = first + count
        groups.append(RowIdGroup(first, count, members))
    return groups


def _newest_first(f: DataFileMeta) -> tuple[bool, int, int, str]:
    """Normal files first (newest first), then ``.blob`` files (in row-id order)."""
    blob = is_blob_file(f.file_name)
    return blob, (f.first_row_id or 0) if blob else 0, -f.max_sequence_number, f.file_name


def blob_column(f: DataFileMeta) -> str:
    """The column a ``.blob`` file holds (its one ``_WRITE_COLS`` entry)."""
    if f.write_cols is None or len(f.write_cols) != 1:
        raise CorruptMetadataError(f"blob file {f.file_name} must hold exactly one column (_WRITE_COLS "
                                   f"{f.write_cols})")
    return f.write_cols[0]


def _check_blob_tiling(first: int, count: int, members: Sequence[DataFileMeta]) -> None:
    """The ``.blob`` files of each column must tile ``first .. first + count - 1`` (rolled files of one write). Two
    generations of a column (an update of a BLOB column by row id writes delta files whose placeholders fall back to
    the older file) or a column covering part of the range (added later) are refused, not misread."""
    by_column: dict[str, list[DataFileMeta]] = {}
    for f in members:
        if is_blob_file(f.file_name):
            by_column.setdefault(blob_column(f), []).append(f)
    for column, parts in by_column.items():
        at = first
        for f in parts:  # in row-id order
            assert f.first_row_id is not None
            if f.first_row_id < at:
                raise UnsupportedError(
                    f"blob file {f.file_name} of column {column!r} starts at row id {f.first_row_id}, inside another "
                    f".blob file of that column: several generations of a BLOB column (updated by row id) are not "
                    f"read")
            if f.first_row_id > at:
                raise UnsupportedError(
                    f"the .blob files of column {column!r} leave row ids {at}..{f.first_row_id - 1} of the range "
                    f"{first}..{first + count - 1} uncovered: a BLOB column covering part of a range is not read")
            at += f.row_count
        if at > first + count:
            raise CorruptMetadataError(
                f"the .blob files of column {column!r} cover row ids {first}..{at - 1}, past their range "
                f"{first}..{first + count - 1}")
        if at < first + count:
            raise UnsupportedError(
                f"the .blob files of column {column!r} cover row ids {first}..{at - 1} of the range "
                f"{first}..{first + count - 1}: a BLOB column covering part of a range is not read")


def file_field_ids(f: DataFileMeta, schema_of: Callable[[int], TableSchema]) -> set[int]:
    """The field ids a data file holds: its ``_WRITE_COLS`` (names of the file's schema) when set, else every field
    of its schema."""
    file_schema = schema_of(f.schema_id)
    if f.write_cols is None:
        return {fld.id for fld in file_schema.fields}
    by_name = {fld.name: fld.id for fld in file_schema.fields}
    return {by_name[c] for c in f.write_cols if c in by_name}


def column_sources(group: RowIdGroup, fields: Sequence[DataField], schema_of: Callable[[int], TableSchema]
                   ) -> list[tuple[list[DataFileMeta], list[DataField]]]:
    """Which files supply which of ``fields`` (current schema) in ``group``: (files, their fields in ``fields``
    order), newest first; one normal file, or the ``.blob`` files of one column (in row-id order, each holding the
    next rows). A field no file holds is in no entry (it reads as nulls)."""
    units: list[list[DataFileMeta]] = []
    blob_units: dict[str, list[DataFileMeta]] = {}
    for f in group.files:
        if is_blob_file(f.file_name):
            unit = blob_units.get(blob_column(f))
            if unit is None:
                unit = blob_units[blob_column(f)] = []
                units.append(unit)
            unit.append(f)
        else:
            units.append([f])
    units.sort(key=lambda u: (-max(f.max_sequence_number for f in u), is_blob_file(u[0].file_name),
                              u[0].file_name))
    holders = [(unit, file_field_ids(unit[0], schema_of)) for unit in units]
    picked: dict[int, list[DataField]] = {}
    for fld in fields:
        for i, (_, ids) in enumerate(holders):
            if fld.id in ids:
                picked.setdefault(i, []).append(fld)
                break
    return [(unit, picked[i]) for i, (unit, _) in enumerate(holders) if i in picked]

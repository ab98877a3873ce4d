"""Append compaction of a row-tracking table (``row-tracking.enabled``): row ids and sequence numbers are kept.

Paimon's compaction of such a table writes each row's ``_ROW_ID`` and ``_SEQUENCE_NUMBER`` into the new file as
physical columns (readers prefer them to the computed values). This engine does the same and, so that readers that
derive ``_ROW_ID`` from ``_FIRST_ROW_ID`` and the position (pypaimon 2.1) agree, rewrites only runs of files whose row
ids are adjacent and which have no deleted rows: the new file's rows then hold exactly the ids ``_FIRST_ROW_ID`` ..
``_FIRST_ROW_ID + rows - 1``, in order. Files without ``_FIRST_ROW_ID`` (not committed yet) or with a deletion vector
are left as they are.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import pyarrow as pa
import pyarrow.compute as pc

from table_engine.format.data_file_meta import DataFileMeta
from table_engine.store.reading.row_tracking import ROW_ID, SEQUENCE_NUMBER

__all__ = ["keep_row_tracking", "row_id_runs"]


def row_id_runs(groups: Sequence[Sequence[DataFileMeta]]) -> list[tuple[DataFileMeta, ...]]:
    """Each picked group split into runs of files with adjacent row-id ranges (in row-id order); runs of one file
    are dropped (nothing to merge)."""
    out: list[tuple[DataFileMeta, ...]] = []
    for group in groups:
        files = sorted(group, key=lambda f: f.first_row_id if f.first_row_id is not None else -1)
        run: list[DataFileMeta] = []
        for f in files:
            assert f.first_row_id is not None
            prev = run[-1] if run else None
            if prev is not None and prev.first_row_id is not None \
                    and prev.first_row_id + prev.row_count != f.first_row_id:
                if len(run) > 1:
                    out.append(tuple(run))
                run = []
            run.append(f)
        if len(run) > 1:
            out.append(tuple(run))
    return out


def keep_row_tracking(out: Sequence[DataFileMeta], rows: pa.Table, group: Sequence[DataFileMeta]) -> list[DataFileMeta]:
    """The metadata of the files written from ``rows`` (``_ROW_ID`` and ``_SEQUENCE_NUMBER`` among their columns):
    each file's ``_FIRST_ROW_ID`` (the run's first id plus the rows of the files before it) and its sequence range
    (from the rows' sequence numbers, as Paimon's writer tracks them)."""
    first = group[0].first_row_id
    assert first is not None
    result = []
    offset = 0
    for f in out:
        mm = pc.min_max(rows.column(SEQUENCE_NUMBER).slice(offset, f.row_count))
        ids = rows.column(ROW_ID).slice(offset, f.row_count)
        assert ids[0].as_py() == first + offset, "row ids of a compacted run must be adjacent"
        result.append(dataclasses.replace(f, first_row_id=first + offset, min_sequence_number=int(mm["min"].as_py()),
                                          max_sequence_number=int(mm["max"].as_py())))
        offset += f.row_count
    return result

"""The row-tracking system columns of a read (``row-tracking.enabled``, Paimon 1.3): ``_ROW_ID``, ``_SEQUENCE_NUMBER``.

As Paimon's ``DataFileRecordReader`` computes them: a value the data file holds physically (files that compaction
wrote keep the ids and sequence numbers of their rows as columns) wins; otherwise ``_ROW_ID`` is the file's
``_FIRST_ROW_ID`` plus the row's position in the file (null when the file has none) and ``_SEQUENCE_NUMBER`` is the
file's ``_MAX_SEQUENCE_NUMBER``. Positions count every row of the file, so they are computed before deletion vectors
drop rows. Vectorized: one ``arange`` per file chunk.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from table_engine.format.data_file_meta import DataFileMeta, FileSource
from table_engine.format.formats import file_column_names
from table_engine.io.file_io import FileIO

__all__ = ["ROW_ID", "ROW_TRACKING_COLUMNS", "SEQUENCE_NUMBER", "physical_tracking_columns", "with_tracking"]

#: Paimon's ``SpecialFields.ROW_ID`` and ``SEQUENCE_NUMBER`` (BIGINT).
ROW_ID = "_ROW_ID"
SEQUENCE_NUMBER = "_SEQUENCE_NUMBER"
ROW_TRACKING_COLUMNS = (ROW_ID, SEQUENCE_NUMBER)


def physical_tracking_columns(file_io: FileIO, path: str, f: DataFileMeta, tracking: Sequence[str]) -> list[str]:
    """The columns of ``tracking`` that data file ``f`` holds physically. Only files that a rewrite wrote
    (``_FILE_SOURCE`` COMPACT, or with ``_WRITE_COLS`` naming them) can; their footer is read to find out."""
    if not tracking:
        return []
    if f.write_cols is not None:
        return [c for c in tracking if c in f.write_cols]
    if f.file_source != FileSource.COMPACT:
        return []
    names = set(file_column_names(file_io, path))
    return [c for c in tracking if c in names]


def with_tracking(t: pa.Table, raw: pa.Table, f: DataFileMeta, tracking: Sequence[str], offset: int) -> pa.Table:
    """``t`` (the projected rows ``offset`` .. of file ``f``, before deletion vectors) with the columns of
    ``tracking`` appended; ``raw`` is what was read from the file (physical tracking columns, if any)."""
    n = t.num_rows
    for name in tracking:
        if name == ROW_ID:
            computed = (pa.nulls(n, pa.int64()) if f.first_row_id is None
                        else pa.array(np.arange(f.first_row_id + offset, f.first_row_id + offset + n,
                                                dtype=np.int64)))
        else:
            computed = pa.array(np.full(n, f.max_sequence_number, dtype=np.int64))
        if name in raw.column_names:
            col = pc.coalesce(raw.column(name).cast(pa.int64()), computed)
        else:
            col = pa.chunked_array([computed])
        t = t.append_column(pa.field(name, pa.int64()), col)
    return t

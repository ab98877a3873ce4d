"""Synthetic data file metadata and an in-memory file store for LSM tests (no I/O)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import pyarrow as pa
import pyarrow.compute as pc

from table_engine.format.binary_row import encode_row
from table_engine.format.data_file_meta import EMPTY_ROW, DataFileMeta, FileSource, SimpleStats
from table_engine.lsm.key_value import SEQUENCE_NUMBER, VALUE_KIND
from table_engine.lsm.levels import KeyCodec
from table_engine.types import DataType

INT = DataType("INT", nullable=False)
CODEC = KeyCodec([INT])
_names = itertools.count()


def key(k: int) -> bytes:
    return encode_row([k], [INT])


def meta(lo: int, hi: int, *, level: int = 0, size: int = 100, seq: tuple[int, int] = (0, 0), name: str | None = None,
         rows: int = 1, deletes: int | None = 0, created: int | None = None) -> DataFileMeta:
    """A file holding keys ``lo..hi``."""
    return DataFileMeta(
        file_name=name or f"f{next(_names)}", file_size=size, row_count=rows, min_key=key(lo), max_key=key(hi),
        key_stats=SimpleStats(EMPTY_ROW, EMPTY_ROW, []), value_stats=SimpleStats(EMPTY_ROW, EMPTY_ROW, []),
        min_sequence_number=seq[0], max_sequence_number=seq[1], schema_id=0, level=level,
        creation_time_millis=created, delete_row_count=deletes, file_source=int(FileSource.APPEND))


def kv(keys: Sequence[int], values: Sequence[str | None], seqs: Sequence[int], kinds: Sequence[int] | None = None
       ) -> pa.Table:
    """Key-value rows (column ``k`` is the key, ``v`` the value)."""
    return pa.table({"k": pa.array(keys, pa.int32()), "v": pa.array(values, pa.string()),
                     SEQUENCE_NUMBER: pa.array(seqs, pa.int64()),
                     VALUE_KIND: pa.array(kinds if kinds is not None else [0] * len(keys), pa.int8())})


class MemoryFiles:
    """Data files kept as Arrow tables: ``read`` / ``write`` are the rewriter's injected I/O."""

    def __init__(self) -> None:
        self.tables: dict[str, pa.Table] = {}
        self.written: list[DataFileMeta] = []

    def add(self, table: pa.Table, level: int = 0, size: int | None = None) -> DataFileMeta:
        """Store sorted, unique-key rows as one file."""
        f = self._meta(table, level, size)
        self.tables[f.file_name] = table
        return f

    def read(self, f: DataFileMeta) -> pa.Table:
        return self.tables[f.file_name]

    def write(self, table: pa.Table, level: int, rows_per_file: int = 1 << 30) -> list[DataFileMeta]:
        out = []
        for start in range(0, table.num_rows, rows_per_file):
            out.append(self.add(table.slice(start, rows_per_file), level))
        self.written += out
        return out

    def _meta(self, t: pa.Table, level: int, size: int | None) -> DataFileMeta:
        keys = t.column("k").to_pylist()
        seq = pc.min_max(t.column(SEQUENCE_NUMBER)).as_py()
        kinds = t.column(VALUE_KIND).to_pylist()
        return meta(keys[0], keys[-1], level=level, size=size if size is not None else 10 * t.num_rows,
                    seq=(seq["min"], seq["max"]), rows=t.num_rows, deletes=sum(1 for x in kinds if x in (1, 3)))

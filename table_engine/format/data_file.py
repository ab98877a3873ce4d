"""Parquet data files and the statistics of every data file (``SimpleStats`` over BinaryRows).

Primary-key data files hold ``_KEY_<k>`` (trimmed primary key), ``_SEQUENCE_NUMBER``, ``_VALUE_KIND`` and then
all table columns; append data files hold just the table columns.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from table_engine import clock
from table_engine.errors import OptionError
from table_engine.format.binary_row import EMPTY_ROW, encode_row
from table_engine.format.data_file_meta import DataFileMeta, FileSource, SimpleStats
from table_engine.io.file_io import FileIO
from table_engine.types import DataField, DataType, is_variant_arrow_type, variant_children_filled


@dataclass(frozen=True)
class StatsMode:
    """``metadata.stats-mode``: none, counts, truncate(N) or full."""

    kind: str  # "none" | "counts" | "truncate" | "full"
    length: int = 0

    @staticmethod
    def parse(text: str) -> StatsMode:
        t = text.strip().lower()
        if t in ("none", "counts", "full"):
            return StatsMode(t)
        m = re.fullmatch(r"truncate\((\d+)\)", t)
        if m:
            return StatsMode("truncate", int(m.group(1)))
        raise OptionError(f"metadata.stats-mode {text!r} is not one of none, counts, truncate(N), full")


FULL_STATS = StatsMode("full")


def _truncate_min(v: object, n: int) -> object:
    if isinstance(v, str) and len(v) > n:
        return v[:n]
    return v


def _truncate_max(v: object, n: int) -> object:
    if isinstance(v, str) and len(v) > n:
        head = v[:n]
        # increment the last code point so the truncated value still bounds the real maximum
        for i in range(len(head) - 1, -1, -1):
            cp = ord(head[i])
            if cp < 0x10FFFF and not (0xD7FF <= cp < 0xE000):
                return head[:i] + chr(cp + 1)
        return None
    return v


def column_stats(col: pa.Array | pa.ChunkedArray, t: DataType, mode: StatsMode) -> tuple[object, object, int]:
    """(min, max, null_count) of one column under a stats mode; min/max None when not collected."""
    nulls = col.null_count
    if mode.kind == "counts" or t.is_complex or nulls == len(col):
        return None, None, nulls
    if t.is_binary and mode.kind == "truncate":
        return None, None, nulls
    mm = pc.min_max(col)
    lo, hi = mm["min"].as_py(), mm["max"].as_py()
    if isinstance(lo, float) and lo != lo:  # NaN bounds prove nothing
        return None, None, nulls
    if mode.kind == "truncate":
        lo, hi = _truncate_min(lo, mode.length), _truncate_max(hi, mode.length)
    return lo, hi, nulls


def compute_stats(table: pa.Table, fields: Sequence[DataField], mode: StatsMode) -> SimpleStats:
    """SimpleStats over ``fields`` (columns of ``table`` by name)."""
    if mode.kind == "none" or not fields:
        return SimpleStats(EMPTY_ROW, EMPTY_ROW, [])
    mins: list[object] = []
    maxs: list[object] = []
    nulls: list[int | None] = []
    for f in fields:
        lo, hi, n = column_stats(table.column(f.name), f.type, mode)
        mins.append(lo)
        maxs.append(hi)
        nulls.append(n)
    types = [f.type for f in fields]
    return SimpleStats(encode_row(mins, types), encode_row(maxs, types), nulls)


_DICT_SAMPLE = 8192


def dictionary_columns(table: pa.Table) -> list[str]:
    """Columns worth dictionary encoding: a sample of at most 8192 values is at most half distinct.

    Parquet writers fall back from dictionary to plain encoding once the dictionary page is full; in files of a
    few hundred thousand rows that wasted attempt dominates the write time of high-cardinality columns (keys,
    sequence numbers, measures), so they are written plain from the start. Nested columns are written plain.
    """
    n = min(table.num_rows, _DICT_SAMPLE)
    out = []
    for name, col in zip(table.column_names, table.columns):
        t = col.type
        if pa.types.is_nested(t) or n == 0:
            continue
        sample = col.slice(0, n)
        if pc.count_distinct(sample).as_py() * 2 <= n:
            out.append(name)
    return out


def _variants_filled(table: pa.Table) -> pa.Table:
    """VARIANT columns whose null rows have empty children: merges (``take``, ``if_else``) leave them null, which the
    Parquet writer refuses for the NOT NULL ``value`` and ``metadata``."""
    for i, col in enumerate(table.columns):
        if col.null_count and is_variant_arrow_type(col.type):
            table = table.set_column(i, table.field(i), variant_children_filled(col).cast(col.type))
    return table


def write_parquet(file_io: FileIO, path: str, table: pa.Table, compression: str = "zstd", level: int = 1) -> int:
    """Write ``table`` as one Parquet file (statistics on; dictionary encoding where it pays); returns the size.

    DECIMAL(p <= 9) is stored as INT32 and DECIMAL(p <= 18) as INT64, as Paimon Java writes them: Paimon Java 1.0
    reads a dictionary-encoded compact decimal only from those physical types (FIXED_LEN_BYTE_ARRAY fails there).
    """
    codec = None if compression in ("none", "uncompressed") else compression
    table = _variants_filled(table)
    with file_io.open_output(path) as out:
        pq.write_table(table, out, compression=codec or "NONE",
                       compression_level=level if codec == "zstd" else None,
                       write_statistics=True, use_dictionary=dictionary_columns(table),
                       store_decimal_as_integer=True)
    return file_io.file_size(path)


THREADED_READ_ROWS = 65_536
"""A Parquet file of at least this many rows is decoded on Arrow's threads; a smaller one on the caller's (for a
file of a few hundred rows the hand-over costs more than the decoding: 4-5 times slower, and readers of many small
files already read them in parallel)."""


def read_parquet(file_io: FileIO, path: str, columns: Sequence[str] | None = None) -> pa.Table:
    """Read (some columns of) a Parquet file (errors mapped by ``formats.read_file``)."""
    with file_io.open_input(path) as f:
        pf = pq.ParquetFile(f, pre_buffer=True)
        return pf.read(columns=list(columns) if columns is not None else None,
                       use_threads=pf.metadata.num_rows >= THREADED_READ_ROWS)


def iter_parquet(file_io: FileIO, path: str, columns: Sequence[str] | None, batch_rows: int) -> Iterator[pa.Table]:
    """(Some columns of) a Parquet file as tables of at most ``batch_rows`` rows, read row group by row group, so
    that memory holds one batch (plus one row group's decoded pages), not the file."""
    cols = list(columns) if columns is not None else None
    with file_io.open_input(path) as f:
        for batch in pq.ParquetFile(f).iter_batches(batch_size=batch_rows, columns=cols, use_threads=False):
            yield pa.Table.from_batches([batch])


def parquet_column_names(file_io: FileIO, path: str) -> list[str]:
    """The column names of a Parquet file (its footer only)."""
    with file_io.open_input(path) as f:
        return list(pq.read_schema(f).names)


def key_row(table: pa.Table, key_names: Sequence[str], types: Sequence[DataType], i: int) -> bytes:
    """The serialized BinaryRow of row ``i``'s key columns (for ``_MIN_KEY`` / ``_MAX_KEY``)."""
    return encode_row([table.column(k)[i].as_py() for k in key_names], types)


def make_file_meta(
    *,
    file_name: str,
    file_size: int,
    table: pa.Table,
    schema_id: int,
    level: int,
    key_fields: Sequence[DataField],
    key_source_names: Sequence[str],
    value_fields: Sequence[DataField],
    stats_mode: StatsMode,
    min_seq: int,
    max_seq: int,
    delete_rows: int,
    file_source: FileSource = FileSource.APPEND,
) -> DataFileMeta:
    """The manifest metadata of a data file just written from ``table``.

    ``key_source_names`` are the columns of ``table`` that hold the key (empty for append tables); the table must
    be sorted by key so that the first and last rows give ``_MIN_KEY`` and ``_MAX_KEY``.
    """
    n = table.num_rows
    if key_fields:
        ktypes = [f.type for f in key_fields]
        min_key = key_row(table, key_source_names, ktypes, 0)
        max_key = key_row(table, key_source_names, ktypes, n - 1)
        renamed = table.select(list(key_source_names)).rename_columns([f.name for f in key_fields])
        key_stats = compute_stats(renamed, key_fields, FULL_STATS)
    else:
        min_key = max_key = EMPTY_ROW
        key_stats = SimpleStats(EMPTY_ROW, EMPTY_ROW, [])
    value_stats = compute_stats(table, value_fields, stats_mode)
    return DataFileMeta(
        file_name=file_name,
        file_size=file_size,
        row_count=n,
        min_key=min_key,
        max_key=max_key,
        key_stats=key_stats,
        value_stats=value_stats,
        min_sequence_number=min_seq,
        max_sequence_number=max_seq,
        schema_id=schema_id,
        level=level,
        extra_files=[],
        creation_time_millis=clock.now_millis(),
        delete_row_count=delete_rows,
        embedded_file_index=None,
        file_source=int(file_source),
        value_stats_cols=None if stats_mode.kind != "none" else [],
        external_path=None,
        first_row_id=None,
        write_cols=None,
        write_cols_sequences=None,
    )

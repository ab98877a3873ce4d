"""ORC data files, as Paimon Java writes and reads them (``OrcTypeUtil``, ``OrcWriterFactory``).

Type mapping: TINYINT byte, SMALLINT short, INT and TIME (milliseconds of the day) int, BIGINT long, FLOAT, DOUBLE,
BOOLEAN, DATE date, TIMESTAMP timestamp, TIMESTAMP_LTZ timestamp with local time zone (ORC's TIMESTAMP_INSTANT),
DECIMAL decimal, CHAR/VARCHAR/STRING string, BINARY/VARBINARY binary, ARRAY list, MAP map, ROW struct. Columns are
read by name. pyarrow's ORC writer maps every type the same way, except TIME, which Arrow has as ``time32`` and ORC
as int: it is written as its int32 milliseconds and read back as int32 (the reader casts to the table's type).

pyarrow's ORC writer splits a timestamp into seconds and nanoseconds by truncating division, so a value before
1970 with digits below the millisecond gets negative nanoseconds, which Paimon Java's ORC reader refuses
(``Timestamp`` precondition). Such values are refused before the file is written (a DataError naming the column):
whole milliseconds before 1970, and every value from 1970 on, are read back exactly by both.

pyarrow's ORC writer also stores the fields of a null ROW value, where Paimon Java's ORC reader expects none: Java
then reads the fields of the rows after it shifted. A null ROW (at any depth) is refused the same way; a ROW whose
fields are null is fine.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.orc as po

from table_engine.core_options import (
    ORC_BLOOM_FILTER_COLUMNS,
    ORC_BLOOM_FILTER_FPP,
    ORC_COMPRESS_SIZE,
    ORC_DICTIONARY_KEY_THRESHOLD,
    ORC_ROW_INDEX_STRIDE,
    ORC_STRIPE_SIZE,
)
from table_engine.errors import DataError, OptionError
from table_engine.io.file_io import FileIO

# file.compression names -> pyarrow's ORC codec names (Paimon: CompressionKind.valueOf(name.toUpperCase()))
ORC_CODECS: Mapping[str, str] = {"zstd": "ZSTD", "snappy": "SNAPPY", "lz4": "LZ4", "zlib": "ZLIB",
                                 "none": "UNCOMPRESSED", "uncompressed": "UNCOMPRESSED"}


def _orc_type(t: pa.DataType) -> pa.DataType:
    """The Arrow type pyarrow's ORC writer takes for ``t`` (TIME as int32, recursively)."""
    if pa.types.is_time32(t):
        return pa.int32()
    if pa.types.is_time64(t):
        return pa.int64()
    if pa.types.is_list(t):
        f = t.value_field
        return pa.list_(f.with_type(_orc_type(f.type)))
    if pa.types.is_map(t):
        return pa.map_(t.key_field.with_type(_orc_type(t.key_field.type)),
                       t.item_field.with_type(_orc_type(t.item_field.type)))
    if pa.types.is_struct(t):
        return pa.struct([t.field(i).with_type(_orc_type(t.field(i).type)) for i in range(t.num_fields)])
    return t


def _check_timestamps(table: pa.Table) -> None:
    """Refuse timestamps before 1970 with sub-millisecond digits (see the module doc)."""
    for name, col in zip(table.column_names, table.columns):
        t = col.type
        if not (pa.types.is_timestamp(t) and t.unit in ("us", "ns")) or col.null_count == len(col):
            continue
        per_ms = 1000 if t.unit == "us" else 1_000_000
        v = col.cast(pa.int64())
        bad = pc.any(pc.and_(pc.less(v, 0), pc.not_equal(pc.subtract(v, pc.multiply(
            pc.divide(v, per_ms), per_ms)), 0))).as_py()
        if bad:
            raise DataError(f"column {name!r}: a TIMESTAMP before 1970 with sub-millisecond digits cannot be written "
                            f"to an ORC file that Paimon Java reads (pyarrow's ORC writer encodes its nanoseconds "
                            f"negative); use file.format parquet or avro for such values")


def _null_row(arr: pa.Array) -> bool:
    """Whether a ROW value at any depth of ``arr`` is null."""
    t = arr.type
    if pa.types.is_struct(t):
        return arr.null_count > 0 or any(_null_row(arr.field(i)) for i in range(t.num_fields))
    if pa.types.is_map(t):
        return _null_row(arr.keys) or _null_row(arr.items)
    if pa.types.is_list(t):
        return _null_row(arr.flatten())
    return False


def _check_rows(table: pa.Table) -> None:
    """Refuse null ROW values (see the module doc)."""
    for name, col in zip(table.column_names, table.columns):
        if pa.types.is_nested(col.type) and any(_null_row(chunk) for chunk in col.chunks):
            raise DataError(f"column {name!r}: a null ROW value cannot be written to an ORC file that Paimon Java "
                            f"reads (pyarrow's ORC writer keeps the fields of a null row, Paimon Java's reader "
                            f"skips them and misaligns the rows after it); use file.format parquet or avro")


def _orc_table(table: pa.Table) -> pa.Table:
    schema = pa.schema([f.with_type(_orc_type(f.type)) for f in table.schema])
    return table if schema.equals(table.schema) else table.cast(schema)


def orc_codec(compression: str) -> str:
    """Pyarrow's ORC codec for a ``file.compression`` value; an unknown one is an OptionError."""
    codec = ORC_CODECS.get(compression.lower())
    if codec is None:
        raise OptionError(f"file.compression = {compression!r} is not an ORC codec (one of {', '.join(ORC_CODECS)})")
    return codec


def write_orc(file_io: FileIO, path: str, table: pa.Table, compression: str = "zstd",
              options: Mapping[str, str] | None = None) -> int:
    """Write ``table`` as one ORC file; returns its size. ``options`` are the table's ``orc.*`` options
    (``orc.stripe.size``, ``orc.compress.size``, ``orc.row.index.stride``, ``orc.dictionary.key.threshold``,
    ``orc.bloom.filter.columns``, ``orc.bloom.filter.fpp``)."""
    opts = options or {}
    codec = orc_codec(compression)
    _check_timestamps(table)
    _check_rows(table)
    wanted = ORC_BLOOM_FILTER_COLUMNS.value_from(opts) or []
    missing = [c for c in wanted if c not in table.column_names]
    if missing:
        raise OptionError(f"orc.bloom.filter.columns = {opts.get('orc.bloom.filter.columns')!r}: no column "
                          f"{missing[0]!r}")
    threshold = ORC_DICTIONARY_KEY_THRESHOLD.value_from(opts)
    with file_io.open_output(path) as out:
        po.write_table(_orc_table(table), out, compression=codec,
                       stripe_size=ORC_STRIPE_SIZE.value_from(opts),
                       compression_block_size=ORC_COMPRESS_SIZE.value_from(opts),
                       row_index_stride=ORC_ROW_INDEX_STRIDE.value_from(opts),
                       dictionary_key_size_threshold=0.0 if threshold is None else threshold,
                       bloom_filter_columns=[table.column_names.index(c) for c in wanted] or None,
                       bloom_filter_fpp=ORC_BLOOM_FILTER_FPP.value_from(opts))
    return file_io.file_size(path)


def read_orc(file_io: FileIO, path: str, columns: Sequence[str] | None = None) -> pa.Table:
    """Read (some top-level columns of) an ORC file; ORC reads only the columns asked for."""
    cols = list(columns) if columns is not None else None
    with file_io.open_input(path) as f:
        table = po.ORCFile(f).read(columns=cols)
    return table if cols is None else table.select(cols)  # ORC returns the file's column order


def iter_orc(file_io: FileIO, path: str, columns: Sequence[str] | None, batch_rows: int) -> Iterator[pa.Table]:
    """(Some columns of) an ORC file stripe by stripe, in tables of at most ``batch_rows`` rows."""
    cols = list(columns) if columns is not None else None
    with file_io.open_input(path) as f:
        orc = po.ORCFile(f)
        for i in range(orc.nstripes):
            stripe = orc.read_stripe(i, columns=cols)
            table = pa.Table.from_batches([stripe]) if isinstance(stripe, pa.RecordBatch) else stripe
            if cols is not None:
                table = table.select(cols)
            for start in range(0, table.num_rows, batch_rows):
                yield table.slice(start, batch_rows)


def orc_column_names(file_io: FileIO, path: str) -> list[str]:
    """The top-level column names of an ORC file (its footer only)."""
    with file_io.open_input(path) as f:
        return list(po.ORCFile(f).schema.names)

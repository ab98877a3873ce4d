"""Physical layout of the Parquet data files we write (what Paimon Java's reader expects)."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from table_engine.format.data_file import write_parquet
from table_engine.io.file_io import LocalFileIO


def test_compact_decimals_are_stored_as_integers_like_paimon_java(tmp_path: Path) -> None:
    values = [Decimal("1.25"), None, Decimal("1.25"), Decimal("-3.50")] * 10  # few distinct: dictionary-encoded
    table = pa.table({"d9": pa.array(values, pa.decimal128(9, 2)), "d18": pa.array(values, pa.decimal128(18, 2)),
                      "d38": pa.array(values, pa.decimal128(38, 2))})
    path = tmp_path / "f.parquet"
    write_parquet(LocalFileIO(), str(path), table)
    meta = pq.ParquetFile(path).metadata.row_group(0)
    physical = {meta.column(i).path_in_schema: meta.column(i).physical_type for i in range(meta.num_columns)}
    assert physical == {"d9": "INT32", "d18": "INT64", "d38": "FIXED_LEN_BYTE_ARRAY"}
    assert "RLE_DICTIONARY" in meta.column(1).encodings
    assert pq.read_table(path).equals(table)

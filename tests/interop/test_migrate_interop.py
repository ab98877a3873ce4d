"""Migrate judged by pypaimon 2.1.0 and Paimon Java 1.0: a partitioned directory of Parquet files and one of ORC
files, migrated in place (files without their partition columns, as Hive writes them), read the same through both
as through the engine."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.orc as orc
import pyarrow.parquet as pq
import pytest

from table_engine import Catalog
from table_engine.ops import MigrateTable
from table_engine.ops.run import run_command
from tests.interop.conftest import PypaimonClient
from tests.interop.paimon_java import PaimonJavaClient, decode_rows

pytestmark = pytest.mark.interop

FILE = pa.schema([("id", pa.int64()), ("name", pa.string()), ("amount", pa.float64())])
TABLE = pa.schema([*FILE, pa.field("dt", pa.string())])


def canon(t: pa.Table) -> list[tuple[object, ...]]:
    return sorted(tuple(r.values()) for r in t.select(TABLE.names).to_pylist())


def hive_dir(root: Path, fmt: str) -> tuple[Path, list[tuple[object, ...]]]:
    src, rows = root / f"src_{fmt}", []
    for i, (lo, hi) in enumerate(((0, 10), (10, 25), (25, 33))):
        d = src / f"dt=2026-12-0{1 + i % 2}"
        d.mkdir(parents=True, exist_ok=True)
        ids = list(range(lo, hi))
        t = pa.table({"id": ids, "name": [f"n{i}" if i % 3 else None for i in ids],
                      "amount": [i * 0.5 for i in ids]}, schema=FILE)
        # zstd: the Paimon Java bridge jar has no snappy codec (pyarrow's default for Parquet)
        if fmt == "parquet":
            pq.write_table(t, str(d / f"part-{i}.{fmt}"), compression="zstd")
        else:
            orc.write_table(t, str(d / f"part-{i}.{fmt}"), compression="zstd")
        rows += [(*r.values(), d.name[3:]) for r in t.to_pylist()]
    return src, sorted(rows)


@pytest.mark.parametrize("fmt", ["parquet", "orc"])
def test_pypaimon_and_java_read_the_migrated_table(tmp_path: Path, fmt: str, pypaimon: PypaimonClient,
                                                   paimon_java: PaimonJavaClient) -> None:
    wh = tmp_path / "wh"
    src, expected = hive_dir(tmp_path, fmt)
    out = run_command(MigrateTable(warehouse=str(wh), table="db.m", source=str(src), format=fmt))
    assert out["files"] == 3 and out["rows"] == len(expected)
    assert canon(Catalog(str(wh)).get_table("db.m").read()) == expected
    assert canon(pypaimon.read(wh, "db.m")) == expected
    job = paimon_java.read_job(wh, "db.m")
    paimon_java.run_checked([job])
    assert canon(decode_rows(Path(job["out"]), TABLE).table) == expected

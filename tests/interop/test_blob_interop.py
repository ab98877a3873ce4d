"""A BLOB table of pypaimon 2.1.0 read and maintained by the engine (issue 23, ADR 0018).

pypaimon writes a data-evolution table with a BLOB column in three commits (two appends, each a Parquet file of the
other columns and a ``.blob`` file over the same row ids, then an update of a normal column by row id). The engine
reads it equal to a model, refuses a write of bad BLOB values, compacts it (the update merged, the ``.blob`` files
kept as they are), expires snapshots and removes orphan files (a stray ``.blob`` file goes, every live one stays);
pypaimon then reads the result equal to the model. pypaimon runs once to write and once to read back.
"""

from __future__ import annotations

import os
import pathlib
import time

import pyarrow as pa
import pytest

from table_engine import Catalog
from table_engine.errors import SchemaMismatchError
from tests.interop.conftest import PypaimonClient, read_ipc
from tests.table_engine.test_cli_errors import state

pytestmark = pytest.mark.interop

#: the rows of pypaimon's table (cmd_blob_table), in row-id order
MODEL = [
    {"id": 0, "x": "a", "b": b"x" * 100_000},
    {"id": 1, "x": "B", "b": None},
    {"id": 2, "x": "c", "b": b""},
    {"id": 3, "x": "D", "b": bytes(range(256))},
    {"id": 4, "x": "e", "b": b"last"},
]


def blob_files(table_dir: pathlib.Path) -> set[str]:
    return {p.name for p in table_dir.rglob("*.blob")}


def test_engine_reads_and_maintains_a_blob_table_pypaimon_reads_back(pypaimon: PypaimonClient,
                                                                      tmp_path: pathlib.Path) -> None:
    wh = tmp_path / "warehouse"
    pypaimon.run({"command": "blob_table", "warehouse": str(wh), "out": str(tmp_path / "theirs.arrow")})
    assert read_ipc(tmp_path / "theirs.arrow").to_pylist() == MODEL
    table_dir = wh / "db.db" / "blob"
    live = blob_files(table_dir)
    assert len(live) == 2
    catalog = Catalog(str(wh))
    t = catalog.get_table("db.blob")
    got = t.read()
    assert got.schema.field("b").type == pa.large_binary()
    assert got.to_pylist() == MODEL
    assert t.read(columns=["b", "id"], filter=[("id", ">=", 3)]).to_pylist() == [
        {"b": r["b"], "id": r["id"]} for r in MODEL if r["id"] >= 3]

    before = state(str(wh))  # writes: test_blob_write_interop.py; bad input changes nothing
    with pytest.raises(SchemaMismatchError, match="column 'b' is BLOB"):
        t.write(pa.table({"id": pa.array([9], pa.int64()), "x": ["z"], "b": ["not bytes"]}))
    assert state(str(wh)) == before

    t.maintenance.compact(full=True)
    t = catalog.get_table("db.blob")
    assert t.read().to_pylist() == MODEL
    assert blob_files(table_dir) == live  # .blob files are kept as they are
    t.expire_snapshots(retain_max=1, retain_min=1)
    stray = table_dir / "bucket-0" / "data-stray-0.blob"
    stray.write_bytes(b"not referenced")
    old = time.time() - 3600
    os.utime(stray, (old, old))
    t.maintenance.remove_orphan_files(older_than_millis=int(time.time() * 1000) - 60_000)
    assert blob_files(table_dir) == live
    t = catalog.get_table("db.blob")
    assert t.read().to_pylist() == MODEL

    pypaimon.run({"command": "read", "warehouse": str(wh), "table": "db.blob", "out": str(tmp_path / "back.arrow")})
    assert read_ipc(tmp_path / "back.arrow").to_pylist() == MODEL

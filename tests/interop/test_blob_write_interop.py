"""BLOB writes of the engine judged by pypaimon 2.1.0 (issue 23, ADR 0018 amended).

The engine creates a BLOB table (``blob-field``) and writes it in three commits with values big enough to roll
``.blob`` files (``blob.target-file-size`` = 64 kb), one value given as a serialized blob descriptor; reads it back
equal to a model (``_ROW_ID`` too; a partitioned table as well); compacts, expires and removes orphans (the
``.blob`` files stay); pypaimon reads it equal to the model. Bad input (an int column for the BLOB column, a BLOB
column in an update by row id, a descriptor of a missing file) raises a one-line error and leaves the table byte
for byte unchanged. pypaimon reads the engine's table with the same ``_ROW_ID`` s, and its next append continues
them. pypaimon's own BLOB tables (one with an update by row id, one with rolled ``.blob`` files) are read by the
engine, get more rows from it, and pypaimon reads them all; one whose BLOB column pypaimon updated by row id (a
delta ``.blob`` file with placeholders) is refused, not misread.
pypaimon runs twice: once to write its tables, once to read every table back.
"""

from __future__ import annotations

import os
import pathlib
import shutil
import time
from typing import Any

import pyarrow as pa
import pytest

from table_engine import Catalog
from table_engine.errors import DataError, SchemaError, SchemaMismatchError, UnsupportedError
from table_engine.format.blob_file import BlobDescriptor
from tests.interop.conftest import PypaimonClient, read_ipc, write_ipc
from tests.interop.test_blob_interop import MODEL as PYPAIMON_BLOB_MODEL
from tests.table_engine.test_cli_errors import state

pytestmark = pytest.mark.interop

SCHEMA = pa.schema([("id", pa.int64()), ("x", pa.string()), ("b", pa.binary())])
OPTIONS = {"row-tracking.enabled": "true", "data-evolution.enabled": "true", "blob-field": "b",
           "blob.target-file-size": "64 kb"}


def _value(i: int) -> bytes | None:
    if i % 7 == 3:
        return None
    return bytes([i % 256]) * (40_000 if i % 3 == 0 else 100 + i)


def _rows(ids: range) -> list[dict[str, Any]]:
    return [{"id": i, "x": f"v{i}", "b": _value(i)} for i in ids]


def blob_files(root: pathlib.Path) -> set[str]:
    return {p.name for p in root.rglob("*.blob")}


@pytest.fixture(scope="module")
def pypaimon_tables(pypaimon: PypaimonClient, tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    base = tmp_path_factory.mktemp("blobwrite")
    pypaimon.run({"command": "blob_write_tables", "warehouse": str(base / "warehouse"), "out": str(base)})
    return base


def test_engine_writes_blob_table_pypaimon_reads_it(pypaimon: PypaimonClient, pypaimon_tables: pathlib.Path,
                                                    tmp_path: pathlib.Path) -> None:
    # --- the engine writes a BLOB table in three commits ---------------------------------------------------------
    wh = tmp_path / "warehouse"
    catalog = Catalog(str(wh))
    t = catalog.create_table("db.e", SCHEMA, options=OPTIONS)
    assert t.schema.field("b").type.root == "BLOB"
    source = tmp_path / "source.bin"
    source.write_bytes(b"head" + b"D" * 50_000 + b"tail")
    model = _rows(range(10))
    for rows in (model, _rows(range(10, 13))):
        catalog.get_table("db.e").write(pa.Table.from_pylist(rows, SCHEMA))
    described = {"id": 13, "x": "desc", "b": BlobDescriptor(str(source), 4, 50_000).serialize()}
    catalog.get_table("db.e").write(pa.Table.from_pylist([described], SCHEMA))
    model = [*_rows(range(13)), {"id": 13, "x": "desc", "b": b"D" * 50_000}]
    table_dir = wh / "db.db" / "e"
    live = blob_files(table_dir)
    assert len(live) > 3  # the first commit's .blob files rolled at 64 kb
    t = catalog.get_table("db.e")
    got = t.read()
    assert got.schema.field("b").type == pa.large_binary()
    assert sorted(got.to_pylist(), key=lambda r: r["id"]) == model

    ids = catalog.get_table("db.e$row_tracking").read(columns=["id", "b", "_ROW_ID"])
    assert sorted((r["_ROW_ID"], r["id"], r["b"]) for r in ids.to_pylist()) == [
        (i, r["id"], r["b"]) for i, r in enumerate(model)]
    part = catalog.create_table("db.p", SCHEMA, partition_keys=["x"], options=OPTIONS)
    part_rows = [{"id": i, "x": "even" if i % 2 == 0 else "odd", "b": _value(i)} for i in range(8)]
    part.write(pa.Table.from_pylist(part_rows, SCHEMA))

    # --- bad input: one-line errors, the table unchanged --------------------------------------------------------
    before = state(str(wh))
    with pytest.raises(SchemaMismatchError, match="column 'b' is BLOB: .* not int64") as bad:
        t.write(pa.table({"id": pa.array([99], pa.int64()), "x": ["bad"], "b": pa.array([1], pa.int64())}))
    assert "\n" not in str(bad.value)
    with pytest.raises(SchemaError, match=r"BLOB column\(s\) \['b'\]") as bad_update:
        t.data_evolution.update_by_row_id(
            pa.table({"_ROW_ID": pa.array([0], pa.int64()), "b": pa.array([b"z"], pa.binary())}))
    assert "\n" not in str(bad_update.value)
    lost = BlobDescriptor(str(tmp_path / "missing.bin"), 0, 5).serialize()
    with pytest.raises(DataError, match="blob descriptor of 5 bytes at 0 of .*missing.bin that cannot be read"):
        t.write(pa.table({"id": pa.array([98], pa.int64()), "x": ["lost"], "b": pa.array([lost], pa.binary())}))
    assert state(str(wh)) == before

    # --- maintenance keeps the .blob files ------------------------------------------------------------------------
    t.data_evolution.update_by_row_id(pa.table({"_ROW_ID": pa.array([1, 11], pa.int64()), "x": ["X1", "X11"]}))
    model = [{**r, "x": {1: "X1", 11: "X11"}.get(r["id"], r["x"])} for r in model]
    t = catalog.get_table("db.e")
    t.maintenance.compact(full=True)
    t = catalog.get_table("db.e")
    assert sorted(t.read().to_pylist(), key=lambda r: r["id"]) == model
    assert blob_files(table_dir) == live
    t.expire_snapshots(retain_max=1, retain_min=1)
    stray = next(table_dir.rglob("bucket-0")) / "data-stray-0.blob"
    stray.write_bytes(b"not referenced")
    old = time.time() - 3600
    os.utime(stray, (old, old))
    t.maintenance.remove_orphan_files(older_than_millis=int(time.time() * 1000) - 60_000)
    assert blob_files(table_dir) == live
    t = catalog.get_table("db.e")
    assert sorted(t.read().to_pylist(), key=lambda r: r["id"]) == model

    # --- pypaimon's tables get more rows from the engine ----------------------------------------------------------
    theirs = tmp_path / "theirs"
    shutil.copytree(pypaimon_tables / "warehouse", theirs)
    assert read_ipc(pypaimon_tables / "blob.arrow").to_pylist() == PYPAIMON_BLOB_MODEL
    rolled_model = read_ipc(pypaimon_tables / "blob_rolled.arrow").to_pylist()
    assert len(blob_files(theirs / "db.db" / "blob_rolled")) > 2  # pypaimon rolled them
    other = Catalog(str(theirs))
    with pytest.raises(UnsupportedError, match="several generations of a BLOB column"):  # refused, not misread
        other.get_table("db.blob_updated").read()
    assert other.get_table("db.blob_rolled").read().to_pylist() == rolled_model
    more = pa.table({"id": pa.array([5, 6], pa.int64()), "x": ["f", "g"], "b": [b"engine" * 20_000, None]})
    other.get_table("db.blob").write(more)
    blob_model = [*PYPAIMON_BLOB_MODEL, *more.to_pylist()]
    rolled_more = pa.table({"id": pa.array([10, 11], pa.int64()), "b": [b"E" * 70_000, b"F"]})
    other.get_table("db.blob_rolled").write(rolled_more)
    rolled_model += rolled_more.to_pylist()
    assert other.get_table("db.blob").read().to_pylist() == blob_model
    assert other.get_table("db.blob_rolled").read().to_pylist() == rolled_model

    # --- pypaimon reads every table (db.e with _ROW_ID), appends to the engine's and reads it again -------------------
    appended = pa.table({"id": pa.array([20, 21], pa.int64()), "x": ["py1", "py2"],
                         "b": pa.array([b"P" * 70_000, None], pa.large_binary())})
    write_ipc(appended, tmp_path / "appended.arrow")
    reads = [("p", wh, "db.p"), ("blob", theirs, "db.blob"), ("rolled", theirs, "db.blob_rolled")]
    e = {"warehouse": str(wh), "table": "db.e"}
    row_ids = {r["id"]: r["_ROW_ID"] for r in catalog.get_table("db.e$row_tracking").read(
        columns=["id", "_ROW_ID"]).to_pylist()}
    results = pypaimon.run([
        {"command": "rt_read", **e, "out": str(tmp_path / "e.arrow")},
        *({"command": "read", "warehouse": str(w), "table": name, "out": str(tmp_path / f"{key}.arrow")}
          for key, w, name in reads),
        {"command": "rt_append", **e, "batches": [str(tmp_path / "appended.arrow")]},
        {"command": "rt_read", **e, "out": str(tmp_path / "e_after.arrow")}])
    theirs_e = read_ipc(tmp_path / "e.arrow").to_pylist()
    assert sorted(({k: r[k] for k in ("id", "x", "b")} for r in theirs_e), key=lambda r: r["id"]) == model
    assert {r["id"]: r["_ROW_ID"] for r in theirs_e} == row_ids and results[0]["next_row_id"] == len(model)
    assert sorted(read_ipc(tmp_path / "p.arrow").to_pylist(), key=lambda r: r["id"]) == part_rows
    assert read_ipc(tmp_path / "blob.arrow").to_pylist() == blob_model
    assert read_ipc(tmp_path / "rolled.arrow").to_pylist() == rolled_model
    after = {r["id"]: r["_ROW_ID"] for r in read_ipc(tmp_path / "e_after.arrow").to_pylist()}
    assert after == {**row_ids, 20: len(model), 21: len(model) + 1}  # pypaimon's append continues the row ids
    model += appended.to_pylist()
    assert sorted(catalog.get_table("db.e").read().to_pylist(), key=lambda r: r["id"]) == model

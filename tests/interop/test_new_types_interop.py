"""VARIANT, VECTOR and BLOB columns between pypaimon 2.1.0 and the engine (issue 23, ADR 0018).

pypaimon writes an append and a primary-key table with VARIANT (its ``GenericVariant`` encodings, some null),
VECTOR<FLOAT, 3> and VECTOR<BIGINT, 2> columns in three commits; the engine reads each equal to a model, compacts,
expires snapshots, removes orphan files and writes more; pypaimon then reads every row, and reads a table the engine
created. A table whose variants pypaimon shredded (``variant.shreddingSchema``) is refused for every operation, and
its files are checked to really be shredded. The ``.blob`` files of a BLOB table are read and written both ways, and
the table is read.
pypaimon makes all its tables in one subprocess call.
"""

from __future__ import annotations

import pathlib
import shutil
import time
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from table_engine import Catalog
from table_engine.errors import UnsupportedTableFeatureError
from table_engine.format.blob_file import blob_descriptors, read_blob, read_blob_file, write_blob_file
from table_engine.io.file_io import LocalFileIO
from table_engine.table import Table
from tests.interop.conftest import PypaimonClient, read_ipc
from tests.table_engine.test_cli_errors import state

pytestmark = pytest.mark.interop


@pytest.fixture(scope="module")
def new_type_warehouse(pypaimon: PypaimonClient, tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    root = tmp_path_factory.mktemp("new_types")
    pypaimon.run({"command": "new_type_tables", "warehouse": str(root / "warehouse"), "out": str(root)})
    return root


def model(written: pa.Table, pk: bool) -> list[dict[str, Any]]:
    """The rows a table holds after the writes: every row (append) or the last row per id (primary key)."""
    rows = written.to_pylist()
    if pk:
        rows = list({r["id"]: r for r in rows}.values())
    return sorted(rows, key=lambda r: (r["id"], r["iv"]))


def rows_of(t: pa.Table) -> list[dict[str, Any]]:
    return sorted(t.to_pylist(), key=lambda r: (r["id"], r["iv"]))


def more_rows(schema: pa.Schema) -> pa.Table:
    return pa.table({"id": [100, 101, 2], "v": [{"value": b"\x0c\x05", "metadata": b"\x01\x00\x00"}, None, None],
                     "vec": [[9.0, 9.5, 10.0]] * 3, "iv": [[100, 9], [101, 9], [2, 9]]}, schema=schema)


def test_engine_reads_maintains_and_writes_pypaimon_reads_back(
        new_type_warehouse: pathlib.Path, pypaimon: PypaimonClient, tmp_path: pathlib.Path) -> None:
    wh = tmp_path / "warehouse"
    shutil.copytree(new_type_warehouse / "warehouse", wh)
    catalog = Catalog(str(wh))
    expected: dict[str, list[dict[str, Any]]] = {}
    for name, pk in (("app", False), ("pk", True)):
        written = read_ipc(new_type_warehouse / f"{name}.arrow")
        t = catalog.get_table(f"db.{name}")
        got = t.read()
        assert [f.type for f in got.schema] == [pa.int64(), written.schema.field("v").type,
                                                pa.list_(pa.float32(), 3), pa.list_(pa.int64(), 2)]
        want = model(written, pk)
        assert rows_of(got) == want, name
        assert rows_of(t.read(filter=[("id", ">=", 4)])) == [r for r in want if r["id"] >= 4]
        t.maintenance.compact(full=True)
        t = catalog.get_table(f"db.{name}")
        assert rows_of(t.read()) == want, name
        t.expire_snapshots(retain_max=1, retain_min=1)
        t.maintenance.remove_orphan_files(older_than_millis=int(time.time() * 1000))
        add = more_rows(got.schema)
        t.write(add)
        expected[name] = model(pa.concat_tables([written.cast(got.schema), add]), pk)
        assert rows_of(catalog.get_table(f"db.{name}").read()) == expected[name]
    # a table the engine creates: pypaimon reads its types and values
    mine = catalog.create_table("db.mine", more_rows(catalog.get_table("db.app").read().schema).schema,
                                primary_keys=["id"], options={"bucket": "1"})
    mine.write(more_rows(mine.read().schema))
    expected["mine"] = model(more_rows(mine.read().schema), True)
    outs = {name: tmp_path / f"{name}.arrow" for name in expected}
    pypaimon.run([{"command": "read", "warehouse": str(wh), "table": f"db.{name}", "out": str(out)}
                  for name, out in outs.items()])
    for name, out in outs.items():
        theirs = read_ipc(out)
        assert theirs.schema.field("vec").type == pa.list_(pa.float32(), 3), name
        assert rows_of(theirs) == expected[name], name


MUTATIONS = [
    lambda t: t.write(pa.table({"id": pa.array([9], pa.int64())})),
    lambda t: t.maintenance.compact(full=True),
    lambda t: t.expire_snapshots(),
    lambda t: t.maintenance.remove_orphan_files(older_than_millis=int(time.time() * 1000)),
    lambda t: t.create_tag("t1"),
]


def test_shredded_variants_are_refused_for_every_operation(new_type_warehouse: pathlib.Path,
                                                           tmp_path: pathlib.Path) -> None:
    wh = tmp_path / "warehouse"
    shutil.copytree(new_type_warehouse / "warehouse", wh)
    (data_file,) = (wh / "db.db" / "shredded").rglob("data-*.parquet")
    assert "typed_value" in str(pq.read_schema(data_file).field("v").type)  # pypaimon really shredded it
    before = state(str(wh))
    t: Table = Catalog(str(wh)).get_table("db.shredded")
    with pytest.raises(UnsupportedTableFeatureError, match="uses VARIANT shredding .*variant.shreddingSchema"):
        t.read()
    for call in MUTATIONS:
        with pytest.raises(UnsupportedTableFeatureError, match="uses VARIANT shredding "):
            call(t)
    assert state(str(wh)) == before


def test_blob_files_both_ways_and_the_table_is_read(new_type_warehouse: pathlib.Path,
                                                                pypaimon: PypaimonClient, tmp_path: pathlib.Path
                                                                ) -> None:
    """The engine reads pypaimon's ``.blob`` files (values and lazy descriptors) and writes them byte for byte as
    pypaimon does; pypaimon reads the engine's. The engine reads the BLOB table (its maintenance:
    test_blob_interop.py, its writes: test_blob_write_interop.py)."""
    io = LocalFileIO()
    written = read_ipc(new_type_warehouse / "blob.arrow").column("b").to_pylist()
    files = sorted((new_type_warehouse / "warehouse" / "db.db" / "blob").rglob("*.blob"))
    values = [read_blob_file(io, str(f), verify=True) for f in files]
    assert sorted(v for a in values for v in a.to_pylist() if v is not None) == sorted(
        v for v in written if v is not None)
    assert sum(a.null_count for a in values) == written.count(None)
    mine = []
    for i, (f, a) in enumerate(zip(files, values, strict=True)):
        assert [None if d is None else read_blob(io, d) for d in blob_descriptors(io, str(f))] == a.to_pylist()
        out = tmp_path / f"data-{i}.blob"
        write_blob_file(io, str(out), a)
        assert out.read_bytes() == f.read_bytes()
        mine.append(out)
    extra = tmp_path / "data-extra.blob"
    write_blob_file(io, str(extra), pa.array([b"a" * 5000, None, b"", b"z"], pa.large_binary()))
    mine.append(extra)
    result = pypaimon.run({"command": "read_blob_files", "warehouse": str(new_type_warehouse / "warehouse"),
                           "table": "db.blob", "files": [str(p) for p in mine]})
    assert result["rows"] == [len(a) for a in values] + [4]
    for p in mine:
        assert read_ipc(pathlib.Path(str(p) + ".arrow")).column("b").to_pylist() == read_blob_file(
            io, str(p)).to_pylist()
    t = Catalog(str(new_type_warehouse / "warehouse")).get_table("db.blob")
    assert t.read().to_pylist() == read_ipc(new_type_warehouse / "blob.arrow").to_pylist()
    # the engine writes BLOB tables too: tests/interop/test_blob_write_interop.py

"""Bitmap global indexes (ADR 0019, amended) on a data-evolution table pypaimon 2.1.0 wrote and indexed: bitmap
indexes on a unique BIGINT (in several index files over row ranges, small dictionary blocks), a STRING and a repeated
INT column, built after some commits, then rows they do not cover, then a BTree index on the INT column too (over
all rows: both types are used together).

The engine's ``=`` / ``in`` reads return the rows of unindexed reads (and pypaimon's, which use the same indexes)
and plan only the files of the matched rows plus the uncovered ones; the reader decodes pypaimon's files; a missing
or corrupt index file fails the read naming it; an index built before a type change is not used. pypaimon makes
the table in one subprocess call.
"""

from __future__ import annotations

import pathlib
import shutil
from typing import Any

import pyarrow as pa
import pytest

from table_engine import Catalog
from table_engine.errors import CorruptMetadataError, MissingFileError
from tests.interop.conftest import PypaimonClient, read_ipc
from tests.interop.data_evolution_model import RowIdModel
from tests.table_engine.test_cli_errors import state

pytestmark = pytest.mark.interop

FIELDS = [["id", "int64"], ["x", "string"], ["y", "int32"]]
SPEC: dict[str, Any] = {"name": "db.bm", "fields": FIELDS, "ops": [
    *({"op": "write", "rows": {"id": list(range(k, k + 40)), "x": [f"s{i:04d}" for i in range(k, k + 40)],
                               "y": [i % 7 for i in range(k, k + 40)]}} for k in range(0, 240, 40)),
    {"op": "update", "cols": ["y"], "rows": {"_ROW_ID": [5], "y": [105]}},
    {"op": "create_index", "column": "id", "type": "bitmap",
     "options": {"bitmap-index.dictionary-block-size": "64 b", "sorted-index.records-per-file": "100"}},
    {"op": "create_index", "column": "x", "type": "bitmap"},
    {"op": "create_index", "column": "y", "type": "bitmap"},
    {"op": "write", "rows": {"id": [300, 301], "x": ["s0001", "t"], "y": [3, 8]}},
    {"op": "create_index", "column": "y", "type": "btree"},  # y: a BTree over the rows too, the last ones included
]}
# not y = 3: with the bitmap (rows 0-239) and the BTree (rows 0-241) on y, pypaimon 2.1.0 misses row 240 (y = 3)
LOOKUPS = [["id", [7, 300]], ["id", [120, 239]], ["x", ["s0001"]], ["y", [105]]]
READS: list[list[tuple[str, str, Any]]] = [
    [("id", "=", 7)], [("id", "in", [7, 100, 239])], [("id", "=", 300)], [("id", "=", 1000)], [("id", "=", 150)],
    [("x", "=", "s0001")], [("x", "in", ["s0050", "s0203", "nope"])], [("y", "=", 3)], [("y", "in", [105, 9])],
    [("y", "=", 8)],
    [("id", "in", [7, 100]), ("x", "=", "s0100")], [("id", "=", 7), ("y", ">", 0)],
]


def _model() -> RowIdModel:
    model = RowIdModel([f for f, _ in FIELDS])
    for op in SPEC["ops"]:
        if op["op"] != "create_index":
            model.apply(op)
    return model


@pytest.fixture(scope="module")
def bm_warehouse(pypaimon: PypaimonClient, tmp_path_factory: pytest.TempPathFactory) -> tuple[pathlib.Path,
                                                                                               dict[str, Any]]:
    """pypaimon's table and its reading: every row and the filtered reads, which use the bitmap indexes."""
    root = tmp_path_factory.mktemp("bitmapidx")
    wh = root / "warehouse"
    result = pypaimon.run({"command": "global_index", "warehouse": str(wh), "out_dir": str(root),
                           "tables": [SPEC], "lookups": {"db.bm": LOOKUPS}})["db.bm"]
    rows = _model().with_row_ids()
    assert sorted(read_ipc(pathlib.Path(result["out"])).to_pylist(), key=lambda r: r["_ROW_ID"]) == rows
    for (column, values), look in zip(LOOKUPS, result["lookups"]):
        assert sorted(look["rows"], key=lambda r: r["_ROW_ID"]) == [r for r in rows if r[column] in values]
        assert look["indexed"] is not None, (column, values)
    assert sorted({(i[1], i[4]) for i in result["index"]}) == [("bitmap", 0), ("bitmap", 1), ("bitmap", 2),
                                                                ("btree", 2)]
    return wh, result


def test_reads_with_an_equality_filter_read_only_the_matched_files(
        bm_warehouse: tuple[pathlib.Path, dict[str, Any]]) -> None:
    """A filter ``=`` / ``in`` on a column with a bitmap index plans only the files of the matched row ids and the
    file the indexes do not cover; the rows equal an unindexed read and the model; the table is unchanged."""
    wh, result = bm_warehouse
    assert len([i for i in result["index"] if i[4] == 0]) > 1  # the id index: several files over row ranges
    before = state(str(wh))
    t = Catalog(str(wh)).get_table("db.bm")
    plain = t.copy({"global-index.enabled": "false"})
    rows = _model().with_row_ids()
    ops = {"=": lambda a, b: a == b, "in": lambda a, b: a in b, ">": lambda a, b: a > b}
    all_files = sum(len(s.files) for s in plain.plan())
    for preds in READS:
        want = sorted(({k: v for k, v in r.items() if k != "_ROW_ID"} for r in rows
                       if all(ops[op](r[c], v) for c, op, v in preds)), key=lambda r: r["id"])
        assert sorted(t.read(filter=preds).to_pylist(), key=lambda r: r["id"]) == want, preds
        assert sorted(plain.read(filter=preds).to_pylist(), key=lambda r: r["id"]) == want, preds
        assert sum(len(s.files) for s in plain.plan(filter=preds)) == all_files
        # the uncovered file, and per 40-row range holding a matched row its file (and the y column file of
        # the update, which overlays rows 0-39: planned together with them)
        looked_up = [r for r in rows if all(ops[op](r[c], v) for c, op, v in preds if op in ("=", "in"))]
        ranges = {r["id"] // 40 for r in looked_up if r["id"] < 240}
        # the last file: uncovered, but for y, whose BTree index covers it (used with its bitmap index)
        last = preds[0][0] != "y" or any(r["id"] >= 240 for r in looked_up)
        files = sum(len(s.files) for s in t.plan(filter=preds))
        assert files == last + len(ranges) + (0 in ranges), (preds, files)
    assert state(str(wh)) == before


def test_the_reader_decodes_pypaimons_bitmap_files(bm_warehouse: tuple[pathlib.Path, dict[str, Any]]) -> None:
    """bitmap_lookup on pypaimon's files returns the local row ids of the keys, reading only their bitmaps."""
    from table_engine.format.bitmap_index import bitmap_lookup
    from table_engine.io.paths import index_file_path

    wh, _ = bm_warehouse
    t = Catalog(str(wh)).get_table("db.bm")
    entries = [e for e in t.store.index_entries(t.latest_snapshot()) if e.index_file.global_index is not None]
    model = _model().with_row_ids()
    values = {"id": [0, 239, 5000], "x": ["s0003", "zz"], "y": [3, 105]}
    entries = [e for e in entries if e.index_file.index_type == "bitmap"]
    for field in t.schema.fields:
        # pypaimon splits the id index into files of 120 rows, each over the whole row range
        found, bitmaps = [], 0
        for e in entries:
            gi = e.index_file.global_index
            if gi.index_field_id == field.id:
                got = bitmap_lookup(t.file_io, index_file_path(t.store.table_path, e.index_file),
                                    e.index_file.file_size, field.type, pa.array(values[field.name]))
                found += (got.row_ids + gi.row_range_start).tolist()
                bitmaps += got.bitmaps_read
        matched = [r for r in model if r["_ROW_ID"] < 240 and r[field.name] in values[field.name]]
        assert sorted(found) == [r["_ROW_ID"] for r in matched], field.name
        assert bitmaps == len({r[field.name] for r in matched}), field.name


def test_a_missing_or_corrupt_index_file_fails_the_indexed_read_naming_it(
        bm_warehouse: tuple[pathlib.Path, dict[str, Any]], tmp_path: pathlib.Path) -> None:
    """Reads through a bitmap index that is damaged or gone fail with one line naming it, changing nothing; with
    ``global-index.enabled`` = false they work."""
    wh = tmp_path / "warehouse"
    shutil.copytree(bm_warehouse[0], wh)
    t = Catalog(str(wh)).get_table("db.bm")
    name = next(i[0] for i in bm_warehouse[1]["index"] if i[4] == 1)  # the x index
    index = wh / "db.db" / "bm" / "index" / name
    data = index.read_bytes()
    index.write_bytes(data[:-10] + b"\0" * 10)
    before = state(str(wh))
    with pytest.raises(CorruptMetadataError, match=f"bitmap index .*{index.name}: no bitmap footer"):
        t.read(filter=[("x", "=", "s0003")])
    index.unlink()
    with pytest.raises(MissingFileError, match=f"global index file .*{index.name}, which does not exist"):
        t.read(filter=[("x", "=", "s0003")])
    assert t.copy({"global-index.enabled": "false"}).read(filter=[("x", "=", "s0003")]).column("id").to_pylist() == [3]
    assert t.read(filter=[("id", "=", 3)]).column("id").to_pylist() == [3]
    index.write_bytes(data[:-10] + b"\0" * 10)
    assert state(str(wh)) == before


def test_an_index_built_before_a_type_change_is_not_used(bm_warehouse: tuple[pathlib.Path, dict[str, Any]],
                                                         tmp_path: pathlib.Path) -> None:
    """After INT -> BIGINT of the indexed ``y``, its bitmap and BTree indexes hold 4-byte keys: reads filter ``y``
    without them."""
    from table_engine.schema_change import UpdateColumnType

    wh = tmp_path / "warehouse"
    shutil.copytree(bm_warehouse[0], wh)
    t = Catalog(str(wh)).get_table("db.bm")
    assert sum(len(s.files) for s in t.plan(filter=[("y", "=", 105)])) == 2  # rows 0-39 and their y overlay
    t.alter(UpdateColumnType("y", pa.int64()))
    t = Catalog(str(wh)).get_table("db.bm")
    all_files = sum(len(s.files) for s in t.plan())
    assert sum(len(s.files) for s in t.plan(filter=[("y", "=", 105)])) == all_files
    assert t.read(filter=[("y", "in", [105])]).column("id").to_pylist() == [5]
    assert sum(len(s.files) for s in t.plan(filter=[("id", "=", 3)])) == 3  # the id index is still used

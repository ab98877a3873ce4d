"""Row tracking (``row-tracking.enabled``) against pypaimon 2.1.0: the same ``_ROW_ID`` / ``_SEQUENCE_NUMBER`` on
both sides, row ids assigned by the engine's commits continued by pypaimon's and the other way round."""

from __future__ import annotations

import pathlib
import shutil
import time

import pyarrow as pa
import pytest

from table_engine.catalog import Catalog
from tests.interop.conftest import PypaimonClient, read_ipc, write_ipc

pytestmark = pytest.mark.interop

SCHEMA = pa.schema([("id", pa.int64()), ("dt", pa.string()), ("v", pa.string())])
TABLES = ("db.rt", "db.rt_part")


def rows(start: int, n: int, dts: tuple[str, ...] = ("a", "b")) -> pa.Table:
    ids = list(range(start, start + n))
    return pa.table({"id": ids, "dt": [dts[i % len(dts)] for i in ids], "v": [f"v{i}" for i in ids]},
                    schema=SCHEMA)


def by_id(t: pa.Table) -> dict[int, tuple[int, int]]:
    """id -> (_ROW_ID, _SEQUENCE_NUMBER)."""
    d = t.to_pydict()
    return {i: (r, s) for i, r, s in zip(d["id"], d["_ROW_ID"], d["_SEQUENCE_NUMBER"], strict=True)}


@pytest.fixture(scope="module")
def rt_warehouse(pypaimon: PypaimonClient, tmp_path_factory: pytest.TempPathFactory) -> tuple[pathlib.Path, dict]:
    """pypaimon writes ``db.rt`` (unpartitioned) and ``db.rt_part`` (partitioned by ``dt``, grouped on commit) in
    three commits each, and reads them back with their row ids, in one subprocess."""
    tmp = tmp_path_factory.mktemp("rt")
    wh = tmp / "warehouse"
    batches = [str(write_ipc(rows(s, n), tmp / f"b{s}.arrow")) for s, n in ((0, 5), (5, 3), (8, 4))]
    opts = {"row-tracking.enabled": "true"}
    payload = [
        {"command": "rt_append", "warehouse": str(wh), "table": "db.rt", "options": opts, "batches": batches},
        {"command": "rt_append", "warehouse": str(wh), "table": "db.rt_part", "partition_keys": ["dt"],
         "options": {**opts, "row-tracking.partition-group-on-commit": "true"}, "batches": batches},
        *({"command": "rt_read", "warehouse": str(wh), "table": t, "out": str(tmp / f"{t}.arrow")} for t in TABLES),
    ]
    result = pypaimon.run(payload)
    return wh, {t: (by_id(read_ipc(tmp / f"{t}.arrow")), r["next_row_id"]) for t, r in zip(TABLES, result[2:])}


@pytest.mark.parametrize("table", TABLES)
def test_engine_reads_pypaimons_row_ids(rt_warehouse: tuple[pathlib.Path, dict], table: str) -> None:
    wh, expected = rt_warehouse
    ids, next_row_id = expected[table]
    assert next_row_id == 12 and sorted(r for r, _ in ids.values()) == list(range(12))
    t = Catalog(str(wh)).get_table(table)
    got = t.read(columns=["id", "_ROW_ID", "_SEQUENCE_NUMBER"])
    assert got.schema.names == ["id", "_ROW_ID", "_SEQUENCE_NUMBER"]
    assert by_id(got) == ids
    # filters on the system columns, alone and with a data column
    assert sorted(t.read(filter=[("_ROW_ID", ">=", 10)]).column("id").to_pylist()) == sorted(
        i for i, (r, _) in ids.items() if r >= 10)
    seq1 = {i for i, (_, s) in ids.items() if s == 1}
    assert set(t.read(filter=[("_SEQUENCE_NUMBER", "=", 1), ("id", ">=", 0)]).column("id").to_pylist()) == seq1
    assert set(t.read().column_names) == {"id", "dt", "v"}  # system columns only when asked for


@pytest.mark.parametrize("table", TABLES)
def test_engine_appends_continue_the_row_ids_and_pypaimon_agrees(
        rt_warehouse: tuple[pathlib.Path, dict], pypaimon: PypaimonClient, table: str, tmp_path: pathlib.Path) -> None:
    wh = tmp_path / "warehouse"
    shutil.copytree(rt_warehouse[0], wh)
    before, _ = rt_warehouse[1][table]
    t = Catalog(str(wh)).get_table(table)
    t.write(rows(100, 6))
    t.write(rows(200, 2), overwrite=False)
    snap = t.latest_snapshot()
    assert snap is not None and snap.next_row_id == 20
    mine = by_id(t.read(columns=["id", "_ROW_ID", "_SEQUENCE_NUMBER"]))
    assert {i: mine[i] for i in before} == before
    assert sorted(mine[i][0] for i in (*range(100, 106), 200, 201)) == list(range(12, 20))
    assert {mine[i][1] for i in range(100, 106)} == {snap.id - 1} and mine[200][1] == snap.id
    out1, out2 = tmp_path / "r1.arrow", tmp_path / "r2.arrow"
    result = pypaimon.run([
        {"command": "rt_read", "warehouse": str(wh), "table": table, "out": str(out1)},
        {"command": "rt_append", "warehouse": str(wh), "table": table,
         "batches": [str(write_ipc(rows(300, 3), tmp_path / "b300.arrow"))]},
        {"command": "rt_read", "warehouse": str(wh), "table": table, "out": str(out2)},
    ])
    assert by_id(read_ipc(out1)) == mine and result[0]["next_row_id"] == 20
    theirs = by_id(read_ipc(out2))
    assert result[2]["next_row_id"] == 23
    assert sorted(theirs[i][0] for i in range(300, 303)) == [20, 21, 22]  # no id repeats
    assert by_id(Catalog(str(wh)).get_table(table).read(columns=["id", "_ROW_ID", "_SEQUENCE_NUMBER"])) == theirs


@pytest.mark.parametrize("table", TABLES)
def test_engine_maintenance_keeps_pypaimons_row_ids(
        rt_warehouse: tuple[pathlib.Path, dict], pypaimon: PypaimonClient, table: str, tmp_path: pathlib.Path) -> None:
    """The engine compacts (its writer's compaction and a full one), expires snapshots, removes orphan files and
    writes more; pypaimon then reads every row with the id it had, and its next append continues the ids."""
    wh = tmp_path / "warehouse"
    shutil.copytree(rt_warehouse[0], wh)
    before, _ = rt_warehouse[1][table]
    t = Catalog(str(wh)).get_table(table)
    files = sum(len(s.files) for s in t.plan())
    t.write(rows(100, 2))
    t.maintenance.compact(full=True)
    assert sum(len(s.files) for s in t.plan()) < files + 2
    t.expire_snapshots(retain_max=1, retain_min=1)
    t.maintenance.remove_orphan_files(older_than_millis=int(time.time() * 1000))
    t.write(rows(200, 3))
    mine = by_id(t.read(columns=["id", "_ROW_ID", "_SEQUENCE_NUMBER"]))
    assert {i: mine[i] for i in before} == before
    out1, out2 = tmp_path / "r1.arrow", tmp_path / "r2.arrow"
    result = pypaimon.run([
        {"command": "rt_read", "warehouse": str(wh), "table": table, "out": str(out1)},
        {"command": "rt_append", "warehouse": str(wh), "table": table,
         "batches": [str(write_ipc(rows(300, 2), tmp_path / "b300.arrow"))]},
        {"command": "rt_read", "warehouse": str(wh), "table": table, "out": str(out2)},
    ])
    assert by_id(read_ipc(out1)) == mine and result[0]["next_row_id"] == 17
    theirs = by_id(read_ipc(out2))
    assert sorted(theirs[i][0] for i in (300, 301)) == [17, 18] and result[2]["next_row_id"] == 19
    assert {i: theirs[i] for i in mine} == mine


def test_engine_written_table_reads_the_same_in_pypaimon(pypaimon: PypaimonClient, tmp_path: pathlib.Path) -> None:
    wh = tmp_path / "warehouse"
    t = Catalog(str(wh)).create_table("db.e", SCHEMA, partition_keys=["dt"], options={
        "row-tracking.enabled": "true", "bucket": "-1", "write-only": "true"})
    for start, n in ((0, 4), (4, 3), (7, 5)):
        t.write(rows(start, n))
    t.maintenance.compact(full=True)
    t.write(rows(20, 2))
    mine = by_id(t.read(columns=["id", "_ROW_ID", "_SEQUENCE_NUMBER"]))
    assert sorted(r for r, _ in mine.values()) == list(range(14))
    out = tmp_path / "r.arrow"
    result = pypaimon.run({"command": "rt_read", "warehouse": str(wh), "table": "db.e", "out": str(out)})
    assert by_id(read_ipc(out)) == mine and result["next_row_id"] == 14

"""Migrate (Paimon's ``migrate_table``) of a directory of Parquet or ORC files: the files are renamed into a new
append table and recorded in its first snapshot with stats; any failure leaves the source byte for byte as it was
and no table behind."""

from __future__ import annotations

import hashlib
import pathlib

import pyarrow as pa
import pyarrow.orc as orc
import pyarrow.parquet as pq
import pytest

from table_engine import Catalog
from table_engine.errors import CommandError, SchemaMismatchError, TableAlreadyExistError, UnsupportedError
from table_engine.io.file_io import LocalFileIO
from table_engine.ops import MigrateTable
from table_engine.ops.run import run_command

ROWS = pa.schema([("id", pa.int64()), ("name", pa.string()), ("amount", pa.float64())])


def rows(lo: int, hi: int) -> pa.Table:
    ids = list(range(lo, hi))
    return pa.table({"id": ids, "name": [f"n{i}" for i in ids], "amount": [i * 1.5 for i in ids]}, schema=ROWS)


def hive_dir(root: pathlib.Path, fmt: str = "parquet", partitioned: bool = True) -> pathlib.Path:
    """``root/src``: files of rows 0..40 in dt=a / dt=b (or flat), a ``_SUCCESS`` marker, a hidden file."""
    src = root / "src"
    write = pq.write_table if fmt == "parquet" else orc.write_table
    for i, (lo, hi) in enumerate(((0, 10), (10, 25), (25, 33), (33, 40))):
        d = src / (f"dt={'ab'[i % 2]}" if partitioned else "")
        d.mkdir(parents=True, exist_ok=True)
        write(rows(lo, hi), str(d / f"part-{i:05d}.{fmt}"))
    (src / "_SUCCESS").write_text("")
    (src / ".hidden").write_text("x")
    return src


def snapshot_of(src: pathlib.Path) -> dict[str, str]:
    return {str(p.relative_to(src)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
            for p in sorted(src.rglob("*"))}


def expected(partitioned: bool = True) -> list[dict[str, object]]:
    out = []
    for i, (lo, hi) in enumerate(((0, 10), (10, 25), (25, 33), (33, 40))):
        for r in rows(lo, hi).to_pylist():
            out.append({**r, "dt": "ab"[i % 2]} if partitioned else r)
    return sorted(out, key=lambda r: r["id"])


@pytest.mark.parametrize("fmt", ["parquet", "orc"])
def test_migrates_a_partitioned_directory_in_place(catalog: Catalog, tmp_path: pathlib.Path, fmt: str) -> None:
    src = hive_dir(tmp_path, fmt)
    sizes = sorted(p.stat().st_size for p in src.rglob(f"*.{fmt}"))
    r = run_command(MigrateTable(warehouse=catalog.warehouse, table="db.t", source=str(src), format=fmt))
    assert r["files"] == 4 and r["rows"] == 40 and r["partitions"] == 2 and r["snapshot_id"] == 1
    assert not list(src.rglob(f"*.{fmt}")) and (src / "_SUCCESS").exists()  # moved, not copied
    t = catalog.get_table("db.t")
    assert t.partition_keys == ["dt"] and t.options.bucket() == -1 and t.schema.options["file.format"] == fmt
    assert sorted(t.read().to_pylist(), key=lambda r: r["id"]) == expected()
    files = [f for s in t.plan() for f in s.files]
    assert sorted(f.file_size for f in files) == sizes and all(f.file_name.startswith("migrated-") for f in files)
    assert t.read(columns=["dt", "id"]).column("dt").to_pylist().count("a") == 18  # 0..9 and 25..32
    # the stats are the rows': a filter on a value column prunes files by them and reads the right rows
    assert len([f for s in t.plan(filter=[("id", ">=", 30)]) for f in s.files]) == 2
    assert sorted(t.read(filter=[("id", ">=", 30)]).column("id").to_pylist()) == list(range(30, 40))
    assert t.read(filter=[("dt", "=", "b")]).num_rows == 22
    # the table is a normal append table afterwards: a write and a compaction work on it
    t.write(pa.table({"id": [100], "name": ["x"], "amount": [1.0], "dt": ["a"]}, schema=t.arrow_schema))
    t.maintenance.compact(full=True)
    assert t.read().num_rows == 41


def test_unpartitioned_and_delete_origin(catalog: Catalog, tmp_path: pathlib.Path) -> None:
    src = hive_dir(tmp_path, partitioned=False)
    r = run_command(MigrateTable(warehouse=catalog.warehouse, table="db.flat", source=str(src), delete_origin=True,
                                 options={"owner": "etl"}))
    assert r["partitions"] == 1 and not src.exists()
    t = catalog.get_table("db.flat")
    assert sorted(t.read().to_pylist(), key=lambda r: r["id"]) == expected(partitioned=False)
    assert t.schema.options["owner"] == "etl"


@pytest.mark.parametrize("bad", ["garbage", "other_schema", "partition_column"])
def test_a_bad_file_leaves_the_source_byte_for_byte(catalog: Catalog, tmp_path: pathlib.Path, bad: str) -> None:
    src = hive_dir(tmp_path)
    victim = src / "dt=b" / "part-00001.parquet"  # in the middle of the listing
    if bad == "garbage":
        victim.write_bytes(b"not a parquet file at all")
    elif bad == "other_schema":
        pq.write_table(pa.table({"id": ["x"], "name": ["y"], "amount": [1.0]}), str(victim))
    else:
        pq.write_table(pa.table({"id": [1], "name": ["y"], "amount": [1.0], "dt": ["b"]}), str(victim))
    before = snapshot_of(src)
    with pytest.raises(SchemaMismatchError, match="part-00001.parquet") as e:
        run_command(MigrateTable(warehouse=catalog.warehouse, table="db.t", source=str(src)))
    assert "\n" not in str(e.value)
    assert snapshot_of(src) == before and not catalog.table_exists("db.t")


class FailingRename(LocalFileIO):
    """A local file system whose n-th rename fails (a disk error half-way through the moves)."""

    def __init__(self, fail_at: int) -> None:
        super().__init__()
        self.fail_at, self.renames = fail_at, 0

    def rename(self, src: str, dst: str) -> None:
        self.renames += 1
        if self.renames == self.fail_at:
            raise OSError(f"injected failure renaming {src}")
        super().rename(src, dst)


def test_a_failure_half_way_renames_everything_back(tmp_path: pathlib.Path) -> None:
    src = hive_dir(tmp_path)
    before = snapshot_of(src)
    io = FailingRename(fail_at=3)
    catalog = Catalog(str(tmp_path / "wh"), file_io=io)
    with pytest.raises(OSError, match="injected failure"):
        run_command(MigrateTable(warehouse=catalog.warehouse, table="db.t", source=str(src)), catalog)
    assert io.renames > 3  # two files were moved and moved back
    assert snapshot_of(src) == before and not catalog.table_exists("db.t")


def test_refusals(catalog: Catalog, tmp_path: pathlib.Path) -> None:
    src = hive_dir(tmp_path)
    catalog.create_table("db.t", ROWS)
    before = snapshot_of(src)
    with pytest.raises(TableAlreadyExistError, match="db.t exists already"):
        run_command(MigrateTable(warehouse=catalog.warehouse, table="db.t", source=str(src)))
    with pytest.raises(CommandError, match="bucket=4 - a migrated table is an append table with bucket -1"):
        MigrateTable(warehouse=catalog.warehouse, table="db.u", source=str(src), options={"bucket": "4"})
    (src / "notpartition").mkdir()
    pq.write_table(rows(0, 1), str(src / "notpartition" / "x.parquet"))
    with pytest.raises(UnsupportedError, match="'notpartition' .* is not a Hive-style"):
        run_command(MigrateTable(warehouse=catalog.warehouse, table="db.u", source=str(src)))
    (src / "notpartition" / "x.parquet").unlink()
    (src / "notpartition").rmdir()
    assert snapshot_of(src) == before and not catalog.table_exists("db.u")


def test_migrates_a_parquet_format_table_with_typed_partitions(tmp_path: pathlib.Path) -> None:
    from table_engine.catalog.metastore_catalog import MetastoreCatalog
    from tests.table_engine.catalog.test_table_types import _FormatTablesMetastore

    schema = pa.schema([("id", pa.int64()), ("msg", pa.string()), ("year", pa.int32())])
    data = pa.table({"id": [1, 2, 3], "msg": ["a", None, "c"], "year": [2024, 2025, 2024]}, schema=schema)
    catalog = MetastoreCatalog(str(tmp_path / "w"), {"metastore": "hive"}, _FormatTablesMetastore())
    ft = catalog.create_format_table("db.events", schema, ["year"], {"file.format": "parquet"})
    ft.write(data)
    ft.write(data)
    base = {"warehouse": str(tmp_path / "w"), "table": "db.events_paimon", "source_table": "db.events"}
    r = run_command(MigrateTable(**base, delete_origin=True), catalog)  # type: ignore[arg-type]
    assert r["files"] == 4 and r["rows"] == 6 and r["partitions"] == 2
    t = catalog.get_table("db.events_paimon")
    assert t.arrow_schema.field("year").type == pa.int32() and t.partition_keys == ["year"]
    assert sorted(t.read().to_pylist(), key=lambda x: (x["id"], x["year"])) == sorted(
        data.to_pylist() * 2, key=lambda x: (x["id"], x["year"]))
    assert t.read(filter=[("year", "=", 2025)]).num_rows == 2
    assert catalog.list_tables("db") == ["events_paimon"] and not pathlib.Path(ft.location).exists()


def test_a_format_table_of_csv_is_refused(tmp_path: pathlib.Path) -> None:
    from table_engine.catalog.metastore_catalog import MetastoreCatalog
    from table_engine.errors import OptionError
    from tests.table_engine.catalog.test_table_types import _FormatTablesMetastore

    catalog = MetastoreCatalog(str(tmp_path / "w"), {"metastore": "hive"}, _FormatTablesMetastore())
    ft = catalog.create_format_table("db.c", pa.schema([("id", pa.int64())]), [], {"file.format": "csv"})
    ft.write(pa.table({"id": [1]}))
    before = snapshot_of(pathlib.Path(ft.location))
    with pytest.raises(OptionError, match="format table db.c holds csv files"):
        run_command(MigrateTable(warehouse=str(tmp_path / "w"), table="db.p", source_table="db.c"), catalog)
    assert snapshot_of(pathlib.Path(ft.location)) == before and catalog.list_tables("db") == ["c"]


def test_a_retry_finds_its_migration(catalog: Catalog, tmp_path: pathlib.Path) -> None:
    src = hive_dir(tmp_path)
    cmd = MigrateTable(warehouse=catalog.warehouse, table="db.t", source=str(src), commit_user="airflow:d:t:r1")
    first = run_command(cmd)
    again = run_command(cmd)  # the source is empty now: a later try finds the table it made
    assert again["already_done"] is True and again["snapshot_id"] == first["snapshot_id"] == 1
    assert catalog.get_table("db.t").latest_snapshot_id() == 1
    with pytest.raises(TableAlreadyExistError, match="exists already"):
        run_command(MigrateTable(warehouse=catalog.warehouse, table="db.t", source=str(src), commit_user="other"))


def test_a_format_table_replaced_by_its_migration(tmp_path: pathlib.Path) -> None:
    """Paimon's ``migrate_table`` without ``target_table``: the Paimon table takes the format table's name."""
    from table_engine.catalog.metastore_catalog import MetastoreCatalog
    from tests.table_engine.catalog.test_table_types import _FormatTablesMetastore

    schema = pa.schema([("id", pa.int64()), ("dt", pa.string())])
    catalog = MetastoreCatalog(str(tmp_path / "w"), {"metastore": "hive"}, _FormatTablesMetastore())
    ft = catalog.create_format_table("db.ev", schema, ["dt"], {"file.format": "orc"})
    ft.write(pa.table({"id": [1, 2, 3], "dt": ["x", "y", "x"]}, schema=schema))
    cmd = MigrateTable(warehouse=str(tmp_path / "w"), table="db.ev", source_table="db.ev", commit_user="u1")
    r = run_command(cmd, catalog)
    assert r["table"] == "db.ev" and r["rows"] == 3 and catalog.list_tables("db") == ["ev"]
    t = catalog.get_table("db.ev")
    assert t.schema.options["file.format"] == "orc"
    assert sorted(t.read().to_pylist(), key=lambda x: x["id"]) == [
        {"id": 1, "dt": "x"}, {"id": 2, "dt": "y"}, {"id": 3, "dt": "x"}]
    assert run_command(cmd, catalog)["already_done"] is True  # a retry finds it


def test_migrate_database_replaces_its_format_tables(tmp_path: pathlib.Path) -> None:
    from table_engine.catalog.metastore_catalog import MetastoreCatalog
    from table_engine.errors import OptionError
    from table_engine.ops import MigrateDatabase
    from tests.table_engine.catalog.test_table_types import _FormatTablesMetastore

    schema = pa.schema([("id", pa.int64()), ("dt", pa.string())])
    data = pa.table({"id": [1, 2], "dt": ["x", "y"]}, schema=schema)
    catalog = MetastoreCatalog(str(tmp_path / "w"), {"metastore": "hive"}, _FormatTablesMetastore())
    for name, fmt in (("a", "parquet"), ("b", "orc")):
        catalog.create_format_table(f"db.{name}", schema, ["dt"], {"file.format": fmt}).write(data)
    catalog.create_table("db.p", schema)  # a Paimon table: left as it is
    csv = catalog.create_format_table("db.c", schema, ["dt"], {"file.format": "csv"})
    csv.write(data)
    before = {n: snapshot_of(pathlib.Path(catalog.get_format_table(f"db.{n}").location)) for n in "abc"}
    cmd = MigrateDatabase(warehouse=str(tmp_path / "w"), table="db", commit_user="u")
    with pytest.raises(OptionError, match="format table db.c holds csv files"):  # checked before anything moves
        run_command(cmd, catalog)
    assert {n: snapshot_of(pathlib.Path(catalog.get_format_table(f"db.{n}").location)) for n in "abc"} == before
    catalog.drop_table("db.c")
    r = run_command(cmd, catalog)
    assert sorted(r["migrated"]) == ["db.a", "db.b"] and r["migrated"]["db.b"]["rows"] == 2
    for name in ("a", "b"):
        assert sorted(catalog.get_table(f"db.{name}").read().column("id").to_pylist()) == [1, 2]
    assert catalog.list_tables("db") == ["a", "b", "p"]
    assert run_command(cmd, catalog)["migrated"] == {}  # nothing left to migrate: converged


def test_hive_default_partition_is_null(catalog: Catalog, tmp_path: pathlib.Path) -> None:
    src = tmp_path / "src"
    for dt, ids in (("a", [1, 2]), ("__HIVE_DEFAULT_PARTITION__", [3])):
        (src / f"dt={dt}").mkdir(parents=True)
        pq.write_table(pa.table({"id": ids}), str(src / f"dt={dt}" / "f.parquet"))
    run_command(MigrateTable(warehouse=catalog.warehouse, table="db.n", source=str(src)))
    t = catalog.get_table("db.n")
    assert t.schema.options["partition.default-name"] == "__HIVE_DEFAULT_PARTITION__"
    assert sorted(t.read().to_pylist(), key=lambda r: r["id"]) == [
        {"id": 1, "dt": "a"}, {"id": 2, "dt": "a"}, {"id": 3, "dt": None}]
    assert t.read(filter=[("dt", "is null")]).column("id").to_pylist() == [3]

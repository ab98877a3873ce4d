"""Tables in ORC and Avro behave as on Parquet: same rows under random data, a table whose format changed, formats
per level, changelog files in a format, deletion vectors, file indexes, schema evolution."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from table_engine import Catalog
from table_engine.errors import OptionError
from table_engine.format.formats import WriteFormat, read_file, write_file
from table_engine.io.file_io import LocalFileIO
from table_engine.schema_change import AddColumn, RenameColumn, SetOption
from tests.budget import examples
from tests.table_engine.store.changelog_support import changelogs

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("name", pa.string()), ("v", pa.int32()),
                    ("x", pa.float64())])


def _exts(root: Path, prefix: str = "data-") -> set[str]:
    return {p.suffix for p in root.rglob(f"{prefix}*") if not p.name.endswith(".index")}


def _batch(ids: range, tag: str) -> pa.Table:
    return pa.table({"id": pa.array(list(ids), pa.int64()), "name": [f"{tag}{i}" for i in ids],
                     "v": pa.array([i % 7 for i in ids], pa.int32()), "x": [i / 3 for i in ids]}, schema=SCHEMA)


def _rows(t: pa.Table) -> list[dict[str, object]]:
    return sorted(t.to_pylist(), key=lambda r: r["id"])  # type: ignore[arg-type,return-value]


_ROW = st.fixed_dictionaries({
    "id": st.integers(-(2**63), 2**63 - 1), "name": st.none() | st.text(max_size=12),
    "v": st.none() | st.integers(-(2**31), 2**31 - 1),
    "x": st.none() | st.floats(allow_nan=False, width=64),
})


@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(_ROW, max_size=40), cols=st.sets(st.sampled_from(SCHEMA.names)))
def test_a_random_table_reads_the_same_from_parquet_orc_and_avro(tmp_path: Path, rows: list[dict[str, object]],
                                                                   cols: set[str]) -> None:
    table = pa.Table.from_pylist(rows, schema=SCHEMA)
    columns = [c for c in SCHEMA.names if c in cols] or None
    io = LocalFileIO()
    reads = []
    for fmt in ("parquet", "orc", "avro"):
        path = str(tmp_path / f"data-h-0.{fmt}")
        write_file(io, path, table, WriteFormat(fmt))
        got = read_file(io, path, columns)
        target = pa.schema([SCHEMA.field(c) for c in (columns or SCHEMA.names)])
        reads.append(got.cast(target))
    assert reads[0].equals(table.select(columns or SCHEMA.names))
    assert reads[1].equals(reads[0]) and reads[2].equals(reads[0])


def test_a_table_whose_format_changed_reads_old_and_new_files(tmp_path: Path) -> None:
    catalog = Catalog(str(tmp_path / "wh"))
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["id"], options={"bucket": "2"})
    t.write(_batch(range(100), "p"))
    t.alter(SetOption("file.format", "orc"))
    t = catalog.get_table("db.t")
    t.write(_batch(range(50, 150), "o"))
    t.alter(SetOption("file.format", "avro"))
    t = catalog.get_table("db.t")
    t.write(_batch(range(140, 160), "a"))
    expected = _rows(pa.concat_tables([_batch(range(50), "p"), _batch(range(50, 140), "o"),
                                       _batch(range(140, 160), "a")]))
    assert _exts(tmp_path / "wh") == {".parquet", ".orc", ".avro"}
    assert _rows(t.read()) == expected
    assert _rows(t.read(filter=[("v", "=", 3)])) == [r for r in expected if r["v"] == 3]
    t.maintenance.compact(full=True)
    assert _rows(catalog.get_table("db.t").read()) == expected
    live = {f.file_name.rsplit(".", 1)[-1] for s in catalog.get_table("db.t").plan() for f in s.files}
    assert live == {"avro"}


def test_format_per_level_and_changelog_format(tmp_path: Path) -> None:
    catalog = Catalog(str(tmp_path / "wh"))
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["id"], options={
        "bucket": "1", "file.format": "orc", "file.format.per.level": "0:avro",
        "file.compression.per.level": "0:deflate", "changelog-producer": "input", "changelog-file.format": "parquet",
        "changelog-file.compression": "none"})
    t.write(_batch(range(30), "a"))
    t.write(_batch(range(20, 40), "b"))
    level0 = {f.file_name.rsplit(".", 1)[-1] for s in t.plan() for f in s.files}
    assert level0 == {"avro"}
    assert _exts(tmp_path / "wh", "changelog-") == {".parquet"}
    assert sum(len(c) for c in changelogs(catalog.get_table("db.t")).values()) == 50
    t.maintenance.compact(full=True)
    top = {(f.level, f.file_name.rsplit(".", 1)[-1]) for s in catalog.get_table("db.t").plan() for f in s.files}
    assert top == {(5, "orc")}  # the highest level
    assert _rows(catalog.get_table("db.t").read()) == _rows(pa.concat_tables([_batch(range(20), "a"),
                                                                              _batch(range(20, 40), "b")]))


@pytest.mark.parametrize("fmt", ["orc", "avro"])
def test_deletion_vectors_file_index_and_schema_evolution_in_a_format(tmp_path: Path, fmt: str) -> None:
    catalog = Catalog(str(tmp_path / "wh"))
    opts = {"bucket": "1", "file.format": fmt, "deletion-vectors.enabled": "true",
            "file-index.bloom-filter.columns": "name", "metadata.stats-mode": "full"}
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["id"], options=opts)
    t.write(_batch(range(200), "a"))
    t.maintenance.compact(full=True)
    t.write(_batch(range(0, 200, 10), "b"))  # updates: the lookup compaction marks old rows in deletion vectors
    t.maintenance.compact()
    expected = _rows(pa.concat_tables([_batch(range(200), "a").filter(pa.array([i % 10 != 0 for i in range(200)])),
                                       _batch(range(0, 200, 10), "b")]))
    t = catalog.get_table("db.t")
    assert any(s.deletion_files for s in t.plan()), "no deletion vector was written"
    assert _rows(t.read()) == expected
    hit = [("name", "=", "a5")]
    assert _rows(t.read(filter=hit)) == [r for r in expected if r["name"] == "a5"]
    files = [f for s in t.plan() for f in s.files]
    assert all(f.file_name.endswith(f".{fmt}") for f in files)
    assert any(f.embedded_file_index or f.extra_files for f in files), "no file index was written"
    assert sum(len(s.files) for s in t.plan([("name", "=", "nope")])) < len(files)  # the index prunes files
    t.alter(AddColumn("extra", pa.string()), RenameColumn("v", "w"))
    t = catalog.get_table("db.t")
    got = _rows(t.read())
    assert [r["w"] for r in got] == [r["v"] for r in expected] and all(r["extra"] is None for r in got)


def test_orc_and_avro_tables_on_s3(s3_catalog: Catalog) -> None:
    for fmt in ("orc", "avro"):
        t = s3_catalog.create_table(f"db.{fmt}", SCHEMA, primary_keys=["id"],
                                    options={"bucket": "1", "file.format": fmt})
        t.write(_batch(range(30), "a"))
        t.write(_batch(range(20, 40), "b"))
        t.maintenance.compact(full=True)
        t = s3_catalog.get_table(f"db.{fmt}")
        assert {f.file_name.rsplit(".", 1)[-1] for s in t.plan() for f in s.files} == {fmt}
        assert _rows(t.read()) == _rows(pa.concat_tables([_batch(range(20), "a"), _batch(range(20, 40), "b")]))
        assert _rows(t.read(columns=["id", "x"])) == [{"id": i, "x": i / 3} for i in range(40)]


def test_orc_writer_options_and_a_bad_one(tmp_path: Path) -> None:
    catalog = Catalog(str(tmp_path / "wh"))
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["id"], options={
        "bucket": "1", "file.format": "orc", "orc.bloom.filter.columns": "name", "orc.bloom.filter.fpp": "0.01",
        "orc.dictionary.key.threshold": "0.8", "orc.stripe.size": "1048576", "orc.row.index.stride": "1000"})
    t.write(_batch(range(3000), "a"))
    assert _rows(t.read(filter=[("name", "=", "a7")])) == _rows(_batch(range(7, 8), "a"))
    with pytest.raises(OptionError, match="orc.bloom.filter.columns"):
        t.copy({"orc.bloom.filter.columns": "nope"}).write(_batch(range(3), "b"))

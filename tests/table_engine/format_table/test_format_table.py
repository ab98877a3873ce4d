"""Format tables (table_engine.format_table): round trips per format, partition pruning, projection, overwrite,
csv options, refused input, and a property round trip for csv and parquet."""

from __future__ import annotations

import datetime
import decimal
import hashlib
import os
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from table_engine.errors import OptionError, PartitionSpecError, SchemaMismatchError, UnsupportedError
from table_engine.format_table import FormatTable
from table_engine.io.counting import CountingFileIO
from table_engine.io.file_io import LocalFileIO
from tests.budget import examples

FORMATS = ["csv", "json", "parquet", "orc"]

SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string()), ("ts", pa.timestamp("us")),
                    ("amount", pa.decimal128(10, 2)), ("ok", pa.bool_()), ("score", pa.float64()),
                    ("day", pa.date32()), ("pt", pa.string())])


def sample() -> pa.Table:
    return pa.table({
        "id": [1, 2, 3, None],
        "name": ["a,b", 'q"x\\', None, "line\nbreak"],
        "ts": [datetime.datetime(2024, 1, 1, 12, 0, 0, 5), None, datetime.datetime(2000, 1, 1), None],
        "amount": [decimal.Decimal("1.50"), None, decimal.Decimal("-3.00"), decimal.Decimal("0.01")],
        "ok": [True, None, False, True],
        "score": [1.5, float("inf"), None, -0.25],
        "day": [datetime.date(2024, 1, 2), None, datetime.date(1969, 12, 31), datetime.date(2000, 2, 29)],
        "pt": ["x", "y", None, "x"],
    }, schema=SCHEMA)


def snapshot(root: Path) -> dict[str, str]:
    """Every file and directory under ``root`` with a hash of its content (directories: '')."""
    out = {}
    for base, dirs, files in os.walk(root):
        for d in dirs:
            out[os.path.relpath(os.path.join(base, d), root) + "/"] = ""
        for f in files:
            p = os.path.join(base, f)
            out[os.path.relpath(p, root)] = hashlib.sha256(Path(p).read_bytes()).hexdigest()
    return out


def table(tmp_path: Path, fmt: str, keys: tuple[str, ...] = ("pt",), schema: pa.Schema = SCHEMA,
          **options: str) -> FormatTable:
    return FormatTable(LocalFileIO(), str(tmp_path / "t"), schema, keys, {"file.format": fmt, **options})


@pytest.mark.parametrize("fmt", FORMATS)
def test_round_trip_with_nulls(tmp_path: Path, fmt: str) -> None:
    t = table(tmp_path, fmt)
    result = t.write(sample())
    assert len(result.added) == 3  # one file per partition: x, y, null
    names = sorted(p.rsplit("/", 2)[-2] + "/" + p.rsplit("/", 1)[-1].split("-")[0] for p in result.added)
    assert names == ["pt=__DEFAULT_PARTITION__/data", "pt=x/data", "pt=y/data"]
    assert all(p.endswith(f"-0.{fmt}") for p in result.added)
    back = t.read().sort_by("id")
    assert back.equals(sample().sort_by("id"))


def test_unpartitioned_append_adds_files(tmp_path: Path) -> None:
    t = table(tmp_path, "parquet", keys=())
    t.write(sample())
    t.write(sample())
    assert t.read().num_rows == 8
    assert len(t.data_files()) == 2


def test_csv_is_written_as_paimon_writes_it(tmp_path: Path) -> None:
    t = table(tmp_path, "csv")
    result = t.write(sample())
    x = next(p for p in result.added if "/pt=x/" in p)
    # quote only where needed, escape with '\', nulls as the empty null literal, timestamps at the type's precision
    assert Path(x).read_text() == ('1,"a,b",2024-01-01 12:00:00.000005,1.50,true,1.5,2024-01-02\n'
                                   ',"line\nbreak",,0.01,true,-0.25,2000-02-29\n')
    y = next(p for p in result.added if "/pt=y/" in p)
    assert Path(y).read_text() == '2,"q\\"x\\\\",,,,Infinity,\n'


def test_json_is_written_as_paimon_writes_it(tmp_path: Path) -> None:
    t = table(tmp_path, "json")
    result = t.write(sample())
    y = next(p for p in result.added if "/pt=y/" in p)
    assert Path(y).read_text() == ('{"id":"2","name":"q\\"x\\\\","ts":null,"amount":null,"ok":null,'
                                   '"score":"Infinity","day":null}\n')


def test_json_reads_native_scalars(tmp_path: Path) -> None:
    """Spark writes json numbers and booleans natively; Paimon as strings: both read."""
    t = table(tmp_path, "json", keys=(), schema=pa.schema([("id", pa.int64()), ("ok", pa.bool_())]))
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "part-0.json").write_text('{"id":1,"ok":true}\n{"id":null}\n')
    (tmp_path / "t" / "part-1.json").write_text('{"id":"2","ok":"false"}\n')
    assert t.read().to_pylist() == [{"id": 1, "ok": True}, {"id": None, "ok": None}, {"id": 2, "ok": False}]


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_partition_pruning_opens_only_matching_files(tmp_path: Path, fmt: str) -> None:
    schema = pa.schema([("v", pa.int32()), ("year", pa.int32()), ("region", pa.string())])
    data = pa.table({"v": list(range(12)), "year": [2023, 2024, 2025] * 4, "region": ["eu", "us"] * 6},
                    schema=schema)
    FormatTable(LocalFileIO(), str(tmp_path / "t"), schema, ["year", "region"], {"file.format": fmt}).write(data)
    counting = CountingFileIO(LocalFileIO())
    t = FormatTable(counting, str(tmp_path / "t"), schema, ["year", "region"], {"file.format": fmt})
    rows = t.read(filter=[("year", ">=", 2024), ("region", "=", "us")])
    assert sorted(rows.column("v").to_pylist()) == [1, 5, 7, 11]
    assert len(counting.read_paths) == 2
    assert all("/region=us/" in p and "/year=2023/" not in p for p in counting.read_paths)
    counting.reset()
    assert t.read(filter=[("year", "=", 1999)]).num_rows == 0
    assert counting.reads() == 0


def test_projection_and_row_filter(tmp_path: Path) -> None:
    t = table(tmp_path, "parquet")
    t.write(sample())
    assert t.read(columns=["pt", "id"], filter=[("id", ">", 1)]).sort_by("id").to_pylist() == [
        {"pt": "y", "id": 2}, {"pt": None, "id": 3}]
    assert t.read(columns=["pt"]).num_rows == 4
    assert t.read(filter=[("pt", "is null")]).column("id").to_pylist() == [3]
    with pytest.raises(Exception, match="unknown column"):
        t.read(filter=[("nope", "=", 1)])


@pytest.mark.parametrize("fmt", ["csv", "orc"])
def test_overwrite_one_partition(tmp_path: Path, fmt: str) -> None:
    t = table(tmp_path, fmt)
    t.write(sample())
    replacement = sample().filter(pa.compute.equal(sample().column("id"), 1)).set_column(
        0, "id", pa.array([100], pa.int64()))
    result = t.overwrite(replacement)  # dynamic: only pt=x is replaced
    assert len(result.deleted) == 1 and "/pt=x/" in result.deleted[0]
    assert sorted(t.read(columns=["id"]).column("id").to_pylist(), key=str) == [100, 2, 3]
    t.overwrite(replacement.slice(0, 0), partitions={"pt": "y"})  # static: pt=y emptied
    assert sorted(t.read(columns=["id"]).column("id").to_pylist(), key=str) == [100, 3]


def test_overwrite_whole_table_without_dynamic_partitions(tmp_path: Path) -> None:
    t = table(tmp_path, "parquet", **{"dynamic-partition-overwrite": "false"})
    t.write(sample())
    t.overwrite(sample().slice(0, 1))
    assert t.read(columns=["id"]).column("id").to_pylist() == [1]


def test_static_partition_prefix_replaces_below(tmp_path: Path) -> None:
    schema = pa.schema([("v", pa.int32()), ("year", pa.int32()), ("region", pa.string())])
    t = FormatTable(LocalFileIO(), str(tmp_path / "t"), schema, ["year", "region"], {"file.format": "parquet"})
    t.write(pa.table({"v": [1, 2, 3], "year": [2024, 2024, 2025], "region": ["eu", "us", "eu"]}, schema=schema))
    t.overwrite(pa.table({"v": [9], "year": [2024], "region": ["eu"]}, schema=schema), partitions={"year": 2024})
    assert sorted(t.read(columns=["v"]).column("v").to_pylist()) == [3, 9]
    with pytest.raises(PartitionSpecError, match="outside the static partition"):
        t.overwrite(pa.table({"v": [9], "year": [2025], "region": ["eu"]}, schema=schema), partitions={"year": 2024})
    with pytest.raises(PartitionSpecError, match="leading partition keys"):
        t.overwrite(pa.table({"v": [9], "year": [2024], "region": ["eu"]}, schema=schema), partitions={"region": "eu"})


def test_csv_options(tmp_path: Path) -> None:
    schema = pa.schema([("a", pa.int32()), ("b", pa.string())])
    t = FormatTable(LocalFileIO(), str(tmp_path / "t"), schema, [],
                    {"file.format": "csv", "csv.field-delimiter": ";", "csv.include-header": "true",
                     "csv.quote-character": "'", "csv.null-literal": "NULL", "file.compression": "gzip"})
    data = pa.table({"a": [1, None], "b": ["it's;x", ""]}, schema=schema)
    result = t.write(data)
    assert result.added[0].endswith(".csv.gz")
    import gzip

    assert gzip.decompress(Path(result.added[0]).read_bytes()).decode() == "a;b\n1;'it\\'s;x'\nNULL;\n"
    assert t.read().equals(data)


def test_csv_fallback_keys_and_modes(tmp_path: Path) -> None:
    schema = pa.schema([("a", pa.int32()), ("b", pa.string())])
    root = tmp_path / "t"
    root.mkdir()
    (root / "data-x-0.csv").write_text("a|b\n1|x\noops|y\n")
    base = {"file.format": "csv", "delimiter": "|", "header": "true"}
    assert FormatTable(LocalFileIO(), str(root), schema, [], base).read().to_pylist() == [
        {"a": 1, "b": "x"}, {"a": None, "b": "y"}]
    assert FormatTable(LocalFileIO(), str(root), schema, [], {**base, "csv.mode": "dropmalformed"}) \
        .read().to_pylist() == [{"a": 1, "b": "x"}]
    with pytest.raises(Exception, match="'oops' of column 'a'"):
        FormatTable(LocalFileIO(), str(root), schema, [], {**base, "mode": "FAILFAST"}).read()


def test_hidden_files_and_staging_are_not_read(tmp_path: Path) -> None:
    t = table(tmp_path, "csv", keys=(), schema=pa.schema([("a", pa.int32())]))
    t.write(pa.table({"a": pa.array([1], pa.int32())}))
    root = tmp_path / "t"
    (root / "_SUCCESS").write_text("")
    (root / "_temporary").mkdir(exist_ok=True)
    (root / "_temporary" / "data-z-0.csv").write_text("5\n")
    (root / ".data-y-0.csv.crc").write_text("junk")
    assert t.read().column("a").to_pylist() == [1]


def test_partition_only_value_layout_and_escaping(tmp_path: Path) -> None:
    schema = pa.schema([("v", pa.int32()), ("k", pa.string())])
    t = FormatTable(LocalFileIO(), str(tmp_path / "t"), schema, ["k"],
                    {"file.format": "parquet", "format-table.partition-path-only-value": "true"})
    t.write(pa.table({"v": [1, 2, 3], "k": ["a=b:c", None, " "]}, schema=schema))
    assert sorted(os.listdir(tmp_path / "t")) == ["__DEFAULT_PARTITION__", "a%3Db%3Ac"]
    assert sorted(t.read().to_pylist(), key=lambda r: r["v"]) == [
        {"v": 1, "k": "a=b:c"}, {"v": 2, "k": None}, {"v": 3, "k": None}]


def test_date_partition_legacy_name(tmp_path: Path) -> None:
    schema = pa.schema([("v", pa.int32()), ("d", pa.date32())])
    data = pa.table({"v": [1], "d": [datetime.date(2024, 1, 1)]}, schema=schema)
    legacy = FormatTable(LocalFileIO(), str(tmp_path / "a"), schema, ["d"], {"file.format": "orc"})
    legacy.write(data)
    assert os.listdir(tmp_path / "a") == ["d=19723"]
    modern = FormatTable(LocalFileIO(), str(tmp_path / "b"), schema, ["d"],
                         {"file.format": "orc", "partition.legacy-name": "false"})
    modern.write(data)
    assert os.listdir(tmp_path / "b") == ["d=2024-01-01"]
    assert legacy.read().equals(data) and modern.read().equals(data)


def test_target_file_row_num_rolls_files(tmp_path: Path) -> None:
    t = table(tmp_path, "json", keys=(), schema=pa.schema([("a", pa.int64())]), **{"target-file-row-num": "2"})
    result = t.write(pa.table({"a": list(range(5))}))
    assert [p.rsplit("-", 1)[-1] for p in result.added] == ["0.json", "1.json", "2.json"]
    assert sorted(t.read().column("a").to_pylist()) == list(range(5))


BAD_INPUTS = {
    "unknown column": (pa.table({"id": [1], "nope": [2]}), SchemaMismatchError),
    "type mismatch": (sample().set_column(0, "id", pa.array(["1", "2", "3", "4"])), SchemaMismatchError),
    "slash in partition value": (sample().set_column(7, "pt", pa.array(["ok", "a/b", "ok", "ok"])),
                                 PartitionSpecError),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
@pytest.mark.parametrize("overwrite", [False, True])
def test_bad_input_leaves_directory_unchanged(tmp_path: Path, case: str, overwrite: bool) -> None:
    t = table(tmp_path, "csv")
    t.write(sample())
    before = snapshot(tmp_path)
    data, error = BAD_INPUTS[case]
    with pytest.raises(error):
        t.overwrite(data) if overwrite else t.write(data)
    assert snapshot(tmp_path) == before


def test_options_refused_by_name() -> None:
    with pytest.raises(OptionError, match="Unknown format table option 'csv.field-delimeter'.*csv.field-delimiter"):
        FormatTable(LocalFileIO(), "/tmp/x", SCHEMA, [], {"file.format": "csv", "csv.field-delimeter": ";"})
    with pytest.raises(OptionError, match="does not implement"):
        FormatTable(LocalFileIO(), "/tmp/x", SCHEMA, [], {"format-table.commit-hive-sync-url": "thrift://h:1"})
    with pytest.raises(OptionError, match="'format-table'"):
        FormatTable(LocalFileIO(), "/tmp/x", SCHEMA, [], {"type": "table"})
    with pytest.raises(OptionError, match="must differ"):
        FormatTable(LocalFileIO(), "/tmp/x", SCHEMA, [], {"file.format": "csv", "csv.quote-character": ","})
    with pytest.raises(OptionError, match="Compression 'snappy'"):
        FormatTable(LocalFileIO(), "/tmp/x", SCHEMA, [], {"file.format": "csv", "file.compression": "snappy"})
    with pytest.raises(UnsupportedError, match="primitive"):
        FormatTable(LocalFileIO(), "/tmp/x", pa.schema([("l", pa.list_(pa.int32()))]), [], {"file.format": "csv"})


# -- property round trip ---------------------------------------------------------------------------------------------

_text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
_rows = st.lists(st.tuples(
    st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1)),
    st.one_of(st.none(), _text),
    st.one_of(st.none(), st.floats(allow_nan=False, width=64)),
    st.one_of(st.none(), st.booleans()),
    st.one_of(st.none(), st.datetimes(datetime.datetime(1900, 1, 1), datetime.datetime(2200, 1, 1))),
    st.one_of(st.none(), st.sampled_from(["p", "q", "r", "é"])),
), max_size=30)
PROP_SCHEMA = pa.schema([("i", pa.int64()), ("s", pa.string()), ("f", pa.float64()), ("b", pa.bool_()),
                         ("t", pa.timestamp("us")), ("pt", pa.string())])


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_property_round_trip(tmp_path_factory: pytest.TempPathFactory, fmt: str) -> None:
    @settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(rows=_rows, header=st.booleans())
    def check(rows: list[tuple[object, ...]], header: bool) -> None:
        root = tmp_path_factory.mktemp("prop")
        data = pa.Table.from_pylist([dict(zip(PROP_SCHEMA.names, r, strict=True)) for r in rows], schema=PROP_SCHEMA)
        t = FormatTable(LocalFileIO(), str(root), PROP_SCHEMA, ["pt"],
                        {"file.format": fmt, "csv.include-header": str(header).lower()})
        t.write(data)
        expected = data
        if fmt == "csv":  # Paimon: a value equal to the null literal ('') reads as null
            s = data.column("s")
            expected = data.set_column(1, "s", pa.compute.if_else(pa.compute.equal(s, ""), None, s))
        key = ["i", "s", "f", "b", "t", "pt"]
        order = [(k, "ascending") for k in key]
        assert t.read().sort_by(order).to_pylist() == expected.sort_by(order).to_pylist()

    check()


def test_the_options_reference_is_current() -> None:
    from pathlib import Path

    from table_engine.format_table.options import render_markdown

    doc = (Path(__file__).resolve().parents[3] / "docs" / "format-tables.md").read_text()
    marker = "Generated by `python -m table_engine.format_table.options --markdown`.\n\n"
    assert doc.split(marker, 1)[1] == render_markdown(), (
        "docs/format-tables.md is stale: replace everything after its 'Generated by' line with the output of "
        "`python -m table_engine.format_table.options --markdown`")

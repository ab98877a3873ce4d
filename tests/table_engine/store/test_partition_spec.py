"""Partition specs (issue 11): one text form, values typed against the partition columns, used by every command."""

from __future__ import annotations

import datetime
import decimal
import hashlib
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from paimon_provider.utils.arguments import parse_partition_spec

from table_engine import Catalog
from table_engine.cli import build_parser, main
from table_engine.errors import PartitionSpecError, SchemaError, TableEngineError
from table_engine.format.binary_row import encode_row
from table_engine.schema_change import SetOption
from table_engine.store.partition_spec import (
    PartitionSpec,
    format_partition_text,
    format_partition_texts,
    parse_partition_text,
    parse_partition_texts,
    partition_specs,
    select_partitions,
)
from table_engine.table import Table
from table_engine.types import DataField, parse_type
from tests.budget import examples

UTC = datetime.UTC


def fields(**types: str) -> list[DataField]:
    return [DataField(i, name, parse_type(t)) for i, (name, t) in enumerate(types.items())]


def tree_digest(path: str) -> dict[str, str]:
    """sha256 of every file under a directory (the table's files byte for byte)."""
    out = {}
    for root, _, names in os.walk(path):
        for name in names:
            p = os.path.join(root, name)
            out[os.path.relpath(p, path)] = hashlib.sha256(Path(p).read_bytes()).hexdigest()
    return out


# ---- typing values -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("type_", "text", "value"), [
    ("DATE", "2024-01-01", datetime.date(2024, 1, 1)),
    ("DATE", "19723", datetime.date(2024, 1, 1)),  # the legacy directory name: days since 1970-01-01
    ("TIMESTAMP(6)", "2024-01-01 10:30:00.123456", datetime.datetime(2024, 1, 1, 10, 30, 0, 123456)),
    ("TIMESTAMP(3)", "2024-01-01T10:30", datetime.datetime(2024, 1, 1, 10, 30)),
    ("TIMESTAMP(6)", "2024-01-01", datetime.datetime(2024, 1, 1)),
    ("TIMESTAMP(6)", "2024-01-01T12:00:00+02:00", datetime.datetime(2024, 1, 1, 10)),
    ("TIMESTAMP_LTZ(6)", "2024-01-01 10:00:00", datetime.datetime(2024, 1, 1, 10, tzinfo=UTC)),
    ("INT", " 42 ", 42),
    ("INT", "-7", -7),
    ("BIGINT", "9007199254740993", 9007199254740993),
    ("SMALLINT", "300", 300),
    ("TINYINT", "-128", -128),
    ("DECIMAL(10, 2)", "12.5", decimal.Decimal("12.50")),
    ("DECIMAL(38, 0)", "12345678901234567890123456789", decimal.Decimal("12345678901234567890123456789")),
    ("BOOLEAN", "true", True),
    ("BOOLEAN", "FALSE", False),
    ("BOOLEAN", "1", True),
    ("STRING", " padded, as given ", " padded, as given "),
    ("VARCHAR(10)", "", ""),
    ("CHAR(3)", "abc", "abc"),
    ("DOUBLE", "1.5", 1.5),
    ("FLOAT", "0.1", float(pa.scalar(0.1, pa.float32()).as_py())),
])
def test_each_type_parses_from_text(type_: str, text: str, value: Any) -> None:
    spec = PartitionSpec.of({"p": text}, fields(p=type_))
    assert spec.as_dict() == {"p": value}
    assert type(spec.as_dict()["p"]) is type(value)


@pytest.mark.parametrize(("type_", "value", "expected"), [
    ("DATE", datetime.date(2024, 1, 1), datetime.date(2024, 1, 1)),
    ("TIMESTAMP(6)", datetime.date(2024, 1, 1), datetime.datetime(2024, 1, 1)),
    ("INT", 5, 5),
    ("DECIMAL(10, 2)", decimal.Decimal("1.5"), decimal.Decimal("1.50")),
    ("DECIMAL(10, 2)", 3, decimal.Decimal("3.00")),
    ("BOOLEAN", False, False),
    ("STRING", "x", "x"),
])
def test_typed_values_are_checked_and_normalized(type_: str, value: Any, expected: Any) -> None:
    assert PartitionSpec.of({"p": value}, fields(p=type_)).as_dict() == {"p": expected}


@pytest.mark.parametrize(("type_", "value"), [
    ("DATE", "notadate"), ("DATE", "2024-13-01"), ("DATE", "20240101"), ("DATE", "2024-01-01 10:00"),
    ("TIMESTAMP(6)", "yesterday"), ("TIMESTAMP(0)", "2024-01-01 10:00:00.5"),
    ("INT", "1.5"), ("INT", "x"), ("INT", "2147483648"), ("TINYINT", "128"), ("BIGINT", "1_000"),
    ("DECIMAL(10, 2)", "1.234"), ("DECIMAL(4, 2)", "123.4"), ("DECIMAL(10, 2)", "NaN"), ("DECIMAL(10, 2)", "abc"),
    ("BOOLEAN", "maybe"), ("DOUBLE", "one"),
    ("INT", True), ("INT", 1.0), ("DATE", datetime.datetime(2024, 1, 1)), ("BOOLEAN", 1), ("STRING", 5),
])
def test_bad_value_names_column_and_value(type_: str, value: Any) -> None:
    with pytest.raises(PartitionSpecError) as e:
        PartitionSpec.of({"col": value}, fields(col=type_))
    message = str(e.value)
    assert "\n" not in message and "'col'" in message and repr(value) in message
    assert isinstance(e.value, TableEngineError) and isinstance(e.value, ValueError)


def test_default_partition_name_means_null() -> None:
    f = fields(d="DATE", s="STRING")
    assert PartitionSpec.of("d=__DEFAULT_PARTITION__,s=__DEFAULT_PARTITION__", f).as_dict() == {"d": None, "s": None}
    assert PartitionSpec.of({"d": None}, f).as_dict() == {"d": None}
    assert PartitionSpec.of({"s": "__DEFAULT_PARTITION__"}, f, default_name="NULLP").as_dict() == {
        "s": "__DEFAULT_PARTITION__"}
    assert PartitionSpec.of({"s": "NULLP"}, f, default_name="NULLP").as_dict() == {"s": None}
    assert str(PartitionSpec.of({"d": None}, f, default_name="NULLP")) == "d=NULLP"


def test_unknown_column_empty_spec_and_malformed_text() -> None:
    f = fields(dt="STRING", h="INT")
    with pytest.raises(PartitionSpecError, match=r"'nope' not partition columns of db\.t .*\['dt', 'h'\]"):
        PartitionSpec.of({"nope": "1"}, f, table="db.t")
    with pytest.raises(PartitionSpecError, match="names no partition column"):
        PartitionSpec.of({}, f)
    with pytest.raises(PartitionSpecError, match="k=v,k2=v2"):
        parse_partition_text("dt")
    with pytest.raises(PartitionSpecError, match="twice"):
        parse_partition_text("dt=a,dt=b")
    with pytest.raises(PartitionSpecError):
        PartitionSpec.of("dt=a", fields())  # an unpartitioned table has no partition columns
    assert isinstance(PartitionSpecError("x"), SchemaError)


def test_text_form() -> None:
    assert parse_partition_text(" dt = 2024-01-01 , h=1 ,") == {"dt": "2024-01-01", "h": "1"}
    assert parse_partition_text(r"k=a\,b\=c\;d\\e,k2=\ x\ ") == {"k": "a,b=c;d\\e", "k2": " x "}
    assert parse_partition_text("k=a=b") == {"k": "a=b"}  # only the first '=' separates
    assert parse_partition_texts("dt=a,h=1; dt=b ;") == [{"dt": "a", "h": "1"}, {"dt": "b"}]
    assert format_partition_text({"k": "a,b", "d": datetime.date(2024, 1, 2), "n": None, "b": True,
                                  "x": decimal.Decimal("1.50")}) \
        == r"k=a\,b,d=2024-01-02,n=__DEFAULT_PARTITION__,b=true,x=1.50"
    assert partition_specs("dt=a;dt=b", fields(dt="STRING")) == [
        PartitionSpec.of({"dt": "a"}, fields(dt="STRING")), PartitionSpec.of({"dt": "b"}, fields(dt="STRING"))]
    assert partition_specs(None, fields(dt="STRING")) is None


def render_partitions(partitions: Sequence[Mapping[str, object]] | Mapping[str, object] | str | None) -> list[str]:
    r"""``--partition k=v,k2=v2`` options from partition specs (a mapping, a list of mappings, or ``k=v,..`` text;
    several specs in text are separated by ``;``), in the engine's one text form (:func:`format_partition_text`):
    values holding ``,``, ``=``, ``;`` or ``\`` are escaped, and the CLI's parser reads back exactly these values."""
    if partitions is None or partitions == "" or partitions == []:
        return []
    specs: list[Mapping[str, object]]
    if isinstance(partitions, str):
        specs = list(parse_partition_texts(partitions))
    elif isinstance(partitions, Mapping):
        specs = [partitions]
    else:
        specs = list(partitions)
    out: list[str] = []
    for s in specs:
        out += ["--partition", format_partition_text(s)]
    return out


def test_render_partitions() -> None:
    assert render_partitions(None) == [] and render_partitions("") == [] and render_partitions([]) == []
    assert render_partitions({"dt": "2024-01-01", "h": 3}) == ["--partition", "dt=2024-01-01,h=3"]
    assert render_partitions([{"dt": "a"}, {"dt": "b"}]) == ["--partition", "dt=a", "--partition", "dt=b"]
    assert render_partitions(" dt=a,h=1 ; dt=b ") == ["--partition", "dt=a,h=1", "--partition", "dt=b"]


_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.dictionaries(_TEXT.filter(bool), _TEXT,
                                min_size=1, max_size=4), min_size=1, max_size=3))
def test_text_round_trip(specs: list[dict[str, str]]) -> None:
    for s in specs:
        assert parse_partition_text(format_partition_text(s)) == s
    assert parse_partition_texts(format_partition_texts(specs)) == specs
    # what the provider's operators render is what the CLI (and the Spark application) parse back
    argv = ["compact", "--warehouse", "w", "--table", "db.t", *render_partitions(specs)]
    assert build_parser().parse_args(argv).partition == specs
    assert [parse_partition_spec(format_partition_text(s)) for s in specs] == specs


@settings(max_examples=examples(100), deadline=None)
@given(st.lists(st.tuples(st.dates(datetime.date(1900, 1, 1), datetime.date(2100, 1, 1)) | st.none(),
                          st.integers(-3, 3), st.booleans()), min_size=0, max_size=30),
       st.dictionaries(st.sampled_from(["d", "h", "b"]), st.integers(0, 29), min_size=1))
def test_selection_matches_a_model(rows: list[tuple[Any, int, bool]], picks: dict[str, int]) -> None:
    """Vectorized selection over encoded partitions equals comparing the typed values one by one."""
    f = fields(d="DATE", h="INT", b="BOOLEAN")
    types = [x.type for x in f]
    encoded = {encode_row(list(r), types): r for r in rows}
    source = rows[picks[next(iter(picks))] % len(rows)] if rows else (None, 0, True)
    wanted = {k: (None if source[i] is None else format_partition_text({k: source[i]}).split("=", 1)[1])
              for i, k in enumerate(["d", "h", "b"]) if k in picks}
    spec = PartitionSpec.of(wanted, f)
    expected = {p for p, r in encoded.items()
                if all(r[i] == spec.as_dict()[k] for i, k in enumerate(["d", "h", "b"]) if k in wanted)}
    assert select_partitions(encoded, [spec], f) == expected


# ---- commands ----------------------------------------------------------------------------------------------------
TYPED_PARTITIONS = [
    (pa.date32(), [datetime.date(2024, 1, 1), datetime.date(2024, 1, 2)], "2024-01-01"),
    (pa.int32(), [1, 2], "1"),
    (pa.int64(), [10, 20], "10"),
    (pa.timestamp("us"), [datetime.datetime(2024, 1, 1, 10), datetime.datetime(2024, 1, 1, 11)],
     "2024-01-01 10:00:00"),
    (pa.decimal128(10, 2), [decimal.Decimal("1.50"), decimal.Decimal("2.25")], "1.5"),
    (pa.bool_(), [True, False], "true"),
    (pa.string(), ["a", "b"], "a"),
]


def typed_table(catalog: Catalog, ptype: pa.DataType, values: list[Any], pk: bool = False,
                name: str = "db.t", options: dict[str, str] | None = None) -> Table:
    schema = pa.schema([pa.field("id", pa.int64(), nullable=not pk), ("p", ptype), ("v", pa.string())])
    t = catalog.create_table(name, schema, partition_keys=["p"], primary_keys=["id", "p"] if pk else (),
                             options={**({"bucket": "1"} if pk else {}), **(options or {})})
    for i, value in enumerate(values):
        t.write(pa.table({"id": [i, i + 100], "p": pa.array([value, value], ptype), "v": ["x", "y"]}, schema=schema))
    return t


def partition_values(t: Table) -> list[Any]:
    return sorted(set(t.read().column("p").to_pylist()), key=repr)


@pytest.mark.parametrize(("ptype", "values", "text"), TYPED_PARTITIONS, ids=lambda x: str(x)[:20])
def test_drop_partitions_with_text_values_drops(tmp_path: Path, ptype: pa.DataType, values: list[Any],
                                               text: str) -> None:
    t = typed_table(Catalog(str(tmp_path)), ptype, values)
    sid = t.maintenance.drop_partitions([{"p": text}])
    assert sid == t.latest_snapshot_id() and partition_values(t) == [values[1]]
    assert t.maintenance.drop_partitions([{"p": values[1]}]) is not None  # typed values too
    assert t.read().num_rows == 0


def test_drop_subset_spec_and_null_partition(tmp_path: Path) -> None:
    schema = pa.schema([("d", pa.date32()), ("h", pa.int32()), ("v", pa.int64())])
    t = Catalog(str(tmp_path)).create_table("db.t", schema, partition_keys=["d", "h"],
                                            options={"partition.default-name": "NULLP"})
    days = [datetime.date(2024, 1, 1), datetime.date(2024, 1, 2), None]
    t.write(pa.table({"d": [d for d in days for _ in (1, 2)], "h": [1, 2] * 3, "v": list(range(6))}, schema=schema))
    t.maintenance.drop_partitions("h=1")  # every day's hour 1
    assert sorted(t.read().column("v").to_pylist()) == [1, 3, 5]
    t.maintenance.drop_partitions([{"d": "NULLP"}])  # the null partition, by the table's partition.default-name
    assert sorted(t.read().column("v").to_pylist()) == [1, 3]
    t.maintenance.drop_partitions([{"d": "2024-01-02", "h": "2"}])
    assert t.read().column("v").to_pylist() == [1]


def test_bad_specs_leave_the_table_byte_for_byte_unchanged(tmp_path: Path) -> None:
    t = typed_table(Catalog(str(tmp_path)), pa.date32(), [datetime.date(2024, 1, 1)], pk=True,
                    options={"write-only": "true"})
    before = tree_digest(t.path)
    for bad, match in [({"p": "notadate"}, "'p'.*'notadate'"), ({"x": "1"}, "'x' not partition columns"),
                       ({"p": "2024-01-09"}, "'p=2024-01-09' matches no partition")]:
        with pytest.raises(PartitionSpecError, match=match):
            t.maintenance.drop_partitions([bad])
        with pytest.raises(PartitionSpecError, match=match):
            t.maintenance.compact(full=True, partitions=[bad])
        with pytest.raises(PartitionSpecError, match=match):
            t.maintenance.rewrite_file_index(partitions=[bad])
    with pytest.raises(PartitionSpecError, match="matches no partition"):  # one good spec does not excuse a bad one
        t.maintenance.drop_partitions([{"p": "2024-01-01"}, {"p": "2024-01-09"}])
    assert tree_digest(t.path) == before


def test_compact_and_rewrite_file_index_select_typed_partitions(tmp_path: Path) -> None:
    days = [datetime.date(2024, 1, 1), datetime.date(2024, 1, 2)]
    t = typed_table(Catalog(str(tmp_path)), pa.date32(), days * 2, pk=True, options={"write-only": "true"})
    assert t.maintenance.compact(full=True, partitions="p=2024-01-01") is not None
    levels = {s.partition_values: {f.level for f in s.files} for s in t.plan()}
    assert levels[(days[0],)] == {t.options.num_levels() - 1} and levels[(days[1],)] == {0}
    t.alter(SetOption("file-index.bloom-filter.columns", "v"))
    sid = t.maintenance.rewrite_file_index(partitions=[{"p": "2024-01-02"}])  # only the files of that day get an index
    assert sid is not None
    indexed = {s.partition_values: {f.embedded_file_index is not None or bool(f.extra_files) for f in s.files}
               for s in t.plan()}
    assert indexed == {(days[0],): {False}, (days[1],): {True}}


def test_cli_partition_with_a_bad_value_fails_naming_column_and_value(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    t = typed_table(Catalog(str(tmp_path)), pa.date32(), [datetime.date(2024, 1, 1)], pk=True)
    before = tree_digest(t.path)
    base = ["compact", "--warehouse", str(tmp_path), "--table", "db.t", "--full"]
    assert main([*base, "--partition", "p=notadate"]) != 0
    captured = capsys.readouterr()
    assert "partition column 'p'" in captured.out + captured.err and "'notadate'" in captured.out + captured.err
    assert tree_digest(t.path) == before
    assert main([*base, "--partition", "p=2024-01-01"]) == 0


def test_static_partition_overwrite_types_its_spec(tmp_path: Path) -> None:
    days = [datetime.date(2024, 1, 1), datetime.date(2024, 1, 2)]
    t = typed_table(Catalog(str(tmp_path)), pa.date32(), days)
    schema = t.read().schema
    new = pa.table({"id": [7], "p": pa.array([days[0]], pa.date32()), "v": ["new"]}, schema=schema)
    t.write(new, overwrite=True, partition={"p": "2024-01-01"})  # replaces that day only
    assert sorted(zip(t.read().column("p").to_pylist(), t.read().column("id").to_pylist())) == [
        (days[0], 7), (days[1], 1), (days[1], 101)]
    before = tree_digest(t.path)
    with pytest.raises(PartitionSpecError, match="'p'.*'notadate'"):
        t.write(new, overwrite=True, partition={"p": "notadate"})
    assert tree_digest(t.path) == before


_TYPED_VALUES = [
    ("DATE", st.dates()),
    ("TIMESTAMP(6)", st.datetimes(datetime.datetime(1900, 1, 1), datetime.datetime(2200, 1, 1))),
    ("TIMESTAMP_LTZ(3)", st.datetimes(datetime.datetime(1900, 1, 1), datetime.datetime(2200, 1, 1))
     .map(lambda v: v.replace(microsecond=v.microsecond // 1000 * 1000, tzinfo=UTC))),
    ("BIGINT", st.integers(-2**63, 2**63 - 1)),
    ("TINYINT", st.integers(-128, 127)),
    ("DECIMAL(12, 3)", st.decimals(min_value=-10**8, max_value=10**8, places=3)),
    ("BOOLEAN", st.booleans()),
    ("DOUBLE", st.floats(allow_nan=False)),
    ("STRING", _TEXT),
]


@settings(max_examples=examples(40), deadline=None)
@pytest.mark.parametrize(("type_", "values"), _TYPED_VALUES, ids=[t for t, _ in _TYPED_VALUES])
@given(data=st.data())
def test_typed_value_text_round_trip(type_: str, values: st.SearchStrategy[Any], data: st.DataObject) -> None:
    """A typed value rendered as text (what the operators send) types back to the same value."""
    f = fields(p=type_)
    typed = PartitionSpec.of({"p": data.draw(values)}, f)
    assert PartitionSpec.of(parse_partition_text(format_partition_text(typed)), f) == typed


def test_sensor_metadata_types_the_partition(tmp_path: Path) -> None:
    from paimon_provider.utils.metadata import open_table, partition_info

    days = [datetime.date(2024, 1, 1), datetime.date(2024, 1, 2)]
    typed_table(Catalog(str(tmp_path)), pa.date32(), days)
    loc = open_table(Catalog(str(tmp_path)), "db.t")
    info = partition_info(loc, {"p": "2024-01-02"})
    assert info is not None and (info.file_count, info.row_count) == (1, 2)
    info = partition_info(loc, {"p": "2024-01-03"})
    assert info is not None and info.file_count == 0
    with pytest.raises(PartitionSpecError, match="'p'.*'01/02/2024'"):
        partition_info(loc, {"p": "01/02/2024"})

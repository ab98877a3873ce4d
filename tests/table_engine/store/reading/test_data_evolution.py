"""The data-evolution merge (:mod:`table_engine.store.reading.data_evolution` and :class:`TableRead`) on random file
layouts: row ranges, each a base file and overlays holding random subsets of the columns with random sequence
numbers, and a deletion vector stored under the range's oldest file. Every read (whole rows, each projection, a
filter, streaming batches) equals a model that takes each column of a range from its newest file holding it."""

from __future__ import annotations

import itertools
from dataclasses import replace
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyroaring import BitMap

from table_engine.catalog import Catalog
from table_engine.errors import CorruptMetadataError, UnsupportedError
from table_engine.format.data_file_meta import DataFileMeta, SimpleStats
from table_engine.format.deletion_vector import write_dv_index
from table_engine.predicate import parse_filters
from table_engine.store.indexes.deletion_vectors import DeletionFile
from table_engine.store.reading.data_evolution import RowIdGroup, column_sources, row_id_groups
from table_engine.store.reading.read import TableRead, read_context
from table_engine.store.reading.scan import Split
from tests.budget import examples

SCHEMA = pa.schema([("id", pa.int64()), ("a", pa.int64()), ("b", pa.string()), ("c", pa.float64())])
COLUMNS = SCHEMA.names

# one row range: its row count, its files as (columns or None = every column, sequence number), deleted positions
Range = tuple[int, list[tuple[list[str] | None, int]], list[int]]


@st.composite
def ranges(draw: st.DrawFn) -> list[Range]:
    out: list[Range] = []
    seqs = iter(draw(st.permutations(range(1, 40))))
    for _ in range(draw(st.integers(1, 3))):
        n = draw(st.integers(1, 6))
        files: list[tuple[list[str] | None, int]] = [(None, next(seqs))]
        for _ in range(draw(st.integers(0, 4))):
            cols = draw(st.lists(st.sampled_from(COLUMNS), min_size=1, max_size=4, unique=True))
            files.append((sorted(cols, key=COLUMNS.index), next(seqs)))
        deleted = draw(st.lists(st.integers(0, n - 1), unique=True, max_size=n))
        out.append((n, draw(st.permutations(files)), deleted))
    return out


def _layout(root: Path, layout: list[Range], tag: str) -> tuple[TableRead, Split, list[dict[str, Any]]]:
    """Write the layout's files and deletion vectors; the reader, the split and the model's rows."""
    cat = Catalog(str(root))
    cat.create_database("db", ignore_if_exists=True)
    t = cat.create_table(f"db.{tag}", SCHEMA, options={"bucket": "-1"})
    ctx = replace(read_context(t.store), data_evolution=True, row_tracking=True)
    bucket = Path(t.path) / "bucket-0"
    bucket.mkdir(parents=True, exist_ok=True)
    files: list[DataFileMeta] = []
    dvs: dict[str, BitMap] = {}
    model: list[dict[str, Any]] = []
    first = 0
    names = (f"data-{i}.parquet" for i in itertools.count())
    for n, layout_files, deleted in layout:
        newest: dict[str, Any] = {}
        metas = []
        for cols, seq in layout_files:
            name = next(names)
            held = cols or COLUMNS
            data = {c: _values(c, first, n, seq) for c in held}
            pq.write_table(pa.table(data, schema=pa.schema([SCHEMA.field(c) for c in held])), bucket / name)
            meta = DataFileMeta(name, 1, n, b"", b"", SimpleStats.EMPTY, SimpleStats.EMPTY, seq, seq, 0, 0,
                                first_row_id=first, write_cols=cols)
            metas.append(meta)
            for c in held:
                if c not in newest or newest[c][0] < seq:
                    newest[c] = (seq, data[c])
        files.extend(metas)
        anchor = min(metas, key=lambda f: (f.max_sequence_number, f.file_name))
        if deleted:
            dvs[anchor.file_name] = BitMap(deleted)
        top = max(seq for _, seq in layout_files)
        for pos in range(n):
            if pos not in deleted:
                row = {c: newest[c][1][pos] if c in newest else None for c in COLUMNS}
                model.append({**row, "_ROW_ID": first + pos, "_SEQUENCE_NUMBER": top})
        first += n
    deletion_files = None
    if dvs:
        index = write_dv_index(t.file_io, f"{t.path}/index/dv-0", dvs)
        deletion_files = {r.data_file_name: DeletionFile(f"{t.path}/index/dv-0", r) for r in index.ranges}
    split = Split(b"", (), 0, -1, files, 1, deletion_files)
    return TableRead(ctx), split, model


def _values(column: str, first: int, n: int, seq: int) -> list[Any]:
    if column == "id":
        return list(range(first, first + n))  # the id is the row id in every file: rows stay identifiable
    if column == "a":
        return [seq * 1000 + first + i for i in range(n)]
    if column == "b":
        return [f"s{seq}-{first + i}" for i in range(n)]
    return [seq + (first + i) / 100 for i in range(n)]


def _by_id(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(rows, key=lambda r: r["id"])


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(layout=ranges())
def test_reads_equal_the_newest_write_of_each_column(tmp_path_factory: pytest.TempPathFactory,
                                                     layout: list[Range]) -> None:
    reader, split, with_ids = _layout(tmp_path_factory.mktemp("de"), layout, "t")
    model = [{c: r[c] for c in COLUMNS} for r in with_ids]
    assert _by_id(reader.read_split(split).to_pylist()) == _by_id(model)
    # row ids and sequence numbers (of the newest file of the range), also without any data column
    tracked = TableRead(reader.ctx, ["_ROW_ID", "id", "_SEQUENCE_NUMBER"]).read_split(split).to_pylist()
    assert sorted(tracked, key=lambda r: r["_ROW_ID"]) == sorted(
        ({"_ROW_ID": r["_ROW_ID"], "id": r["id"], "_SEQUENCE_NUMBER": r["_SEQUENCE_NUMBER"]} for r in with_ids),
        key=lambda r: r["_ROW_ID"])
    only_ids = TableRead(reader.ctx, ["_ROW_ID"]).read_split(split).column("_ROW_ID").to_pylist()
    assert sorted(only_ids) == sorted(r["_ROW_ID"] for r in with_ids)
    for col in COLUMNS[1:]:
        projected = TableRead(reader.ctx, ["id", col])
        assert _by_id(projected.read_split(split).to_pylist()) == _by_id([{"id": r["id"], col: r[col]} for r in model])
    filtered = TableRead(reader.ctx, None, parse_filters([("a", ">=", 20000)]))
    want = [r for r in model if r["a"] is not None and r["a"] >= 20000]
    assert _by_id(filtered.read_split(split).to_pylist()) == _by_id(want)
    streamed = pa.Table.from_batches(list(reader.to_batches([split], batch_size=2)), schema=reader.output_schema)
    assert _by_id(streamed.to_pylist()) == _by_id(model)


def test_a_projection_opens_only_the_files_that_hold_its_columns() -> None:
    base = DataFileMeta("base", 1, 4, b"", b"", SimpleStats.EMPTY, SimpleStats.EMPTY, 1, 1, 0, 0, first_row_id=0)
    y1 = replace(base, file_name="y1", min_sequence_number=2, max_sequence_number=2, write_cols=["a"])
    y2 = replace(base, file_name="y2", min_sequence_number=3, max_sequence_number=3, write_cols=["a", "b"])
    cat_schema = _schema()
    (group,) = row_id_groups([base, y1, y2])
    assert [f.file_name for f in group.files] == ["y2", "y1", "base"] and group.anchor.file_name == "base"
    picked = column_sources(group, cat_schema.fields, lambda _: cat_schema)
    assert [([f.file_name for f in unit], [x.name for x in fields]) for unit, fields in picked] == [
        (["y2"], ["a", "b"]), (["base"], ["id", "c"])]
    only_c = column_sources(group, [cat_schema.field("c")], lambda _: cat_schema)
    assert [[f.file_name for f in unit] for unit, _ in only_c] == [["base"]]


def test_rolled_blob_files_join_their_range_and_must_tile_it() -> None:
    """``.blob`` files of a column rolled inside a normal file's range (ADR 0018, amended) form one source of that
    column, in row-id order; gaps, overlaps and overhangs are refused."""
    base = DataFileMeta("base", 1, 5, b"", b"", SimpleStats.EMPTY, SimpleStats.EMPTY, 1, 1, 0, 0, first_row_id=10,
                        write_cols=["id", "a", "b"])
    b1 = replace(base, file_name="d-1.blob", row_count=3, write_cols=["c"], max_sequence_number=9)
    b2 = replace(b1, file_name="d-0.blob", row_count=2, first_row_id=13)
    cat_schema = _schema()
    (group,) = row_id_groups([b2, base, b1])
    assert (group.first_row_id, group.row_count) == (10, 5)
    assert [f.file_name for f in group.files] == ["base", "d-1.blob", "d-0.blob"] and group.anchor is base
    picked = column_sources(group, cat_schema.fields, lambda _: cat_schema)
    assert [([f.file_name for f in unit], [x.name for x in fields]) for unit, fields in picked] == [
        (["d-1.blob", "d-0.blob"], ["c"]), (["base"], ["id", "a", "b"])]
    with pytest.raises(UnsupportedError, match="cover row ids 10..12 of the range 10..14"):
        row_id_groups([base, b1])
    with pytest.raises(UnsupportedError, match="starts at row id 12, inside another .blob file"):
        row_id_groups([base, b1, replace(b2, first_row_id=12, row_count=3)])
    with pytest.raises(UnsupportedError, match="several generations"):  # a delta of a BLOB update
        row_id_groups([base, b1, b2, replace(b1, file_name="delta.blob", row_count=5, max_sequence_number=20)])
    with pytest.raises(UnsupportedError, match="leave row ids 10..12 of the range 10..14 uncovered"):
        row_id_groups([base, b2])
    with pytest.raises(CorruptMetadataError, match="past their range"):
        row_id_groups([base, b1, replace(b2, row_count=3)])


def test_inconsistent_ranges_are_corrupt_metadata() -> None:
    base = DataFileMeta("base", 1, 4, b"", b"", SimpleStats.EMPTY, SimpleStats.EMPTY, 1, 1, 0, 0, first_row_id=0)
    with pytest.raises(CorruptMetadataError, match="base holds 4 rows from row id 0, but y holds 3"):
        row_id_groups([base, replace(base, file_name="y", row_count=3, max_sequence_number=2, write_cols=["a"])])
    with pytest.raises(CorruptMetadataError, match="starts at row id 2, inside the range"):
        row_id_groups([base, replace(base, file_name="next", first_row_id=2)])
    untracked = replace(base, first_row_id=None)
    assert row_id_groups([untracked]) == [RowIdGroup(None, 4, [untracked])]


def _schema() -> Any:
    import tempfile

    with tempfile.TemporaryDirectory() as root:
        cat = Catalog(root)
        cat.create_database("db")
        return cat.create_table("db.s", SCHEMA).schema

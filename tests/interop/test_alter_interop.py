"""Tables after ``alter-table`` (added, renamed, moved, retyped and dropped columns, a column made nullable, column
and table comments) read the same rows, in the same column order, in pypaimon 2.1.0 and Paimon Java 1.0 as in the
engine: rows written before and after the changes, primary-key and append tables."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from table_engine import Catalog
from table_engine.ops import AlterTable
from table_engine.ops.run import run_command
from tests.interop.conftest import PypaimonClient
from tests.interop.paimon_java import PaimonJavaClient

pytestmark = pytest.mark.interop

BEFORE = pa.schema([pa.field("id", pa.int64(), nullable=False), ("a", pa.int32()), ("b", pa.string()),
                    ("d", pa.float64()), pa.field("v", pa.string(), nullable=False)])
CHANGES: list[dict[str, Any]] = [
    {"action": "add-column", "name": "c", "type": "BIGINT", "comment": "added after a", "after": "a"},
    {"action": "rename-column", "name": "b", "new_name": "bee"},
    {"action": "drop-column", "name": "d"},
    {"action": "move-column", "name": "bee", "first": True},
    {"action": "update-column-type", "name": "a", "type": "BIGINT"},
    {"action": "update-column-nullability", "name": "v", "nullable": True},
    {"action": "update-column-comment", "name": "v", "comment": "the value"},
    {"action": "update-comment", "comment": "altered by the engine"},
    {"action": "add-column", "name": "z", "type": "STRING", "before": "id"},
]
AFTER = pa.schema([("bee", pa.string()), ("z", pa.string()), pa.field("id", pa.int64(), nullable=False),
                   ("a", pa.int64()), ("c", pa.int64()), ("v", pa.string())])


def _rows(table: pa.Table) -> list[tuple[Any, ...]]:
    return sorted(zip(*(table.column(c).to_pylist() for c in AFTER.names), strict=True),
                  key=lambda r: tuple((x is None, x) for x in r))


@pytest.mark.parametrize("pk", [True, False], ids=["primary-key", "append"])
def test_pypaimon_and_java_read_an_altered_table(pypaimon: PypaimonClient, paimon_java: PaimonJavaClient,
                                                 tmp_path: Path, pk: bool) -> None:
    wh = tmp_path / "wh"
    catalog = Catalog(str(wh))
    t = catalog.create_table("db.t", BEFORE, primary_keys=["id"] if pk else [],
                             options={"bucket": "1"} if pk else {})
    t.write(pa.table({"id": [1, 2, 3], "a": pa.array([10, None, 30], pa.int32()), "b": ["x", "y", None],
                      "d": [0.5, 1.5, None], "v": ["p", "q", "r"]}, schema=BEFORE))
    result = run_command(AlterTable(warehouse=str(wh), table="db.t", changes=tuple(CHANGES)))
    assert [f["name"] for f in result["fields"]] == AFTER.names
    t = catalog.get_table("db.t")
    t.write(pa.table({"bee": ["w", None], "z": ["new", None], "id": [3, 4], "a": [2**40, None], "c": [7, None],
                      "v": [None, "s"]}, schema=AFTER))
    engine = t.read()
    assert engine.column_names == AFTER.names
    expected = _rows(engine)
    assert len(expected) == (4 if pk else 5)
    assert ("x", None, 1, 10, None, "p") in expected  # an old row: renamed and moved values kept, c and z null
    got = pypaimon.read(wh, "db.t")
    assert got.column_names == AFTER.names
    assert _rows(got) == expected
    java = paimon_java.read(wh, "db.t", AFTER)
    assert [name for name, _ in java.fields] == AFTER.names
    assert _rows(java.table) == expected


def test_pypaimon_and_java_read_a_table_after_merge_schema_writes(pypaimon: PypaimonClient,
                                                                  paimon_java: PaimonJavaClient,
                                                                  tmp_path: Path) -> None:
    wh = tmp_path / "wh"
    catalog = Catalog(str(wh))
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("n", pa.int32()), ("dt", pa.string())])
    catalog.create_table("db.m", schema, primary_keys=["id", "dt"], partition_keys=["dt"],
                         options={"bucket": "2", "write.merge-schema": "true"})
    catalog.get_table("db.m").write(pa.table({"id": [1, 2], "n": pa.array([1, 2], pa.int32()), "dt": ["d1", "d2"]},
                                             schema=schema))
    catalog.get_table("db.m").write(pa.table({"id": [2, 3], "n": pa.array([2**40, 3], pa.int64()),
                                              "dt": ["d2", "d1"], "note": ["two", None]}))
    catalog.get_table("db.m").write(pa.table({"dt": ["d1"], "id": [4], "n": pa.array([4], pa.int16()),
                                              "note": ["four"], "score": pa.array([1.5], pa.float64())}))
    t = catalog.get_table("db.m")
    assert t.schema.id == 2 and [(f.name, str(f.type)) for f in t.schema.fields] == [
        ("id", "BIGINT NOT NULL"), ("n", "BIGINT"), ("dt", "STRING NOT NULL"), ("note", "STRING"),
        ("score", "DOUBLE")]
    names = t.schema.field_names()
    engine = t.read()

    def rows(table: pa.Table) -> list[tuple[Any, ...]]:
        return sorted(zip(*(table.column(c).to_pylist() for c in names), strict=True), key=lambda r: (r[0], r[2]))

    expected = rows(engine)
    assert expected == [(1, 1, "d1", None, None), (2, 2**40, "d2", "two", None), (3, 3, "d1", None, None),
                        (4, 4, "d1", "four", 1.5)]
    got = pypaimon.read(wh, "db.m")
    assert got.column_names == names and rows(got) == expected
    java = paimon_java.read(wh, "db.m", engine.schema)
    assert [name for name, _ in java.fields] == names and rows(java.table) == expected

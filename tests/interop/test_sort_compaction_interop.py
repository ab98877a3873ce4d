"""Sorted append tables (``compact`` with ``order_strategy``) read the same rows in pypaimon 2.1.0 and Paimon Java 1.0
as in the engine, at the sort's snapshot and at the snapshot before it, deletion vectors applied."""

from __future__ import annotations

import random
from pathlib import Path

import pyarrow as pa
import pytest

from table_engine import Catalog
from tests.interop.conftest import PypaimonClient
from tests.interop.paimon_java import PaimonJavaClient
from tests.table_engine.store.compaction.test_append_compact import delete_rows

pytestmark = pytest.mark.interop

SCHEMA = pa.schema([("a", pa.int32()), ("b", pa.int64()), ("s", pa.string()), ("dt", pa.string())])


def _rows(table: pa.Table) -> list[tuple[object, ...]]:
    return sorted(zip(*(table.column(c).to_pylist() for c in SCHEMA.names), strict=True),
                  key=lambda r: tuple((x is None, x) for x in r))


def test_pypaimon_and_java_read_sorted_tables(pypaimon: PypaimonClient, paimon_java: PaimonJavaClient,
                                              tmp_path: Path) -> None:
    wh = tmp_path / "wh"
    catalog = Catalog(str(wh))
    rng = random.Random(3)
    strategies = {"order": "a", "zorder": "a,b,s", "hilbert": "b,a"}
    for name, order_by in strategies.items():
        dv = name == "zorder"
        t = catalog.create_table(f"db.{name}", SCHEMA, partition_keys=["dt"], options={
            "bucket": "-1", "write-only": "true", "target-file-size": "2 kb",
            **({"deletion-vectors.enabled": "true"} if dv else {})})
        for _ in range(4):
            n = 300
            t.write(pa.table({"a": [rng.choice([None, rng.randrange(-50, 50)]) for _ in range(n)],
                              "b": [rng.randrange(-10 ** 12, 10 ** 12) for _ in range(n)],
                              "s": [rng.choice(["", "x", "yy", "zzz" * 5, None]) for _ in range(n)],
                              "dt": [rng.choice(["d1", "d2"]) for _ in range(n)]}, schema=SCHEMA))
        if dv:
            first = min((f for s in t.plan() for f in s.files), key=lambda f: f.min_sequence_number)
            delete_rows(t, {first.file_name: [0, 5, 7]})
        before_sid = t.latest_snapshot_id()
        sid = t.maintenance.compact(order_strategy=name, order_by=order_by)
        assert sid is not None and sid != before_sid
        expected = _rows(t.read())
        assert expected == _rows(t.read(snapshot_id=before_sid))
        latest, previous = pypaimon.read_many(wh, f"db.{name}", [{}, {"snapshot": before_sid}])
        assert _rows(latest) == expected and _rows(previous) == expected, name
        assert _rows(paimon_java.read(wh, f"db.{name}", SCHEMA).table) == expected, name


def test_pypaimon_and_java_read_a_clustered_table(pypaimon: PypaimonClient, paimon_java: PaimonJavaClient,
                                                  tmp_path: Path) -> None:
    wh = tmp_path / "wh"
    t = Catalog(str(wh)).create_table("db.clustered", SCHEMA, partition_keys=["dt"], options={
        "bucket": "-1", "clustering.incremental": "true", "clustering.columns": "a,b",
        "num-sorted-run.compaction-trigger": "2", "deletion-vectors.enabled": "true", "target-file-size": "2 kb"})
    rng = random.Random(9)
    versions = []
    for round_ in range(3):
        for _ in range(3):
            n = 200
            t.write(pa.table({"a": [rng.randrange(100) for _ in range(n)],
                              "b": [rng.randrange(10 ** 6) for _ in range(n)],
                              "s": [f"r{round_}" for _ in range(n)], "dt": ["d1"] * n}, schema=SCHEMA))
        assert t.maintenance.compact(full=round_ == 2) is not None
        versions.append((t.latest_snapshot_id(), _rows(t.read())))
    assert {f.level for s in t.plan() for f in s.files} == {t.options.num_levels() - 1}
    got = pypaimon.read_many(wh, "db.clustered", [{"snapshot": sid} for sid, _ in versions])
    assert [_rows(g) for g in got] == [rows for _, rows in versions]
    assert _rows(paimon_java.read(wh, "db.clustered", SCHEMA).table) == versions[-1][1]

"""Snapshot ``properties`` (Paimon 1.2): written through ``write``/``commit``/``compact``, omitted when empty, kept by
tags and rollback, refused as one DataError (nothing written) when not a string map."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from table_engine import Catalog
from table_engine.errors import CorruptMetadataError, DataError
from table_engine.format.snapshot import Snapshot
from tests.table_engine.test_bad_input import warehouse_state

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string())])
RUN = {"airflow.dag_id": "etl", "airflow.run_id": "scheduled__2026-01-01T00:00:00+00:00"}


def data(i: int) -> pa.Table:
    return pa.table({"id": [i, i + 1], "v": [f"a{i}", f"b{i}"]}, schema=SCHEMA)


def snapshot_json(t: object, sid: int) -> dict[str, object]:
    path = f"{t.path}/snapshot/snapshot-{sid}"  # type: ignore[attr-defined]
    return json.loads(t.file_io.read_bytes(path))  # type: ignore[attr-defined,no-any-return]


def test_write_commit_compact_tag_rollback_keep_properties(catalog: Catalog) -> None:
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["id"], options={"bucket": "1"})
    s1 = t.write(data(1), properties=RUN)
    s2 = t.write(data(2))
    assert s1 is not None and s2 is not None
    assert t.snapshot(s1).properties == RUN and snapshot_json(t, s1)["properties"] == RUN
    assert t.snapshot(s2).properties is None and "properties" not in snapshot_json(t, s2)
    assert t.write(data(3), properties={}) is not None and "properties" not in snapshot_json(t, 3)

    w = t.new_write()
    w.write(data(4))
    s4 = t.commit(w.prepare_commit(), properties={"k": "v"})
    assert s4 is not None and t.snapshot(s4).properties == {"k": "v"}
    s5 = t.maintenance.compact(full=True, properties={"job": "compact"})
    assert s5 is not None and t.snapshot(s5).properties == {"job": "compact"}
    assert str(t.snapshot(s5).commit_kind) == "COMPACT"

    t.create_tag("first", snapshot_id=s1)
    assert t.tag_snapshot("first").properties == RUN
    t.expire_snapshots(retain_min=1, retain_max=1, time_retained=0)
    assert t.earliest_snapshot_id() == s5  # snapshot 1 lives on in its tag only
    t.rollback_to("first")  # restores snapshot 1 from the tag file
    latest = t.latest_snapshot()
    assert latest is not None and latest.id == s1 and latest.properties == RUN


def test_bad_properties_change_nothing(catalog: Catalog, warehouse: str) -> None:
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["id"], options={"bucket": "1"})
    t.write(data(1))
    before = warehouse_state(warehouse)
    for bad in ({"n": 1}, {2: "x"}, {"k": None}):
        with pytest.raises(DataError, match="snapshot properties map strings to strings") as err:
            t.write(data(5), properties=bad)  # type: ignore[arg-type]
        assert "\n" not in str(err.value)
        with pytest.raises(DataError):
            t.maintenance.compact(full=True, properties=bad)  # type: ignore[arg-type]
    assert warehouse_state(warehouse) == before


def test_properties_parsed_strictly() -> None:
    base = {"version": 3, "id": 1, "schemaId": 0, "baseManifestList": "b", "deltaManifestList": "d",
            "commitUser": "u", "commitIdentifier": 1, "commitKind": "APPEND", "timeMillis": 1}
    snap = Snapshot.from_json(json.dumps({**base, "properties": {"a": "b"}}), "snapshot-1")
    assert snap.properties == {"a": "b"} and json.loads(snap.to_json())["properties"] == {"a": "b"}
    with pytest.raises(CorruptMetadataError, match="properties"):
        Snapshot.from_json(json.dumps({**base, "properties": {"a": 1}}), "snapshot-1")

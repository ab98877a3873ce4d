"""A writer restores its state from the latest snapshot; when a concurrent expiry deletes that snapshot's metadata
while it is read, the writer restores from the snapshot that replaced it instead of failing."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest

from table_engine import Catalog

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])


def _rows(ids: range, v: str) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "v": [v] * len(ids)}, schema=SCHEMA)


@pytest.mark.parametrize("options", [{"bucket": "2"}, {"bucket": "-1"}], ids=["fixed", "dynamic"])
def test_restore_from_a_snapshot_expired_meanwhile(catalog: Catalog, options: dict[str, str],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    catalog.create_database("db")
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["id"], options=options)
    t.write(_rows(range(10), "a"))
    stale = t.latest_snapshot()
    assert stale is not None
    t.write(_rows(range(5, 15), "b"))
    t.expire_snapshots(retain_min=1, time_retained=0)  # snapshot 1's manifests are really gone now
    assert [s.id for s in t.snapshots()] == [2]

    w = t.new_write()
    ctx: Any = w.ctx
    real = ctx.latest_snapshot
    calls = {"n": 0}

    def first_stale() -> Any:  # the writer read "latest" just before the expiry removed it
        calls["n"] += 1
        return stale if calls["n"] == 1 else real()

    monkeypatch.setattr(ctx, "latest_snapshot", first_stale)
    w.write(_rows(range(10, 20), "c"))
    t.new_commit().commit(w.prepare_commit())
    got = {r["id"]: r["v"] for r in t.read().to_pylist()}
    assert got == {**dict.fromkeys(range(5), "a"), **dict.fromkeys(range(5, 10), "b"),
                   **dict.fromkeys(range(10, 20), "c")}
    assert calls["n"] >= 2

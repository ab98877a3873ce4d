"""Operators' execute: the result line is the XCom, Asset events carry the snapshot id (directly or through the
alias), idempotent commit users, skip when nothing was committed, on_kill reaches the job."""

from __future__ import annotations

import json
import os
import pathlib
import stat
import sys
from types import SimpleNamespace
from typing import Any

import pytest
from airflow.sdk import Asset, AssetAlias
from airflow.sdk.exceptions import AirflowSkipException
from airflow.sdk.execution_time.context import OutletEventAccessors
from paimon_provider.hooks import spark as spark_hook_module
from paimon_provider.operators import PaimonCompactOperator, PaimonConsumeChangelogOperator, PaimonWriteOperator
from paimon_provider.utils.assets import table_asset, writes_alias

from table_engine.ops import from_json


@pytest.fixture
def fake_app(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, paimon_conn: str) -> pathlib.Path:
    """A spark-submit on PATH that answers with the JSON found in $FAKE_RESULT, echoing its argv; the tables it is
    given exist (the operator checks that before submitting)."""
    import pyarrow as pa

    from table_engine import Catalog

    for name in ("ods.events", "dwd.orders"):
        Catalog(paimon_conn).create_table(name, pa.schema([("id", pa.int64())]))
    directory = tmp_path / "bin"
    directory.mkdir()
    script = directory / "spark-submit"
    script.write_text(f"#!{sys.executable}\nimport json, os, sys\n"
                      "result = json.loads(os.environ['FAKE_RESULT'])\n"
                      "print('spark log', file=sys.stderr)\n"
                      "print(json.dumps({**result, 'argv': sys.argv[1:]}))\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{directory}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(spark_hook_module, "application_path", lambda: "/engine/app.py")
    return directory


def context(**ti: Any) -> dict[str, Any]:
    fields = {"dag_id": "d", "task_id": "t", "run_id": "manual__1", "map_index": -1, **ti}
    return {"ti": SimpleNamespace(**fields), "outlet_events": OutletEventAccessors()}


def test_write_returns_result_and_emits_the_table_asset(fake_app: pathlib.Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_RESULT", json.dumps({"status": "ok", "snapshot_id": 4, "rows": 6}))
    op = PaimonWriteOperator(task_id="t", table="ods.events", source="/landing/b1")
    asset = table_asset("ods.events")
    assert op.outlets == [asset]
    ctx = context()
    result = op.execute(ctx)  # type: ignore[arg-type]
    assert result is not None and result["snapshot_id"] == 4 and result["rows"] == 6
    # the default commit user is the same for every try of this task instance
    argv = result["argv"]
    assert from_json(argv[argv.index("--command-json") + 1]).commit_user == "airflow:d:t:manual__1"
    assert ctx["outlet_events"][asset].extra == {"table": "ods.events", "command": "write", "snapshot_id": 4}


def test_mapped_commit_user_has_the_map_index(fake_app: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_RESULT", json.dumps({"status": "ok", "snapshot_id": None}))
    op = PaimonCompactOperator(task_id="t", table="dwd.orders", outlets=[writes_alias()])
    assert op.outlets == [writes_alias()]  # no second, static outlet
    ctx = context(map_index=2)
    result = op.execute(ctx)  # type: ignore[arg-type]
    assert result is not None
    argv = result["argv"]
    assert from_json(argv[argv.index("--command-json") + 1]).commit_user == "airflow:d:t:manual__1:2"
    assert ctx["outlet_events"][writes_alias()].asset_alias_events == []  # nothing committed: no table update


def test_templated_table_emits_through_the_alias(fake_app: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_RESULT", json.dumps({"status": "ok", "snapshot_id": 9}))
    op = PaimonCompactOperator(task_id="t", table="{{ params.table }}", full="full")
    assert op.outlets == [AssetAlias(name="paimon.paimon_default.writes", group="paimon")]
    op.table = "dwd.orders"  # as rendered
    ctx = context()
    op.execute(ctx)  # type: ignore[arg-type]
    events = ctx["outlet_events"][writes_alias()].asset_alias_events
    assert len(events) == 1
    assert events[0].dest_asset_key.uri == "paimon://paimon_default/dwd/orders"
    assert events[0].extra == {"table": "dwd.orders", "command": "compact", "snapshot_id": 9}


def test_consume_emits_the_target_asset_and_skips_when_empty(fake_app: pathlib.Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    op = PaimonConsumeChangelogOperator(task_id="t", table="dwd.orders", consumer_id="c", target_table="dws.u",
                                        skip_if_no_commit=True)
    target = table_asset("dws.u")
    assert op.outlets == [target]
    monkeypatch.setenv("FAKE_RESULT", json.dumps({"status": "ok", "rows": 3, "target_snapshot_id": 5}))
    ctx = context()
    assert op.execute(ctx)["rows"] == 3  # type: ignore[arg-type,index]
    assert ctx["outlet_events"][target].extra["snapshot_id"] == 5
    monkeypatch.setenv("FAKE_RESULT", json.dumps({"status": "ok", "rows": 0, "target_snapshot_id": None}))
    with pytest.raises(AirflowSkipException, match="committed nothing to dws.u"):
        op.execute(context())  # type: ignore[arg-type]
    # exporting to files updates no table
    export = PaimonConsumeChangelogOperator(task_id="e", table="dwd.orders", consumer_id="x", output_path="/o")
    assert export.outlets == []


def test_emit_asset_false_declares_nothing() -> None:
    op = PaimonWriteOperator(task_id="t", table="ods.events", source="/x", emit_asset=False)
    assert op.outlets == []
    assert isinstance(table_asset("ods.events"), Asset)


def test_on_kill_delegates_to_the_hook() -> None:
    op = PaimonCompactOperator(task_id="t", table="dwd.orders")
    killed: list[bool] = []
    op._hook = SimpleNamespace(on_kill=lambda: killed.append(True))  # type: ignore[assignment]
    op.on_kill()
    assert killed == [True]


def test_upkeep_emits_no_asset_event(fake_app: pathlib.Path, monkeypatch: pytest.MonkeyPatch, paimon_conn: str) -> None:
    """A commit that changed no data (a compaction without changelog, a rollback that removed nothing, a rescale)
    emits no Asset event: the table's static Asset is taken off the task's outlets, of which Airflow emits an
    event for each at success (docs/adr/0021); the next run starts from the declared outlets again."""
    from paimon_provider.operators import PaimonRescaleOperator, PaimonRollbackOperator

    facts = {"commit_kind": "COMPACT", "added_rows": 3, "deleted_rows": 6, "changelog_records": 0,
             "published_rows": 0, "partitions": ["dt=a"]}
    monkeypatch.setenv("FAKE_RESULT", json.dumps({"status": "ok", "snapshot_id": 7, "commit": facts}))
    op = PaimonCompactOperator(task_id="t", table="dwd.orders", full=True)
    asset = table_asset("dwd.orders")
    ctx = context()
    op.execute(ctx)  # type: ignore[arg-type]
    assert op.outlets == [] and ctx["outlet_events"][asset].extra == {}
    # with changelog: data, and the extra says what changed
    monkeypatch.setenv("FAKE_RESULT", json.dumps({"status": "ok", "snapshot_id": 8,
                                                  "commit": {**facts, "changelog_records": 2}}))
    ctx = context()
    op.execute(ctx)  # type: ignore[arg-type]
    assert op.outlets == [asset]
    assert ctx["outlet_events"][asset].extra == {"table": "dwd.orders", "command": "compact", "snapshot_id": 8,
                                                 **facts, "changelog_records": 2}
    # many partitions: the extra keeps the first ones and their count
    many = [f"dt={i}" for i in range(250)]
    monkeypatch.setenv("FAKE_RESULT", json.dumps({"status": "ok", "snapshot_id": 8,
                                                  "commit": {**facts, "changelog_records": 2, "partitions": many}}))
    ctx = context()
    op.execute(ctx)  # type: ignore[arg-type]
    extra = ctx["outlet_events"][asset].extra
    assert (extra["partitions"], extra["partition_count"]) == (many[:100], 250)
    # through the alias: an upkeep commit adds no event
    mapped = PaimonCompactOperator(task_id="t", table="dwd.orders", outlets=[writes_alias()])
    monkeypatch.setenv("FAKE_RESULT", json.dumps({"status": "ok", "snapshot_id": 7, "commit": facts}))
    ctx = context(map_index=0)
    mapped.execute(ctx)  # type: ignore[arg-type]
    assert mapped.outlets == [writes_alias()]
    assert ctx["outlet_events"][writes_alias()].asset_alias_events == []
    # a postpone table's compaction publishes rows: data
    monkeypatch.setenv("FAKE_RESULT", json.dumps({"status": "ok", "snapshot_id": 9,
                                                  "commit": {**facts, "published_rows": 4}}))
    ctx = context(map_index=0)
    mapped.execute(ctx)  # type: ignore[arg-type]
    assert len(ctx["outlet_events"][writes_alias()].asset_alias_events) == 1

    import pyarrow as pa

    from table_engine import Catalog

    orders = Catalog(paimon_conn).get_table("dwd.orders")
    for i in range(5):  # snapshot 5 exists: the worker checks a rollback's target before the (fake) job
        orders.write(pa.table({"id": [i]}))
    rollback = PaimonRollbackOperator(task_id="r", table="dwd.orders", snapshot_id=5, spark={"runner": "spark"})
    for removed, emitted in ((0, False), (2, True)):
        monkeypatch.setenv("FAKE_RESULT", json.dumps({
            "status": "ok", "snapshot_id": 5, "commit": {"commit_kind": "ROLLBACK", "removed_snapshots": removed}}))
        ctx = context()
        rollback.execute(ctx)  # type: ignore[arg-type]
        assert (bool(ctx["outlet_events"][asset].extra), rollback.outlets == [asset]) == (emitted, emitted)

    rescale = PaimonRescaleOperator(task_id="s", table="dwd.orders", bucket_num=4, spark={"runner": "spark"})
    monkeypatch.setenv("FAKE_RESULT", json.dumps({"status": "ok", "snapshot_id": 10, "bucket_num": 4}))
    rescale.execute(context())  # type: ignore[arg-type]
    assert rescale.outlets == []

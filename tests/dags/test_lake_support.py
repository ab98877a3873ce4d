"""The lake templates' support code without Spark: sample data, the reference model, the ADS serving task and the
demo report (tables written directly with the engine)."""

from __future__ import annotations

from typing import Any

import example_lake as sample
import pyarrow as pa
import pytest


def test_sample_batches() -> None:
    for b in sample.BATCHES:
        t = sample.order_events(b)
        assert t.num_rows == len(sample.order_event_rows(b)) and t.column_names == list(sample.EVENT_COLUMNS)
    ids = [r["event_id"] for b in sample.BATCHES for r in sample.order_event_rows(b)]
    assert len(ids) == len(set(ids))
    with pytest.raises(ValueError):
        sample.order_event_rows(4)
    # batch 2 changes bob's order 102 from 15.0 to 12.0 and ignores the late event of alice's order 103
    assert sample.expected_user_daily((1,))[("bob", "2026-11-20")] == (3, 55.0)
    assert sample.expected_user_daily((1, 2))[("bob", "2026-11-20")] == (3, 52.0)
    assert sample.expected_user_daily((1, 2))[("alice", "2026-11-20")] == (7, 80.0)
    assert sample.expected_user_daily()[("dave", "2026-11-20")] == (0, 0.0)


def make_dws(warehouse: str) -> Any:
    from table_engine import Catalog
    from table_engine.types import parse_type, to_arrow_type

    d = sample.DWS
    schema = pa.schema([(n, to_arrow_type(parse_type(t))) for n, t in d.columns.items()])
    table = Catalog(warehouse).create_table(d.name, schema, primary_keys=d.primary_keys,
                                            partition_keys=d.partition_keys, options=d.options)
    latest: dict[tuple[int, str], dict[str, Any]] = {}
    for b in sample.BATCHES:
        for row in sample.order_event_rows(b):
            key = (row["order_id"], row["dt"])
            if key not in latest or row["event_time_ms"] >= latest[key]["event_time_ms"]:
                latest[key] = row
    table.write(pa.Table.from_pylist(list(latest.values()), schema=schema))  # the aggregation engine sums
    table.create_tag("ads-1")
    return table


def test_aggregation_table_and_serving_task(dagbag: Any, lake: dict[str, str]) -> None:
    table = make_dws(lake["warehouse"])
    totals = {(r["user_id"], r["dt"]): (r["quantity"], round(r["amount"], 2)) for r in table.read().to_pylist()}
    assert totals == sample.expected_user_daily()
    publish = dagbag.dags["paimon_lake_ads"].get_task("publish_top_users").python_callable
    top = publish({"tag": "ads-1", "snapshot_id": 1}, top=2)
    assert [(r["dt"], r["user_id"]) for r in top] == [("2026-11-20", "carol"), ("2026-11-20", "alice"),
                                                     ("2026-11-21", "erin"), ("2026-11-21", "carol")]
    with pytest.raises(ValueError, match="no tag"):
        publish(None)


def test_report(lake: dict[str, str]) -> None:
    make_dws(lake["warehouse"])
    text = sample.report(lake["warehouse"], sample_rows=3)
    assert "ods.order_events: (not created)" in text
    assert "dws.user_daily: 9 rows" in text and "snapshot   1 APPEND" in text and "tags: ads-1" in text
    assert "ADS: dws.user_daily at tag ads-1 (9 rows)" in text
    assert text.rstrip().splitlines()[-3].split("|")[1].strip() == "carol"


def test_demo_prints_what_each_run_committed(lake: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    from scripts import airflow_demo as demo

    before = demo._table_state(lake["warehouse"])
    assert before == {}
    table = make_dws(lake["warehouse"])  # an APPEND snapshot (and the compaction it may trigger), tag ads-1
    latest = table.latest_snapshot_id()
    after = demo._print_changes(lake["warehouse"], before)
    assert after == {sample.DWS.name: (latest, ("ads-1",))}
    out = [line.split("->")[1].strip() for line in capsys.readouterr().out.splitlines()]
    assert out[0] == "dws.user_daily snapshot 1 APPEND: 9 records written"
    assert len(out) == latest + 1 and out[-1] == "dws.user_daily tag ads-1"
    table.create_tag("ads-2")
    assert demo._print_changes(lake["warehouse"], after)[sample.DWS.name] == (latest, ("ads-1", "ads-2"))
    assert capsys.readouterr().out.split("->")[1].strip() == "dws.user_daily tag ads-2"

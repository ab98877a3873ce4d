"""The streaming-lake DAGs run to success with ``dag.test()`` against real Spark (local mode) and the tables hold
what the reference model says: two batches flow ODS -> DWD -> DWS -> ADS.

DWS is fed by the DWD changelog, which the dedicated compaction must produce (``changelog-producer = lookup``);
while the engine's compaction writes no changelog yet, the test stops there with an xfail saying so.
"""

from __future__ import annotations

from typing import Any

import pytest

from provider.examples import lake as sample

pytestmark = [pytest.mark.spark, pytest.mark.airflow, pytest.mark.slow, pytest.mark.timeout(3600)]


def run(dagbag: Any, dag_id: str, conf: dict[str, Any] | None = None) -> dict[str, str]:
    dr = dagbag.dags[dag_id].test(run_conf=conf)
    states = {ti.task_id: str(ti.state) for ti in dr.get_task_instances()}
    assert str(dr.state) == "success", f"{dag_id}: {states}"
    return states


def latest_orders(batches: tuple[int, ...]) -> dict[tuple[int, str], tuple[str, float]]:
    latest: dict[tuple[int, str], dict[str, Any]] = {}
    for b in batches:
        for row in sample.order_event_rows(b):
            key = (row["order_id"], row["dt"])
            if key not in latest or row["event_time_ms"] >= latest[key]["event_time_ms"]:
                latest[key] = row
    return {k: (r["status"], r["amount"]) for k, r in latest.items()}


def test_layers_end_to_end(dagbag: Any, airflow_db: None, lake: dict[str, str]) -> None:
    from table_engine import Catalog

    catalog = Catalog(lake["warehouse"])
    events = 0
    for batch in (1, 2):
        run(dagbag, "paimon_lake_ods", {"batch": batch, "landing_dir": lake["landing"]})
        events += len(sample.order_event_rows(batch))
        assert catalog.get_table("ods.order_events").read().num_rows == events  # raw: duplicates kept

        assert run(dagbag, "paimon_lake_dwd") == {"create_dwd_orders": "success", "apply_ods_changes": "success",
                                                   "compact_dwd_orders": "success"}
        dwd = catalog.get_table("dwd.orders")
        got = {(r["order_id"], r["dt"]): (r["status"], r["amount"]) for r in dwd.read().to_pylist()}
        assert got == latest_orders(tuple(range(1, batch + 1)))  # deduplicated, late event ignored
        assert dwd.consumers() == {} and catalog.get_table("ods.order_events").consumers() == {
            sample.DWD_CONSUMER: catalog.get_table("ods.order_events").latest_snapshot_id() + 1}  # type: ignore[operator]
        compaction = dwd.latest_snapshot()
        assert compaction is not None and str(compaction.commit_kind) == "COMPACT"
        if not compaction.changelog_record_count:
            pytest.xfail("the dedicated compaction of dwd.orders (changelog-producer=lookup) wrote no changelog: "
                         "the engine's compaction does not produce changelog files yet, so DWS gets no changes")

        states = run(dagbag, "paimon_lake_dws")
        assert states["aggregate_dwd_changelog"] == "success"
        dws = catalog.get_table("dws.user_daily")
        totals = {(r["user_id"], r["dt"]): (r["quantity"], round(r["amount"], 2)) for r in dws.read().to_pylist()}
        assert totals == sample.expected_user_daily(tuple(range(1, batch + 1)))

        run(dagbag, "paimon_lake_ads")
        tags = dws.list_tags()
        assert len(tags) == batch and all(t.startswith("ads-") for t in tags)
        tagged = dws.read(tag=tags[-1]).num_rows
        assert tagged == len(totals)

    report = sample.report(lake["warehouse"])
    assert "ADS: dws.user_daily at tag ads-" in report

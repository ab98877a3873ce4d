"""Layer DAGs run per partition (``per_partition=True``; docs/partitions.md): the layer is scheduled with a
PartitionedAssetTimetable on the table below, its partition-scoped tasks take the run's ``partition_key``. The
defaults stay as they were. ``dag.test()`` cannot make a partitioned run (Airflow's scheduler creates them from
partition-keyed events), so the pieces are tested directly: the timetable, the serialized DAG, the rendered
tasks on real tables (compaction of the run's partition only, its event keyed by that partition) and the ADS task
reading only the run's partition."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import example_lake as sample
from airflow.sdk import PartitionedAssetTimetable
from airflow.sdk.execution_time.context import OutletEventAccessors
from paimon_provider.utils.assets import table_asset

from table_engine import Catalog
from tests.dags.test_example_lake import lake_dags

DRIVER_CONF = {"conf": {"spark.paimon.driver-job.max-input-size": "64m"}}


def context(partition_key: str | None, task_id: str = "t") -> dict[str, Any]:
    dag_run = SimpleNamespace(partition_key=partition_key, run_after=None)
    ti = SimpleNamespace(dag_id="d", task_id=task_id, run_id="asset_triggered__1", map_index=-1, try_number=1)
    return {"dag_run": dag_run, "ti": ti, "outlet_events": OutletEventAccessors()}


def test_defaults_unchanged_and_per_partition_schedules() -> None:
    dags = lake_dags()
    assert not isinstance(dags.dwd_dag.timetable, PartitionedAssetTimetable)
    compact = dags.dwd_dag.get_task("compact_dwd_orders")
    assert compact.partitions is None and not compact.partition_events
    for build, below in ((dags.build_dwd_dag, sample.ODS), (dags.build_dws_dag, sample.DWD),
                         (dags.build_ads_dag, sample.DWS)):
        dag = build(f"pp_{below.name}", per_partition=True)
        assert isinstance(dag.timetable, PartitionedAssetTimetable)
        assert dag.timetable.asset_condition == table_asset(below.name, "paimon_default")
        assert "once per partition" in (dag.doc_md or "")
    # a per-partition DAG serializes as Airflow stores it (the scheduler reads it from there)
    from airflow.serialization.serialized_objects import DagSerialization

    stored = DagSerialization.from_dict(DagSerialization.to_dict(dags.build_dwd_dag("pp", per_partition=True)))
    assert stored.timetable.partitioned  # type: ignore[attr-defined]


def test_a_partition_run_compacts_its_partition_and_names_it(lake: dict[str, str]) -> None:
    dags = lake_dags()
    dag = dags.build_dwd_dag("pp_dwd", per_partition=True, partition_events=True)
    dag.get_task("create_dwd_orders").execute(context(None))
    dwd = Catalog(lake["warehouse"]).get_table(sample.DWD.name)
    rows = sample.order_events(2)  # orders on two days
    days = sorted(set(rows.column("dt").to_pylist()))
    assert len(days) == 2
    for _ in range(2):  # two files per partition and bucket to compact
        dwd.write(rows)
    compact = dag.get_task("compact_dwd_orders")
    assert compact.trigger_rule == "none_failed"  # runs when this run's apply found nothing new
    compact.spark = DRIVER_CONF
    ctx = context(f"dt={days[1]}", "compact_dwd_orders")
    compact.render_template_fields(ctx)
    assert compact.build_command(lake["warehouse"]).partitions == ({"dt": days[1]},)
    result = compact.execute(ctx)
    assert result is not None and result["commit"]["partitions"] == [f"dt={days[1]}"]
    assert ctx["outlet_events"][table_asset(sample.DWD.name, "paimon_default")].partition_keys == {f"dt={days[1]}"}
    # by hand (no partition key): every partition
    unkeyed = dags.build_dwd_dag("pp_dwd2", per_partition=True).get_task("compact_dwd_orders")
    unkeyed.render_template_fields(context(None))
    assert unkeyed.build_command(lake["warehouse"]).partitions == ()


def test_ads_publishes_the_run_partition_only(lake: dict[str, str]) -> None:
    dags = lake_dags()
    dags.build_dws_dag("pp_dws").get_task("create_dws_user_daily").execute(context(None))
    dws = Catalog(lake["warehouse"]).get_table(sample.DWS.name)
    dws.write(sample.order_events(2))
    dws.create_tag("t1", dws.latest_snapshot_id())
    days = sorted(set(dws.read().column("dt").to_pylist()))
    every = dags.publish_top_users.function({"tag": "t1"})
    one = dags.publish_top_users.function({"tag": "t1"}, partition=f"dt={days[0]}")
    assert {r["dt"] for r in every} == set(days) and {r["dt"] for r in one} == {days[0]}
    assert one == [r for r in every if r["dt"] == days[0]]
    assert dags.publish_top_users.function({"tag": "t1"}, partition="None") == every  # a run without a key

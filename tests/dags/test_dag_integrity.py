"""Every DAG in dags/ imports cleanly; forms (Params) have valid defaults; nothing needs a logical date."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest
from airflow.sdk.exceptions import ParamValidationError

LAKE = ["paimon_lake_ods", "paimon_lake_dwd", "paimon_lake_dws", "paimon_lake_ads", "paimon_wap"]
MAINTENANCE = ["paimon_compact", "paimon_expire_snapshots", "paimon_daily_tag", "paimon_expire_partitions",
               "paimon_remove_orphan_files", "paimon_rollback", "paimon_maintenance"]
HYGIENE = ["paimon_expire_changelogs", "paimon_compact_manifest", "paimon_remove_unexisting_files", "paimon_repair",
           "paimon_clear_consumers", "paimon_reset_consumer", "paimon_audit_branches"]
EVENTS = ["paimon_external_commits"]
# context keys that do not exist (or raise) in runs triggered from the UI/REST, which have no logical date
_LOGICAL_DATE = re.compile(r"\b(ds|ds_nodash|ts|ts_nodash|ts_nodash_with_tz|logical_date|execution_date|"
                           r"data_interval_start|data_interval_end|prev_ds|next_ds|yesterday_ds|tomorrow_ds)\b")


def test_no_import_errors(dagbag: Any) -> None:
    assert dagbag.import_errors == {}
    assert sorted(dagbag.dag_ids) == sorted(LAKE + MAINTENANCE + HYGIENE + EVENTS)


REQUIRED_BY_HAND = {"paimon_rollback": "version", "paimon_reset_consumer": "consumer_id"}
"""DAGs run by hand only whose form has a field without a default (what to roll back to, the consumer to reset)."""


@pytest.mark.parametrize("dag_id", LAKE + MAINTENANCE + HYGIENE + EVENTS)
def test_dag_conventions(dagbag: Any, dag_id: str) -> None:
    dag = dagbag.dags[dag_id]
    assert "paimon" in dag.tags and dag.doc_md and dag.description
    if dag_id in HYGIENE:  # told apart from the upkeep DAGs in the DAG list
        assert "hygiene" in dag.tags and "maintenance" not in dag.tags
    if dag_id in MAINTENANCE:
        assert "maintenance" in dag.tags
    assert dag.catchup is False
    required = REQUIRED_BY_HAND.get(dag_id)
    if required is None:
        dag.params.validate()  # the defaults fill a valid form
    else:  # a by-hand form whose field has no right default: the form cannot be submitted until it is filled in
        assert type(dag.timetable).__name__ == "NullTimetable"  # schedule=None
        with pytest.raises(ParamValidationError, match=f"param {required}: No value passed"):
            dag.params.validate()
    for task in dag.tasks:
        for field in task.template_fields:
            value = getattr(task, field, None) if not hasattr(task, "partial_kwargs") else \
                task.partial_kwargs.get(field, getattr(task, field, None))
            for text in _strings(value):
                for expr in re.findall(r"{{(.*?)}}|{%(.*?)%}", text):
                    assert not _LOGICAL_DATE.search(" ".join(expr)), f"{dag_id}.{task.task_id}.{field}: {text}"


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list | tuple):
        return [s for v in value for s in _strings(v)]
    return []


def test_layers_are_scheduled_on_the_asset_below(dagbag: Any) -> None:
    from paimon_provider.utils.assets import table_asset

    def outlets(dag_id: str) -> set[str]:
        return {o.uri for t in dagbag.dags[dag_id].tasks for o in getattr(t, "outlets", []) if hasattr(o, "uri")}

    def schedule(dag_id: str) -> set[str]:
        condition = dagbag.dags[dag_id].timetable.asset_condition
        return {a.uri for a in getattr(condition, "objects", ())}

    ods, dwd, dws = (table_asset(t).uri for t in ("ods.order_events", "dwd.orders", "dws.user_daily"))
    assert not schedule("paimon_lake_ods") and not schedule("paimon_wap")
    assert outlets("paimon_wap") == {ods}  # the publishing fast-forward only: a write into the branch emits none
    assert outlets("paimon_lake_ods") == {ods} and schedule("paimon_lake_dwd") == {ods}
    assert outlets("paimon_lake_dwd") == {dwd} and schedule("paimon_lake_dws") == {dwd}
    assert outlets("paimon_lake_dws") == {dws} and schedule("paimon_lake_ads") == {dws}


def test_a_layer_or_a_dag_scheduled_on_the_commits_of_a_table_has_a_watcher(dagbag: Any) -> None:
    import paimon_streaming_lake as lake
    from paimon_provider.triggers.watcher import PaimonTableSnapshotTrigger

    def watched(dag: Any) -> list[tuple[str, str, dict[str, Any]]]:
        condition = dag.timetable.asset_condition
        return [(a.uri, w.name, w.trigger.serialize()[1]) for a in getattr(condition, "objects", ())
                for w in a.watchers if isinstance(w.trigger, PaimonTableSnapshotTrigger)]

    assert not watched(dagbag.dags["paimon_lake_dwd"])  # the default: the Asset the operators below emit
    layer = lake._layer("x_on_commits", "x", lake.DWD, what="x", leaves="x", schedule_on="watcher")
    [(uri, name, kwargs)] = watched(layer)
    assert uri == "paimon://paimon_default/dwd/orders?events=commits"
    assert name == "paimon.paimon_default.dwd.orders.commits.watcher"
    assert kwargs["table"] == "dwd.orders" and kwargs["paimon_conn_id"] == "paimon_default"
    assert kwargs["warehouse"] is None  # resolved from the connection in the triggerer, never at parse
    assert "every commit to `dwd.orders`" in layer.doc_md
    with pytest.raises(ValueError, match="schedule_on"):
        lake._layer("y", "y", lake.DWD, what="y", leaves="y", schedule_on="cron")
    # the builders take the one argument: DWD started by every commit to ODS (say, a Flink job's)
    [(uri, _, _)] = watched(lake.build_dwd_dag("dwd_on_commits", schedule_on="watcher"))
    assert uri == "paimon://paimon_default/ods/order_events?events=commits"
    with pytest.raises(ValueError, match="per_partition"):  # partition keys come with the operators' events only
        lake.build_dws_dag("dws_keyed_watch", per_partition=True, schedule_on="watcher")
    [(uri, _, kwargs)] = watched(dagbag.dags["paimon_external_commits"])
    assert uri == "paimon://paimon_default/ods/partner_orders?events=commits" and kwargs["poll_interval"] > 0


def test_the_external_commits_dag_reports_the_snapshots_of_the_watchers_events(dagbag: Any) -> None:
    from types import SimpleNamespace

    task = dagbag.dags["paimon_external_commits"].get_task("report_commits")
    # Airflow's Asset event of a watcher: the trigger's payload under "payload" (models/trigger.py)
    events = [SimpleNamespace(extra={"from_trigger": True, "payload": {"snapshot_id": sid, "commit_kind": "APPEND"}})
              for sid in (5, 4)]
    result = task.python_callable(triggering_asset_events={"asset": events})
    assert [r["snapshot_id"] for r in result] == [4, 5]


def test_maintenance_forms(dagbag: Any) -> None:
    compact = dagbag.dags["paimon_compact"].params
    assert compact["mode"] == "minor" and compact["tables"] == ["ods.order_events", "dwd.orders", "dws.user_daily"]
    from airflow.sdk.exceptions import ParamValidationError

    bad = copy.deepcopy(dagbag.dags["paimon_compact"].params)
    with pytest.raises(ParamValidationError):
        bad["mode"] = "major"
    with pytest.raises(ParamValidationError):
        bad["tables"] = ["not a table"]
    assert dagbag.dags["paimon_expire_snapshots"].params["older_than"] == "1 d ago"
    assert dagbag.dags["paimon_lake_ods"].params["batch"] == 1


def test_dag_files_import_no_heavy_modules() -> None:
    """DAG files are parsed often: no pyspark, pyarrow or engine import at their top level."""
    import subprocess
    import sys

    from tests.airflow_env import DAGS_FOLDER

    # the DAG folder on sys.path, as Airflow puts it there (the DAGs import dags/example_lake.py by name)
    code = ("import sys, runpy\n"
            f"sys.path.insert(0, {str(DAGS_FOLDER)!r})\n"
            f"for f in {sorted(str(p) for p in DAGS_FOLDER.glob('*.py'))!r}: runpy.run_path(f)\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pyspark', 'pyarrow', 'table_engine')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300)
    assert out.stdout.strip().splitlines()[-1] == "[]"


@pytest.mark.parametrize("dag_id", MAINTENANCE + HYGIENE)
@pytest.mark.parametrize("now", ["2026-12-06T00:01:00+00:00", "2026-12-06T13:37:00+00:00"])
def test_a_scheduled_upkeep_dag_runs_nothing_ahead_of_its_user(dagbag: Any, dag_id: str, now: str,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The scheduler's view of each upkeep DAG (serialized as the DAG processor stores it): no start date, so the
    first run is the next time its schedule names, after now, not one at once for the time already past (ADR 0041);
    the first start of ``make airflow`` queues no maintenance. Also a minute after a tick of every schedule (Sunday
    00:01 UTC: hourly, daily and weekly), where Airflow's own default would run the tick just past."""
    import datetime

    import pendulum
    from airflow.serialization.serialized_objects import DagSerialization
    from airflow.timetables import trigger
    from airflow.timetables.base import TimeRestriction

    at = pendulum.parse(now)
    monkeypatch.setattr(trigger, "utcnow", lambda: at)
    dag = DagSerialization.from_dict(DagSerialization.to_dict(dagbag.dags[dag_id]))
    assert dag.start_date is None and dag.catchup is False
    first = dag.timetable.next_dagrun_info(last_automated_data_interval=None,
                                           restriction=TimeRestriction(earliest=None, latest=None, catchup=False))
    if type(dag.timetable).__name__ == "NullTimetable":
        assert first is None
    else:
        assert first is not None and first.run_after > datetime.datetime.fromisoformat(now), (dag_id, first)

"""The metadata-only maintenance DAGs (and the daily changelog expiry) on a fresh lake (``make airflow``: the tables
exist, empty, before the first batch lands) run green: nothing to expire or delete (the planner DAG plans nothing),
and the daily tag skips the tables with no snapshot yet without keeping the tags of the other tables from expiring.
(Compaction, a Spark job, is covered on empty tables through the engine's CLI in tests/spark/test_cli_local.py.)"""

from __future__ import annotations

from typing import Any

import example_lake as sample
import pytest

pytestmark = [pytest.mark.airflow, pytest.mark.timeout(600)]


def run(dagbag: Any, dag_id: str, conf: dict[str, Any]) -> dict[str, str]:
    dr = dagbag.dags[dag_id].test(run_conf=conf)
    states = {f"{ti.task_id}[{ti.map_index}]": str(ti.state) for ti in dr.get_task_instances()}
    assert str(dr.state) == "success", f"{dag_id}: {states}"
    return states


def test_maintenance_dags_on_empty_tables(dagbag: Any, airflow_db: None, lake: dict[str, str]) -> None:
    from table_engine import Catalog

    assert sample.ensure_tables(lake["warehouse"]) == sample.ALL_TABLES
    catalog = Catalog(lake["warehouse"])
    ods = catalog.get_table(sample.ODS.name)
    ods.write(sample.order_events(1))           # one table with a snapshot (and an old tag), the others empty
    ods.create_tag("old", time_retained_ms=1)
    tables = {"tables": sample.ALL_TABLES}

    states = run(dagbag, "paimon_daily_tag", {**tables, "tag_prefix": "daily", "time_retained": "7 d"})
    assert states == {"selected_tables[-1]": "success", "create_tag[0]": "success", "create_tag[1]": "skipped",
                      "create_tag[2]": "skipped", "expire_tags[0]": "success", "expire_tags[1]": "success",
                      "expire_tags[2]": "success"}
    tags = ods.list_tags()
    assert len(tags) == 1 and tags[0].startswith("daily-")  # "old" expired although two create_tag were skipped
    assert [catalog.get_table(t).list_tags() for t in (sample.DWD.name, sample.DWS.name)] == [[], []]

    run(dagbag, "paimon_expire_snapshots", {**tables, "retain_min": 10, "retain_max": 100, "older_than": "1 d ago"})
    run(dagbag, "paimon_expire_partitions", {**tables, "expiration_time": "365 d", "timestamp_formatter": "yyyy-MM-dd",
                                             "timestamp_pattern": "$dt", "dry_run": False})
    run(dagbag, "paimon_remove_orphan_files", {**tables, "older_than": "1 d ago", "dry_run": False})
    run(dagbag, "paimon_expire_changelogs", {**dagbag.dags["paimon_expire_changelogs"].params, **tables})
    assert ods.read().num_rows == len(sample.order_event_rows(1))
    # the planner DAG: an empty table plans nothing; a database none of whose tables is selected maps no task
    planner = {"databases": [sample.DWD.name.split(".")[0]], "include": ["*"], "exclude": [], "dry_run": False,
               "orphans": True}
    assert run(dagbag, "paimon_maintenance", planner) == {"list_tables[-1]": "success", "maintain[0]": "success"}
    # its defaults (scheduled runs): every database of the warehouse, ODS included
    every = run(dagbag, "paimon_maintenance", dict(dagbag.dags["paimon_maintenance"].params))
    tables = [t for d in catalog.list_databases() for t in catalog.list_tables(d)]
    assert {sample.ODS.name.split(".")[1], sample.DWD.name.split(".")[1]} <= set(tables)
    assert every["list_tables[-1]"] == "success"
    assert len([k for k in every if k.startswith("maintain[")]) == len(tables)
    states = run(dagbag, "paimon_maintenance", {**planner, "exclude": ["*"]})
    assert states["list_tables[-1]"] == "success" and "maintain[0]" not in states
    assert [catalog.get_table(t).latest_snapshot_id() for t in (sample.DWD.name, sample.DWS.name)] == [None, None]

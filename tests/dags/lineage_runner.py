"""Run the lake's layer DAGs (one batch) and the maintenance DAGs with ``dag.test()`` in this process, with the
OpenLineage provider enabled by the environment (its file transport), as tests/dags/test_lineage_dags.py asks.

A separate process: the OpenLineage provider decides once per process (cached configuration, its plugin's class
body) whether it is enabled, so the test session's other DAG runs stay without it.

Usage: ``python -m tests.dags.lineage_runner <warehouse> <landing dir> <result file>``; writes the latest snapshot
id of each table as JSON to the result file.
"""

from __future__ import annotations

import json
import sys
from typing import Any


def main(warehouse: str, landing: str) -> dict[str, Any]:
    """Run the DAGs; the latest snapshot id of each table touched, and the tag the ADS layer made."""
    sys.path.insert(0, "dags")
    import example_lake as sample
    from airflow.dag_processing.dagbag import DagBag

    from tests import airflow_env

    dagbag = DagBag(dag_folder=str(airflow_env.DAGS_FOLDER))

    def run(dag_id: str, conf: dict[str, Any] | None = None) -> None:
        dr = dagbag.dags[dag_id].test(run_conf=conf)
        states = {ti.task_id: str(ti.state) for ti in dr.get_task_instances()}
        if str(dr.state) != "success":
            raise SystemExit(f"{dag_id}: {states}")

    run("paimon_lake_ods", {"batch": 1, "landing_dir": landing})
    run("paimon_wap", {"batch": 2, "landing_dir": landing})  # write-audit-publish: branches, a check, a fast-forward
    run("paimon_lake_dwd")
    run("paimon_lake_dws")
    run("paimon_lake_ads")
    from paimon_provider.hooks.table import PaimonTableHook

    catalog = PaimonTableHook().get_catalog()  # the connection's warehouse (local, or S3 with its credentials)
    assert catalog.warehouse.rstrip("/") == warehouse.rstrip("/"), (catalog.warehouse, warehouse)
    one = {"tables": [sample.DWD.name]}
    run("paimon_compact", {**one, "mode": "full", "partitions": ""})
    run("paimon_daily_tag", {**one, "tag_prefix": "daily", "time_retained": "7 d"})
    run("paimon_expire_snapshots", {**one, "retain_min": 1, "retain_max": 2, "older_than": ""})
    run("paimon_remove_orphan_files", {**one, "older_than": "1 d ago", "dry_run": False})
    form = {**one, "expiration_time": "1 d", "timestamp_formatter": "yyyy-MM-dd", "timestamp_pattern": "$dt"}
    run("paimon_expire_partitions", {**form, "dry_run": False})
    (tag,) = catalog.get_table(sample.DWD.name).list_tags()
    run("paimon_rollback", {"table": sample.DWD.name, "version": tag})
    return {name: catalog.get_table(name).latest_snapshot_id()
            for name in (sample.ODS.name, sample.DWD.name, sample.DWS.name)}


if __name__ == "__main__":
    with open(sys.argv[3], "w") as out:  # not stdout: the OpenLineage client's threads log there too
        json.dump(main(sys.argv[1], sys.argv[2]), out)

"""OpenLineage events of real DAG runs: the four layer DAGs (one batch, the engine on the worker as ``make demo``
runs it, a second batch through write-audit-publish) and the maintenance DAGs, run once with ``dag.test()`` in a
process where the OpenLineage provider is on with its file transport (tests/dags/lineage_runner.py). Every Paimon
task emits START and COMPLETE events whose inputs and outputs name the tables as docs/lineage.md says, the COMPLETE
events' ``version`` is the snapshot the table holds, and every event and facet is valid.

The OpenLineage JSON schema is not shipped with the client (openlineage-python 1.54 ships its generated attrs classes
only), so events are validated against those classes: each facet is built again from its JSON by the class its
``_schemaURL`` names (unknown or missing fields fail), and the event itself as ``event_v2.RunEvent`` (whose
validators check the event time, producer, schema URL and run id).
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
import pkgutil
import subprocess
import sys
from collections.abc import Mapping
from typing import Any

import example_lake as sample
import pytest
from paimon_provider.utils.lineage import location
from paimon_streaming_lake import ODS_CHECKS

from tests import airflow_env

pytestmark = [pytest.mark.airflow, pytest.mark.slow, pytest.mark.timeout(900)]

PAIMON_TASKS = {
    "paimon_lake_ods.append_ods", "paimon_lake_dwd.create_dwd_orders", "paimon_lake_dwd.apply_ods_changes",
    "paimon_lake_dwd.compact_dwd_orders", "paimon_lake_dws.create_dws_user_daily",
    "paimon_lake_dws.aggregate_dwd_changelog", "paimon_lake_ads.tag_for_serving", "paimon_compact.compact",
    "paimon_daily_tag.create_tag", "paimon_daily_tag.expire_tags", "paimon_expire_snapshots.expire_snapshots",
    "paimon_remove_orphan_files.remove_orphan_files", "paimon_expire_partitions.expire_partitions",
    "paimon_rollback.rollback", "paimon_wap.write_audit_publish.write_batch",
    "paimon_wap.write_audit_publish.check_batch", "paimon_wap.write_audit_publish.publish",
    "paimon_wap.write_audit_publish.delete_audit_branch"}
WAP = "paimon_wap.write_audit_publish"


@pytest.fixture(scope="module", params=["local", "s3"])
def lineage_run(request: pytest.FixtureRequest, airflow_db: None,
                tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The DAGs' events (``events``), the warehouse, and each table's latest snapshot after the runs; on a local
    warehouse and on the session's S3 server. Airflow's OpenLineage listener runs with its default settings: it
    forks to build each event (the S3 FileIO works in that child: ADR 0040)."""
    root = tmp_path_factory.mktemp("lineage")
    landing, events = root / "landing", root / "events.jsonl"
    if request.param == "s3":
        s3_server = request.getfixturevalue("s3_server")
        warehouse = f"s3://{request.getfixturevalue('s3_bucket')}/lineage-{root.name}/warehouse"
        connection = airflow_env.paimon_s3_connection(warehouse, s3_server.endpoint,
                                                      spark_conf=sample.LAPTOP_SPARK_CONF)
    else:
        warehouse = str(root / "warehouse")
        connection = airflow_env.paimon_connection(warehouse, spark_conf=sample.LAPTOP_SPARK_CONF)
    env = dict(os.environ,
               AIRFLOW_CONN_PAIMON_DEFAULT=connection,
               AIRFLOW_CONN_SPARK_DEFAULT=airflow_env.spark_connection("local[2]"),
               PAIMON_LANDING_DIR=str(landing),
               AIRFLOW__OPENLINEAGE__TRANSPORT=json.dumps({"type": "file", "log_file_path": str(events),
                                                           "append": True}),
               AIRFLOW__OPENLINEAGE__NAMESPACE="paimon-lineage-test")
    out = subprocess.run([sys.executable, "-m", "tests.dags.lineage_runner", str(warehouse), str(landing),
                          str(root / "latest.json")],
                         env=env, capture_output=True, text=True, timeout=600, cwd=airflow_env.REPO)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    latest = json.loads((root / "latest.json").read_text())
    return {"events": [json.loads(line) for line in events.read_text().splitlines()], "warehouse": warehouse,
            "landing": str(landing), "latest": latest}


def facet_classes() -> dict[str, type]:
    """The generated facet classes of the OpenLineage client, by their schema URL."""
    import openlineage.client.generated as generated

    found: dict[str, type] = {}
    for info in pkgutil.iter_modules(generated.__path__):
        module = importlib.import_module(f"{generated.__name__}.{info.name}")
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == module.__name__ and hasattr(cls, "_get_schema") and "Facet" in cls.__name__:
                found[cls._get_schema()] = cls
    return found


def check_facet(classes: Mapping[str, type], key: str, facet: Mapping[str, Any]) -> None:
    """Rebuild ``facet`` with the class its ``_schemaURL`` names: required fields present, none unknown."""
    from openlineage.client.serde import Serde

    cls = classes.get(facet.get("_schemaURL", ""))
    assert cls is not None, f"facet {key}: unknown schema {facet.get('_schemaURL')}"
    fields = {k: v for k, v in facet.items() if not k.startswith("_")}
    rebuilt = cls(**fields)  # a TypeError names a missing or unknown field
    assert {k: v for k, v in Serde.to_dict(rebuilt).items() if not k.startswith("_")} == fields, key


def check_event(classes: Mapping[str, type], event: Mapping[str, Any]) -> None:
    from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState

    for dataset in [*event.get("inputs", []), *event.get("outputs", [])]:
        for facets in ("facets", "inputFacets", "outputFacets"):
            for key, facet in (dataset.get(facets) or {}).items():
                check_facet(classes, key, facet)
    rebuilt = RunEvent(
        eventType=RunState(event["eventType"]), eventTime=event["eventTime"], run=Run(runId=event["run"]["runId"]),
        job=Job(namespace=event["job"]["namespace"], name=event["job"]["name"]), producer=event["producer"],
        inputs=[InputDataset(namespace=d["namespace"], name=d["name"]) for d in event.get("inputs", [])],
        outputs=[OutputDataset(namespace=d["namespace"], name=d["name"]) for d in event.get("outputs", [])])
    assert rebuilt.schemaURL == event["schemaURL"]


def test_every_event_is_valid(lineage_run: dict[str, Any]) -> None:
    classes = facet_classes()
    for event in lineage_run["events"]:
        check_event(classes, event)


def test_paimon_tasks_name_their_tables(lineage_run: dict[str, Any]) -> None:
    warehouse = lineage_run["warehouse"]
    by_task: dict[tuple[str, str], dict[str, Any]] = {}
    for e in lineage_run["events"]:
        by_task[(e["job"]["name"], e["eventType"])] = e
    for task in PAIMON_TASKS:  # every operator: START and COMPLETE (none lost in the listener's forked child)
        assert {(task, "START"), (task, "COMPLETE")} <= set(by_task), task

    def io(task: str, kind: str = "COMPLETE") -> tuple[list[str], list[str]]:
        e = by_task[(task, kind)]
        return ([d["name"] for d in e["inputs"]], [d["name"] for d in e["outputs"]])

    (landed,) = by_task[("paimon_lake_ods.append_ods", "COMPLETE")]["inputs"]  # the batch's files
    assert landed["namespace"] == "file" and landed["name"].startswith(lineage_run["landing"] + "/")
    assert io("paimon_lake_ods.append_ods")[1] == ["paimon.ods.order_events"]
    assert io("paimon_lake_dwd.apply_ods_changes") == (["paimon.ods.order_events"], ["paimon.dwd.orders"])
    assert io("paimon_lake_dws.aggregate_dwd_changelog") == (["paimon.dwd.orders"], ["paimon.dws.user_daily"])
    assert io("paimon_lake_ads.tag_for_serving") == ([], ["paimon.dws.user_daily"])
    # ADS is downstream of DWS: its @task reads the tag through the table hook, which reports the table it reads
    assert io("paimon_lake_ads.publish_top_users")[0] == ["paimon.dws.user_daily"]
    for task in PAIMON_TASKS:  # START names the datasets COMPLETE names (docs/lineage.md)
        assert io(task, "START") == io(task), task
    assert io("paimon_rollback.rollback") == ([], ["paimon.dwd.orders"])
    for (task, _), e in by_task.items():
        for d in [*e["inputs"], *e["outputs"]]:
            if d["name"].startswith("paimon."):
                assert d["namespace"] == warehouse, task
                (link,) = d["facets"]["symlinks"]["identifiers"]
                db, table = d["name"].partition("$")[0].split(".")[1:]  # a branch lives in its table's directory
                assert (link["namespace"], link["name"], link["type"]) == (
                    *location(f"{warehouse}/{db}.db/{table}"), "LOCATION")

    def facets(task: str, i: int = 0) -> dict[str, Any]:
        return dict(by_task[(task, "COMPLETE")]["outputs"][i]["facets"])

    ods = by_task[("paimon_lake_ods.append_ods", "COMPLETE")]["outputs"][0]
    assert ods["outputFacets"]["outputStatistics"]["rowCount"] == len(sample.order_event_rows(1))
    assert ods["facets"]["lifecycleStateChange"]["lifecycleStateChange"] == "CREATE"  # the write created it
    assert [f["name"] for f in ods["facets"]["schema"]["fields"]] == list(sample.ODS.columns)
    assert "lifecycleStateChange" not in by_task[("paimon_lake_ods.append_ods", "START")]["outputs"][0]["facets"]
    assert facets("paimon_expire_partitions.expire_partitions")["lifecycleStateChange"][
        "lifecycleStateChange"] == "TRUNCATE"
    expired = by_task[("paimon_expire_partitions.expire_partitions", "COMPLETE")]["outputs"][0]
    assert expired["outputFacets"]["outputStatistics"]["rowCount"] == 0  # a commit that only removes: adds none
    assert facets("paimon_rollback.rollback")["lifecycleStateChange"]["lifecycleStateChange"] == "OVERWRITE"
    assert "lifecycleStateChange" not in facets("paimon_expire_snapshots.expire_snapshots")
    # write-audit-publish: the batch into the audit branch, checked there, fast-forwarded to main, branch dropped
    (branch,) = io(f"{WAP}.write_batch")[1]
    assert branch.startswith("paimon.ods.order_events$branch_audit_")
    assert io(f"{WAP}.check_batch") == ([branch], [])
    assert io(f"{WAP}.publish") == ([branch], ["paimon.ods.order_events"])
    assert facets(f"{WAP}.publish")["lifecycleStateChange"]["lifecycleStateChange"] == "OVERWRITE"
    assert facets(f"{WAP}.delete_audit_branch")["lifecycleStateChange"]["lifecycleStateChange"] == "DROP"
    checked = by_task[(f"{WAP}.check_batch", "COMPLETE")]["inputs"][0]["facets"]["version"]["datasetVersion"]
    assert checked == facets(f"{WAP}.write_batch")["version"]["datasetVersion"]  # the snapshot written, checked
    quality = by_task[(f"{WAP}.check_batch", "COMPLETE")]["inputs"][0]["inputFacets"]["dataQualityAssertions"]
    assert len(quality["assertions"]) == len(ODS_CHECKS) and all(a["success"] for a in quality["assertions"])
    # the DWS aggregation's columns come from DWD's same-named ones
    lineage = facets("paimon_lake_dws.aggregate_dwd_changelog")["columnLineage"]["fields"]
    assert set(lineage) == set(sample.DWS.columns) & set(sample.DWD.columns)
    (amount,) = lineage["amount"]["inputFields"]
    assert (amount["name"], amount["field"]) == ("paimon.dwd.orders", "amount")
    assert [(t["type"], t["subtype"], t["description"]) for t in amount["transformations"]] == [
        ("DIRECT", "AGGREGATION", "sum of the changes by key")]
    assert lineage["user_id"]["inputFields"][0]["transformations"][0]["subtype"] == "IDENTITY"


def test_versions_are_the_tables_snapshots(lineage_run: dict[str, Any]) -> None:
    """The last COMPLETE event naming a table gives the snapshot the table holds after the runs; a consumer's input
    is the snapshot it read up to."""
    last: dict[str, str] = {}
    for e in lineage_run["events"]:
        if e["eventType"] == "COMPLETE":
            for d in e["outputs"]:
                if "version" in d["facets"] and "$" not in d["name"]:  # main branches
                    last[d["name"]] = d["facets"]["version"]["datasetVersion"]
    assert last == {f"paimon.{name}": str(sid) for name, sid in lineage_run["latest"].items()}
    apply = next(e for e in lineage_run["events"]
                 if e["job"]["name"] == "paimon_lake_dwd.apply_ods_changes" and e["eventType"] == "COMPLETE")
    # it read ODS up to the snapshot both batches made (the write's, then the fast-forward's)
    assert apply["inputs"][0]["facets"]["version"]["datasetVersion"] == str(lineage_run["latest"]["ods.order_events"])

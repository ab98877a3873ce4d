"""A DAG started by commits made outside Airflow: an AssetWatcher watches the snapshots of ``ods.partner_orders``.

A partner's system (a Flink or Spark job, pypaimon, Paimon Java, a script using ``table_engine``) commits order
events to ``ods.partner_orders`` directly; no Airflow task writes it, so no operator emits its Asset event. The DAG
is scheduled on :func:`~paimon_provider.triggers.watcher.commits_asset` of the table: a
:class:`~paimon_provider.triggers.watcher.PaimonTableSnapshotTrigger` in the triggerer polls the table's snapshots
and emits one Asset event per new snapshot, which starts a run (docs/events.md). Its task reports the snapshots that
started it (the event's extra: id, kind, committer, record counts, properties).

``PAIMON_WATCH_POLL_INTERVAL`` (seconds, default 10) sets how often the table is polled: two requests per idle poll
on an object store.
"""

from __future__ import annotations

import datetime
import os
from typing import Any

from airflow.sdk import DAG, task
from paimon_provider.triggers.watcher import commits_asset, snapshot_of_event
from paimon_provider.utils.maintenance import dag_doc

CONN_ID = "paimon_default"
TABLE = "ods.partner_orders"
POLL_INTERVAL = float(os.environ.get("PAIMON_WATCH_POLL_INTERVAL", "10"))

with DAG(
    dag_id="paimon_external_commits",
    description=f"Reports the commits to {TABLE}, whoever made them (an AssetWatcher polls its snapshots)",
    schedule=[commits_asset(TABLE, CONN_ID, poll_interval=POLL_INTERVAL)],
    start_date=datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC),
    catchup=False,
    tags=["paimon", "events"],
    doc_md=dag_doc(
        f"Reports the snapshots of `{TABLE}` that started the run: commits made outside Airflow (a Flink job, "
        "pypaimon, a script), seen by a trigger that polls the table's snapshots.",
        when=f"on every commit to `{TABLE}` (one Asset event per snapshot; the trigger polls every "
             f"{POLL_INTERVAL:g} s and waits for the table if it does not exist yet).",
        leaves="the snapshots that started the run (id, kind, committer, record counts) as the XCom of "
               "`report_commits`.",
        notes=f"Connection `{CONN_ID}` (the warehouse). Try it: commit to `{TABLE}` from any Paimon writer."),
) as dag:

    @task
    def report_commits(**context: Any) -> list[dict[str, Any]]:
        """The snapshots whose Asset events started this run, oldest first."""
        snapshots = [snapshot_of_event(event.extra) for events in context["triggering_asset_events"].values()
                     for event in events]
        snapshots.sort(key=lambda s: s.get("snapshot_id") or 0)
        for s in snapshots:
            print(f"snapshot {s.get('snapshot_id')} of {s.get('table')}: {s.get('commit_kind')} by "
                  f"{s.get('commit_user')}, {s.get('delta_record_count')} rows")
        return snapshots

    report_commits()

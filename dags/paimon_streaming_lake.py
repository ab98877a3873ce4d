"""A streaming lake in layers on Paimon tables, each layer scheduled on the Asset of the one below.

    ODS  paimon_lake_ods   land a batch of raw order events, append it to ods.order_events        (manual/UI)
    DWD  paimon_lake_dwd   ODS changes -> dwd.orders (dedup by key, write-only), then compact      (on ODS asset)
                           (dedicated compaction: produces the lookup changelog, emits dwd.orders)
    DWS  paimon_lake_dws   dwd.orders changelog -> dws.user_daily (aggregation: sum)               (on DWD asset)
    ADS  paimon_lake_ads   tag dws.user_daily for serving readers, publish its top users           (on DWS asset)

Connections: ``paimon_default`` (warehouse; its ``spark_conn_id``, default ``spark_default``, says where Spark
runs). Trigger ``paimon_lake_ods`` from the UI with a batch number (1-3 of the bundled sample data) and watch the
other layers follow. Nothing here uses the logical date: UI-triggered runs have none.

The builders (``build_ods_dag``, ``build_dwd_dag``, ``build_dws_dag``, ``build_ads_dag``) also make a lake that runs
per partition: ``per_partition=True`` schedules a layer once per partition key of the table below, whose writer
is built with ``partition_events=True`` (docs/partitions.md); and ``schedule_on="watcher"`` starts a layer (DWD,
DWS, ADS) on every commit to the table below, whoever made it (a Flink job, pypaimon...), through an AssetWatcher
instead of the operators' Asset events (docs/events.md). The DAGs below use the defaults.
"""

from __future__ import annotations

import datetime
from typing import Any

from airflow.sdk import DAG, Asset, Param, task
from example_lake import DWD, DWD_CONSUMER, DWS, DWS_CONSUMER, ODS, TableDef, default_landing_dir
from paimon_provider.operators import (
    PaimonCompactOperator,
    PaimonConsumeChangelogOperator,
    PaimonCreateTableOperator,
    PaimonCreateTagOperator,
    PaimonWriteOperator,
)
from paimon_provider.triggers.watcher import commits_asset
from paimon_provider.utils.assets import table_asset
from paimon_provider.utils.maintenance import dag_doc, flag_param
from paimon_provider.utils.partitions import partitioned_schedule

CONN_ID = "paimon_default"
START = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
DEFAULT_ARGS = {"retries": 1, "retry_delay": datetime.timedelta(seconds=30)}
TAGS = ["paimon", "streaming-lake"]
RUN_PARTITION = "{{ dag_run.partition_key }}"
"""A per-partition run's partition (``k=v,...``, docs/partitions.md) as a template; "None" (every partition) in a
run without one, e.g. triggered by hand."""
LAYERS_NOTE = ("The layers: ODS (`paimon_lake_ods`) -> DWD (`paimon_lake_dwd`) -> DWS (`paimon_lake_dws`) -> ADS "
               "(`paimon_lake_ads`), each scheduled on the Asset of the table below it. Connection "
               "`paimon_default` (the warehouse; its `spark_conn_id` says where Spark runs).")


SCHEDULE_ON = ("asset", "watcher")
"""How a layer DAG is started: ``asset``, by the Asset event the operators of the layer below emit after their
commit; ``watcher``, by every commit to the table below, whoever made it (a Flink or Spark job, pypaimon, a script):
an AssetWatcher's trigger polls the table's snapshots (docs/events.md)."""

WATCH_POLL_INTERVAL = 30.0
"""Seconds between two polls of a watched table (two requests on an object store when nothing is new)."""


def _schedule(below: TableDef, schedule_on: str) -> list[Asset]:
    if schedule_on == "asset":
        return [table_asset(below.name, CONN_ID)]
    if schedule_on == "watcher":
        return [commits_asset(below.name, CONN_ID, poll_interval=WATCH_POLL_INTERVAL)]
    raise ValueError(f"schedule_on must be one of {SCHEDULE_ON}, not {schedule_on!r}")


def _on_asset(below: TableDef, schedule_on: str = "asset") -> str:
    if schedule_on == "watcher":
        return (f"on every commit to `{below.name}`, whoever made it (a trigger watches its snapshots: one run per "
                "snapshot, several when the runs fall behind), or by hand from the UI.")
    return (f"when `{below.name}` changes: on its Asset event (the layer below published new data), or by hand "
            "from the UI.")


def _on_partition(below: TableDef) -> str:
    return (f"once per partition of `{below.name}` that changed: each partition key of its Asset events (e.g. "
            "`dt=2026-11-27`) starts a run with that `partition_key` (docs/partitions.md); by hand from the UI, "
            "a run without a key works on every partition.")


def _layer(dag_id: str, description: str, below: TableDef, *, what: str, leaves: str,
           schedule_on: str = "asset", per_partition: bool = False) -> DAG:
    """A layer's DAG: scheduled on the table below (``schedule_on``, see :data:`SCHEDULE_ON`), one run at a time;
    its own doc. ``per_partition``: one run per partition key of the table's Asset events (Airflow's
    PartitionedAssetTimetable; keys come with the operators' events, so only with ``schedule_on="asset"``)."""
    if per_partition and schedule_on != "asset":
        raise ValueError(f"{dag_id}: per_partition runs are keyed by the operators' Asset events "
                         f"(schedule_on='asset'), not schedule_on={schedule_on!r}")
    schedule = partitioned_schedule(table_asset(below.name, CONN_ID)) if per_partition \
        else _schedule(below, schedule_on)
    return DAG(dag_id=dag_id, description=description, schedule=schedule,
               start_date=START, catchup=False, max_active_runs=1, tags=[*TAGS, dag_id.rsplit("_", 1)[-1]],
               default_args=DEFAULT_ARGS,
               doc_md=dag_doc(what, when=_on_partition(below) if per_partition else _on_asset(below, schedule_on),
                              leaves=leaves, notes=LAYERS_NOTE))


def _create(tdef: TableDef, task_id: str) -> PaimonCreateTableOperator:
    return PaimonCreateTableOperator(task_id=task_id, table=tdef.name, columns=tdef.columns,
                                     primary_keys=tdef.primary_keys, partition_keys=tdef.partition_keys,
                                     table_options=tdef.options, comment=tdef.comment, paimon_conn_id=CONN_ID)


ODS_PARAMS = {
    "batch": Param(1, type="integer", minimum=1, maximum=3, title="Sample batch",
                   description="Which bundled sample batch of order events lands (1, 2, 3)."),
    "landing_dir": Param(default_landing_dir(), type="string", minLength=1, title="Landing directory",
                         description="Directory the batch lands in; Spark must be able to read it."),
}

ODS_CHECKS = [{"check": "row_count", "min": 1}, {"check": "null_fraction", "column": "order_id", "max": 0}]
"""The default audit of an ODS batch: rows arrived, and none without an order id (ods.order_events has no primary
key, and raw events may be re-sent: add ``{"check": "no_duplicate_keys", "columns": [...]}`` where they may not)."""

WAP_PARAMS = {
    **ODS_PARAMS,
    "checks": Param(ODS_CHECKS, type="array", items={"type": "object"}, minItems=1, title="Checks",
                    description="The audit of the batch, run on its branch before publication: a list of checks "
                                "(docs/checks.md), e.g. {\"check\": \"row_count\", \"min\": 1}."),
    "check_scope": Param("batch", type="string", enum=["batch", "table"], title="Check",
                         description="batch: the checks see only the rows this batch adds (an empty batch has none; "
                                     "a bad row already in main does not block it). table: every row of the branch, "
                                     "main's included."),
    "allow_main_moved": flag_param(False, title="Publish even if main moved",
                              description="Publish even when ods.order_events got other commits after the audit "
                                          "branch was made (the fast-forward discards them, as Paimon does)."),
}


def build_ods_dag(dag_id: str = "paimon_lake_ods", *, audit: bool = False, partition_events: bool = False) -> DAG:
    """The ODS layer's DAG: land a batch, append it to ods.order_events; with ``audit`` through write-audit-publish
    (docs/wap.md: the batch is checked on a branch and published by a fast-forward only when the checks pass).
    ``partition_events``: the append's Asset event names the partitions it changed, for a DWD layer built with
    ``per_partition`` (not with ``audit``)."""
    from paimon_provider.utils.wap import write_audit_publish

    params = WAP_PARAMS if audit else ODS_PARAMS
    one_at_a_time: dict[str, Any] = {"max_active_runs": 1} if audit else {}  # audits branch from main in turn
    how = (f"writes it into an audit branch of `{ODS.name}` (`audit_<run id>`), checks it there and publishes it "
           "to main with one fast-forward when every check passed" if audit else f"appends it to `{ODS.name}`")
    leaves = (f"the batch's Parquet files in the landing directory, `{ODS.name}`'s main branch at the audited "
              "snapshot and its Asset event (which starts `paimon_lake_dwd`); on failed checks main unchanged, the "
              "run failed with the failed checks in `check_batch`'s log and the branch `audit_<run id>` kept"
              if audit else f"the batch's Parquet files in the landing directory, an APPEND snapshot of `{ODS.name}` "
              "and its Asset event, which starts `paimon_lake_dwd`.")
    with DAG(
        dag_id=dag_id,
        description=f"ODS: {'write-audit-publish' if audit else 'append'} a batch of raw order events "
                    f"{'into' if audit else 'to'} ods.order_events",
        schedule=None,
        start_date=START,
        catchup=False,
        **one_at_a_time,
        tags=[*TAGS, "ods", *(["wap"] if audit else [])],
        default_args=DEFAULT_ARGS,
        params=params,
        doc_md=dag_doc(f"ODS: lands one sample batch of raw order events as Parquet files (a stand-in for an "
                       f"upstream system) and {how} (the table is created on the first run).",
                       when="by hand only: trigger it from the UI with a batch number; the layers above follow.",
                       leaves=leaves, params=params, notes=LAYERS_NOTE),
    ) as dag:

        @task
        def land_batch(batch: int, landing_dir: str) -> str:
            """Stand-in for an upstream system: write one sample batch of raw events as Parquet files."""
            from example_lake import write_batch

            return write_batch(landing_dir, int(batch))

        landed: Any = land_batch(batch="{{ params.batch }}", landing_dir="{{ params.landing_dir }}")  # type: ignore[arg-type]
        if audit:
            landed >> _create(ODS, "create_ods_events") >> write_audit_publish(
                ODS.name, source=str(landed), checks="{{ params.checks | tojson }}",
                check_scope="{{ params.check_scope }}", allow_main_moved="{{ params.allow_main_moved }}",
                paimon_conn_id=CONN_ID)
        else:
            landed >> PaimonWriteOperator(
                task_id="append_ods",
                table=ODS.name,
                source=str(landed),
                source_format="parquet",
                partition_keys=ODS.partition_keys,
                table_options=ODS.options,
                paimon_conn_id=CONN_ID,
                partition_events=partition_events,
            )
    return dag


ods_dag = build_ods_dag()
wap_dag = build_ods_dag("paimon_wap", audit=True)  # the same layer, write-audit-publish (docs/wap.md)


def build_dwd_dag(dag_id: str = "paimon_lake_dwd", *, per_partition: bool = False,
                  partition_events: bool = False, schedule_on: str = "asset") -> DAG:
    """The DWD layer: apply ODS's new changes to dwd.orders, then compact it. ``per_partition``: one run per
    partition of ODS's Asset events, whose compaction takes only the run's partition (docs/partitions.md).
    ``partition_events``: the compaction's Asset event names its partitions (for a DWS layer run per partition)."""
    with _layer(dag_id, "DWD: apply new ODS events to dwd.orders (dedup by key), then compact it",
                ODS, per_partition=per_partition, schedule_on=schedule_on,
                what=f"DWD: reads the new changes of `{ODS.name}` (consumer `{DWD_CONSUMER}`), writes them to "
                     f"`{DWD.name}` (deduplicated by key, write-only), then compacts it"
                     f"{' (the run partition only)' if per_partition else ''}; the dedicated compaction produces "
                     "the lookup changelog the DWS layer reads.",
                leaves=f"a snapshot of `{DWD.name}` with the batch, a COMPACT snapshot with its changelog, the "
                       f"consumer's new position on `{ODS.name}`, and `{DWD.name}`'s Asset event (which starts "
                       "`paimon_lake_dws`); nothing when no new events arrived.") as dag:
        create_dwd = _create(DWD, "create_dwd_orders")
        apply_changes = PaimonConsumeChangelogOperator(
            task_id="apply_ods_changes",
            table=ODS.name,
            consumer_id=DWD_CONSUMER,
            target_table=DWD.name,
            emit_asset=False,  # the compaction below publishes dwd.orders, once its changelog exists
            skip_if_no_commit=True,  # no new events: nothing to compact or publish
            paimon_conn_id=CONN_ID,
        )
        compact_dwd = PaimonCompactOperator(
            task_id="compact_dwd_orders",
            table=DWD.name,
            full=True,  # the writers are write-only: this dedicated compaction produces the changelog
            skip_if_no_commit=True,
            paimon_conn_id=CONN_ID,
            partition_events=partition_events,
            # per partition: a consumer reads by snapshot, not by partition, so the run of one partition applies
            # every new change (those of the other partitions' runs find none and skip); each run compacts its
            # own partition whether or not it applied anything
            **({"partitions": RUN_PARTITION, "trigger_rule": "none_failed"} if per_partition else {}),
        )
        create_dwd >> apply_changes >> compact_dwd
    return dag


def build_dws_dag(dag_id: str = "paimon_lake_dws", *, per_partition: bool = False,
                  partition_events: bool = False, schedule_on: str = "asset") -> DAG:
    """The DWS layer: aggregate dwd.orders' changelog into dws.user_daily. ``per_partition``: one run per partition
    of DWD's Asset events (the consumer still reads every new change: the first run of a batch aggregates it).
    ``partition_events``: the aggregation's Asset event names its partitions (for an ADS layer run per partition)."""
    with _layer(dag_id, "DWS: aggregate the dwd.orders changelog per user and day into dws.user_daily",
                DWD, per_partition=per_partition, schedule_on=schedule_on,
                what=f"DWS: reads the changelog of `{DWD.name}` (consumer `{DWS_CONSUMER}`) and aggregates it per "
                     f"user and day into `{DWS.name}` (aggregation merge engine: sums).",
                leaves=f"a snapshot of `{DWS.name}`, the consumer's new position on `{DWD.name}`, and `{DWS.name}`'s "
                       "Asset event (which starts `paimon_lake_ads`); nothing when the changelog was empty.") as dag:
        create_dws = _create(DWS, "create_dws_user_daily")
        aggregate = PaimonConsumeChangelogOperator(
            task_id="aggregate_dwd_changelog",
            table=DWD.name,
            consumer_id=DWS_CONSUMER,
            target_table=DWS.name,
            skip_if_no_commit=True,  # an empty changelog must not trigger the ADS layer
            paimon_conn_id=CONN_ID,
            partition_events=partition_events,
        )
        create_dws >> aggregate
    return dag


def build_ads_dag(dag_id: str = "paimon_lake_ads", *, per_partition: bool = False,
                  schedule_on: str = "asset") -> DAG:
    """The ADS layer: tag dws.user_daily for serving readers and publish the top users at the tag.
    ``per_partition``: one run per partition of DWS's Asset events, publishing that partition's top users."""
    with _layer(dag_id, "ADS: tag dws.user_daily for serving readers and publish the top users of the tag",
                DWS, per_partition=per_partition, schedule_on=schedule_on,
                what=f"ADS: tags `{DWS.name}` for serving readers (`ads-<run time>`) and publishes the top users "
                     f"per day as read at that tag{' (of the run partition only)' if per_partition else ''}.",
                leaves=f"a tag `ads-<run time>` of `{DWS.name}`, kept 3 days (it keeps its snapshot's files alive), "
                       "and the top users as the XCom of `publish_top_users`.") as dag:
        tag = PaimonCreateTagOperator(
            task_id="tag_for_serving",
            table=DWS.name,
            # one tag per run, named by the run's time to the millisecond (run_after exists for every run,
            # scheduled, asset-triggered or triggered from the UI): two runs never share a name, and a retry of
            # this run finds the tag it made (the operator's creator check) and succeeds
            tag="ads-{{ dag_run.run_after.strftime('%Y%m%dT%H%M%S.%f')[:-3] }}",
            time_retained="3 d",
            paimon_conn_id=CONN_ID,
        )
        publish_top_users(tag.output, partition=RUN_PARTITION if per_partition else None)  # type: ignore[arg-type]
    return dag


@task
def publish_top_users(tag_result: dict[str, object] | None, top: int = 5,
                      partition: str | None = None) -> list[dict[str, object]]:
    """The serving view: the top users per day at the new tag, read through the engine (no Spark); with
    ``partition`` (a ``k=v,...`` partition key; empty or "None": every partition) only that partition's."""
    from paimon_provider.hooks.table import PaimonTableHook
    from paimon_provider.utils.arguments import partition_texts

    if not tag_result or not tag_result.get("tag"):
        raise ValueError(f"the tag task returned no tag: {tag_result!r}")
    specs = partition_texts(partition)
    where = [(column, "=", value) for column, value in specs[0].items()] if specs else None
    rows = PaimonTableHook(CONN_ID).read(DWS.name, columns=["user_id", "dt", "quantity", "amount"], filter=where,
                                         tag=str(tag_result["tag"])).to_pylist()
    rows.sort(key=lambda r: (r["dt"], -(r["amount"] or 0.0)))
    by_day: dict[str, list[dict[str, object]]] = {}
    for r in rows:
        by_day.setdefault(r["dt"], []).append(r)
    return [r for day in sorted(by_day) for r in by_day[day][:top]]


dwd_dag = build_dwd_dag()
dws_dag = build_dws_dag()
ads_dag = build_ads_dag()

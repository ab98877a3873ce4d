"""The streaming lake of the DAG templates: its tables, deterministic sample data, and a report for ``make demo``.

Layers (the seeds' Paimon streaming-lake architecture, ODS -> DWD -> DWS -> ADS):

* ``ods.order_events`` - append table: raw order events exactly as they land (re-sent duplicates included).
* ``dwd.orders`` - primary-key table (order_id, dt): the latest state of each order; ``sequence.field`` keeps
  late events from overwriting newer ones, ``write-only`` leaves compaction to a dedicated job, and the ``lookup``
  changelog producer gives downstream readers proper ``-U``/``+U`` pairs.
* ``dws.user_daily`` - aggregation table (user_id, dt): ``sum`` of quantity and amount per user and day, fed from
  the DWD changelog through a consumer, so updates retract what they replace.
* ADS - a tag on ``dws.user_daily`` per run (what serving readers pin), plus the top users of that tag as XCom.

Nothing here imports pyarrow or the engine at module level: DAG files import this module at parse time.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Mapping

    import pyarrow as pa


@dataclass(frozen=True)
class TableDef:
    """A table of the lake: columns (Paimon type names, in order), keys and options."""

    name: str
    columns: dict[str, str]
    primary_keys: list[str] = field(default_factory=list)
    partition_keys: list[str] = field(default_factory=list)
    options: dict[str, str] = field(default_factory=dict)
    comment: str | None = None


EVENT_COLUMNS = {
    "event_id": "STRING",
    "order_id": "BIGINT",
    "user_id": "STRING",
    "status": "STRING",
    "quantity": "BIGINT",
    "amount": "DOUBLE",
    "event_time_ms": "BIGINT",
    "dt": "STRING",
}

ODS = TableDef("ods.order_events", dict(EVENT_COLUMNS), partition_keys=["dt"],
               options={"bucket": "-1"}, comment="raw order events, appended as they land")
DWD = TableDef("dwd.orders", dict(EVENT_COLUMNS), primary_keys=["order_id", "dt"], partition_keys=["dt"],
               options={"bucket": "2", "sequence.field": "event_time_ms", "changelog-producer": "lookup",
                        "write-only": "true", "snapshot.num-retained.min": "5"},
               comment="latest state of each order (deduplicated, late events ignored)")
DWS = TableDef("dws.user_daily", dict(EVENT_COLUMNS), primary_keys=["user_id", "dt"], partition_keys=["dt"],
               options={"bucket": "2", "merge-engine": "aggregation",
                        "fields.quantity.aggregate-function": "sum", "fields.amount.aggregate-function": "sum",
                        "fields.default-aggregate-function": "last_value", "changelog-producer": "lookup"},
               comment="per user and day: total quantity and amount of their orders")
LAKE_TABLES = (ODS, DWD, DWS)
PRIMARY_KEY_TABLES = [t.name for t in LAKE_TABLES if t.primary_keys]
ALL_TABLES = [t.name for t in LAKE_TABLES]

DWD_CONSUMER = "dwd_orders"
DWS_CONSUMER = "dws_user_daily"
DAYS = ("2026-11-20", "2026-11-21")
BATCHES = (1, 2, 3)


SMALL_LOCAL_SPARK_CONF = {
    "spark.ui.enabled": "false",
    "spark.sql.shuffle.partitions": "2",
    # short jobs on a few cores: the JIT's optimizing tier and parallel GC threads cost more CPU than they save,
    # CPU the Python tasks on the same cores need (docs/adr/0038-spark-compaction-scaling.md)
    "spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
}
"""Spark conf for the sample lake on Spark ``local[*]`` (the tests, ``make demo --spark``): a few rows per job, every
job a Spark job."""

LAPTOP_SPARK_CONF = {
    **SMALL_LOCAL_SPARK_CONF,
    # a few rows: written, compacted and consumed by the engine on the driver (with a local master: on the
    # Airflow worker, no spark-submit), without a SparkContext (table_engine/spark/jobs/driver_jobs.py)
    "spark.paimon.driver-job.max-input-size": "8 mb",
}
"""Spark conf of ``make demo`` and ``make airflow``: as :data:`SMALL_LOCAL_SPARK_CONF`, and jobs reading at most 8 MB
run on the driver (``spark.paimon.driver-job.max-input-size``)."""


def default_landing_dir() -> str:
    """Where the sample batches land: ``$PAIMON_LANDING_DIR``, else ``<tmp>/paimon-landing``."""
    import tempfile

    return os.environ.get("PAIMON_LANDING_DIR") or os.path.join(tempfile.gettempdir(), "paimon-landing")


def ensure_tables(warehouse: str, tables: tuple[TableDef, ...] = LAKE_TABLES,
                  options: Mapping[str, str] | None = None) -> list[str]:
    """Create each table of ``tables`` that ``warehouse`` lacks, empty, with its definition (columns, keys,
    options, comment), through the function :class:`~paimon_provider.operators.PaimonCreateTableOperator` (the
    layering DAGs' ``create_*`` tasks) uses; existing tables are left as they are. Prints one line per created
    table; returns their names. ``make airflow`` calls it so that the scheduled maintenance DAGs find their
    tables (and run as no-ops) before the first batch lands. ``options``: catalog options (an S3 warehouse's
    endpoint and credentials; a ``metastore`` and its options: the catalog it names)."""
    from paimon_provider.operators.table import create_table

    from table_engine.catalog import create_catalog

    catalog = create_catalog(warehouse, dict(options or {}))
    created = []
    for tdef in tables:
        if create_table(catalog, tdef.name, tdef.columns, primary_keys=tdef.primary_keys,
                        partition_keys=tdef.partition_keys, options=tdef.options, comment=tdef.comment):
            print(f"created empty table {tdef.name} in {warehouse}", flush=True)
            created.append(tdef.name)
    return created


# ---------------------------------------------------------------------------------------------- sample data

_BASE_MS = 1_795_132_800_000  # 2026-11-20T00:00:00Z


def _event(batch: int, n: int, order_id: int, user: str, status: str, quantity: int, amount: float, minute: int,
           day: int) -> dict[str, Any]:
    return {"event_id": f"b{batch}-e{n}", "order_id": order_id, "user_id": user, "status": status,
            "quantity": quantity, "amount": amount, "event_time_ms": _BASE_MS + day * 86_400_000 + minute * 60_000,
            "dt": DAYS[day]}


def order_event_rows(batch: int) -> list[dict[str, Any]]:
    """Batch 1: six orders on day 1. Batch 2: payments, a price change, a re-sent batch-1 event, a late event that
    must not win, and three orders on day 2. Batch 3: a cancellation (amount 0) and more day-2 orders."""
    if batch == 1:
        specs = [(101, "alice", "created", 2, 30.0, 10, 0), (102, "bob", "created", 1, 15.0, 12, 0),
                 (103, "alice", "created", 5, 50.0, 20, 0), (104, "carol", "created", 1, 99.0, 25, 0),
                 (105, "dave", "created", 3, 27.0, 30, 0), (106, "bob", "created", 2, 40.0, 35, 0)]
    elif batch == 2:
        specs = [(101, "alice", "paid", 2, 30.0, 60, 0), (102, "bob", "paid", 1, 12.0, 65, 0),  # price change
                 (104, "carol", "paid", 1, 99.0, 70, 0),
                 (102, "bob", "created", 1, 15.0, 12, 0),  # re-sent duplicate of batch 1
                 (103, "alice", "created", 4, 40.0, 5, 0),  # late: older than the batch-1 event, ignored
                 (201, "alice", "created", 1, 20.0, 10, 1), (202, "erin", "created", 6, 60.0, 15, 1),
                 (203, "bob", "created", 2, 18.0, 20, 1)]
    elif batch == 3:
        specs = [(105, "dave", "cancelled", 0, 0.0, 90, 0), (201, "alice", "paid", 1, 20.0, 40, 1),
                 (204, "carol", "created", 3, 45.0, 50, 1), (205, "frank", "created", 1, 11.0, 55, 1)]
    else:
        raise ValueError(f"sample batches are {BATCHES}, not {batch!r}")
    return [_event(batch, n, *spec) for n, spec in enumerate(specs)]


def order_events(batch: int) -> pa.Table:
    """One batch of raw order events as an Arrow table with the ODS schema."""
    import pyarrow as pa

    from table_engine.types import parse_type, to_arrow_type

    schema = pa.schema([(name, to_arrow_type(parse_type(t))) for name, t in EVENT_COLUMNS.items()])
    return pa.Table.from_pylist(order_event_rows(batch), schema=schema)


def write_batch(landing_dir: str, batch: int) -> str:
    """Land batch ``batch`` as ``<landing_dir>/order_events/batch-<n>/part-0.parquet``; returns its directory."""
    import pyarrow.parquet as pq

    directory = os.path.join(landing_dir, "order_events", f"batch-{batch}")
    os.makedirs(directory, exist_ok=True)
    pq.write_table(order_events(batch), os.path.join(directory, "part-0.parquet"))
    return directory


def expected_user_daily(batches: tuple[int, ...] = BATCHES) -> dict[tuple[str, str], tuple[int, float]]:
    """(user, dt) -> (quantity, amount) the DWS table must hold after ``batches`` (a reference model: the latest
    event of each order by event time, summed per user and day)."""
    latest: dict[tuple[int, str], dict[str, Any]] = {}
    for b in batches:
        for row in order_event_rows(b):
            key = (row["order_id"], row["dt"])
            if key not in latest or row["event_time_ms"] >= latest[key]["event_time_ms"]:
                latest[key] = row
    out: dict[tuple[str, str], tuple[int, float]] = {}
    for row in latest.values():
        q, a = out.get((row["user_id"], row["dt"]), (0, 0.0))
        out[(row["user_id"], row["dt"])] = (q + row["quantity"], round(a + row["amount"], 2))
    return out


# ---------------------------------------------------------------------------------------------- the demo report


def report(warehouse: str, sample_rows: int = 10, options: Mapping[str, str] | None = None) -> str:
    """Tables, their snapshots, tags and consumers, and a sample of the ADS rows (the newest tag of DWS);
    ``options``: catalog options (a ``metastore`` and its options: the catalog it names)."""
    from table_engine.catalog import create_catalog

    with create_catalog(warehouse, dict(options or {})) as catalog:
        lines = [f"warehouse {warehouse}"]
        for tdef in LAKE_TABLES:
            if not catalog.table_exists(tdef.name):
                lines.append(f"\n{tdef.name}: (not created)")
                continue
            table = catalog.get_table(tdef.name)
            data = table.read()
            lines.append(f"\n{tdef.name}: {data.num_rows} rows, primary key {table.primary_keys or '-'}, "
                         f"partitioned by {table.partition_keys}")
            for snap in table.snapshots():
                lines.append(f"  snapshot {snap.id:>3} {snap.commit_kind!s:<9} records total={snap.total_record_count} "
                             f"delta={snap.delta_record_count} changelog={snap.changelog_record_count or 0}")
            if table.list_tags():
                lines.append(f"  tags: {', '.join(table.list_tags())}")
            if table.consumers():
                lines.append(f"  consumers: {table.consumers()}")
        if catalog.table_exists(DWS.name):
            dws = catalog.get_table(DWS.name)
            tags = dws.list_tags()
            if tags:
                rows = dws.read(columns=["user_id", "dt", "quantity", "amount"], tag=tags[-1]).sort_by(
                    [("dt", "ascending"), ("amount", "descending")]).to_pylist()
                lines.append(f"\nADS: {DWS.name} at tag {tags[-1]} ({len(rows)} rows)")
                lines.append(f"  {'dt':<10} | {'user_id':<8} | {'quantity':>8} | {'amount':>8}")
                for r in rows[:sample_rows]:
                    lines.append(f"  {r['dt']:<10} | {r['user_id']:<8} | {r['quantity']:>8} | {r['amount']:>8.2f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """``python -m example_lake <warehouse>``: print :func:`report`."""
    import sys

    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m example_lake <warehouse>", file=sys.stderr)
        return 2
    print(report(args[0]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""`make demo-engine`: a primary-key table in a local warehouse: write, upsert, delete; print snapshots and merged rows.

``DEMO_WAREHOUSE`` may name another warehouse, e.g. ``s3://bucket/warehouse`` (storage access from the AWS
environment; ``make demo-s3`` runs it so against a local S3 server)."""

from __future__ import annotations

import decimal
import os
import shutil
import sys

import pyarrow as pa

from table_engine import Catalog

WAREHOUSE = os.environ.get("DEMO_WAREHOUSE", os.path.join(os.getcwd(), "demo-warehouse"))


def show(title: str, table: pa.Table) -> None:
    print(f"\n{title} ({table.num_rows} rows)")
    cols = table.column_names
    print("  " + " | ".join(f"{c:>12}" for c in cols))
    for r in table.sort_by(cols[0]).to_pylist():
        print("  " + " | ".join(f"{str(r[c]):>12}" for c in cols))


def main() -> int:
    if "://" not in WAREHOUSE:
        shutil.rmtree(WAREHOUSE, ignore_errors=True)
    catalog = Catalog(WAREHOUSE)
    schema = pa.schema([
        ("order_id", pa.int64()), ("customer", pa.string()), ("amount", pa.decimal128(10, 2)),
        ("status", pa.string()), ("dt", pa.string()),
    ])
    table = catalog.create_table("shop.orders", schema, primary_keys=["order_id", "dt"], partition_keys=["dt"],
                                 options={"bucket": "2"})
    print(f"created table shop.orders at {table.path} (primary key order_id, partitioned by dt, 2 buckets)")
    d1, d2 = "2026-11-21", "2026-11-22"

    def batch(ids: list[int], customers: list[str], amounts: list[str], status: list[str],
              days: list[str]) -> pa.Table:
        return pa.table({"order_id": pa.array(ids, pa.int64()), "customer": customers,
                         "amount": pa.array([decimal.Decimal(a) for a in amounts], pa.decimal128(10, 2)),
                         "status": status, "dt": days}, schema=schema)

    s1 = table.write(batch([1, 2, 3, 4], ["ada", "bob", "cy", "dee"], ["10.50", "20.00", "7.25", "99.99"],
                           ["new"] * 4, [d1, d1, d2, d2]))
    print(f"snapshot {s1}: inserted orders 1-4")
    s2 = table.write(batch([2, 5], ["bob", "eve"], ["25.00", "12.00"], ["paid", "new"], [d1, d2]))
    print(f"snapshot {s2}: upserted order 2 (paid, 25.00) and inserted order 5")
    s3 = table.write(batch([3], ["cy"], ["7.25"], ["new"], [d2]), row_kinds=["-D"])
    print(f"snapshot {s3}: deleted order 3")

    print("\nsnapshots:")
    for s in table.snapshots():
        print(f"  id={s.id} kind={s.commit_kind} total_records={s.total_record_count} "
              f"delta_records={s.delta_record_count} time={s.time_millis}")
    show("merged rows at the latest snapshot", table.read())
    show(f"time travel to snapshot {s1}", table.read(snapshot_id=s1))
    show(f"only dt = {d2}", table.read(filter=[("dt", "=", d2)]))
    files = sorted(st.path[len(table.path):].lstrip("/") for st in table.file_io.walk(table.path))
    print(f"\n{len(files)} files under {table.path}:")
    for f in files:
        print("  " + f)
    return 0


if __name__ == "__main__":
    sys.exit(main())

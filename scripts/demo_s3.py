"""`make demo-s3`: the demos on an S3 warehouse, against a local S3 API server (moto) on 127.0.0.1.

Starts ``moto_server`` on a free loopback port, creates a bucket, and runs with the warehouse
``s3://<bucket>/warehouse``:

1. the table engine demo (``scripts/demo.py``): a primary-key table written, upserted, deleted from, read back;
2. the Spark application (``table_engine/spark/app.py`` through ``spark-submit``, local[2]): a CSV loaded with the
   ``paimon`` data source into a new table (twice, as an upsert), a full compaction, a tag, snapshot expiry.

Storage access goes the way of a deployment's jobs: the AWS environment (``AWS_ENDPOINT_URL``, ``AWS_ACCESS_KEY_ID``,
``AWS_SECRET_ACCESS_KEY``, ``AWS_REGION``) of each process, never a command line; path-style addressing is the one
catalog option given. The server is stopped at the end, on failure too.
"""

from __future__ import annotations

import json
import os
import pathlib
import secrets
import signal
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.s3_server import S3Server  # noqa: E402  (the test suite's moto launcher)

BIN = pathlib.Path(sys.executable).parent
APP = REPO / "table_engine" / "spark" / "app.py"


def spark_submit(env: dict[str, str], *args: str) -> dict[str, object]:
    """Run one command of the Spark application; its JSON result (exits on failure)."""
    cmd = [str(BIN / "spark-submit"), "--master", "local[2]", "--conf", "spark.ui.enabled=false",
           "--conf", "spark.ui.showConsoleProgress=false", "--conf", "spark.sql.shuffle.partitions=2",
           str(APP), *args]
    started = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=str(REPO), timeout=900, check=False)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    result: dict[str, object] = json.loads(lines[-1]) if lines else {}
    if proc.returncode != 0 or result.get("status") != "ok":
        sys.stderr.write(proc.stderr[-4000:])
        raise SystemExit(f"spark-submit {args[0]} failed (exit {proc.returncode}): {result.get('error')}")
    shown = {k: v for k, v in result.items() if k not in ("status", "command", "table")}
    print(f"  {args[0]:<17} {time.monotonic() - started:5.1f} s  {json.dumps(shown)}", flush=True)
    return result


def _stop_on_sigterm(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)  # unwinds through the finally that stops the server


def main() -> int:
    signal.signal(signal.SIGTERM, _stop_on_sigterm)
    server = S3Server().start()
    try:
        bucket = server.new_bucket("demo-lake")
        warehouse = f"s3://{bucket}/warehouse"
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
        env.update(server.env())
        # fresh dummy credentials (the local server accepts any): shown nowhere
        env.update({"AWS_ACCESS_KEY_ID": "demo", "AWS_SECRET_ACCESS_KEY": secrets.token_hex(16),
                    "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable,
                    "PYSPARK_DRIVER_PYTHON": sys.executable, "PYTHONPATH": str(REPO),
                    "PATH": os.pathsep.join([str(BIN), os.environ.get("PATH", "")])})
        env.pop("SPARK_HOME", None)
        print(f"S3 API server (moto) on {server.endpoint}, bucket {bucket}; warehouse {warehouse}")
        print("storage access through the AWS environment of each process (AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, "
              "AWS_SECRET_ACCESS_KEY, AWS_REGION)\n")

        print("== 1. the table engine (scripts/demo.py) ==", flush=True)
        subprocess.run([sys.executable, str(REPO / "scripts" / "demo.py")], env={**env, "DEMO_WAREHOUSE": warehouse},
                       cwd=str(REPO), timeout=600, check=True)

        print("\n== 2. the Spark application on local[2] (spark-submit table_engine/spark/app.py) ==", flush=True)
        base = ["--warehouse", warehouse, "--table", "shop.customers", "--catalog-option", "s3.path.style.access=true"]
        with tempfile.TemporaryDirectory(prefix="demo-s3-") as tmp:
            first, second = pathlib.Path(tmp, "customers-1.csv"), pathlib.Path(tmp, "customers-2.csv")
            first.write_text("id,name,tier\n" + "".join(f"{i},customer-{i},basic\n" for i in range(1, 101)))
            second.write_text("id,name,tier\n" + "".join(f"{i},customer-{i},gold\n" for i in range(91, 111)))
            for source in (first, second):
                spark_submit(env, "write", *base, "--source", str(source), "--format", "csv", "--create-if-missing",
                             "--primary-key", "id", "--option", "bucket=2")
        spark_submit(env, "compact", *base, "--full")
        spark_submit(env, "create-tag", *base, "--tag", "after-compaction")
        spark_submit(env, "expire-snapshots", *base, "--retain-max", "1", "--retain-min", "1")

        from table_engine import Catalog

        os.environ.update(server.env())
        os.environ.update({k: env[k] for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")})
        table = Catalog(warehouse, {"s3.path.style.access": "true"}).get_table("shop.customers")
        rows = table.read()
        counts = rows.group_by("tier").aggregate([("id", "count")])
        tiers = dict(zip(counts["tier"].to_pylist(), counts["id_count"].to_pylist(), strict=True))
        print(f"\n{table.identifier} at {table.path}: {rows.num_rows} rows {tiers}; snapshots "
              f"{[s.id for s in table.snapshots()]} (latest {table.latest_snapshot().commit_kind}); tags "
              f"{[t.name for t in table.tags()]}")
        print(f"\nthe demo ran on {warehouse}; the local S3 server is stopped now")
        return 0
    finally:
        server.stop()


if __name__ == "__main__":
    sys.exit(main())

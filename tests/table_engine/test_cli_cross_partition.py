"""The ``table-engine write`` command on a cross-partition upsert table: keys that move partitions keep one row,
and creating such a table with fixed buckets fails with the option named."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from table_engine import Catalog
from table_engine.cli import main


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    code = main(list(argv))
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    return code, json.loads(lines[-1])


def source(tmp_path: Path, name: str, dt: str, ids: range) -> str:
    d = tmp_path / name
    d.mkdir()
    pq.write_table(pa.table({"id": pa.array(ids, pa.int64()), "v": [f"{name}{i}" for i in ids],
                             "dt": [dt] * len(ids)}), d / "part.parquet")
    return str(d)


def test_cli_write_moves_keys_between_partitions(capsys: pytest.CaptureFixture[str], warehouse: str,
                                                 tmp_path: Path) -> None:
    base = ["--warehouse", warehouse, "--table", "db.t"]
    code, out = cli(capsys, "write", *base, "--source", source(tmp_path, "one", "2024-01-01", range(10)),
                    "--create-if-missing", "--primary-key", "id", "--partition-key", "dt")
    assert code == 0 and out["rows"] == 10
    code, out = cli(capsys, "write", *base, "--source", source(tmp_path, "two", "2024-01-02", range(5, 15)))
    assert code == 0
    got = {r["id"]: (r["dt"], r["v"]) for r in Catalog(warehouse).get_table("db.t").read().to_pylist()}
    assert Catalog(warehouse).get_table("db.t").read().num_rows == 15 == len(got)
    assert got[4] == ("2024-01-01", "one4") and got[5] == ("2024-01-02", "two5") and got[14][0] == "2024-01-02"


def test_cli_rejects_fixed_buckets_for_a_cross_partition_key(capsys: pytest.CaptureFixture[str], warehouse: str,
                                                             tmp_path: Path) -> None:
    code, out = cli(capsys, "write", "--warehouse", warehouse, "--table", "db.t", "--source",
                    source(tmp_path, "one", "2024-01-01", range(3)), "--create-if-missing", "--primary-key", "id",
                    "--partition-key", "dt", "--option", "bucket=4")
    assert code == 1 and out["status"] == "error" and "'bucket' = 4" in out["error"]
    assert not Catalog(warehouse).table_exists("db.t")

"""The ``migrate-table`` and ``migrate-database`` commands from JSON and the command line; bad arguments are one
line naming the flag before anything is read."""

from __future__ import annotations

import json
import pathlib

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from table_engine import Catalog
from table_engine.errors import CommandError
from table_engine.ops import MigrateDatabase, MigrateTable, from_json


def test_json_round_trip_and_bad_arguments() -> None:
    cmd = MigrateTable(warehouse="/w", table="db.t", source="/data/t", format="orc", delete_origin=True,
                       options={"owner": "etl"})
    assert from_json(cmd.to_json()) == cmd
    db = MigrateDatabase(warehouse="/w", table="ods", commit_user="u")
    assert from_json(db.to_json()) == db
    for build, text in (
            (lambda: MigrateTable(warehouse="/w", table="db.t"), "one of --source, --source-table is required"),
            (lambda: MigrateTable(warehouse="/w", table="db.t", source="/x", source_table="db.f"),
             "--source and --source-table exclude each other"),
            (lambda: MigrateTable(warehouse="/w", table="db.t", source="/x", format="csv"),
             "--format must be one of parquet, orc"),
            (lambda: MigrateDatabase(warehouse="/w", table="db.t"), "--database 'db.t' must be a database name"),
            (lambda: MigrateDatabase(warehouse="/w", table="db", options={"bucket": "2"}), "bucket -1")):
        with pytest.raises(CommandError, match=text) as e:
            build()
        assert "\n" not in str(e.value)


def test_the_command_line_migrates_a_directory(warehouse: str, tmp_path: pathlib.Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    from table_engine.cli import main

    src = tmp_path / "src" / "dt=a"
    src.mkdir(parents=True)
    pq.write_table(pa.table({"id": [1, 2, 3]}), str(src / "000000_0.parquet"))
    argv = ["migrate-table", "--warehouse", warehouse, "--table", "ods.t", "--source", str(tmp_path / "src"),
            "--option", "owner=etl", "--snapshot-property", "airflow.run-id=r1"]
    assert main(argv) == 0
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert result["status"] == "ok" and result["rows"] == 3 and result["commit"]["added_rows"] == 3
    t = Catalog(warehouse).get_table("ods.t")
    assert t.snapshot(1).properties == {"airflow.run-id": "r1"} and t.schema.options["owner"] == "etl"
    assert main(argv) == 1  # the table exists now (another commit user): one line, nothing moved
    assert "ods.t exists already" in capsys.readouterr().err

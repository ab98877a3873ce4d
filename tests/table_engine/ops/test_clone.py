"""The ``clone`` command: from JSON and the command line, one table or a database, to a local or an S3 warehouse;
bad arguments are one line before anything is read; a target catalog it cannot write is refused by name."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from table_engine import Catalog
from table_engine.errors import CommandError, TableAlreadyExistError, TableNotExistError
from table_engine.ops import Clone, from_json
from table_engine.ops.run import run_command

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string())])


@pytest.fixture
def source(catalog: Catalog) -> Catalog:
    for name in ("orders", "orders_tmp", "users"):
        t = catalog.create_table(f"db.{name}", SCHEMA, primary_keys=["id"], options={"bucket": "2"})
        for i in range(2):
            t.write(pa.table({"id": list(range(i, i + 5)), "v": [f"{name}{i}"] * 5}, schema=SCHEMA))
    return catalog


def rows(t: object) -> list[dict[str, object]]:
    return sorted(t.read().to_pylist(), key=lambda r: r["id"])  # type: ignore[attr-defined,no-any-return]


def test_json_round_trip_and_bad_arguments() -> None:
    cmd = Clone(warehouse="/w", table="db.t", target_warehouse="/x", tag="t1",
                target_catalog_options={"k": "v"})
    assert from_json(cmd.to_json()) == cmd
    for kwargs, text in (({"table": "db", "snapshot": 3}, "--snapshot and --tag select a version of one table"),
                         ({"including_tables": "x"}, "--including-tables and --excluding-tables select tables"),
                         ({"target_table": "other"}, "--target-table 'other' must be a database.table"),
                         ({"table": "db", "target_table": "d.t"}, "--target-table 'd.t' must be a database name"),
                         ({"snapshot": 1, "tag": "a"}, "--snapshot and --tag exclude each other"),
                         ({"table": "db", "including_tables": "("}, "--including-tables '\\(' is not a regular"),
                         ({"table": "db.t$branch_b"}, "--table 'db.t\\$branch_b' names a branch or system table")):
        args = {"warehouse": "/w", "table": "db.t", "target_warehouse": "/x", **kwargs}
        with pytest.raises(CommandError, match="clone: " + text) as e:
            Clone(**args)  # type: ignore[arg-type]
        assert "\n" not in str(e.value)


def test_command_line_clones_a_table_then_increments(source: Catalog, tmp_path: object,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    from table_engine.cli import main

    target = str(tmp_path) + "/copy"  # type: ignore[operator]
    argv = ["clone", "--warehouse", source.warehouse, "--table", "db.orders", "--target-warehouse", target,
            "--target-table", "bak.orders", "--snapshot", "1", "--snapshot-property", "airflow.run-id=r1"]
    assert main(argv) == 0
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    copy = Catalog(target).get_table("bak.orders")
    assert result["status"] == "ok" and result["snapshot_id"] == copy.latest_snapshot_id() == 1
    assert rows(copy) == sorted(source.get_table("db.orders").read(snapshot_id=1).to_pylist(),
                                key=lambda r: r["id"])
    assert copy.snapshot(1).properties == {"airflow.run-id": "r1"}
    first = result["files_copied"]
    assert main(argv[:-4]) == 0  # the latest snapshot now: only its new files
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    total = result["tables"][0]["files_total"]
    assert result["files_copied"] == total - first > 0 and result["bytes_copied"] > 0
    assert rows(Catalog(target).get_table("bak.orders")) == rows(source.get_table("db.orders"))


def test_database_clone(source: Catalog, tmp_path: object) -> None:
    target = str(tmp_path) + "/copy"  # type: ignore[operator]
    result = run_command(Clone(warehouse=source.warehouse, table="db", target_warehouse=target,
                               excluding_tables=".*_tmp"))
    assert [t["target"] for t in result["tables"]] == ["db.orders", "db.users"]
    for name in ("db.orders", "db.users"):
        assert rows(Catalog(target).get_table(name)) == rows(source.get_table(name))
    assert not Catalog(target).table_exists("db.orders_tmp")
    with pytest.raises(TableNotExistError, match="database 'db' has no table to clone"):
        run_command(Clone(warehouse=source.warehouse, table="db", target_warehouse=target, including_tables="x"))


def test_clone_into_a_jdbc_catalog(source: Catalog, tmp_path: object) -> None:
    """The copy is registered in the target's metastore once its schemas are there; a re-run with a new schema
    updates the registration."""
    from table_engine.catalog import create_catalog
    from table_engine.schema_change import AddColumn

    target = str(tmp_path) + "/copy"  # type: ignore[operator]
    options = {"metastore": "jdbc", "uri": f"jdbc:sqlite:{tmp_path}/c.db"}
    cmd = Clone(warehouse=source.warehouse, table="db.orders", target_warehouse=target, target_catalog_options=options)
    run_command(cmd)
    with create_catalog(target, options) as jdbc:
        assert jdbc.list_tables("db") == ["orders"] and rows(jdbc.get_table("db.orders")) == rows(
            source.get_table("db.orders"))
    src = source.get_table("db.orders")
    src.alter(AddColumn("extra", pa.int32()))
    src.write(pa.table({"id": [50], "v": ["x"], "extra": [1]}, schema=src.arrow_schema))
    run_command(cmd)
    with create_catalog(target, options) as jdbc:
        copy = jdbc.get_table("db.orders")
        assert copy.arrow_schema.names == ["id", "v", "extra"] and rows(copy) == rows(source.get_table("db.orders"))


def test_refused_targets(source: Catalog, tmp_path: object) -> None:
    target = str(tmp_path) + "/copy"  # type: ignore[operator]
    with pytest.raises(TableNotExistError, match="db.nope"):
        run_command(Clone(warehouse=source.warehouse, table="db.nope", target_warehouse=target))
    with pytest.raises(TableAlreadyExistError, match="the target is the source table itself"):
        run_command(Clone(warehouse=source.warehouse, table="db.orders", target_warehouse=source.warehouse))


def test_clone_to_s3(source: Catalog, s3_warehouse: str, s3_options: dict[str, str]) -> None:
    cmd = Clone(warehouse=source.warehouse, table="db.users", target_warehouse=s3_warehouse,
                target_catalog_options=s3_options)
    first = run_command(cmd)
    assert first["files_copied"] > 0
    copy = Catalog(s3_warehouse, s3_options).get_table("db.users")
    assert rows(copy) == rows(source.get_table("db.users"))
    source.get_table("db.users").write(pa.table({"id": [99], "v": ["new"]}, schema=SCHEMA))
    again = run_command(cmd)
    assert again["files_copied"] == 1
    assert rows(Catalog(s3_warehouse, s3_options).get_table("db.users")) == rows(source.get_table("db.users"))

"""Paimon's ``compact_database``: every table of a database whose full name matches the patterns, one after the
other; bad patterns are one line naming the argument, the warehouse unchanged; a second run converges."""

from __future__ import annotations

import pyarrow as pa
import pytest

from table_engine import Catalog
from table_engine.errors import CommandError, DatabaseNotExistError
from table_engine.ops.compact_database import compact_database, matching_tables

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string())])


@pytest.fixture
def db(catalog: Catalog) -> Catalog:
    for name in ("orders", "orders_tmp", "users"):
        t = catalog.create_table(f"db.{name}", SCHEMA, primary_keys=["id"],
                                 options={"bucket": "1", "write-only": "true"})
        for i in range(2):
            t.write(pa.table({"id": list(range(i, i + 5)), "v": [name] * 5}, schema=SCHEMA))
    catalog.create_table("other.orders", SCHEMA, primary_keys=["id"], options={"bucket": "1"})
    return catalog


def test_patterns_match_the_whole_full_name(db: Catalog) -> None:
    assert matching_tables(db, "db") == ["db.orders", "db.orders_tmp", "db.users"]
    assert matching_tables(db, "db", "db\\.orders.*", ".*_tmp") == ["db.orders"]
    assert matching_tables(db, "db", "orders") == []  # the full name, wholly: not a search
    assert matching_tables(db, "db", "", " ") == ["db.orders", "db.orders_tmp", "db.users"]  # blank: no pattern


@pytest.mark.parametrize(("kwargs", "text"), [({"including_tables": "db.(orders"}, "including_tables 'db.(orders'"),
                                              ({"excluding_tables": "*"}, "excluding_tables '*'")])
def test_bad_patterns_are_one_line_and_change_nothing(db: Catalog, kwargs: dict[str, str], text: str) -> None:
    before = {n: db.get_table(n).latest_snapshot_id() for n in matching_tables(db, "db")}
    with pytest.raises(CommandError, match="compact-database: " + text.replace("(", r"\(").replace("*", r"\*")) \
            as e:
        compact_database(db, "db", **kwargs)  # type: ignore[arg-type]
    assert "\n" not in str(e.value)
    assert {n: db.get_table(n).latest_snapshot_id() for n in before} == before
    with pytest.raises(DatabaseNotExistError, match="nope"):
        compact_database(db, "nope")


def test_compacts_each_matching_table_and_converges(db: Catalog) -> None:
    done = compact_database(db, "db", excluding_tables=".*_tmp", full=True)
    assert done.compacted == ["db.orders", "db.users"]
    for name in ("db.orders", "db.users"):
        t = db.get_table(name)
        assert str(t.snapshot(done.snapshots[name]).commit_kind) == "COMPACT"
        assert {f.level for s in t.plan() for f in s.files} == {t.options.num_levels() - 1}
    assert {f.level for s in db.get_table("db.orders_tmp").plan() for f in s.files} == {0}
    again = compact_database(db, "db", excluding_tables=".*_tmp", full=True)
    assert again.snapshots == {"db.orders": None, "db.users": None} and again.compacted == []


def test_the_command_line_compacts_the_database(db: Catalog, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from table_engine.cli import main

    argv = ["compact-database", "--warehouse", db.warehouse, "--database", "db", "--including-tables", "db\\.u.*",
            "--full", "--snapshot-property", "airflow.run-id=r1"]
    assert main(argv) == 0
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    sid = db.get_table("db.users").latest_snapshot_id()
    assert result["status"] == "ok" and result["snapshots"] == {"db.users": sid} and result["compacted"] == ["db.users"]
    assert db.get_table("db.users").snapshot(sid).properties == {"airflow.run-id": "r1"}
    with pytest.raises(SystemExit) as e:  # a usage error, before anything runs
        main(["compact-database", "--warehouse", db.warehouse, "--database", "db", "--excluding-tables", "("])
    assert e.value.code == 2
    assert "--excluding-tables '(' is not a regular expression" in capsys.readouterr().err

"""The ``alter-table`` command: its changes parsed in one place into schema changes, built from JSON and from the
command line, applied as one new schema; a bad change is one line naming it and leaves the table byte for byte."""

from __future__ import annotations

import decimal
import json
from typing import Any

import pyarrow as pa
import pytest

from table_engine import Catalog
from table_engine.cli import main
from table_engine.errors import CommandError, SchemaError, TableEngineError
from table_engine.ops import AlterTable, from_json
from table_engine.ops.alter import ACTIONS, parse_changes
from table_engine.ops.argv import command_argv, parse_command
from table_engine.ops.run import run_command
from table_engine.schema_change import (
    AddColumn,
    DropColumn,
    Move,
    RemoveOption,
    RenameColumn,
    SetOption,
    UpdateColumnComment,
    UpdateColumnNullability,
    UpdateColumnPosition,
    UpdateColumnType,
    UpdateComment,
)
from table_engine.types import parse_type
from tests.table_engine.test_bad_input import warehouse_state

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("a", pa.int32()), ("b", pa.string())])

EVERY_KIND: list[dict[str, Any]] = [
    {"action": "add-column", "name": "c", "type": "DECIMAL(10, 2)", "comment": "money", "after": "a"},
    {"action": "add-column", "name": "f", "type": "STRING", "first": True},
    {"action": "rename-column", "name": "b", "new_name": "bee"},
    {"action": "drop-column", "name": "f"},
    {"action": "update-column-type", "name": "a", "type": "BIGINT"},
    {"action": "move-column", "name": "bee", "before": "a"},
    {"action": "update-column-comment", "name": "a", "comment": "the a"},
    {"action": "update-column-nullability", "name": "a", "nullable": True},
    {"action": "update-comment", "comment": "a table"},
    {"action": "set-option", "key": "snapshot.num-retained.min", "value": 3},
    {"action": "remove-option", "key": "snapshot.num-retained.max"},
]


def test_every_action_parses_into_its_schema_change() -> None:
    assert set(ACTIONS) == {c["action"] for c in EVERY_KIND}
    assert parse_changes(EVERY_KIND) == [
        AddColumn("c", parse_type("DECIMAL(10, 2)"), "money", Move("AFTER", "a")),
        AddColumn("f", parse_type("STRING"), None, Move("FIRST")),
        RenameColumn("b", "bee"),
        DropColumn("f"),
        UpdateColumnType("a", parse_type("BIGINT")),
        UpdateColumnPosition("bee", Move("BEFORE", "a")),
        UpdateColumnComment("a", "the a"),
        UpdateColumnNullability("a", True),
        UpdateComment("a table"),
        SetOption("snapshot.num-retained.min", "3"),
        RemoveOption("snapshot.num-retained.max"),
    ]
    assert parse_changes([{"action": "move-column", "name": "x", "last": True}]) == [
        UpdateColumnPosition("x", Move("LAST"))]


@pytest.mark.parametrize(("changes", "error", "text"), [
    ([{"action": "frob", "name": "c"}], CommandError, "unknown action 'frob'; actions are add-column"),
    ([{"name": "c"}], CommandError, "unknown action None"),
    ([{"action": "add-column", "name": "c", "type": "BIGGINT"}], SchemaError,
     "change add-column 'c': unknown data type 'BIGGINT'"),
    ([{"action": "add-column", "name": "c"}], CommandError, "change add-column 'c': misses 'type'"),
    ([{"action": "drop-column", "name": "c", "cascade": True}], CommandError,
     "change drop-column 'c': has unknown key 'cascade'"),
    ([{"action": "move-column", "name": "c"}], CommandError, "change move-column 'c': needs a position"),
    ([{"action": "move-column", "name": "c", "first": True, "after": "a"}], CommandError,
     "give one of first, after, before, last, not first and after"),
    ([{"action": "move-column", "name": "c", "first": "yes"}], CommandError, "'first' must be true"),
    ([{"action": "update-column-nullability", "name": "c", "nullable": "yes"}], CommandError,
     "'nullable' must be true or false"),
    ([{"action": "rename-column", "name": "", "new_name": "x"}], CommandError, "'name' must be a non-empty string"),
    ([], CommandError, "no changes given"),
    (["add-column"], CommandError, "a change must be an object"),
])
def test_a_bad_change_is_one_line_naming_it(changes: Any, error: type[Exception], text: str) -> None:
    with pytest.raises(error) as info:
        AlterTable(warehouse="/w", table="db.t", changes=changes)
    message = str(info.value)
    assert message.startswith("alter-table: --changes ") and text in message, message
    assert "\n" not in message


def test_the_command_from_json_and_from_the_command_line() -> None:
    cmd = AlterTable(warehouse="/w", table="db.t", changes=EVERY_KIND)  # type: ignore[arg-type]
    assert cmd.changes == tuple(EVERY_KIND)
    assert from_json(cmd.to_json()) == cmd
    argv = command_argv(cmd)
    assert argv[:1] == ["alter-table"] and json.loads(argv[argv.index("--changes") + 1]) == EVERY_KIND
    assert parse_command(argv) == cmd
    assert parse_command(["alter-table", "--warehouse", "/w", "--table", "db.t", "--changes",
                          json.dumps(EVERY_KIND)]) == cmd


def test_every_change_applied_as_one_new_schema(warehouse: str) -> None:
    catalog = Catalog(warehouse)
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["id"],
                             options={"bucket": "1", "snapshot.num-retained.max": "20"})
    t.write(pa.table({"id": [1, 2], "a": pa.array([10, 20], pa.int32()), "b": ["x", "y"]}, schema=SCHEMA))
    result = run_command(AlterTable(warehouse=warehouse, table="db.t", changes=EVERY_KIND))  # type: ignore[arg-type]
    assert (result["previous_schema_id"], result["schema_id"]) == (0, 1)
    assert [(f["name"], f["type"], f["comment"]) for f in result["fields"]] == [
        ("id", "BIGINT NOT NULL", None), ("bee", "STRING", None), ("a", "BIGINT", "the a"),
        ("c", "DECIMAL(10, 2)", "money")]
    t = catalog.get_table("db.t")
    assert t.schema.id == 1 and t.schema.comment == "a table"
    assert dict(t.schema.options) == {"bucket": "1", "snapshot.num-retained.min": "3"}
    c = pa.array([decimal.Decimal("1.50")], pa.decimal128(10, 2))
    t.write(pa.table({"id": [3], "bee": ["z"], "a": [2**40], "c": c}))
    rows = catalog.get_table("db.t").read().sort_by("id").to_pylist()
    assert [(r["id"], r["bee"], r["a"], r["c"]) for r in rows] == [
        (1, "x", 10, None), (2, "y", 20, None), (3, "z", 2**40, decimal.Decimal("1.50"))]
    assert catalog.get_table("db.t").read().column_names == ["id", "bee", "a", "c"]


@pytest.mark.parametrize(("changes", "text"), [
    ([{"action": "add-column", "name": "ok", "type": "INT"}, {"action": "drop-column", "name": "nope"}],
     "column 'nope' does not exist"),
    ([{"action": "update-column-type", "name": "a", "type": "SMALLINT"}], "'a' from INT to SMALLINT"),
    ([{"action": "drop-column", "name": "id"}], "cannot drop key column 'id'"),
    ([{"action": "update-column-nullability", "name": "id", "nullable": True}], "primary key column 'id'"),
    ([{"action": "move-column", "name": "a", "after": "zz"}], "column 'zz' does not exist"),
    ([{"action": "set-option", "key": "bucket", "value": "4"}], "'bucket' cannot be changed"),
    ([{"action": "add-column", "name": "a", "type": "INT"}], "cannot add column 'a': it exists already"),
])
def test_a_change_that_does_not_apply_leaves_the_table_byte_for_byte(warehouse: str, changes: Any,
                                                                      text: str) -> None:
    t = Catalog(warehouse).create_table("db.t", SCHEMA, primary_keys=["id"], options={"bucket": "1"})
    t.write(pa.table({"id": [1], "a": pa.array([1], pa.int32()), "b": ["x"]}, schema=SCHEMA))
    before = warehouse_state(warehouse)
    with pytest.raises(TableEngineError, match=text) as info:
        run_command(AlterTable(warehouse=warehouse, table="db.t", changes=changes))
    assert "\n" not in str(info.value)
    assert warehouse_state(warehouse) == before


def test_the_cli_reports_the_new_schema_and_errors_in_one_line(warehouse: str,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    Catalog(warehouse).create_table("db.t", SCHEMA)
    head = ["alter-table", "--warehouse", warehouse, "--table", "db.t", "--changes"]
    assert main([*head, '[{"action": "add-column", "name": "c", "type": "BIGINT", "first": true}]']) == 0
    line = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert line["status"] == "ok" and line["schema_id"] == 1 and line["fields"][0]["name"] == "c"
    before = warehouse_state(warehouse)
    assert main([*head, '[{"action": "rename-column", "name": "zz", "new_name": "y"}]']) == 1
    err = capsys.readouterr().err
    assert "error: column 'zz' does not exist" in err
    assert warehouse_state(warehouse) == before


def test_a_retry_of_the_same_changes_converges(warehouse: str) -> None:
    catalog = Catalog(warehouse)
    catalog.create_table("db.t", SCHEMA, primary_keys=["id"], options={"bucket": "1"})
    cmd = AlterTable(warehouse=warehouse, table="db.t", changes=(  # type: ignore[arg-type]
        {"action": "add-column", "name": "c", "type": "BIGINT", "first": True},
        {"action": "rename-column", "name": "b", "new_name": "bee"}))
    first = run_command(cmd)
    assert (first["schema_id"], first["already_done"]) == (1, False)
    state = warehouse_state(warehouse)
    again = run_command(cmd)  # a later try of the task that committed them: the schema they made, nothing written
    assert again == {**first, "already_done": True}
    assert warehouse_state(warehouse) == state
    # the same changes after another schema change are new work again (here they no longer apply)
    run_command(AlterTable(warehouse=warehouse, table="db.t", changes=(  # type: ignore[arg-type]
        {"action": "update-comment", "comment": "x"},)))
    with pytest.raises(SchemaError, match="cannot add column 'c': it exists already"):
        run_command(cmd)

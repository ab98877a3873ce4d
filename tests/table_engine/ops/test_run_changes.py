"""The ``delete``, ``update`` and ``merge-into`` commands: built from JSON and from the command line, checked when
made, run with the engine (result line, commit facts), and a re-run with the same commit user does nothing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from table_engine import Catalog
from table_engine.errors import CommandError, SchemaError
from table_engine.ops import Delete, MergeInto, Update, from_json
from table_engine.ops.argv import command_argv, parse_command
from table_engine.ops.run import run_command
from tests.table_engine.store.compaction.test_append_compact import table_bytes

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string()), ("n", pa.int64())])


def _table(wh: str, name: str = "db.t", pk: bool = False) -> None:
    t = Catalog(wh).create_table(name, SCHEMA, primary_keys=["id"] if pk else [],
                                 options={"bucket": "1"} if pk else {"deletion-vectors.enabled": "true"})
    t.write(pa.table({"id": [1, 2, 3], "v": ["a", "b", "c"], "n": [10, 20, 30]}, schema=SCHEMA))


def _rows(wh: str, name: str = "db.t") -> list[dict[str, object]]:
    return sorted(Catalog(wh).get_table(name).read().to_pylist(), key=lambda r: r["id"])  # type: ignore[arg-type,return-value]


def test_commands_round_trip_through_json_and_the_command_line(tmp_path: Path) -> None:
    cmds = [Delete(warehouse="/w", table="db.t", where=[["id", "in", [1, 2]]]),
            Update(warehouse="/w", table="db.t", set_values={"v": "x", "n": {"column": "id"}},
                   where=[["n", ">", {"column": "id"}]], commit_user="u"),
            MergeInto(warehouse="/w", table="db.t", source_table="db.s", on=["id"],
                      when_matched=[{"action": "update", "condition": [["source.n", ">", 1]]}],
                      when_not_matched=[{"action": "insert"}], snapshot_properties={"airflow.dag_id": "d"})]
    for cmd in cmds:
        assert from_json(cmd.to_json()) == cmd
        assert parse_command(command_argv(cmd)) == cmd


@pytest.mark.parametrize(("build", "error", "text"), [
    (lambda: Delete(warehouse="/w", table="db.t", where=[["id", "~", 1]]), CommandError,
     "delete --where: filter .*operator '~'"),
    (lambda: Delete(warehouse="/w", table="db.t", where={"id": 1}), CommandError, "JSON array"),
    (lambda: Update(warehouse="/w", table="db.t", set_values={}), CommandError, "at least one column"),
    (lambda: MergeInto(warehouse="/w", table="db.t", source="/s", on=["id"]), CommandError, "no clause"),
    (lambda: MergeInto(warehouse="/w", table="db.t", on=["id"], when_matched=[{"action": "delete"}]),
     CommandError, "one of --source, --source-table, --sql is required"),
    (lambda: MergeInto(warehouse="/w", table="db.t", source="/s", on=["id"],
                       when_not_matched=[{"action": "delete"}]), CommandError, "'delete' is not allowed here"),
])
def test_bad_commands_fail_when_made(build: object, error: type[Exception], text: str) -> None:
    with pytest.raises(error, match=text):
        build()  # type: ignore[operator]


def test_delete_update_merge_run_and_a_rerun_with_the_commit_user_does_nothing(tmp_path: Path) -> None:
    wh = str(tmp_path / "wh")
    _table(wh)
    r = run_command(Delete(warehouse=wh, table="db.t", where=[["id", "=", 1]], commit_user="job-1"))
    assert r["deleted"] == 1 and r["commit"]["commit_kind"] == "OVERWRITE" and not r["already_committed"]
    again = run_command(Delete(warehouse=wh, table="db.t", where=[["id", "=", 2]], commit_user="job-1"))
    assert again["already_committed"] and again["snapshot_id"] == r["snapshot_id"]
    assert [row["id"] for row in _rows(wh)] == [2, 3]
    r = run_command(Update(warehouse=wh, table="db.t", set_values={"v": "z"}, where=[["n", ">=", 30]]))
    assert r["updated"] == 1 and _rows(wh)[-1]["v"] == "z"
    pq.write_table(pa.table({"id": [2, 9], "v": ["m", "new"], "n": [1, 2]}, schema=SCHEMA), str(tmp_path / "s.parquet"))
    r = run_command(MergeInto(warehouse=wh, table="db.t", source=str(tmp_path / "s.parquet"), on=["id"],
                              when_matched=[{"action": "delete"}], when_not_matched=[{"action": "insert"}],
                              commit_user="merge-1"))
    assert (r["deleted"], r["inserted"]) == (1, 1)
    assert [row["id"] for row in _rows(wh)] == [3, 9]
    state = table_bytes(f"{wh}/db.db/t")
    again = run_command(MergeInto(warehouse=wh, table="db.t", source=str(tmp_path / "s.parquet"), on=["id"],
                                  when_matched=[{"action": "delete"}], when_not_matched=[{"action": "insert"}],
                                  commit_user="merge-1"))
    assert again["already_committed"] and table_bytes(f"{wh}/db.db/t") == state


def test_merge_from_another_table_of_the_catalog(tmp_path: Path) -> None:
    wh = str(tmp_path / "wh")
    _table(wh, "db.t", pk=True)
    s = Catalog(wh).create_table("db.s", SCHEMA)
    s.write(pa.table({"id": [3, 4], "v": ["u", "i"], "n": [0, 0]}, schema=SCHEMA))
    r = run_command(MergeInto(warehouse=wh, table="db.t", source_table="db.s", on=["id"],
                              when_matched=[{"action": "update", "set": {"v": {"column": "source.v"}}}],
                              when_not_matched=[{"action": "insert"}]))
    assert (r["updated"], r["inserted"], r["commit"]["commit_kind"]) == (1, 1, "APPEND")
    assert [(row["id"], row["v"], row["n"]) for row in _rows(wh)] == [(1, "a", 10), (2, "b", 20), (3, "u", 30),
                                                                     (4, "i", 0)]


def test_the_cli_names_a_bad_column_in_one_line_and_changes_nothing(tmp_path: Path) -> None:
    wh = str(tmp_path / "wh")
    _table(wh)
    state = table_bytes(f"{wh}/db.db/t")
    out = subprocess.run([sys.executable, "-m", "table_engine.cli", "delete", "--warehouse", wh, "--table", "db.t",
                          "--where", '[["idx", "=", 4]]'], capture_output=True, text=True, timeout=120)
    assert out.returncode != 0
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["status"] == "error" and "unknown column 'idx'" in result["error"]
    assert table_bytes(f"{wh}/db.db/t") == state
    with pytest.raises(SchemaError, match="cannot update column 'id'"):
        _table(wh, "db.pk", pk=True)
        run_command(Update(warehouse=wh, table="db.pk", set_values={"id": 5}))

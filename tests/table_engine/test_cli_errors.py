"""The ``table-engine`` CLI on bad input: one line ``error: <message>`` on stderr (last), a non-zero exit status,
the JSON result line with ``"status": "error"`` on stdout, the traceback only with ``--verbose`` (or for a bug,
an error that is not a ``TableEngineError``); the table unchanged."""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
import subprocess
import sys
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from table_engine import Catalog
from table_engine.cli import main, parse_command, run
from table_engine.ops import Command

ROOT = pathlib.Path(__file__).resolve().parents[2]


def state(root: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        out.update({os.path.join(dirpath, d): "dir" for d in dirnames})
        for f in filenames:
            p = os.path.join(dirpath, f)
            out[p] = hashlib.sha256(pathlib.Path(p).read_bytes()).hexdigest()
    return out


@pytest.fixture
def table_warehouse(warehouse: str, tmp_path: pathlib.Path) -> str:
    schema = pa.schema([("id", pa.int64()), ("v", pa.string()), ("dt", pa.string())])
    t = Catalog(warehouse).create_table("db.t", schema, primary_keys=["id", "dt"], partition_keys=["dt"],
                                        options={"bucket": "2"})
    t.write(pa.table({"id": [1, 2], "v": ["a", "b"], "dt": ["d1", "d2"]}))
    t.create_tag("t1", 1)
    # snapshot 2: creating tag t1 again on the latest snapshot is a conflict (the same tag on the same snapshot would
    # be the desired state already, and succeed: docs/retries.md)
    t.write(pa.table({"id": [3], "v": ["c"], "dt": ["d1"]}))
    src = tmp_path / "src"
    src.mkdir()
    pq.write_table(pa.table({"id": ["not-a-number"], "v": ["x"], "dt": ["d1"]}), src / "bad.parquet")
    pq.write_table(pa.table({"id": [5], "v": ["x"], "dt": ["d1"]}), src / "good.parquet")
    return warehouse


def user_error_cases(wh: str, tmp: pathlib.Path) -> list[tuple[list[str], str]]:
    """(argv, text the one error line must contain) for job failures (exit status 1)."""
    base = ["--warehouse", wh, "--table", "db.t"]
    src = str(tmp / "src")
    return [
        (["compact", "--warehouse", wh, "--table", "db.nope"], "db.nope"),
        (["rollback", *base, "--snapshot", "7"], "7"),
        (["rollback", *base, "--tag", "nope"], "nope"),
        (["create-tag", *base, "--tag", "x", "--snapshot", "9"], "9"),
        (["create-tag", *base, "--tag", "t1"], "t1"),
        (["create-tag", *base, "--tag", "a/b"], "a/b"),
        (["compact", *base, "--partition", "nope=1"], "nope"),
        (["write", *base, "--source", str(tmp / "missing")], str(tmp / "missing")),
        (["write", *base, "--source", f"{src}/bad.parquet"], "id"),
        (["write", "--warehouse", wh, "--table", "db.new", "--source", f"{src}/good.parquet",
          "--create-if-missing", "--primary-key", "id", "--option", "bucket=0"], "bucket"),
        (["write", "--warehouse", wh, "--table", "db.new", "--source", f"{src}/good.parquet",
          "--create-if-missing", "--primary-key", "nope"], "nope"),
        (["write", "--warehouse", wh, "--table", "db.new", "--source", f"{src}/good.parquet",
          "--create-if-missing", "--option", "bucket-count=2"], "bucket-count"),
        (["write", "--warehouse", wh, "--table", "db.a$b", "--source", f"{src}/good.parquet",
          "--create-if-missing"], "db.a$b"),
        (["write", *base, "--sql", "SELECT 1"], "--sql"),
        (["expire-partitions", *base, "--expiration-time", "1 d", "--timestamp-formatter", "yyyy-MM-dd",
          "--strategy", "values-time", "--timestamp-pattern", "$nope"], "nope"),
        (["consume-changelog", *base, "--consumer-id", "c", "--output", str(tmp / "o"), "--from-snapshot", "3",
          "--to-snapshot", "2"], "--from-snapshot 3"),
    ]


ARGUMENT_ERRORS = [
    [],
    ["compact"],
    ["compact", "--warehouse", "w"],
    ["nope", "--warehouse", "w", "--table", "db.t"],
    ["rollback", "--warehouse", "w", "--table", "db.t", "--snapshot", "abc"],
    ["rollback", "--warehouse", "w", "--table", "db.t"],
    ["rollback", "--warehouse", "w", "--table", "db.t", "--snapshot", "1", "--tag", "x"],
    ["write", "--warehouse", "w", "--table", "db.t", "--source", "s", "--option", "no-equals-sign"],
    ["write", "--warehouse", "w", "--table", "db.t", "--source", "s", "--format", "xlsx"],
    ["expire-snapshots", "--warehouse", "w", "--table", "db.t", "--older-than", "yesterday"],
    ["create-tag", "--warehouse", "w", "--table", "db.t", "--tag", "x", "--time-retained", "a week"],
    ["compact", "--warehouse", "w", "--table", "db.t", "--unknown-flag"],
    ["rollback", "--warehouse", "w", "--table", "db.t", "--snapshot", "0"],
    ["create-tag", "--warehouse", "w", "--table", "db.t", "--tag", "x", "--snapshot", "-1"],
    ["expire-snapshots", "--warehouse", "w", "--table", "db.t", "--retain-min", "0"],
    ["consume-changelog", "--warehouse", "w", "--table", "db.t", "--consumer-id", "c", "--output", "o",
     "--from-snapshot", "0"],
    ["consume-changelog", "--warehouse", "w", "--table", "db.t", "--consumer-id", "c"],
]


def test_user_errors_are_one_line_with_exit_status_1_and_change_nothing(
        table_warehouse: str, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    cases = user_error_cases(table_warehouse, tmp_path)
    assert len(cases) == 16
    for argv in (argv for argv, _ in cases):
        before = state(table_warehouse)
        code = main(argv)
        out, err = capsys.readouterr()
        expected = next(text for a, text in cases if a is argv)
        lines = err.strip().splitlines()
        assert code == 1, (argv, err)
        assert lines and lines[-1].startswith("error: ") and expected in lines[-1], (argv, err)
        result = json.loads(out.strip().splitlines()[-1])
        assert result["status"] == "error" and result["command"] == argv[0], result
        assert state(table_warehouse) == before, argv


@pytest.mark.parametrize("argv", ARGUMENT_ERRORS, ids=[" ".join(a) or "nothing" for a in ARGUMENT_ERRORS])
def test_argument_errors_are_one_line_with_exit_status_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    out, err = capsys.readouterr()
    assert exc.value.code == 2
    assert out == "" and len(err.strip().splitlines()) == 1 and err.startswith("error: table-engine"), err


def test_a_bug_still_shows_its_traceback_and_the_one_line(capsys: pytest.CaptureFixture[str],
                                                          caplog: pytest.LogCaptureFixture) -> None:
    def broken(cmd: Command) -> dict[str, Any]:
        return {"n": [][1]}  # IndexError: a bug, not a user error

    cmd = parse_command(["compact", "--warehouse", "w", "--table", "db.t"])
    assert run(cmd, broken) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == "error: IndexError: list index out of range"
    assert any(r.exc_info for r in caplog.records)  # the traceback is logged


def test_verbose_logs_the_traceback_of_a_user_error(warehouse: str, capsys: pytest.CaptureFixture[str],
                                                    caplog: pytest.LogCaptureFixture) -> None:
    argv = ["compact", "--warehouse", warehouse, "--table", "db.nope"]
    assert main(argv) == 1
    assert not any(r.exc_info for r in caplog.records)
    caplog.clear()
    assert main([*argv, "--verbose"]) == 1
    assert any(r.exc_info for r in caplog.records)
    assert capsys.readouterr().err.strip().splitlines()[-1].startswith("error: table 'db.nope' does not exist")


def _cli(*argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "table_engine.cli", *argv], capture_output=True, text=True,
                          timeout=120, env=env, check=False, cwd=ROOT)


def test_as_a_process(table_warehouse: str) -> None:
    base = ["--warehouse", table_warehouse, "--table", "db.t"]
    res = _cli("rollback", *base, "--snapshot", "7")
    err = res.stderr.strip().splitlines()
    assert res.returncode == 1 and "Traceback" not in res.stderr, res.stderr
    assert err[-1].startswith("error: ") and "snapshot 7" in err[-1], res.stderr
    assert json.loads(res.stdout.strip().splitlines()[-1])["status"] == "error"
    assert "failed: " in res.stderr  # the log's "failed" line says why

    res = _cli("--verbose", "rollback", *base, "--snapshot", "7")
    assert res.returncode == 1 and "Traceback" in res.stderr
    assert res.stderr.strip().splitlines()[-1] == err[-1]

    res = _cli("rollback", *base, "--snapshot", "seven")
    assert res.returncode == 2 and res.stdout == ""
    assert res.stderr.strip().splitlines() == ["error: table-engine rollback: argument --snapshot: invalid int "
                                               "value: 'seven'"]


def test_the_spark_application_has_the_same_argument_errors(capsys: pytest.CaptureFixture[str]) -> None:
    from table_engine.spark.app import main as app_main

    with pytest.raises(SystemExit) as exc:  # parsed before Spark starts
        app_main(["rollback", "--warehouse", "w", "--table", "db.t", "--snapshot", "x"])
    assert exc.value.code == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        "error: app.py rollback: argument --snapshot: invalid int value: 'x'"]

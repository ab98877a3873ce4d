"""The result-line protocol: what a job prints is what the provider reads back, with the same type."""

from __future__ import annotations

import pytest

from table_engine.ops.result import BAD_ARGUMENTS_EXIT_CODE, JobResult


def test_a_result_line_round_trips() -> None:
    ok = JobResult.ok("compact", "db.t", {"snapshot_id": 3, "rows": 2}, seconds=1.5)
    assert ok.to_dict() == {"command": "compact", "table": "db.t", "status": "ok", "snapshot_id": 3, "rows": 2,
                            "seconds": 1.5}
    assert JobResult.parse(["log", ok.to_line(), "more log"]) == ok and not ok.is_error
    failed = JobResult.failed("rollback", "db.t", "TagNotFoundError: no tag 'x'", retryable=False, seconds=0.1)
    assert failed.is_error and JobResult.from_dict(failed.to_dict()) == failed
    assert list(failed.to_dict()) == ["command", "table", "status", "error", "retryable", "seconds"]
    assert JobResult.parse(["no line", "[1]"]) is None


def test_worth_retrying_follows_the_line_then_the_exit_code() -> None:
    failed = JobResult.failed("compact", "db.t", "E: m", retryable=False)
    assert not JobResult.worth_retrying(failed, 1)
    assert JobResult.worth_retrying(JobResult.failed("compact", "db.t", "E: m", retryable=True), 1)
    assert not JobResult.worth_retrying(None, BAD_ARGUMENTS_EXIT_CODE) and JobResult.worth_retrying(None, 137)


def test_the_cli_prints_a_job_result(capsys: pytest.CaptureFixture[str]) -> None:
    from table_engine.cli import run
    from table_engine.ops import ExpireTags

    assert run(ExpireTags(warehouse="/nowhere", table="db.t"), lambda c: {"expired": []}) == 0
    result = JobResult.parse(capsys.readouterr().out.splitlines())
    assert result is not None and result.fields == {"expired": []} and result.status == "ok"

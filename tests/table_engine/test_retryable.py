"""Which failures are worth retrying: the engine's exception tree says (``TableEngineError.retryable``,
``is_retryable``), and the CLI's result line of a failed job carries it (the provider fails such tasks at once)."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from table_engine import Catalog, errors
from table_engine.cli import main


@pytest.mark.parametrize(("error", "retryable"), [
    (errors.TableNotExistError("table 'db.x' does not exist"), False),
    (errors.OptionError("bad option"), False),
    (errors.PartitionSpecError("bad spec"), False),
    (errors.SnapshotNotExistError("snapshot 9 does not exist"), False),
    (errors.TagNotExistError("tag t does not exist"), False),
    (errors.CommandError("bad field"), False),
    (errors.StorageError("GET s3://b/k failed"), True),
    (errors.CommitOutcomeUnknownError("unknown"), True),
    (errors.CommitConflictError("conflict"), True),
    (RuntimeError("a bug or a lost executor"), True),
])
def test_is_retryable(error: BaseException, retryable: bool) -> None:
    assert errors.is_retryable(error) is retryable


def test_every_engine_error_class_declares_it() -> None:
    def subclasses(cls: type) -> list[type]:
        return [cls, *(s for sub in cls.__subclasses__() for s in subclasses(sub))]

    for cls in subclasses(errors.TableEngineError):
        assert isinstance(cls.retryable, bool), cls


def test_the_result_line_of_a_failed_job_says_whether_to_retry(warehouse: str,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    t = Catalog(warehouse).create_table("db.t", pa.schema([("id", pa.int64())]), primary_keys=["id"],
                                        options={"bucket": "1"})
    t.write(pa.table({"id": [1]}))
    assert main(["rollback", "--warehouse", warehouse, "--table", "db.missing", "--snapshot", "1"]) == 1
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert result["status"] == "error" and result["retryable"] is False, result
    assert main(["rollback", "--warehouse", warehouse, "--table", "db.t", "--snapshot", "1"]) == 0
    assert "retryable" not in json.loads(capsys.readouterr().out.strip().splitlines()[-1])

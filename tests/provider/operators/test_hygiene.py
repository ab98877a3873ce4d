"""The hygiene operators run for real (the engine's CLI on the worker, no Spark): each does its job, a second try
succeeds changing nothing, and a bad argument fails the task naming the field."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest
from airflow.exceptions import AirflowException
from paimon_provider.operators import (
    PaimonClearConsumersOperator,
    PaimonCompactManifestOperator,
    PaimonExpireChangelogsOperator,
    PaimonRemoveUnexistingFilesOperator,
    PaimonRepairOperator,
    PaimonResetConsumerOperator,
)

from tests.provider.operators.conftest import LOCAL, context

S = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])


@pytest.fixture
def table(paimon_conn: str) -> Any:
    from table_engine import Catalog

    t = Catalog(paimon_conn).create_table("db.t", S, primary_keys=["id"], options={
        "bucket": "1", "changelog-producer": "input", "changelog.num-retained.min": "50",
        "changelog.num-retained.max": "50"})
    for i in range(4):
        t.write(pa.table({"id": [i], "v": ["x"]}, schema=S))
    t.expire_snapshots(retain_min=1, retain_max=1, time_retained=0)
    return t


def test_hygiene_operators_do_their_job_and_retries_converge(table: Any) -> None:
    def changelog_ids() -> tuple[int | None, int | None, int]:  # through the engine's read-only facade
        c = table.maintenance.health().changelogs
        return c.earliest_id, c.latest_id, c.count

    assert changelog_ids() == (1, 3, 3)
    for _ in range(2):  # the second try: a no-op success
        op = PaimonResetConsumerOperator(task_id="r", table="db.t", consumer_id="etl", next_snapshot_id="4",
                                         spark=LOCAL)
        assert op.execute(context())["next_snapshot_id"] == 4  # type: ignore[arg-type,index]
        op2 = PaimonExpireChangelogsOperator(task_id="e", table="db.t", retain_max="2", retain_min=1, spark=LOCAL)
        result = op2.execute(context())  # type: ignore[arg-type]
        assert result is not None and result["changelogs_left"] == 1
    assert changelog_ids() == (3, 3, 1)
    op3 = PaimonClearConsumersOperator(task_id="c", table="db.t", including_consumers="et.*", spark=LOCAL)
    assert op3.execute(context())["cleared_consumers"] == ["etl"]  # type: ignore[arg-type,index]
    assert op3.execute(context())["cleared_consumers"] == []  # type: ignore[arg-type,index]
    assert table.consumers() == {}


def test_compact_manifest_commits_once_as_the_task_instance(table: Any) -> None:
    latest = table.latest_snapshot_id()
    dry = PaimonCompactManifestOperator(task_id="m", table="db.t", dry_run_only=True, spark=LOCAL).execute(context())
    assert dry is not None and dry["needed"] and dry["snapshot_id"] is None  # type: ignore[index]
    for _ in range(2):  # a retry finds the manifests compact: nothing committed
        PaimonCompactManifestOperator(task_id="m", table="db.t", spark=LOCAL).execute(context())  # type: ignore[arg-type]
    assert table.latest_snapshot_id() == latest + 1
    assert table.snapshot(latest + 1).commit_user == "airflow:d:t:manual__1"


def test_remove_unexisting_files_and_repair(table: Any) -> None:
    import pathlib

    missing = pathlib.Path(table.path) / "bucket-0"
    victim = sorted(missing.glob("data-*"))[0]
    victim.unlink()
    dry = PaimonRemoveUnexistingFilesOperator(task_id="u", table="db.t", spark=LOCAL).execute(context())
    assert dry is not None and dry["missing_files"] == 1 and dry["snapshot_id"] is None  # type: ignore[index]
    latest = table.latest_snapshot_id()
    for _ in range(2):
        PaimonRemoveUnexistingFilesOperator(task_id="u", table="db.t", dry_run_only=False,
                                            spark=LOCAL).execute(context())  # type: ignore[arg-type]
    assert table.latest_snapshot_id() == latest + 1 and table.read().num_rows == 3
    (pathlib.Path(table.path) / "snapshot" / "LATEST").write_text("2")
    out = PaimonRepairOperator(task_id="h", table="db.t", spark=LOCAL).execute(context())  # type: ignore[arg-type]
    assert out is not None and out["latest_snapshot_id"] == latest + 1 and out["repaired"]
    again = PaimonRepairOperator(task_id="h", table="db.t", spark=LOCAL).execute(context())  # type: ignore[arg-type]
    assert again is not None and again["repaired"] == []


def test_a_bad_argument_fails_the_task_naming_it(table: Any) -> None:
    op = PaimonResetConsumerOperator(task_id="r", table="db.t", consumer_id="etl", next_snapshot_id=99, spark=LOCAL)
    with pytest.raises(AirflowException, match="--next-snapshot-id 99"):
        op.execute(context())  # type: ignore[arg-type]
    assert table.consumers() == {}

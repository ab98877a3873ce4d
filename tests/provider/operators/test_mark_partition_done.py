"""PaimonMarkPartitionDoneOperator: builds the mark-partition-done command; on the worker its ``_SUCCESS`` files
are what the partition sensor waits for; a retry converges; an action the engine cannot do fails the task before
anything is written; no Asset event (no data changed)."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest
from airflow.sdk.exceptions import AirflowFailException
from paimon_provider.operators import PaimonMarkPartitionDoneOperator
from paimon_provider.sensors.partition import PaimonPartitionSensor

from table_engine import Catalog
from table_engine.ops.argv import command_argv
from table_engine.schema_change import SetOption
from tests.provider.operators.conftest import LOCAL
from tests.provider.operators.test_retries import ti_context


@pytest.fixture
def table(paimon_conn: str) -> Any:
    schema = pa.schema([("id", pa.int64()), ("dt", pa.string())])
    t = Catalog(paimon_conn).create_table("db.t", schema, partition_keys=["dt"], options={"bucket": "-1"})
    t.write(pa.table({"id": [1], "dt": ["2026-11-27"]}, schema=schema))
    return t


def test_command(paimon_conn: str) -> None:
    op = PaimonMarkPartitionDoneOperator(task_id="m", table="db.t", partitions="dt=2026-11-27;dt=2026-11-28")
    cmd = op.build_command(paimon_conn)
    assert (cmd.name, cmd.partitions) == ("mark-partition-done", ({"dt": "2026-11-27"}, {"dt": "2026-11-28"}))
    assert command_argv(cmd) == ["mark-partition-done", "--warehouse", paimon_conn, "--table", "db.t",
                                 "--partition", "dt=2026-11-27", "--partition", "dt=2026-11-28"]
    with pytest.raises(ValueError, match="mark-partition-done: --partition is required"):
        PaimonMarkPartitionDoneOperator(task_id="m2", table="db.t", partitions="").build_command(paimon_conn)


def test_marks_done_for_the_sensor_and_a_retry_converges(table: Any) -> None:
    sensor = PaimonPartitionSensor(task_id="s", table="db.t", partition="dt=2026-11-27", require="done")
    assert not sensor.poke({}).is_done
    op = PaimonMarkPartitionDoneOperator(task_id="m", table="db.t", partitions={"dt": "2026-11-27"}, spark=LOCAL,
                                         outlets=[])
    context = ti_context(1)
    first = op.execute(context)
    assert first is not None and first["partitions"] == ["dt=2026-11-27"] and first["actions"] == ["success-file"]
    assert sensor.poke({}).is_done
    created = table.metadata().success_file("dt=2026-11-27").creation_time
    assert op.execute(ti_context(2))["partitions"] == ["dt=2026-11-27"]  # type: ignore[index]
    assert table.metadata().success_file("dt=2026-11-27").creation_time == created
    assert table.latest_snapshot_id() == 1 and not context["outlet_events"]._dict  # no snapshot, no event


def test_an_action_the_engine_cannot_do_fails_the_task(table: Any) -> None:
    table.alter(SetOption("partition.mark-done-action", "success-file,done-partition"))
    op = PaimonMarkPartitionDoneOperator(task_id="m", table="db.t", partitions="dt=2026-11-27", spark=LOCAL)
    with pytest.raises(AirflowFailException, match="'done-partition' of .* is not supported: it adds"):
        op.execute(ti_context(1))
    assert not table.metadata().partition_done("dt=2026-11-27")

"""``PaimonTableHealthOperator`` builds the ``health`` command and runs it with the engine on the worker."""

from __future__ import annotations

from paimon_provider.operators import PaimonTableHealthOperator

from table_engine.ops import Health


def test_builds_the_health_command_and_runs_locally() -> None:
    op = PaimonTableHealthOperator(task_id="h", table="db.t", partitions=["dt=a", {"dt": "b"}], orphans="true",
                                   max_orphan_files="10", orphans_older_than=1000)
    cmd = op.build_command("/w")
    assert cmd == Health(warehouse="/w", table="db.t", partitions=({"dt": "a"}, {"dt": "b"}), orphans=True,
                         max_orphan_files=10, orphans_older_than_millis=1000)
    assert op.spark["runner"] == "local" and op.asset_table is None

"""``PaimonMaintenanceOperator`` builds the ``maintain`` command and runs it with the engine on the worker; its log
table shows the plan and each action's outcome side by side (the run: tests/dags/test_maintenance_planner_dag.py).
"""

from __future__ import annotations

from paimon_provider.operators import PaimonMaintenanceOperator

from table_engine.ops import Maintain
from table_engine.ops.maintain import render_plan


def test_builds_the_maintain_command_and_runs_locally() -> None:
    op = PaimonMaintenanceOperator(task_id="m", table="db.t", dry_run_only="true", orphans="false", commit_user="u")
    assert op.build_command("/w") == Maintain(warehouse="/w", table="db.t", dry_run=True, orphans=False,
                                              commit_user="u")
    assert op.spark["runner"] == "local"
    assert PaimonMaintenanceOperator(task_id="n", table="db.t").build_command("/w").dry_run is False


def test_the_log_table_aligns_plan_and_outcome() -> None:
    action = {"kind": "compact", "reason": "1 buckets have ... (worst 6)", "full": False, "partitions": ["dt=a"],
              "count": None, "estimated_bytes": 10092}
    expire = {"kind": "expire-snapshots", "reason": "3 of 13 snapshots are expirable", "full": False,
              "partitions": [], "count": 3, "estimated_bytes": None}
    fields = {"dry_run": False, "plan": {"table": "db.t", "snapshot_id": 7, "actions": [action, expire]},
              "results": [{"kind": "compact", "result": {"snapshot_id": 8}},
                          {"kind": "expire-snapshots", "result": {"expired_snapshots": [1, 2, 3]}}]}
    lines = render_plan(fields).splitlines()
    assert lines[0] == "maintenance of db.t at snapshot 7: 2 actions due"
    assert [line.split()[:4] for line in lines[1:]] == [
        ["#", "action", "target", "estimated"], ["1", "compact", "dt=a", "10092"],
        ["2", "expire-snapshots", "3", "?"]]
    col = lines[1].index("outcome")  # aligned: every row's outcome starts under the header's
    assert [line[col:col + 20].strip() for line in lines[2:]] == ["snapshot 8", "expired 3 snapshots"]
    reason = lines[1].index("reason")
    assert [line[reason:] for line in lines[2:]] == [action["reason"], expire["reason"]]
    # the run expired more than planned (the compaction before it committed a snapshot): the outcome says why
    fields["results"][1]["result"]["expired_snapshots"] = [1, 2, 3, 4]
    assert "expired 4 snapshots (3 when planned: commits since, this run's among them, changed what was due)" in \
        render_plan(fields)
    fields["results"][0]["result"]["snapshot_id"] = None
    assert "nothing to commit" in render_plan(fields)
    assert render_plan({"dry_run": True, "plan": {"table": "db.t", "snapshot_id": 7, "actions": []}}) == (
        "maintenance of db.t at snapshot 7: nothing due (dry run)")

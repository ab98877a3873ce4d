"""Every operator's spark-submit, asserted exactly (application arguments after the common Spark prefix), and
how templated arguments (Params rendered as text) become options."""

from __future__ import annotations

import datetime
import sys
from typing import Any

import pytest
from paimon_provider.hooks import spark as spark_hook_module
from paimon_provider.hooks.spark import PaimonSparkHook
from paimon_provider.operators import (
    PaimonAlterTableOperator,
    PaimonClearConsumersOperator,
    PaimonCloneOperator,
    PaimonCompactDatabaseOperator,
    PaimonCompactManifestOperator,
    PaimonCompactOperator,
    PaimonConsumeChangelogOperator,
    PaimonCreateBranchOperator,
    PaimonCreateTagOperator,
    PaimonDeleteBranchOperator,
    PaimonDeleteOperator,
    PaimonDeleteTagOperator,
    PaimonDropPartitionsOperator,
    PaimonExpireChangelogsOperator,
    PaimonExpirePartitionsOperator,
    PaimonExpireSnapshotsOperator,
    PaimonExpireTagsOperator,
    PaimonFastForwardOperator,
    PaimonMaintenanceOperator,
    PaimonMarkPartitionDoneOperator,
    PaimonMergeIntoOperator,
    PaimonMigrateDatabaseOperator,
    PaimonMigrateTableOperator,
    PaimonRefreshObjectTableOperator,
    PaimonRemoveOrphanFilesOperator,
    PaimonRemoveUnexistingFilesOperator,
    PaimonRenameBranchOperator,
    PaimonRepairOperator,
    PaimonRescaleOperator,
    PaimonResetConsumerOperator,
    PaimonRewriteFileIndexOperator,
    PaimonRollbackOperator,
    PaimonSparkOperator,
    PaimonTableCheckOperator,
    PaimonTableHealthOperator,
    PaimonTableHistoryOperator,
    PaimonUpdateOperator,
    PaimonWriteOperator,
)
from paimon_provider.utils.job_spec import SPARK_JOB_COMMANDS

from table_engine.clock import ManualClock, use_clock
from table_engine.ops import from_json
from table_engine.ops.argv import command_argv, parse_command

APP = "/engine/table_engine/spark/app.py"
NOW = 1_800_000_000_000


@pytest.fixture(autouse=True)
def app(monkeypatch: pytest.MonkeyPatch, paimon_conn: str) -> None:
    monkeypatch.setattr(spark_hook_module, "application_path", lambda: APP)


def argv(op: PaimonSparkOperator) -> list[str]:
    return PaimonSparkHook(paimon_conn_id=op.paimon_conn_id).build_submission(op.build_spec()).argv


def app_args(op: PaimonSparkOperator) -> list[str]:
    """The application's arguments, after checking the prefix: the plain local spark-submit for Spark jobs, the
    engine's CLI for metadata-only commands (client mode: they would run on this machine's driver anyway). The
    operator sends the command as one JSON object; shown here as its command line (times and durations in
    milliseconds, fields at their default left out)."""
    full = argv(op)
    if op.command not in SPARK_JOB_COMMANDS:
        assert full[:3] == [sys.executable, "-m", "table_engine.cli"]
        sent = full[3:]
    else:
        i = full.index(APP)
        assert full[:3] == ["spark-submit", "--master", "local[2]"]
        assert full[i - 2:i] == ["--name", f"paimon-{op.command}-{op.table}"]
        sent = full[i + 1:]
    assert sent[0] == "--command-json" and len(sent) == 2, sent
    cmd = from_json(sent[1])
    assert cmd.name == op.command and parse_command(sent) == cmd
    return command_argv(cmd)


def head(command: str, table: str, warehouse: str) -> list[str]:
    return [command, "--warehouse", warehouse, "--table", table]


def test_write_from_files_creating_the_table(paimon_conn: str) -> None:
    op = PaimonWriteOperator(task_id="w", table="ods.events", source="/landing/b1", source_format="CSV",
                             source_options={"header": "true", "delimiter": ";"}, partition_keys=["dt"],
                             primary_keys="id, dt", table_options={"bucket": 2, "changelog-producer": "lookup"},
                             commit_user="u1", parallelism=4)
    assert app_args(op) == head("write", "ods.events", paimon_conn) + [
        "--source", "/landing/b1", "--format", "csv", "--source-option", "delimiter=;",
        "--source-option", "header=true", "--create-if-missing", "--primary-key", "id,dt",
        "--partition-key", "dt", "--option", "bucket=2", "--option", "changelog-producer=lookup",
        "--commit-user", "u1", "--parallelism", "4"]


def test_write_sql_overwrite_into_existing_table(paimon_conn: str) -> None:
    op = PaimonWriteOperator(task_id="w", table="dwd.t", sql="SELECT * FROM x", mode="overwrite",
                             commit_user="u")
    assert app_args(op) == head("write", "dwd.t", paimon_conn) + [
        "--sql", "SELECT * FROM x", "--mode", "overwrite", "--commit-user", "u"]
    with pytest.raises(ValueError, match="exactly one of source and sql"):
        PaimonWriteOperator(task_id="w2", table="t.t")
    bad = PaimonWriteOperator(task_id="w3", table="t.t", source="/x", mode="upsert")
    with pytest.raises(ValueError, match="append' or 'overwrite"):
        bad.build_spec()


@pytest.mark.parametrize(("full", "flag"), [(True, ["--full"]), ("True", ["--full"]), ("full", ["--full"]),
                                            ("minor", []), ("False", []), (False, [])])
def test_compact_full_or_minor(paimon_conn: str, full: Any, flag: list[str]) -> None:
    op = PaimonCompactOperator(task_id="c", table="dwd.orders", full=full, commit_user="u")
    assert app_args(op) == head("compact", "dwd.orders", paimon_conn) + flag + ["--commit-user", "u"]


def test_compact_partitions_idle_time_parallelism(paimon_conn: str) -> None:
    op = PaimonCompactOperator(task_id="c", table="dwd.orders", partitions="dt=2026-11-20;dt=2026-11-21,h=1",
                               idle_time="1 d", parallelism="3", commit_user="u")
    assert app_args(op) == head("compact", "dwd.orders", paimon_conn) + [
        "--partition", "dt=2026-11-20", "--partition", "dt=2026-11-21,h=1", "--idle-time", "86400000",
        "--commit-user", "u", "--parallelism", "3"]
    op = PaimonCompactOperator(task_id="c2", table="dwd.orders", partitions=[{"dt": "a"}], commit_user="u")
    assert app_args(op)[-4:] == ["--partition", "dt=a", "--commit-user", "u"]


def test_compact_buckets(paimon_conn: str) -> None:
    for buckets in ("0-99, 200-299", ["0-99", 200]):
        op = PaimonCompactOperator(task_id="c", table="dwd.orders", buckets=buckets, commit_user="u")
        assert app_args(op)[-4:-2] == ["--buckets", "0-99, 200-299" if isinstance(buckets, str) else "0-99,200"]
    with pytest.raises(ValueError, match="--buckets '1-0': range '1-0' starts after its end"):
        app_args(PaimonCompactOperator(task_id="c2", table="dwd.orders", buckets="1-0"))


@pytest.mark.parametrize(("strategy", "order_by", "tail"), [
    ("zorder", "a, b", ["--order-strategy", "zorder", "--order-by", "a,b"]),
    ("hilbert", ["a", "b"], ["--order-strategy", "hilbert", "--order-by", "a,b"]),
    ("none", "None", []),  # the compaction DAG's form left at its defaults
])
def test_compact_sorted(paimon_conn: str, strategy: str, order_by: Any, tail: list[str]) -> None:
    op = PaimonCompactOperator(task_id="c", table="dwd.orders", order_strategy=strategy, order_by=order_by,
                               commit_user="u")
    assert app_args(op) == head("compact", "dwd.orders", paimon_conn) + ["--commit-user", "u"] + tail


def test_a_bad_sort_fails_before_spark(paimon_conn: str) -> None:
    with pytest.raises(ValueError, match=r"order_by needs order_strategy \(order, zorder or hilbert\)"):
        app_args(PaimonCompactOperator(task_id="c", table="dwd.orders", order_strategy="none", order_by="a"))
    with pytest.raises(ValueError, match="Hilbert sort needs at least two columns"):
        app_args(PaimonCompactOperator(task_id="c", table="dwd.orders", order_strategy="hilbert", order_by="a"))


def test_compact_database(paimon_conn: str) -> None:
    op = PaimonCompactDatabaseOperator(task_id="cd", database="dwd", including_tables="dwd\\.orders.*",
                                       excluding_tables=" ", full="full", idle_time="1 h", commit_user="u")
    assert op.database == "dwd" and op.asset_table is None
    assert app_args(op) == ["compact-database", "--warehouse", paimon_conn, "--database", "dwd",
                            "--including-tables", "dwd\\.orders.*", "--full", "--idle-time", "3600000",
                            "--commit-user", "u"]
    with pytest.raises(ValueError, match="--excluding-tables '\\[' is not a regular expression"):
        PaimonCompactDatabaseOperator(task_id="cd2", database="dwd", excluding_tables="[").build_spec(paimon_conn)


def test_expire_snapshots(paimon_conn: str) -> None:
    op = PaimonExpireSnapshotsOperator(task_id="e", table="db.t", retain_min="10", retain_max=100,
                                       older_than=datetime.datetime(2026, 1, 2, 3, 4, 5), max_deletes=None)
    assert app_args(op) == head("expire-snapshots", "db.t", paimon_conn) + [
        "--retain-min", "10", "--retain-max", "100", "--older-than", "1767323045000"]  # naive: UTC
    with use_clock(ManualClock(NOW)):  # a relative time is resolved when the operator runs
        assert app_args(PaimonExpireSnapshotsOperator(task_id="e2", table="db.t", older_than="1 d ago")) == \
            head("expire-snapshots", "db.t", paimon_conn) + ["--older-than", str(NOW - 86_400_000)]
    assert app_args(PaimonExpireSnapshotsOperator(task_id="e3", table="db.t", older_than="")) == \
        head("expire-snapshots", "db.t", paimon_conn)
    with pytest.raises(ValueError, match="retain_min must be an integer"):
        PaimonExpireSnapshotsOperator(task_id="e4", table="db.t", retain_min="ten").build_spec()


def test_hygiene_operators(paimon_conn: str) -> None:
    """expire-changelogs, clear-consumers and reset-consumer run with the engine's CLI (metadata only)."""
    op: PaimonSparkOperator = PaimonExpireChangelogsOperator(task_id="c", table="db.t", retain_min="1",
                                                             retain_max=5, max_deletes="{{ 3 }}")
    op.render_template_fields({})
    assert app_args(op) == head("expire-changelogs", "db.t", paimon_conn) + [
        "--retain-min", "1", "--retain-max", "5", "--max-deletes", "3"]
    with use_clock(ManualClock(NOW)):
        assert app_args(PaimonExpireChangelogsOperator(task_id="c2", table="db.t", older_than="1 d ago")) == \
            head("expire-changelogs", "db.t", paimon_conn) + ["--older-than", str(NOW - 86_400_000)]
    assert app_args(PaimonExpireChangelogsOperator(task_id="c3", table="db.t", delete_all="True")) == \
        head("expire-changelogs", "db.t", paimon_conn) + ["--delete-all"]
    with pytest.raises(ValueError, match="--delete-all .*--retain-max"):
        PaimonExpireChangelogsOperator(task_id="c4", table="db.t", delete_all=True, retain_max=2).build_spec()
    op = PaimonClearConsumersOperator(task_id="k", table="db.t", including_consumers="bi_.*",
                                      excluding_consumers=" ")
    assert app_args(op) == head("clear-consumers", "db.t", paimon_conn) + ["--including-consumers", "bi_.*"]
    assert app_args(PaimonClearConsumersOperator(task_id="k2", table="db.t")) == head("clear-consumers", "db.t",
                                                                                      paimon_conn)
    assert app_args(PaimonClearConsumersOperator(task_id="k4", table="db.t", dry_run_only="True")) == \
        head("clear-consumers", "db.t", paimon_conn) + ["--dry-run"]
    with pytest.raises(ValueError, match="--excluding-consumers"):
        PaimonClearConsumersOperator(task_id="k3", table="db.t", excluding_consumers="(").build_spec()
    op = PaimonResetConsumerOperator(task_id="r", table="db.t", consumer_id="etl", next_snapshot_id="7")
    assert app_args(op) == head("reset-consumer", "db.t", paimon_conn) + [
        "--consumer-id", "etl", "--next-snapshot-id", "7"]
    assert app_args(PaimonResetConsumerOperator(task_id="r2", table="db.t", consumer_id="etl",
                                                next_snapshot_id="")) == \
        head("reset-consumer", "db.t", paimon_conn) + ["--consumer-id", "etl"]
    with pytest.raises(ValueError, match="reset-consumer: --consumer-id must not be empty"):
        PaimonResetConsumerOperator(task_id="r3", table="db.t", consumer_id=" ").build_spec()
    assert app_args(PaimonCompactManifestOperator(task_id="m", table="db.t", dry_run_only="true", commit_user="u")) == \
        head("compact-manifest", "db.t", paimon_conn) + ["--dry-run", "--commit-user", "u"]
    assert app_args(PaimonRefreshObjectTableOperator(task_id="o", table="db.objects")) == \
        head("refresh-object-table", "db.objects", paimon_conn)
    assert app_args(PaimonRemoveUnexistingFilesOperator(task_id="u", table="db.t")) == \
        head("remove-unexisting-files", "db.t", paimon_conn)  # a dry run unless asked
    assert app_args(PaimonRemoveUnexistingFilesOperator(task_id="u", table="db.t", dry_run_only="false",
                                                        commit_user="u")) == \
        head("remove-unexisting-files", "db.t", paimon_conn) + ["--remove", "--commit-user", "u"]
    assert app_args(PaimonRepairOperator(task_id="h", table="db.t$branch_b")) == head("repair", "db.t$branch_b",
                                                                                      paimon_conn)


def test_create_tag(paimon_conn: str) -> None:
    op = PaimonCreateTagOperator(task_id="t", table="db.t", tag="daily-2026-11-20", snapshot_id="4",
                                 time_retained="7 d")
    assert app_args(op) == head("create-tag", "db.t", paimon_conn) + [
        "--tag", "daily-2026-11-20", "--snapshot", "4", "--time-retained", "604800000"]
    assert app_args(PaimonCreateTagOperator(task_id="t2", table="db.t", tag="x", snapshot_id="None")) == \
        head("create-tag", "db.t", paimon_conn) + ["--tag", "x"]
    with pytest.raises(ValueError, match="tag name"):
        PaimonCreateTagOperator(task_id="t3", table="db.t", tag=" ").build_spec()


def test_expire_tags(paimon_conn: str) -> None:
    assert app_args(PaimonExpireTagsOperator(task_id="x", table="db.t")) == head("expire-tags", "db.t", paimon_conn)
    assert app_args(PaimonExpireTagsOperator(task_id="y", table="db.t", older_than=1700000000000)) == \
        head("expire-tags", "db.t", paimon_conn) + ["--older-than", "1700000000000"]


def test_expire_partitions(paimon_conn: str) -> None:
    op = PaimonExpirePartitionsOperator(task_id="p", table="db.t", expiration_time="30 d",
                                        timestamp_formatter="yyyy-MM-dd", timestamp_pattern="$dt",
                                        strategy="values-time", max_expires="5", dry_run_only="True")
    assert app_args(op) == head("expire-partitions", "db.t", paimon_conn) + [
        "--expiration-time", "2592000000", "--timestamp-formatter", "yyyy-MM-dd", "--timestamp-pattern", "$dt",
        "--strategy", "values-time", "--max-expires", "5", "--dry-run"]
    assert app_args(PaimonExpirePartitionsOperator(task_id="q", table="db.t", dry_run_only="False")) == \
        head("expire-partitions", "db.t", paimon_conn)


def test_remove_orphan_files(paimon_conn: str) -> None:
    op = PaimonRemoveOrphanFilesOperator(task_id="o", table="db.t", older_than="2 h ago", dry_run_only=True)
    with use_clock(ManualClock(NOW)):
        assert app_args(op) == head("remove-orphan-files", "db.t", paimon_conn) + [
            "--older-than", str(NOW - 7_200_000), "--dry-run"]


def test_rollback(paimon_conn: str) -> None:
    assert app_args(PaimonRollbackOperator(task_id="r", table="db.t", snapshot_id="3", tag="")) == \
        head("rollback", "db.t", paimon_conn) + ["--snapshot", "3"]
    assert app_args(PaimonRollbackOperator(task_id="r2", table="db.t", snapshot_id="None", tag="daily-1")) == \
        head("rollback", "db.t", paimon_conn) + ["--tag", "daily-1"]
    assert app_args(PaimonRollbackOperator(task_id="r4", table="db.t", version="12")) == \
        head("rollback", "db.t", paimon_conn) + ["--snapshot", "12"]
    assert app_args(PaimonRollbackOperator(task_id="r5", table="db.t", version="daily-1")) == \
        head("rollback", "db.t", paimon_conn) + ["--tag", "daily-1"]
    for snapshot_id, tag in ((None, None), (3, "t")):
        with pytest.raises(ValueError, match="exactly one of version, snapshot_id and tag"):
            PaimonRollbackOperator(task_id="r3", table="db.t", snapshot_id=snapshot_id, tag=tag).build_spec()


def test_consume_changelog(paimon_conn: str) -> None:
    op = PaimonConsumeChangelogOperator(task_id="c", table="dwd.orders", consumer_id="dws", target_table="dws.t",
                                        from_snapshot="", to_snapshot=9)
    assert app_args(op) == head("consume-changelog", "dwd.orders", paimon_conn) + [
        "--consumer-id", "dws", "--target-table", "dws.t", "--to-snapshot", "9"]
    op = PaimonConsumeChangelogOperator(task_id="c2", table="dwd.orders", consumer_id="export",
                                        output_path="/exports/orders", output_format="json", from_snapshot=2)
    assert app_args(op) == head("consume-changelog", "dwd.orders", paimon_conn) + [
        "--consumer-id", "export", "--output", "/exports/orders", "--output-format", "json",
        "--from-snapshot", "2"]
    with pytest.raises(ValueError, match="exactly one of target_table and output_path"):
        PaimonConsumeChangelogOperator(task_id="c3", table="t.t", consumer_id="x")


def test_extra_args_and_spark_settings(paimon_conn: str) -> None:
    spark = {"master": "local[1]", "conf": {"spark.ui.enabled": "false"}, "driver_memory": "512m",
             "py_files": "/a.zip,/b.zip", "name": "tags"}
    op = PaimonExpireTagsOperator(task_id="x", table="db.t", extra_args=["--log-level", "DEBUG"],
                                  spark={**spark, "runner": "spark"}, warehouse="/elsewhere")
    full = argv(op)
    assert full == ["spark-submit", "--master", "local[1]", "--conf", "spark.ui.enabled=false",
                    "--conf", f"spark.pyspark.python={_py()}", "--conf", f"spark.pyspark.driver.python={_py()}",
                    "--py-files", "/a.zip,/b.zip", "--driver-memory", "512m", "--name", "tags", APP,
                    "expire-tags", "--warehouse", "/elsewhere", "--table", "db.t", "--log-level", "DEBUG"]
    # by default (runner auto, client mode) the metadata-only command runs as the engine's CLI: no Spark settings
    local = PaimonExpireTagsOperator(task_id="x2", table="db.t", extra_args=["--log-level", "DEBUG"], spark=spark,
                                     warehouse="/elsewhere")
    assert argv(local) == [_py(), "-m", "table_engine.cli", "expire-tags", "--warehouse", "/elsewhere",
                           "--table", "db.t", "--log-level", "DEBUG"]
    with pytest.raises(ValueError, match="unknown spark settings"):
        PaimonExpireTagsOperator(task_id="y", table="db.t", spark={"memory": "1g"})


def test_every_command_has_an_operator() -> None:
    from paimon_provider.utils.job_spec import COMMANDS

    ops: set[type[PaimonSparkOperator]] = {
        PaimonWriteOperator, PaimonCompactOperator, PaimonExpireSnapshotsOperator, PaimonCreateTagOperator,
        PaimonExpireTagsOperator, PaimonExpirePartitionsOperator, PaimonRemoveOrphanFilesOperator,
        PaimonRollbackOperator, PaimonConsumeChangelogOperator, PaimonDeleteTagOperator, PaimonDropPartitionsOperator,
        PaimonRewriteFileIndexOperator, PaimonRescaleOperator, PaimonTableCheckOperator, PaimonCreateBranchOperator,
        PaimonDeleteBranchOperator, PaimonRenameBranchOperator, PaimonFastForwardOperator,
        PaimonMarkPartitionDoneOperator, PaimonTableHealthOperator,
        PaimonExpireChangelogsOperator, PaimonClearConsumersOperator, PaimonResetConsumerOperator,
        PaimonCompactManifestOperator, PaimonRemoveUnexistingFilesOperator, PaimonRepairOperator,
        PaimonMaintenanceOperator, PaimonCompactDatabaseOperator, PaimonTableHistoryOperator,
        PaimonRefreshObjectTableOperator, PaimonDeleteOperator, PaimonUpdateOperator, PaimonMergeIntoOperator,
        PaimonAlterTableOperator, PaimonCloneOperator, PaimonMigrateTableOperator, PaimonMigrateDatabaseOperator}
    assert {op.command_class.name for op in ops} == COMMANDS
    from table_engine.cli import COMMANDS as CLI_COMMANDS

    assert set(CLI_COMMANDS) == COMMANDS


def test_rendered_params_become_options(paimon_conn: str) -> None:
    """Templates rendered from Params (strings) give the same options as Python values."""
    from airflow.sdk import DAG, Param

    with DAG("render_probe", schedule=None, params={"mode": Param("full"), "parts": Param("dt=a;dt=b"),
                                                    "table": Param("dwd.orders")}) as dag:
        op = PaimonCompactOperator(task_id="c", table="{{ params.table }}", full="{{ params.mode }}",
                                   partitions="{{ params.parts }}", commit_user="u")
    op.render_template_fields({"params": dag.params.dump(), "dag": dag})
    assert app_args(op) == head("compact", "dwd.orders", paimon_conn) + [
        "--full", "--partition", "dt=a", "--partition", "dt=b", "--commit-user", "u"]


def _py() -> str:
    import sys

    return sys.executable


def test_rendered_options_parse_with_the_applications_grammar(paimon_conn: str) -> None:
    """What the operators render is accepted by the grammar app.py shares with table_engine.cli."""
    from table_engine.cli import build_parser

    ops: list[PaimonSparkOperator] = [
        PaimonWriteOperator(task_id="a", table="db.t", source="/x", partition_keys="dt", table_options={"k": "v"},
                            commit_user="u"),
        PaimonCompactOperator(task_id="b", table="db.t", full=True, partitions="dt=a;dt=b", commit_user="u"),
        PaimonExpireSnapshotsOperator(task_id="c", table="db.t", retain_min=1, older_than="1 d ago"),
        PaimonCreateTagOperator(task_id="d", table="db.t", tag="-weird-tag", time_retained="7 d"),
        PaimonExpireTagsOperator(task_id="e", table="db.t", older_than="2026-01-01T00:00:00"),
        PaimonExpirePartitionsOperator(task_id="f", table="db.t", expiration_time="30 d", dry_run_only=True),
        PaimonRemoveOrphanFilesOperator(task_id="g", table="db.t", older_than="2 h ago"),
        PaimonRollbackOperator(task_id="h", table="db.t", tag="t1"),
        PaimonConsumeChangelogOperator(task_id="i", table="db.t", consumer_id="c", target_table="db.u"),
    ]
    parser = build_parser()
    for op in ops:
        args = parser.parse_args(app_args(op))
        assert (args.command, args.table, args.warehouse) == (op.command, "db.t", paimon_conn)
    assert parser.parse_args(app_args(ops[3])).tag == "-weird-tag"
    assert app_args(ops[3])[-3:] == ["--tag=-weird-tag", "--time-retained", "604800000"]


def test_delete_tag_drop_partitions_rewrite_file_index(paimon_conn: str) -> None:
    op: PaimonSparkOperator = PaimonDeleteTagOperator(task_id="d", table="db.t", tag="a,b", ignore_if_missing="True")
    assert app_args(op) == head("delete-tag", "db.t", paimon_conn) + ["--tag", "a,b", "--ignore-if-not-exists"]
    rescale = PaimonRescaleOperator(task_id="r", table="db.t", bucket_num="{{ 4 }}", partitions={"dt": "a"},
                                    commit_user="u")
    rescale.render_template_fields({})
    assert app_args(rescale) == head("rescale", "db.t", paimon_conn) + [
        "--bucket-num", "4", "--partition", "dt=a", "--commit-user", "u"]
    op = PaimonDropPartitionsOperator(task_id="p", table="db.t", partitions="dt=a;dt=b,h=1")
    assert app_args(op) == head("drop-partitions", "db.t", paimon_conn) + [
        "--partition", "dt=a", "--partition", "dt=b,h=1"]
    with pytest.raises(ValueError, match="drop-partitions: --partition is required"):
        app_args(PaimonDropPartitionsOperator(task_id="p2", table="db.t", partitions=""))
    op = PaimonRewriteFileIndexOperator(task_id="r", table="db.t", partitions=[{"dt": "a"}], commit_user="u")
    assert app_args(op) == head("rewrite-file-index", "db.t", paimon_conn) + [
        "--partition", "dt=a", "--commit-user", "u"]
    assert app_args(PaimonRewriteFileIndexOperator(task_id="r2", table="db.t")) == \
        head("rewrite-file-index", "db.t", paimon_conn)


def test_branch_operators_render_their_commands(paimon_conn: str) -> None:
    """The branch operators; a write into a branch is any operator with ``table="db.t$branch_<name>"``."""
    assert app_args(PaimonCreateBranchOperator(task_id="a", table="db.t", branch="audit_1", tag="before")) == \
        head("create-branch", "db.t", paimon_conn) + ["--branch", "audit_1", "--tag", "before"]
    assert app_args(PaimonCreateBranchOperator(task_id="a", table="db.t", branch="b", if_exists="skip")) == \
        head("create-branch", "db.t", paimon_conn) + ["--branch", "b", "--if-exists", "skip"]
    assert app_args(PaimonFastForwardOperator(task_id="f", table="db.t", branch="audit_1")) == \
        head("fast-forward", "db.t", paimon_conn) + ["--branch", "audit_1", "--check-unchanged"]
    assert app_args(PaimonFastForwardOperator(task_id="f", table="db.t", branch="b", check_unchanged=False)) == \
        head("fast-forward", "db.t", paimon_conn) + ["--branch", "b"]
    assert app_args(PaimonDeleteBranchOperator(task_id="d", table="db.t", branch="b", ignore_if_missing=True)) == \
        head("delete-branch", "db.t", paimon_conn) + ["--branch", "b", "--ignore-if-missing"]
    assert app_args(PaimonRenameBranchOperator(task_id="r", table="db.t", branch="b", to="c")) == \
        head("rename-branch", "db.t", paimon_conn) + ["--branch", "b", "--to", "c"]
    assert app_args(PaimonWriteOperator(task_id="w", table="db.t$branch_b", source="/x", commit_user="u"))[:5] == \
        head("write", "db.t$branch_b", paimon_conn)
    # branch=: the operator composes db.t$branch_<b>; a branch write declares no Asset, the fast-forward main's
    write = PaimonWriteOperator(task_id="wb", table="db.t", branch="audit_1", source="/x", commit_user="u")
    assert write.build_command("/wh").table == "db.t$branch_audit_1" and write.outlets == []
    assert PaimonWriteOperator(task_id="wt", table="db.t", branch="{{ params.b }}", source="/x").outlets == []
    assert PaimonWriteOperator(task_id="wc", table="db.t$branch_b", source="/x").outlets == []
    main = PaimonWriteOperator(task_id="wm", table="db.t", branch="main", source="/x", commit_user="u")
    assert main.build_command("/wh").table == "db.t" and [o.uri for o in main.outlets] == \
        ["paimon://paimon_default/db/t"]
    assert [o.uri for o in PaimonFastForwardOperator(task_id="ff", table="db.t", branch="b").outlets] == \
        ["paimon://paimon_default/db/t"]
    with pytest.raises(ValueError, match="create-branch needs a branch name"):
        PaimonCreateBranchOperator(task_id="x", table="db.t", branch=" ").build_command("/wh")

"""The commands: one frozen dataclass per job the CLI, the Spark application and the provider's operators run.

Field names are the engine's (times and durations in milliseconds); each field's flag is the command line's. The
function that runs a command against the engine is in :mod:`table_engine.ops.run` (Spark jobs: in
:mod:`table_engine.spark.jobs.run`). No pyarrow here (see :mod:`table_engine.ops.base`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from table_engine.core_enums import OrderType, PartitionExpireStrategy
from table_engine.errors import CheckError, CommandError
from table_engine.ops.base import REGISTRY, Command, arg, command

__all__ = ["CheckTable", "ClearConsumers", "CommittingCommand", "Compact", "CompactDatabase",
           "CompactManifest", "ConsumeChangelog", "CreateBranch", "CreateTag", "DeleteBranch", "DeleteTag",
           "DropPartitions", "ExpireChangelogs", "ExpirePartitions", "ExpireSnapshots", "ExpireTags", "FastForward",
           "Health", "History", "IF_EXISTS", "Maintain", "MarkPartitionDone",
           "RefreshObjectTable", "RemoveOrphanFiles", "RemoveUnexistingFiles", "RenameBranch", "Repair", "Rescale",
           "ResetConsumer", "RewriteFileIndex", "Rollback", "SOURCE_FORMATS", "Write", "committing_commands",
           "snapshot_properties_of"]

SOURCE_FORMATS = ("parquet", "csv", "json", "orc")

IF_EXISTS = ("error", "replace", "skip")
"""What ``create-tag`` does with a tag of that name made by someone else at another snapshot (Airflow providers'
``if_exists``): fail, point it at the requested snapshot, or leave it as it is."""

_PARALLELISM = "Spark: {} tasks (default: Spark's default parallelism)"


@dataclass(frozen=True, kw_only=True)
class CommittingCommand(Command):
    """A command whose run may commit snapshots: each snapshot it commits carries ``snapshot_properties`` in its
    ``properties`` (Paimon 1.2; the provider records the Airflow run there, :mod:`table_engine.run_identity`)."""

    snapshot_properties: Mapping[str, str] = arg(
        "property of every snapshot the run commits, e.g. airflow.run-id=... (repeatable; Paimon 1.2's snapshot "
        "properties)", flag="--snapshot-property", kind="key_value", metavar="K=V")


def committing_commands() -> tuple[type[Command], ...]:
    """The registered commands whose runs commit snapshots (those taking ``--snapshot-property``)."""
    return tuple(c for c in REGISTRY.values() if issubclass(c, CommittingCommand))


def snapshot_properties_of(cmd: Command) -> Mapping[str, str]:
    """The snapshot properties ``cmd`` gives its commits (none for a command that commits no snapshot)."""
    return cmd.snapshot_properties if isinstance(cmd, CommittingCommand) else {}


@command("write", spark_job=True, groups={"source": True},
         help="write rows from a source (or a Spark SQL query) into the table")
@dataclass(frozen=True, kw_only=True)
class Write(CommittingCommand):
    """Rows from ``source`` files or a Spark SQL query into the table; ``create_if_missing`` creates it from the
    source's schema. A re-run with the same ``commit_user`` is a no-op once it has committed."""

    source: str | None = arg("path of the input files", group="source")
    sql: str | None = arg("Spark SQL query giving the rows (spark-submit only)", group="source")
    format: str = arg("format of --source", kind="choice", choices=SOURCE_FORMATS, default="parquet")
    source_options: Mapping[str, str] = arg("reader option of --source, e.g. header=true for csv (repeatable)",
                                            flag="--source-option", kind="key_value", metavar="K=V")
    mode: str = arg("overwrite: dynamic partition overwrite (the partitions present in the data)", kind="choice",
                    choices=("append", "overwrite"), default="append")
    create_if_missing: bool = arg("create the table from the source's schema", kind="flag")
    primary_keys: tuple[str, ...] = arg("with --create-if-missing: key columns a,b", flag="--primary-key",
                                        kind="columns")
    partition_keys: tuple[str, ...] = arg("with --create-if-missing: partition columns", flag="--partition-key",
                                          kind="columns")
    options: Mapping[str, str] = arg("with --create-if-missing: table option; else a write option of this write, "
                                     "e.g. write.merge-schema=true (repeatable)", flag="--option",
                                     kind="key_value", metavar="K=V")
    commit_user: str | None = arg("commit user; re-running a job with the same one does not commit twice")
    parallelism: int | None = arg("Spark: writer tasks for primary-key tables (default: Spark's default "
                                  "parallelism)", kind="count")


@command("compact", spark_job=True, help="compact a table (all buckets, or those of --partition)")
@dataclass(frozen=True, kw_only=True)
class Compact(CommittingCommand):
    """Minor compaction (Paimon's universal picker per bucket; append tables: small files once
    ``compaction.min.file-num`` are there) or ``full``; ``idle_time_millis`` only compacts partitions that got no
    new data files for that long (Paimon's ``partition_idle_time``); ``buckets`` only these buckets of a
    fixed-bucket table (Paimon's ``buckets``, ``'0-99,200-299'``). Partitions already expired are skipped with
    ``compaction.skip-expired-partitions``."""

    full: bool = arg("full compaction (one sorted run per bucket; append tables: every small file)", kind="flag")
    partitions: tuple[dict[str, str], ...] = arg("only this partition (repeatable)", flag="--partition",
                                                 kind="partition", metavar="K=V[,K=V]")
    idle_time_millis: int | None = arg("only partitions that got no new data files for this long, e.g. '1 d'",
                                       flag="--idle-time", kind="duration", metavar="DURATION")
    buckets: str | None = arg("only these buckets of a fixed-bucket table: numbers and ranges, e.g. '0-99,200-299'",
                              metavar="RANGES")
    commit_user: str | None = arg("commit user of the compaction snapshot")
    parallelism: int | None = arg(_PARALLELISM.format("compaction"), kind="count")
    order_strategy: str | None = arg("sort compaction of an append table with bucket = -1: order the rows of each "
                                     "partition by --order-by (docs/layout.md)", kind="choice",
                                     choices=tuple(t.value for t in OrderType))
    order_by: tuple[str, ...] = arg("with --order-strategy: the columns to order by, e.g. user_id,event_time",
                                    kind="columns", metavar="COLUMN[,COLUMN]")

    def __post_init__(self) -> None:
        super().__post_init__()
        from table_engine.store.compaction.sort_compact import SortOrder

        SortOrder.parse(self.order_strategy, self.order_by)  # both or neither, a Hilbert order of two columns...
        if self.buckets is not None:
            from table_engine.store.compaction.select import parse_buckets

            parse_buckets(self.buckets, where=self.name, name="--buckets")  # the syntax; the range needs the table


@command("compact-database", help="compact every table of a database matching --including-tables (Paimon's "
         "compact_database)")
@dataclass(frozen=True, kw_only=True)
class CompactDatabase(CommittingCommand):
    """Paimon's ``compact_database``: the tables of one database whose full name (``db.t``) wholly matches
    ``including_tables`` (a regular expression; default all) and not ``excluding_tables`` are compacted one after
    the other, each as ``compact`` does (its own COMPACT snapshot), on this machine. A second run converges."""

    table: str = arg("the database whose tables are compacted", required=True, flag="--database",
                     metavar="DATABASE")
    including_tables: str | None = arg("regular expression of the full names (db.t) to compact (default: all)")
    excluding_tables: str | None = arg("regular expression of the full names (db.t) not to compact")
    full: bool = arg("full compaction of each table", kind="flag")
    idle_time_millis: int | None = arg("only partitions that got no new data files for this long, e.g. '1 d'",
                                       flag="--idle-time", kind="duration", metavar="DURATION")
    commit_user: str | None = arg("commit user of the compaction snapshots")

    def __post_init__(self) -> None:
        super().__post_init__()
        if "." in self.table:
            raise CommandError(f"{self.name}: --database {self.table!r} must be a database name, not db.table")
        from table_engine.ops.compact_database import table_pattern

        table_pattern(self.including_tables, "--including-tables", self.name)
        table_pattern(self.excluding_tables, "--excluding-tables", self.name)


@command("expire-snapshots", help="expire old snapshots and the files only they reference")
@dataclass(frozen=True, kw_only=True)
class ExpireSnapshots(Command):
    """Expire snapshots as the table's retention options say, each option overridable here."""

    retain_min: int | None = arg("snapshots to keep at least (default: snapshot.num-retained.min)", kind="count")
    retain_max: int | None = arg("snapshots to keep at most (default: snapshot.num-retained.max)", kind="count")
    older_than_millis: int | None = arg("expire snapshots older than this (default: snapshot.time-retained)",
                                        flag="--older-than", kind="time", metavar="TIME")
    max_deletes: int | None = arg("snapshots to expire at most in this run", kind="count")


@command("expire-changelogs", help="expire long-lived changelogs (a decoupled changelog lifecycle)")
@dataclass(frozen=True, kw_only=True)
class ExpireChangelogs(Command):
    """Paimon's ``expire_changelogs``: the changelogs kept past their snapshots (``changelog/changelog-<id>``)
    expire by the table's ``changelog.num-retained.min/max`` and ``changelog.time-retained``, each overridable
    here; ``delete_all`` drops them all. Consumers and tags keep what they need. A second run is a no-op."""

    retain_min: int | None = arg("changelogs to keep at least (default: changelog.num-retained.min)", kind="count")
    retain_max: int | None = arg("changelogs to keep at most (default: changelog.num-retained.max)", kind="count")
    older_than_millis: int | None = arg("expire changelogs older than this (default: changelog.time-retained)",
                                        flag="--older-than", kind="time", metavar="TIME")
    max_deletes: int | None = arg("changelogs to expire at most in this run", kind="count")
    delete_all: bool = arg("expire every long-lived changelog (no other option with it)", kind="flag")

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.retain_min is not None and self.retain_max is not None and self.retain_max < self.retain_min:
            raise CommandError(f"{self.name}: --retain-max {self.retain_max} must not be less than --retain-min "
                               f"{self.retain_min}")
        given = [f for f, v in (("--retain-min", self.retain_min), ("--retain-max", self.retain_max),
                                ("--older-than", self.older_than_millis), ("--max-deletes", self.max_deletes))
                 if v is not None]
        if self.delete_all and given:
            raise CommandError(f"{self.name}: --delete-all expires every changelog: {', '.join(given)} would be "
                               "ignored, leave it out")


@command("clear-consumers", help="delete consumers (all, or those matching a pattern)")
@dataclass(frozen=True, kw_only=True)
class ClearConsumers(Command):
    """Paimon's ``clear_consumers``: delete the consumers (``consumer/consumer-<id>``) whose id fully matches
    ``including_consumers`` (default: all) and not ``excluding_consumers`` (regular expressions). Snapshots they
    protected become expirable. A second run is a no-op. ``dry_run`` only lists them (Paimon's procedure has none)."""

    including_consumers: str | None = arg("regular expression of the consumer ids to delete (default: all)")
    excluding_consumers: str | None = arg("regular expression of the consumer ids to keep")
    dry_run: bool = arg("list the consumers that would be deleted, delete none", kind="flag")

    def __post_init__(self) -> None:
        super().__post_init__()
        for flag, pattern in (("--including-consumers", self.including_consumers),
                              ("--excluding-consumers", self.excluding_consumers)):
            if pattern is not None and pattern.strip():
                try:
                    re.compile(pattern)
                except re.error as e:
                    raise CommandError(f"{self.name}: {flag} {pattern!r} is no regular expression: {e}") from None


@command("reset-consumer", help="set a consumer's next snapshot, or delete the consumer")
@dataclass(frozen=True, kw_only=True)
class ResetConsumer(Command):
    """Paimon's ``reset_consumer``: the consumer reads from ``next_snapshot_id`` on (a snapshot that exists, or the
    latest + 1: nothing until the next commit); without it the consumer is deleted. A second run is a no-op."""

    consumer_id: str = arg("the consumer", required=True)
    next_snapshot_id: int | None = arg("the next snapshot it reads (default: delete the consumer)", kind="count")

    def __post_init__(self) -> None:
        super().__post_init__()
        if "/" in self.consumer_id or "\\" in self.consumer_id or not self.consumer_id.strip():
            raise CommandError(f"{self.name}: --consumer-id {self.consumer_id!r} must be a non-blank name without "
                               "'/' or '\\'")


@command("compact-manifest", help="rewrite the latest snapshot's manifests into full ones (a COMPACT snapshot)")
@dataclass(frozen=True, kw_only=True)
class CompactManifest(CommittingCommand):
    """Paimon's ``compact_manifest``: the data manifests of the latest snapshot are rewritten into full ones (files
    no longer in the table dropped, small manifests merged) and committed as a COMPACT snapshot that changes no
    data. Manifests that are compact already: nothing is committed (a second run is a no-op)."""

    dry_run: bool = arg("only report the manifests and whether a compaction is due (manifest.merge-min-count)",
                        kind="flag")
    commit_user: str | None = arg("commit user of the snapshot")


@command("refresh-object-table", help="list an object table's object-location and replace its index (Paimon's "
         "refresh_object_table)")
@dataclass(frozen=True, kw_only=True)
class RefreshObjectTable(CommittingCommand):
    """Paimon's ``sys.refresh_object_table`` (1.0-1.2 object tables, docs/object-tables.md): the objects under the
    table's ``object-location`` (listed with the catalog's storage options) replace the index rows in one OVERWRITE
    commit. A location that is missing or a file is refused and the index stays; a table whose ``type`` is not
    ``object-table`` is refused. In the task's process (ADR 0042): a listing and one small write."""


@command("remove-unexisting-files", help="remove data files missing on storage from the metadata (dry run unless "
         "--remove)")
@dataclass(frozen=True, kw_only=True)
class RemoveUnexistingFiles(CommittingCommand):
    """Paimon's ``remove_unexisting_files``: list the latest snapshot's data files that storage does not have; with
    ``remove`` commit their removal from the metadata in one OVERWRITE snapshot (their rows leave the table). Without
    ``remove`` it is a dry run (Paimon's ``dry_run`` defaults to false; here a commit that drops rows is asked for
    explicitly). Nothing missing: nothing is committed (a second run is a no-op)."""

    remove: bool = arg("commit the removal (default: a dry run that only lists the files)", kind="flag")
    commit_user: str | None = arg("commit user of the snapshot")


@command("repair", help="rewrite the table's snapshot and changelog hint files from the files present")
@dataclass(frozen=True, kw_only=True)
class Repair(Command):
    """``repair`` for a filesystem warehouse (Paimon's procedure syncs a metastore, which a filesystem catalog does
    not have): ``snapshot/LATEST``, ``snapshot/EARLIEST`` and the changelog hints rewritten from one listing of
    their directory; hints that are right are left alone (a second run changes nothing). A branch: ``--table
    db.t$branch_<name>``."""


@command("create-tag", help="tag a snapshot (latest by default)")
@dataclass(frozen=True, kw_only=True)
class CreateTag(Command):
    """Tag a snapshot; without ``snapshot`` on a table with no snapshot yet it tags nothing.

    The tag exists already: success when it tags the requested snapshot (the latest by default) or when
    ``creator`` made it (a retry of the same job, even after "latest" moved on); else ``if_exists`` decides."""

    tag: str = arg("tag name", required=True)
    snapshot: int | None = arg("snapshot to tag (default: the latest)", kind="count")
    time_retained_millis: int | None = arg("how long the tag is kept", flag="--time-retained", kind="duration",
                                           metavar="DURATION")
    creator: str | None = arg("who creates the tag, recorded in it: a tag this creator made already is success "
                              "(the provider gives its task instance's commit user)")
    if_exists: str = arg("a tag of that name made by someone else at another snapshot: error, replace it, or "
                         "skip (leave it)", kind="choice", choices=IF_EXISTS, default="error")


@command("expire-tags", help="delete tags past their retention (or created before --older-than)")
@dataclass(frozen=True, kw_only=True)
class ExpireTags(Command):
    """Delete tags past their ``time-retained``, or created before ``older_than_millis``."""

    older_than_millis: int | None = arg("delete tags created before this", flag="--older-than", kind="time",
                                        metavar="TIME")


@command("expire-partitions", help="drop partitions whose time (from their values) has expired")
@dataclass(frozen=True, kw_only=True)
class ExpirePartitions(CommittingCommand):
    """Drop expired partitions; each setting overrides the table's ``partition.*`` option."""

    expiration_time_millis: int | None = arg("partitions older than this expire (partition.expiration-time)",
                                             flag="--expiration-time", kind="duration", metavar="DURATION")
    timestamp_formatter: str | None = arg("formatter of the partition time (partition.timestamp-formatter)")
    timestamp_pattern: str | None = arg("pattern of the partition time (partition.timestamp-pattern)")
    strategy: str | None = arg("how a partition's time is found (partition.expiration-strategy)", kind="choice",
                               choices=tuple(s.value for s in PartitionExpireStrategy))
    max_expires: int | None = arg("partitions to expire at most (partition.expiration-max-num)", kind="count")
    dry_run: bool = arg("report the partitions without dropping them", kind="flag")


@command("remove-orphan-files", help="delete files no snapshot, tag or changelog references")
@dataclass(frozen=True, kw_only=True)
class RemoveOrphanFiles(Command):
    """Delete unreferenced files older than ``older_than_millis`` (default: one day ago)."""

    older_than_millis: int | None = arg("only files older than this (default: one day ago)", flag="--older-than",
                                        kind="time", metavar="TIME")
    dry_run: bool = arg("report the files without deleting them", kind="flag")


@command("health", help="table health from metadata only: LSM levels, small files, deletion vectors, retention, "
                         "consumers (docs/health.md)")
@dataclass(frozen=True, kw_only=True)
class Health(Command):
    """The table's health (``table.maintenance.health()``): per partition and bucket, per table; reads metadata only and
    changes nothing. The result holds the whole health; the command line also prints it as a table."""

    partitions: tuple[dict[str, str], ...] = arg("only this partition (repeatable; default: all)",
                                                 flag="--partition", kind="partition", metavar="K=V[,K=V]")
    orphans: bool = arg("also list orphan candidates (slower: reads every manifest of every snapshot and tag, and "
                        "lists the table's files)", kind="flag")
    max_orphan_files: int | None = arg("with --orphans: files listed at most (default 100000; the result says "
                                       "when the listing was cut)", kind="count")
    orphans_older_than_millis: int | None = arg("with --orphans: only files older than this (default: one day "
                                                "ago)", flag="--orphans-older-than", kind="time", metavar="TIME")


@command("history", help="the table's commits newest first, with the Airflow run of each, by kind and time, a page "
                          "at a time (snapshot metadata only)")
@dataclass(frozen=True, kw_only=True)
class History(Command):
    """The retained commits, newest first (:func:`table_engine.ops.history.history`): snapshot id, commit kind, time,
    commit user, record counts and the Airflow DAG, run, task, map index and try that committed it (from the run
    identity in its properties). Reads snapshot files only; ``next_before_snapshot`` in the result pages on."""

    kinds: tuple[str, ...] = arg("only these commit kinds, e.g. COMPACT or APPEND,OVERWRITE", flag="--kind",
                                 kind="columns", metavar="KIND[,KIND]")
    since_millis: int | None = arg("only commits at or after this time", flag="--since", kind="time", metavar="TIME")
    until_millis: int | None = arg("only commits at or before this time", flag="--until", kind="time", metavar="TIME")
    before_snapshot: int | None = arg("only snapshots older than this one (the previous page's "
                                      "next_before_snapshot)", kind="count")
    limit: int = arg("commits per page", kind="count", default=50)


@command("maintain", help="plan the maintenance due from the table's health and options, and run it (--dry-run: "
                           "only the plan; docs/maintenance-planner.md)")
@dataclass(frozen=True, kw_only=True)
class Maintain(CommittingCommand):
    """Plan the maintenance due now (:func:`~table_engine.store.lifecycle.planner.plan_maintenance`: compaction,
    partition, snapshot, changelog and tag expiry, manifest compaction, orphan files, each by the table's option
    thresholds) from metadata only, then run the due actions in order through the commands of those names. The
    result holds the plan and each action's result side by side; a second run plans nothing. Not a Spark job: a due
    compaction runs with the engine in the process that runs the command (the worker, or the Spark driver)."""

    dry_run: bool = arg("only plan: change nothing", kind="flag")
    orphans: bool = arg("also look for orphan files (default: the table option "
                        "maintenance.remove-orphan-files.enabled)", kind="flag")
    commit_user: str | None = arg("commit user of the snapshots the actions commit")


@command("rollback", groups={"target": True}, help="make an older snapshot (or a tag) the latest")
@dataclass(frozen=True, kw_only=True)
class Rollback(Command):
    """Roll the table back to ``snapshot`` or ``tag`` (exactly one)."""

    snapshot: int | None = arg("snapshot to roll back to", kind="count", group="target")
    tag: str | None = arg("tag to roll back to", group="target")


@command("consume-changelog", spark_job=True, groups={"output": True},
         help="read the changes after a consumer's position and advance it")
@dataclass(frozen=True, kw_only=True)
class ConsumeChangelog(CommittingCommand):
    """The changes after the consumer's position (rows with a ``rowkind`` column) into ``output`` files or the
    ``target_table``, exactly once across crashes; then the consumer advances."""

    consumer_id: str = arg("the consumer", required=True)
    output: str | None = arg("directory for the change rows (one sub-directory per run)", group="output")
    target_table: str | None = arg("apply the changes to this table (database.table)", group="output")
    output_format: str = arg("format of --output", kind="choice", choices=("parquet", "json", "csv"),
                             default="parquet")
    from_snapshot: int | None = arg("first snapshot to read (default: the consumer's next)", kind="count")
    to_snapshot: int | None = arg("last snapshot to read (default: the latest)", kind="count")
    retry_key: str | None = arg("the same for every try of one job (the provider gives its task instance's "
                                "commit user): a run with the key of a delivered batch returns that batch again")


@command("delete-tag", help="delete tags and the files only they kept alive")
@dataclass(frozen=True, kw_only=True)
class DeleteTag(Command):
    """Delete ``tag`` (comma-separated names for several) and the files only those tags referenced."""

    tag: str = arg("tag name (comma-separated for several)", required=True)
    ignore_if_not_exists: bool = arg("a tag that does not exist is no error", kind="flag")


@command("drop-partitions", help="drop partitions in one OVERWRITE commit")
@dataclass(frozen=True, kw_only=True)
class DropPartitions(CommittingCommand):
    """Drop the partitions matching ``partitions`` (specs may name some partition keys) in one commit; a spec that
    matches no partition fails and drops nothing, unless ``ignore_if_missing`` (then it is logged)."""

    partitions: tuple[dict[str, str], ...] = arg("partition to drop (repeatable)", flag="--partition",
                                                 kind="partition", metavar="K=V[,K=V]", required=True)
    ignore_if_missing: bool = arg("a spec that matches no partition (already dropped) is no error", kind="flag")


@command("mark-partition-done", help="mark partitions done by the table's partition.mark-done-action (a _SUCCESS "
                                     "file; docs/partitions.md)")
@dataclass(frozen=True, kw_only=True)
class MarkPartitionDone(Command):
    """Paimon's ``mark_partition_done``: each partition (every partition key given) is marked done by the table's
    ``partition.mark-done-action``; the engine does ``success-file`` (Paimon's ``_SUCCESS`` JSON in the partition
    directory) and refuses the other actions before writing anything. No snapshot; a re-run converges."""

    partitions: tuple[dict[str, str], ...] = arg("partition to mark done (repeatable)", flag="--partition",
                                                 kind="partition", metavar="K=V[,K=V]", required=True)


@command("rewrite-file-index", help="(re)build the file indexes of data files per the file-index.* options")
@dataclass(frozen=True, kw_only=True)
class RewriteFileIndex(CommittingCommand):
    """Paimon's ``sys.rewrite_file_index``: each changed data file is replaced by itself with the new index, in one
    COMPACT commit."""

    partitions: tuple[dict[str, str], ...] = arg("only files of this partition (repeatable)", flag="--partition",
                                                 kind="partition", metavar="K=V[,K=V]")
    commit_user: str | None = arg("commit user of the snapshot")


@command("rescale", help="rewrite partitions into another number of buckets (Paimon's rescale procedure)")
@dataclass(frozen=True, kw_only=True)
class Rescale(CommittingCommand):
    """Rewrite the data of the selected partitions into ``bucket_num`` buckets in one OVERWRITE commit that fails if
    a compaction or rewrite was committed meanwhile. Postpone bucket tables (``bucket`` = -2) need ``bucket_num``
    and keep their postponed rows; fixed-bucket tables rewrite into their own ``bucket``."""

    bucket_num: int | None = arg("the new bucket count (postpone tables: required; fixed-bucket tables: the "
                                 "table's bucket)", kind="count")
    partitions: tuple[dict[str, str], ...] = arg("only this partition (repeatable; default: all)",
                                                 flag="--partition", kind="partition", metavar="K=V[,K=V]")
    commit_user: str | None = arg("commit user of the snapshot")


@command("check", help="run data-quality checks on a table or branch (docs/checks.md)")
@dataclass(frozen=True, kw_only=True)
class CheckTable(Command):
    """Run ``checks`` on one snapshot of the table (the latest unless ``snapshot``; a branch as ``db.t$branch_b``)
    and report each check's result: ``passed``, ``observed``, ``expected``, ``message``. A check that fails is a
    result, not a failed job (the job fails only when the checks cannot run: a bad definition, an unknown column);
    the result line's ``passed`` says whether all passed, ``failed`` names those that did not."""

    checks: tuple[dict[str, Any], ...] = arg(
        "the checks: a JSON array of check objects, e.g. '[{\"check\": \"row_count\", \"min\": 1}]' "
        "(docs/checks.md)", kind="json", required=True, metavar="JSON")
    snapshot: int | None = arg("the snapshot to check (default: the latest)", kind="count")
    since_snapshot: int | None = arg("check only the rows added after this snapshot up to the checked one (the "
                                     "batch an audit branch adds on the snapshot it was made from; Paimon's "
                                     "incremental-between); default: every row of the checked snapshot",
                                     kind="count")

    def __post_init__(self) -> None:
        super().__post_init__()
        from table_engine.ops.checks.definitions import parse_checks

        try:
            parse_checks(self.checks)
        except CommandError as e:
            raise CheckError(f"{self.name}: --checks {e}") from None
@command("create-branch", help="create a branch (empty, or from a tag); write to it as --table db.t$branch_<name>")
@dataclass(frozen=True, kw_only=True)
class CreateBranch(Command):
    """Paimon's ``create_branch``: an empty branch (the table's schemas, no snapshot) or one from ``tag`` (its
    snapshot, tag and schemas). Reads, writes and every other command reach it as ``--table db.t$branch_<name>``.

    The branch exists already: success when it was made from the same ``tag`` (its copy of the tag is at the tag's
    snapshot) or, without ``tag``, when it holds no copied tag snapshot (a retry of the same job); else
    ``if_exists`` decides (error or skip)."""

    branch: str = arg("branch name", required=True)
    tag: str | None = arg("tag to branch from (default: an empty branch)")
    if_exists: str = arg("a branch of that name made otherwise: error, or skip (leave it)", kind="choice",
                         choices=("error", "skip"), default="error")


@command("delete-branch", help="delete a branch (its files only it used are left for remove-orphan-files)")
@dataclass(frozen=True, kw_only=True)
class DeleteBranch(Command):
    """Paimon's ``delete_branch``: the branch directory goes; data files only it referenced stay for orphan
    cleaning, as in Paimon."""

    branch: str = arg("branch name", required=True)
    ignore_if_missing: bool = arg("a branch that does not exist (deleted by an earlier try) is no error",
                                  kind="flag")


@command("rename-branch", help="rename a branch (Paimon 1.1+'s rename_branch)")
@dataclass(frozen=True, kw_only=True)
class RenameBranch(Command):
    """Rename ``branch`` to ``to``; a retry that finds ``to`` and no ``branch`` is success."""

    branch: str = arg("branch name", required=True)
    to: str = arg("its new name", required=True)


@command("fast-forward", help="make the table (--table's line) the branch: its snapshots, schemas and tags")
@dataclass(frozen=True, kw_only=True)
class FastForward(Command):
    """Paimon's ``fast_forward``: the table's snapshots, tags and schemas from the branch's earliest snapshot on
    are replaced by the branch's. A fast-forward already done (the table's latest snapshot is the branch's) is
    success. ``check_unchanged`` refuses when the table has commits the fast-forward would discard (it moved on
    since the branch was made): a writer's concurrent commit is never silently lost."""

    branch: str = arg("branch to fast-forward to", required=True)
    check_unchanged: bool = arg("refuse if the table has commits since the branch was made (they would be lost)",
                                kind="flag")

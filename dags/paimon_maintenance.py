"""Upkeep of Paimon tables, one DAG per job, each with a form (Params) to run it by hand from the Airflow UI.

    paimon_compact                dedicated compaction (writers run write-only), minor or full    hourly
    paimon_expire_snapshots       snapshot (and changelog) expiry                                 daily
    paimon_daily_tag              tag each table, then delete tags past their retention           daily
    paimon_expire_partitions      drop partitions older than a retention                          daily
    paimon_remove_orphan_files    delete files nothing references (failed or killed jobs)         weekly
    paimon_rollback               roll a table back to a snapshot or tag                          by hand only
    paimon_maintenance            every table (or those of some databases): plan each, run what is due  daily

Every DAG but paimon_maintenance (which lists the databases' tables) takes a list of tables (default: the tables of
the streaming-lake templates) and runs one mapped task per table, labelled by its table. Optional fields may be left
empty (they are nullable); a bad value (an unknown table, a malformed duration, partition or snapshot id) fails its
task at once, without retries, and the task log ends with the command, the table and the engine's one-line error.
Defaults are valid for scheduled runs; nothing uses the logical date (UI-triggered runs have none), and names that
need a date use ``dag_run.run_after``.
"""

from __future__ import annotations

from airflow.sdk import Param
from example_lake import ALL_TABLES, PRIMARY_KEY_TABLES
from paimon_provider.get_provider_info import DOCUMENTATION_URL
from paimon_provider.operators import (
    PaimonCompactOperator,
    PaimonCreateTagOperator,
    PaimonExpirePartitionsOperator,
    PaimonExpireSnapshotsOperator,
    PaimonExpireTagsOperator,
    PaimonMaintenanceOperator,
    PaimonRemoveOrphanFilesOperator,
    PaimonRollbackOperator,
)
from paimon_provider.utils.assets import writes_alias
from paimon_provider.utils.maintenance import (
    flag_param,
    for_each_table,
    list_database_tables,
    maintenance_dag,
    rollback_params,
    selected_tables,
    show_rollback_targets,
    tables_param,
)

NOTES = ("A bad value (an unknown table, a malformed duration, partition or snapshot id) fails its task at once, "
         "without retries; the task "
         "log ends with the command, the table and the engine's one-line error. More: "
         f"[the provider's documentation]({DOCUMENTATION_URL}).")
PER_TABLE = "Every table of the *Tables* field gets its own mapped task, labelled by its table. " + NOTES

with maintenance_dag(
    "paimon_compact",
    description="Dedicated compaction of primary-key and append tables (minor, full, or sorted)",
    schedule="@hourly",
    params={
        "tables": tables_param(ALL_TABLES, "compact"),  # the ODS append table gains small files every batch
        "mode": Param("minor", type="string", enum=["minor", "full"], title="Mode",
                      description="minor: the table's compaction strategy picks files; full: one sorted run "
                                  "per bucket (append tables: every small file rewritten)."),
        "partitions": Param(None, type=["null", "string"], title="Partitions",
                            description="Only these partitions: 'k=v,k2=v2', several separated by ';' "
                                        "(a backslash escapes ',', '=' and ';'), e.g. dt=2026-11-20. "
                                        "Empty: all."),
        "order_strategy": Param("none", type="string", enum=["none", "order", "zorder", "hilbert"],
                                title="Sort by", description="Append tables with bucket = -1: sort the rows of "
                                "each partition by *Sort columns* (order: by their values; zorder, hilbert: by a "
                                "curve over 2+ columns), so that filters on them read fewer files. none: a plain "
                                "compaction."),
        "order_by": Param(None, type=["null", "string"], title="Sort columns",
                          description="With *Sort by*: the columns, e.g. user_id,event_time."),
    },
    leaves=("a COMPACT snapshot per table that had files to compact (none when there was nothing to do); for "
            "primary-key tables with a lookup or full-compaction changelog producer, the changelog of the merged "
            "rows. Compacted-away files stay until snapshot expiry removes them."),
    notes=PER_TABLE,
) as compact_dag:
    for_each_table(
        PaimonCompactOperator,
        task_id="compact",
        # a mapped task emits its table's Asset only when the compaction produced changelog (data): a compaction
        # that only merges files starts no DAG scheduled on the table (docs/adr/0021)
        outlets=[writes_alias()],
        full="{{ params.mode }}",
        partitions="{{ params.partitions }}",
        order_strategy="{{ params.order_strategy }}",
        order_by="{{ params.order_by }}",
    )


with maintenance_dag(
    "paimon_expire_snapshots",
    description="Expire old snapshots (and changelogs) and the files only they reference",
    schedule="@daily",
    params={
        "tables": tables_param(ALL_TABLES, "expire snapshots of"),
        "retain_min": Param(10, type="integer", minimum=1, title="Keep at least",
                            description="Always keep this many snapshots."),
        "retain_max": Param(100, type="integer", minimum=1, title="Keep at most",
                            description="Never keep more than this many."),
        "older_than": Param("1 d ago", type=["null", "string"], title="Older than",
                            description="Expire snapshots older than this: '1 d ago', an ISO "
                                        "date-time or epoch ms. Empty: the table's snapshot.time-retained."),
    },
    leaves=("fewer snapshots (and changelogs): at least *Keep at least*, at most *Keep at most*; data and "
            "manifest files only the expired snapshots referenced are deleted. Tags and the files they keep are "
            "not touched."),
    notes=PER_TABLE,
) as expire_snapshots_dag:
    for_each_table(
        PaimonExpireSnapshotsOperator,
        task_id="expire_snapshots",
        retain_min="{{ params.retain_min }}",
        retain_max="{{ params.retain_max }}",
        older_than="{{ params.older_than }}",
    )


with maintenance_dag(
    "paimon_daily_tag",
    description="Tag every table once a day, then delete tags past their retention",
    schedule="@daily",
    params={
        "tables": tables_param(ALL_TABLES, "tag"),
        "tag_prefix": Param("daily", type="string", pattern=r"^[A-Za-z0-9_\-]+$", title="Tag prefix",
                            description="Tag names are '<prefix>-<date>' (scheduled runs) or "
                                        "'<prefix>-<date>T<time>' (other runs)."),
        "time_retained": Param("7 d", type="string", minLength=1, title="Keep tags for",
                               description="How long a tag is kept ('7 d', '12 h')."),
    },
    leaves=("one tag per table (`<prefix>-<date>`, keeping its snapshot's files alive for *Keep tags for*), and "
            "fewer tags: the tags past their retention are deleted. A table with no snapshot yet gets no tag (its"
            " task is skipped)."),
    notes=PER_TABLE,
) as daily_tag_dag:
    tables = selected_tables()
    created = for_each_table(
        PaimonCreateTagOperator,
        task_id="create_tag",
        tables=tables,
        tag="{{ params.tag_prefix }}-{{ dag_run.run_after.strftime('%Y-%m-%d' if dag_run.run_type == 'scheduled' "
            "else '%Y-%m-%dT%H%M%S.%f')[:21] }}",
        time_retained="{{ params.time_retained }}",
    )
    # a table with no snapshot yet skips its create_tag ("no snapshot yet"); tags of the other tables still expire
    created >> for_each_table(PaimonExpireTagsOperator, task_id="expire_tags", tables=tables,
                              trigger_rule="none_failed")


with maintenance_dag(
    "paimon_expire_partitions",
    description="Drop partitions whose date is older than a retention",
    schedule="@daily",
    params={
        "tables": tables_param(ALL_TABLES, "expire partitions of"),
        "expiration_time": Param("365 d", type="string", minLength=1, title="Older than",
                                 description="Drop partitions older than this ('30 d')."),
        "timestamp_formatter": Param("yyyy-MM-dd", type=["null", "string"], title="Date format",
                                     description="How partition values read as dates (Java pattern). Empty: each "
                                                 "table's partition.timestamp-formatter."),
        "timestamp_pattern": Param("$dt", type=["null", "string"], title="Date from columns",
                                   description="How partition columns compose the date ('$dt', '$dt $hour:00'). "
                                               "Empty: each table's partition.timestamp-pattern."),
        "dry_run": flag_param(False, title="Dry run", description="Only report what would be dropped."),
    },
    leaves=("an OVERWRITE snapshot per table that dropped partitions (the files stay until snapshot expiry); "
            "nothing with *Dry run*, which only logs the partitions it would drop."),
    notes=PER_TABLE,
) as expire_partitions_dag:
    for_each_table(
        PaimonExpirePartitionsOperator,
        task_id="expire_partitions",
        expiration_time="{{ params.expiration_time }}",
        timestamp_formatter="{{ params.timestamp_formatter }}",
        timestamp_pattern="{{ params.timestamp_pattern }}",
        dry_run_only="{{ params.dry_run }}",
    )


with maintenance_dag(
    "paimon_remove_orphan_files",
    description="Delete files no snapshot, tag or changelog references",
    schedule="@weekly",
    params={
        "tables": tables_param(ALL_TABLES, "clean"),
        "older_than": Param("1 d ago", type="string", minLength=1, title="Older than",
                            description="Only files older than this ('1 d ago'; running jobs' files "
                                        "are younger)."),
        "dry_run": flag_param(False, title="Dry run", description="Only list the files."),
    },
    leaves=("fewer files: those no snapshot, tag or changelog references and older than *Older than*; no "
            "snapshot. With *Dry run* nothing is deleted, the files are only logged."),
    notes=PER_TABLE,
) as orphan_dag:
    for_each_table(
        PaimonRemoveOrphanFilesOperator,
        task_id="remove_orphan_files",
        older_than="{{ params.older_than }}",
        dry_run_only="{{ params.dry_run }}",
    )


with maintenance_dag(
    "paimon_rollback",
    description="Roll a table back to a snapshot or a tag (newer snapshots and tags are removed)",
    schedule=None,
    default_args=None,  # no retries: a rollback is run by a person, who looks at the result
    # nothing is read from the warehouse when this file is parsed: the run's first task lists snapshots and tags
    params=rollback_params(PRIMARY_KEY_TABLES[0]),
    leaves=("the table as it was at the snapshot or tag: newer snapshots, changelogs and tags are deleted (for "
            "good: a rollback cannot be undone, except by rolling forward to a tag taken before). The first "
            "task's log and XCom list the tags and latest snapshots it could go back to."),
    notes=NOTES,
) as rollback_dag:
    show_rollback_targets(table="{{ params.table }}") >> PaimonRollbackOperator(
        # the table is templated: its Asset event goes through writes_alias, and only when snapshots were removed
        task_id="rollback",
        table="{{ params.table }}",
        version="{{ params.version }}",
    )


GLOBS = ("fnmatch globs on the table name (without the database), one per line: '*' any text, '?' one character, "
         "'[abc]' one of them")

with maintenance_dag(
    "paimon_maintenance",
    description="Plan each table from its health and options; run only the maintenance that is due",
    schedule="@daily",
    params={
        "databases": Param([], type=["null", "array"], items={"type": "string", "pattern": r"^[A-Za-z0-9_]+$"},
                           title="Databases",
                           description="The databases whose tables are maintained (letters, digits and '_'). "
                                       "Empty (the default): every database of the warehouse, so a new layer is "
                                       "planned without editing this form."),
        "include": Param(["*"], type="array", items={"type": "string", "minLength": 1}, minItems=1,
                         title="Include", description=f"Tables matching one of these: {GLOBS}."),
        "exclude": Param([], type=["null", "array"], items={"type": "string", "minLength": 1}, title="Exclude",
                         description=f"Leave out tables matching one of these: {GLOBS}. Empty: none."),
        "dry_run": flag_param(False, title="Dry run",
                         description="Only plan: each table's task logs and returns its plan, nothing changes."),
        "orphans": flag_param(False, title="Orphan files",
                         description="Also look for orphan files in every table (lists each table's files; "
                                     "without it only tables with maintenance.remove-orphan-files.enabled)."),
    },
    leaves=("per table, only the maintenance its health and options make due (docs/maintenance-planner.md): "
            "compaction (COMPACT snapshots), then partition, snapshot, changelog and tag expiry, manifest "
            "compaction, orphan files. A table with nothing due is read (metadata only) and left as it was. Each "
            "table's task log shows the plan and the outcome of each action side by side; its XCom holds both."),
    notes=("The first task lists the tables of *Databases* (empty: every database) matching *Include* and not "
           "*Exclude*; every listed table "
           "gets its own mapped task, labelled by its table. " + NOTES),
) as maintenance_planner_dag:
    for_each_table(
        PaimonMaintenanceOperator,
        task_id="maintain",
        tables=list_database_tables(),
        dry_run_only="{{ params.dry_run }}",
        orphans="{{ params.orphans }}",
    )

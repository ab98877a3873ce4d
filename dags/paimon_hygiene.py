"""Metadata hygiene of Paimon tables (Paimon's procedures), one DAG per procedure, each with a form (Params) to run
it by hand from the Airflow UI.

    paimon_expire_changelogs          expire long-lived changelogs (decoupled changelog lifecycle)    daily
    paimon_compact_manifest           rewrite the latest snapshot's manifests into full ones          by hand only
    paimon_remove_unexisting_files    drop data files missing on storage from the metadata            by hand only
    paimon_repair                     rewrite the snapshot and changelog hint files                   by hand only
    paimon_clear_consumers            delete consumers (all, or those matching a pattern)             by hand only
    paimon_reset_consumer             set a consumer's next snapshot, or delete the consumer          by hand only
    paimon_audit_branches             list (or delete) the audit branches write-audit-publish kept    by hand only

Each runs one metadata command of the engine's CLI on the worker (no Spark; docs/lifecycle.md, "Metadata hygiene
commands"). Form fields are named as the operator's arguments (:func:`paimon_provider.utils.maintenance.from_form`); the
three that can change the table or its readers without being asked are safe by default: compact-manifest and
clear-consumers are dry runs and remove-unexisting-files removes nothing until *Remove* is ticked. Nothing is read
from the warehouse when this file is parsed (ADR 0024).
"""

from __future__ import annotations

from typing import Any

from airflow.sdk import DAG, Param
from example_lake import ALL_TABLES, ODS, PRIMARY_KEY_TABLES
from paimon_provider.get_provider_info import DOCUMENTATION_URL
from paimon_provider.operators import (
    PaimonClearConsumersOperator,
    PaimonCompactManifestOperator,
    PaimonExpireChangelogsOperator,
    PaimonRemoveUnexistingFilesOperator,
    PaimonRepairOperator,
    PaimonResetConsumerOperator,
)
from paimon_provider.utils.maintenance import (
    flag_param,
    for_each_table,
    from_form,
    maintenance_dag,
    table_param,
    tables_param,
)
from paimon_provider.utils.wap import manage_audit_branches

HYGIENE_TAGS = ("paimon", "hygiene")
"""Tags of these DAGs: metadata hygiene, told apart from the upkeep DAGs (tagged ``maintenance``) in the DAG list."""


def hygiene_dag(dag_id: str, **kwargs: Any) -> DAG:
    """:func:`~paimon_provider.utils.maintenance.maintenance_dag` with :data:`HYGIENE_TAGS`."""
    return maintenance_dag(dag_id, tags=HYGIENE_TAGS, **kwargs)


TABLE = PRIMARY_KEY_TABLES[0]
"""The default table of the by-hand forms (the DWD table, whose changelog the DWS layer reads through a consumer)."""

NOTES = ("A bad value (an unknown table, a malformed time, count, pattern or snapshot id) fails its task at once, "
         "without retries; the task log ends with the command, the table and the engine's one-line error. A "
         "second run with the same values changes nothing. More: "
         f"[the provider's documentation]({DOCUMENTATION_URL}).")
REGEX = "a regular expression the whole consumer id must match (Python's re, e.g. 'etl_.*')"


def _count(title: str, description: str) -> Param:
    """An optional positive integer field (empty: the table's option decides)."""
    return Param(None, type=["null", "integer"], minimum=1, title=title, description=description)


EXPIRE_CHANGELOGS = {
    "tables": tables_param(ALL_TABLES, "expire long-lived changelogs of"),
    "retain_min": _count("Keep at least", "Always keep this many changelogs. Empty: the table's "
                                          "changelog.num-retained.min."),
    "retain_max": _count("Keep at most", "Never keep more than this many changelogs. Empty: the table's "
                                         "changelog.num-retained.max."),
    "older_than": Param(None, type=["null", "string"], title="Older than",
                        description="Expire changelogs committed before this: '1 d ago', an ISO date-time or epoch "
                                    "ms. Empty: the table's changelog.time-retained."),
    "max_deletes": _count("At most this many", "Expire at most this many changelogs in this run. Empty: no limit."),
    "delete_all": flag_param(False, title="Delete all",
                        description="Expire every long-lived changelog (leave the other fields empty)."),
}

with hygiene_dag(
    "paimon_expire_changelogs",
    description="Expire long-lived changelogs (a decoupled changelog lifecycle) by the table's options or the form",
    schedule="@daily",
    params=EXPIRE_CHANGELOGS,
    leaves=("fewer changelog files (`changelog/changelog-<id>` and the files only they reference) in tables whose "
            "changelogs outlive their snapshots (changelog.num-retained.*, changelog.time-retained); consumers and "
            "tags keep what they still need. No snapshot. A table without long-lived changelogs is left as it "
            "was."),
    notes="Every table of the *Tables* field gets its own mapped task, labelled by its table. " + NOTES,
) as expire_changelogs_dag:
    for_each_table(PaimonExpireChangelogsOperator, task_id="expire_changelogs", **from_form(EXPIRE_CHANGELOGS))


COMPACT_MANIFEST = {
    "table": table_param(TABLE, "compact the manifests of"),
    "dry_run": flag_param(True, title="Dry run",
                     description="Only report the manifests and whether a compaction is due (the maintenance "
                                 "planner's rule: manifest.merge-min-count small manifests) (untick to commit it)."),
}

with hygiene_dag(
    "paimon_compact_manifest",
    description="Compact manifests: rewrite the latest snapshot's data manifests into full ones",
    schedule=None,
    params=COMPACT_MANIFEST,
    leaves=("with *Dry run* (the default) nothing: the task's log and XCom report the manifests, whether a "
            "compaction is due (as `paimon_maintenance` plans it) and whether a run would change anything. "
            "Without it a COMPACT snapshot that changes no data, its manifests full ones; "
            "nothing when they are compact already."),
    notes=NOTES,
) as compact_manifest_dag:
    PaimonCompactManifestOperator(task_id="compact_manifest", table="{{ params.table }}",
                                  **from_form(COMPACT_MANIFEST, dry_run="dry_run_only"))


REMOVE_UNEXISTING_FILES = {
    "table": table_param(TABLE, "check for data files missing on storage"),
    "remove": flag_param(False, title="Remove",
                    description="Commit the removal of the missing files from the metadata (their rows leave the "
                                "table). Unticked (the default): a dry run that only lists them."),
}

with hygiene_dag(
    "paimon_remove_unexisting_files",
    description="Remove data files missing on storage from the table's metadata (a dry run unless Remove is ticked)",
    schedule=None,
    params=REMOVE_UNEXISTING_FILES,
    leaves=("unticked *Remove* (the default): nothing, the task's log and XCom list the latest snapshot's data "
            "files storage does not have and their rows. Ticked: one OVERWRITE snapshot removing them (their rows "
            "leave the table, which can be read again); nothing when no file is missing."),
    notes=NOTES,
) as remove_unexisting_files_dag:
    PaimonRemoveUnexistingFilesOperator(task_id="remove_unexisting_files", table="{{ params.table }}",
                                        dry_run_only="{{ not params.remove }}")


REPAIR = {"table": table_param(TABLE, "repair")}

with hygiene_dag(
    "paimon_repair",
    description="Repair a table's snapshot and changelog hint files (LATEST, EARLIEST) from the files present",
    schedule=None,
    params=REPAIR,
    leaves=("the hint files `snapshot/LATEST`, `snapshot/EARLIEST` (and the changelog hints) rewritten where they "
            "were wrong, from one listing of their directory; right hints are left alone. No snapshot. (A branch, "
            "`db.t$branch_<name>`, is repaired with the operator, not this form.)"),
    notes=NOTES,
) as repair_dag:
    PaimonRepairOperator(task_id="repair", table="{{ params.table }}")


CLEAR_CONSUMERS = {
    "table": table_param(TABLE, "clear the consumers of"),
    "including_consumers": Param(None, type=["null", "string"], title="Including",
                                 description=f"Delete the consumers whose id matches this: {REGEX}. Empty: all."),
    "excluding_consumers": Param(None, type=["null", "string"], title="Excluding",
                                 description=f"Keep the consumers whose id matches this: {REGEX}. Empty: none."),
    "dry_run": flag_param(True, title="Dry run",
                     description="Only list the consumers that match (the default, so the form's defaults delete "
                                 "nothing). Untick to delete them."),
}

with hygiene_dag(
    "paimon_clear_consumers",
    description="Clear consumers: delete a table's consumers (all, or those matching a pattern)",
    schedule=None,
    params=CLEAR_CONSUMERS,
    leaves=("with *Dry run* (the default) nothing: the task's log and XCom list the consumers that match. "
            "Without it fewer consumer files (`consumer/consumer-<id>`), the deleted ones listed in the task's log and "
            "XCom. The snapshots they held back become expirable; a streaming reader with a deleted consumer id "
            "starts afresh."),
    notes=NOTES,
) as clear_consumers_dag:
    PaimonClearConsumersOperator(task_id="clear_consumers", table="{{ params.table }}",
                                 **from_form(CLEAR_CONSUMERS, dry_run="dry_run_only"))


RESET_CONSUMER = {
    "table": table_param(TABLE, "reset a consumer of"),
    "consumer_id": Param(type="string", minLength=1, pattern=r"^[^/\\]*[^\s/\\][^/\\]*$", title="Consumer id",
                         description="The consumer to reset (its name, without '/' or '\\')."),
    "next_snapshot_id": _count("Next snapshot", "The next snapshot it reads: a snapshot of the table, or the "
                                                "latest + 1 (only what is committed from now on). Empty: the "
                                                "consumer is deleted."),
}

with hygiene_dag(
    "paimon_reset_consumer",
    description="Reset a consumer: set the next snapshot it reads, or delete it",
    schedule=None,
    default_args=None,  # no retries: run by a person, who looks at the result
    params=RESET_CONSUMER,
    leaves=("the consumer file `consumer/consumer-<id>` naming *Next snapshot* (created if it did not exist), or "
            "none when *Next snapshot* is empty. No snapshot."),
    notes=NOTES,
) as reset_consumer_dag:
    PaimonResetConsumerOperator(task_id="reset_consumer", table="{{ params.table }}", **from_form(RESET_CONSUMER))


AUDIT_BRANCHES = {
    "table": table_param(ODS.name, "list the audit branches of"),
    "older_than": Param(None, type=["null", "string"], title="Older than",
                        description="Only branches made before this: '7 d ago', an ISO date-time or epoch ms. Empty: "
                                    "all."),
    "delete": flag_param(False, title="Delete",
                    description="Delete the branches listed. Unticked (the default): only list them."),
}

with hygiene_dag(
    "paimon_audit_branches",
    description="List (or delete) the audit branches that write-audit-publish kept for failed checks",
    schedule=None,
    params=AUDIT_BRANCHES,
    leaves=("unticked *Delete* (the default): nothing, the task's log and XCom list the table's `audit_*` branches "
            "(made when, their latest snapshot). Ticked: those branches deleted (the data files only they used are "
            "left for `paimon_remove_orphan_files`, as Paimon's delete_branch does). Main is never changed."),
    notes="A failed audit keeps its branch for inspection (docs/wap.md): read it as `db.t$branch_audit_<run id>`. "
          + NOTES,
) as audit_branches_dag:
    manage_audit_branches(table="{{ params.table }}", older_than="{{ params.older_than }}",
                          delete="{{ params.delete }}")

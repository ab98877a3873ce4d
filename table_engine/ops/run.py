"""One function per command that runs it against the engine in this process: ``run_<command>(cmd, catalog)``, the
result as a JSON-able dict (the keys of the CLI's result line). :func:`run_command` dispatches by command class.
The Spark application runs the commands that are Spark jobs with :mod:`table_engine.spark.jobs.run` instead.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

import pyarrow as pa

if TYPE_CHECKING:
    import pyarrow.dataset as ds

from table_engine.catalog import Catalog, create_catalog
from table_engine.core_options import CommitUser, default_commit_user
from table_engine.errors import (
    BranchAlreadyExistError,
    BranchError,
    CommandError,
    CommitOutcomeUnknownError,
    OptionError,
    SnapshotNotExistError,
    TableNotExistError,
    TagAlreadyExistError,
)
from table_engine.format.snapshot import BATCH_COMMIT_IDENTIFIER
from table_engine.format.tag_file import Tag
from table_engine.format_table import FormatTable
from table_engine.ops import commands
from table_engine.ops.base import Command, entry, registers
from table_engine.ops.change_commands import MergeInto
from table_engine.ops.commands import snapshot_properties_of
from table_engine.ops.consume import consume_changelog
from table_engine.ops.facts import commit_facts, commits_facts, write_facts
from table_engine.store.branches import BranchManager
from table_engine.store.committing import snapshot_info
from table_engine.store.committing.commit import FileStoreCommit, Overwrite
from table_engine.store.committing.scoped_properties import snapshot_properties_scope
from table_engine.store.lifecycle.tags import TagManager
from table_engine.table import Table

log = logging.getLogger("table_engine.cli")

__all__ = ["compact_result", "ensure_table", "format_target", "merge_write_schema", "open_catalog", "previous_commit",
           "run_command", "source_dataset", "write_format_table", "write_result"]

C = TypeVar("C", bound=Command)


def runs(cls: type[C]) -> Callable[[Callable[[C, Catalog], dict[str, Any]]], Callable[[C, Catalog], dict[str, Any]]]:
    """Register the decorated function as the one that runs commands of ``cls`` here (its entry's ``local``,
    :class:`~table_engine.ops.base.CommandEntry`)."""
    def register(fn: Callable[[C, Catalog], dict[str, Any]]) -> Callable[[C, Catalog], dict[str, Any]]:
        registers("local", cls)(fn)
        return fn
    return register


def run_command(cmd: Command, catalog: Catalog | None = None) -> dict[str, Any]:
    """Run ``cmd`` against the engine in this process (its catalog opened from the command, and closed after it,
    unless given)."""
    local = entry(type(cmd), "local").local
    if local is None:
        raise CommandError(f"{cmd.name} has no runner in this process")
    with snapshot_properties_scope(snapshot_properties_of(cmd)):
        if catalog is not None:
            return local(cmd, catalog)
        with contextlib.closing(open_catalog(cmd)) as opened:  # a metastore's connections: not left open
            return local(cmd, opened)


# ---- shared job logic ---------------------------------------------------------------------------------------------
def open_catalog(cmd: Command) -> Catalog:
    """The catalog of ``--warehouse`` with ``--catalog-option`` options: the one their ``metastore`` names
    (:func:`table_engine.catalog.create_catalog`: the filesystem catalog by default, JDBC or Hive)."""
    return create_catalog(cmd.warehouse, dict(cmd.catalog_options))


def ensure_table(cmd: commands.Write, catalog: Catalog, schema: pa.Schema) -> tuple[Table, bool]:
    """The target table of ``write``, created from ``schema`` with ``--create-if-missing``."""
    if catalog.table_exists(cmd.table):
        return catalog.get_table(cmd.table), False
    if not cmd.create_if_missing:
        raise TableNotExistError(f"table {cmd.table!r} does not exist in {cmd.warehouse} "
                                 "(add --create-if-missing to create it from the source's schema)")
    table = catalog.create_table(cmd.table, schema, primary_keys=list(cmd.primary_keys),
                                 partition_keys=list(cmd.partition_keys), options=dict(cmd.options),
                                 ignore_if_exists=True)
    log.info("created table %s (primary key %s, partitioned by %s)", cmd.table, list(cmd.primary_keys),
             list(cmd.partition_keys))
    return table, True


def format_target(cmd: commands.Write, catalog: Catalog) -> FormatTable | None:
    """``write``'s target when it is a format table of the catalog (a Hive catalog's, docs/format-tables.md), else
    None (a data table, or no table yet)."""
    if catalog.table_exists(cmd.table):
        return None
    try:
        return catalog.get_format_table(cmd.table)
    except TableNotExistError:
        return None


def write_format_table(cmd: commands.Write, target: FormatTable, data: pa.Table) -> dict[str, Any]:
    """``write`` into a format table: append new files, or (``--mode overwrite``) replace the partitions the rows
    write (``dynamic-partition-overwrite``, the table's option); Paimon's two-phase commit of the files, no
    snapshot. The input is checked whole first: a refusal leaves the directory as it was."""
    result = target.overwrite(data) if cmd.mode == "overwrite" else target.write(data)
    log.info("%s (format table at %s): wrote %d rows in %d files (%d replaced)", cmd.table, target.location,
             data.num_rows, len(result.added), len(result.deleted))
    return {"snapshot_id": None, "rows": data.num_rows, "files": len(result.added),
            "deleted_files": len(result.deleted), "created": False, "already_committed": False,
            "format_table": True, "commit": {}}


def commit_user(cmd: commands.Write, table: Table) -> CommitUser:
    """``--commit-user``, else the table's default (:func:`~table_engine.core_options.default_commit_user`)."""
    return default_commit_user(table.options, cmd.commit_user)


def previous_commit(table: Table, user: CommitUser) -> int | None:
    """The snapshot of an earlier run of this job (same ``--commit-user``), if it committed."""
    snap = snapshot_info.find_commit(table.file_io, table.path, user.name, BATCH_COMMIT_IDENTIFIER,
                                     since_millis=user.since_millis)
    return None if snap is None else snap.id


def write_result(table: Table, snapshot_id: int | None, created: bool, skipped: bool = False) -> dict[str, Any]:
    """``write``'s result: the snapshot, the rows and files it added, and the commit's facts (:func:`commit_facts`)."""
    commit = write_facts(table, snapshot_id)  # its data commit's, not the compaction that may follow it
    rows, files = commit.get("added_rows", 0), commit.get("added_files", 0)
    return {"snapshot_id": snapshot_id, "rows": rows, "files": files, "created": created,
            "already_committed": skipped, "commit": commit}


def compact_result(table: Table, snapshot_id: int | None) -> dict[str, Any]:
    """The result of ``compact``: the COMPACT snapshot id, files before and after, rows written, and the commit's
    facts (:func:`commit_facts`: a compaction changes data only if it produced changelog records)."""
    if snapshot_id is None:
        return {"snapshot_id": None, "files_before": 0, "files_after": 0, "commit": {}}
    changes = snapshot_info.snapshot_changes(table.file_io, table.path, table.snapshot(snapshot_id))
    return {"snapshot_id": snapshot_id, "files_before": len(changes.deleted_files),
            "files_after": len(changes.added_files), "rows": changes.added_rows,
            "commit": commit_facts(table, snapshot_id, changes)}


# ---- the commands -------------------------------------------------------------------------------------------------
def merge_write_schema(cmd: commands.Write, table: Table, schema: Callable[[], pa.Schema]) -> None:
    """``write.merge-schema`` for ``write`` into an existing table (the table's option, or ``--option``): the table
    altered to take the columns of the source (whose ``schema`` is read only then) before anything is written
    (:func:`table_engine.table.writing.merge_schema`, the one place that decides, for this process's write and
    Spark's file route alike)."""
    from table_engine.core_options import CoreOptions
    from table_engine.table.writing import merge_schema

    if CoreOptions({**table.schema.options, **dict(cmd.options)}).write_merge_schema():
        merge_schema(table, schema(), cmd.options)


@runs(commands.Write)
def run_write(cmd: commands.Write, catalog: Catalog) -> dict[str, Any]:
    if cmd.sql:
        raise CommandError("--sql needs Spark: run spark-submit table_engine/spark/app.py write ...")
    data = source_dataset(cmd)
    target = format_target(cmd, catalog)
    if target is not None:
        return write_format_table(cmd, target, data.to_table())
    table, created = ensure_table(cmd, catalog, data.schema)
    user = commit_user(cmd, table)
    done = previous_commit(table, user) if cmd.commit_user else None
    if done is not None:
        log.info("%s: commit user %s committed snapshot %d already; nothing to do", table.identifier, user.name,
                 done)
        return write_result(table, done, created, skipped=True)
    if not created:
        merge_write_schema(cmd, table, lambda: data.schema)
    writer = table.new_write()
    committer: FileStoreCommit | None = None
    rows = 0
    try:
        for batch in data.to_batches():
            writer.write(batch)
            rows += batch.num_rows
        messages = writer.prepare_commit()
        overwrite = Overwrite(dynamic=table.options.dynamic_partition_overwrite()) if cmd.mode == "overwrite" \
            else None
        committer = table.new_commit(user)
        sid = committer.commit(messages, BATCH_COMMIT_IDENTIFIER, overwrite=overwrite)
    except CommitOutcomeUnknownError:
        raise  # the snapshot may be published: its data files must stay
    except BaseException:
        writer.abort(keep=committer.published_files if committer is not None else ())
        raise
    log.info("%s: wrote %d rows (snapshot %s)", table.identifier, rows, sid)
    return write_result(table, sid, created)


def source_dataset(cmd: commands.Write | MergeInto) -> ds.Dataset:
    """``--source`` in ``--format`` (with the ``--source-option`` values) as a pyarrow dataset; a missing or unreadable
    source is one CommandError naming it."""
    import pyarrow.dataset as ds

    fmt: Any = cmd.format
    if cmd.source_options:
        fmt = _file_format(cmd.format, cmd.source_options)
    try:
        return ds.dataset(cmd.source, format=fmt, filesystem=source_filesystem(cmd))
    except FileNotFoundError:
        raise CommandError(f"--source {cmd.source} does not exist") from None
    except pa.ArrowInvalid as e:
        raise CommandError(f"--source {cmd.source} cannot be read as {cmd.format}: {e}") from e


def source_filesystem(cmd: commands.Write | MergeInto) -> Any:
    """None for a local ``--source`` (pyarrow reads it directly); for a URI, the FileIO that
    :func:`~table_engine.io.file_io.file_io_for` builds from the catalog options, as a read-only pyarrow file
    system (so an ``s3://`` source takes the same ``s3.*`` options as the warehouse)."""
    from table_engine.io.arrow_fs import arrow_filesystem
    from table_engine.io.file_io import LocalFileIO, file_io_for

    fio = file_io_for(cmd.source or "", cmd.catalog_options)
    return None if isinstance(fio, LocalFileIO) else arrow_filesystem(fio)


def _file_format(fmt: str, options: Mapping[str, str]) -> Any:
    import pyarrow.dataset as ds

    if fmt == "csv":
        import pyarrow.csv as pcsv

        delimiter = options.get("delimiter", options.get("sep", ","))
        header = options.get("header", "true").lower() == "true"
        return ds.CsvFileFormat(parse_options=pcsv.ParseOptions(delimiter=delimiter),
                                read_options=pcsv.ReadOptions(autogenerate_column_names=not header))
    return fmt


@runs(commands.Compact)
def run_compact(cmd: commands.Compact, catalog: Catalog) -> dict[str, Any]:
    table = catalog.get_table(cmd.table)
    sid = table.maintenance.compact(full=cmd.full, partitions=list(cmd.partitions) or None,
                        idle_partitions_older_than_ms=cmd.idle_time_millis, commit_user=cmd.commit_user,
                        buckets=cmd.buckets, order_strategy=cmd.order_strategy, order_by=cmd.order_by)
    return compact_result(table, sid)


@runs(commands.CompactDatabase)
def run_compact_database(cmd: commands.CompactDatabase, catalog: Catalog) -> dict[str, Any]:
    from table_engine.ops.compact_database import compact_database

    done = compact_database(catalog, cmd.table, including_tables=cmd.including_tables,
                            excluding_tables=cmd.excluding_tables, full=cmd.full,
                            idle_partitions_older_than_ms=cmd.idle_time_millis, commit_user=cmd.commit_user)
    return {"database": cmd.table, "snapshots": done.snapshots, "compacted": done.compacted}


@runs(commands.ExpireSnapshots)
def run_expire_snapshots(cmd: commands.ExpireSnapshots, catalog: Catalog) -> dict[str, Any]:
    table = catalog.get_table(cmd.table)
    overrides = {k: v for k, v in (("retain_min", cmd.retain_min), ("retain_max", cmd.retain_max),
                                   ("older_than_millis", cmd.older_than_millis), ("max_deletes", cmd.max_deletes))
                 if v is not None}
    result = table.expire_snapshots(**overrides)
    return {"expired_snapshots": result.expired_snapshot_ids, "deleted_files": result.deleted_files,
            "earliest_snapshot_id": table.earliest_snapshot_id()}


@runs(commands.ExpireChangelogs)
def run_expire_changelogs(cmd: commands.ExpireChangelogs, catalog: Catalog) -> dict[str, Any]:
    from table_engine.format.changelog_file import list_changelog_ids

    table = catalog.get_table(cmd.table)
    try:
        result = table.maintenance.expire_changelogs(cmd.retain_min, cmd.retain_max, cmd.older_than_millis,
                                                     cmd.max_deletes, cmd.delete_all)
    except OptionError as e:  # e.g. --retain-min above the table's changelog.num-retained.max
        raise CommandError(f"{cmd.name}: --retain-min/--retain-max with the table's options: {e}") from None
    left = list_changelog_ids(table.file_io, table.path)
    log.info("%s: expired changelogs %s", table.identifier, result.expired_changelog_ids or "none")
    return {"expired_changelogs": result.expired_changelog_ids, "deleted_files": result.deleted_files,
            "earliest_changelog_id": left[0] if left else None, "changelogs_left": len(left)}


@runs(commands.ClearConsumers)
def run_clear_consumers(cmd: commands.ClearConsumers, catalog: Catalog) -> dict[str, Any]:
    including = cmd.including_consumers if cmd.including_consumers and cmd.including_consumers.strip() else ".*"
    excluding = cmd.excluding_consumers if cmd.excluding_consumers and cmd.excluding_consumers.strip() else None
    table = catalog.get_table(cmd.table)
    if cmd.dry_run:
        matching = table.maintenance.clear_consumers(including, excluding, dry_run=True)
        log.info("%s: dry run: would delete consumers %s", table.identifier, matching or "none")
        return {"dry_run": True, "would_clear_consumers": matching, "consumers_left": sorted(table.consumers())}
    cleared = table.maintenance.clear_consumers(including, excluding)
    return {"cleared_consumers": cleared, "consumers_left": sorted(table.consumers())}


@runs(commands.ResetConsumer)
def run_reset_consumer(cmd: commands.ResetConsumer, catalog: Catalog) -> dict[str, Any]:
    table = catalog.get_table(cmd.table)
    before = table.consumers().get(cmd.consumer_id)
    sid = cmd.next_snapshot_id
    if sid is not None:
        earliest, latest = table.earliest_snapshot_id(), table.latest_snapshot_id()
        if not (earliest is not None and latest is not None and earliest <= sid <= latest + 1):
            known = "the table has no snapshot" if latest is None else f"snapshots {earliest}..{latest} exist"
            raise SnapshotNotExistError(f"{cmd.name}: --next-snapshot-id {sid} is not a snapshot of "
                                        f"{table.identifier} ({known}; the latest + 1 waits for the next commit)")
    # a retry writes the same file again (or deletes none): converges
    table.maintenance.reset_consumer(cmd.consumer_id, sid)
    log.info("%s: consumer %s %s", table.identifier, cmd.consumer_id,
             "deleted" if sid is None else f"reset from {before} to snapshot {sid}")
    return {"consumer_id": cmd.consumer_id, "next_snapshot_id": sid, "previous_next_snapshot_id": before,
            "changed": before != sid}


@runs(commands.CompactManifest)
def run_compact_manifest(cmd: commands.CompactManifest, catalog: Catalog) -> dict[str, Any]:
    table = catalog.get_table(cmd.table)
    from table_engine.store.lifecycle.planner import ManifestState, manifest_action, manifest_due_text

    r = table.maintenance.compact_manifest(cmd.dry_run, cmd.commit_user)
    state = ManifestState(r.manifests_before, r.small_manifests, r.delete_entries)
    due = manifest_action(state, table.options) is not None  # the planner's rule: the plan says the same
    if cmd.dry_run or r.snapshot_id is None:
        change = ("a run would rewrite them" if r.needed else "a run would change nothing (compact already)")
        log.info("%s: %d manifests (%d small, %d DELETE entries): %s; %s", table.identifier, r.manifests_before,
                 r.small_manifests, r.delete_entries, manifest_due_text(state, table.options), change)
    return {"snapshot_id": r.snapshot_id, "based_on_snapshot": r.based_on, "manifests_before": r.manifests_before,
            "manifests_after": r.manifests_after, "delete_entries": r.delete_entries, "due": due,
            "due_reason": manifest_due_text(state, table.options), "needed": r.needed, "dry_run": cmd.dry_run,
            "commit": commit_facts(table, r.snapshot_id)}


@runs(commands.RefreshObjectTable)
def run_refresh_object_table(cmd: commands.RefreshObjectTable, catalog: Catalog) -> dict[str, Any]:
    from table_engine.object_table import ObjectTableOptions, refresh_object_table

    table = catalog.get_table(cmd.table)
    opts = ObjectTableOptions(table.schema.options)
    if not opts.is_object_table():
        raise OptionError(f"table {table.identifier} is not an object table ('type' = '{opts.type().value}'): "
                          f"{cmd.name} refreshes tables of 'type' = 'object-table'")
    location = opts.object_location()
    r = refresh_object_table(table, file_io=catalog.object_file_io(location) if location else None)
    return {"file_number": r.file_number, "total_bytes": r.total_bytes, "snapshot_id": r.snapshot_id,
            "location": r.location, "commit": commit_facts(table, r.snapshot_id)}


@runs(commands.RemoveUnexistingFiles)
def run_remove_unexisting_files(cmd: commands.RemoveUnexistingFiles, catalog: Catalog) -> dict[str, Any]:
    table = catalog.get_table(cmd.table)
    r = table.maintenance.remove_unexisting_files(dry_run=not cmd.remove, commit_user=cmd.commit_user)
    if r.paths and not cmd.remove:
        log.warning("%s: %d data files of snapshot %s are missing on storage (%d rows; dry run, add --remove): %s",
                    table.identifier, len(r.paths), r.based_on, r.rows, r.paths[:20])
    return {"snapshot_id": r.snapshot_id, "based_on_snapshot": r.based_on, "missing_files": len(r.paths),
            "rows": r.rows, "files": r.paths[:100], "dry_run": not cmd.remove,
            "commit": commit_facts(table, r.snapshot_id)}


@runs(commands.Repair)
def run_repair(cmd: commands.Repair, catalog: Catalog) -> dict[str, Any]:
    r = catalog.get_table(cmd.table).maintenance.repair()
    return {"repaired": [{"hint": "/".join(h.path.rsplit("/", 2)[-2:]), "was": h.old, "now": h.new}
                         for h in r.repaired],
            "earliest_snapshot_id": r.earliest_snapshot_id, "latest_snapshot_id": r.latest_snapshot_id,
            "earliest_changelog_id": r.earliest_changelog_id, "latest_changelog_id": r.latest_changelog_id}


@runs(commands.CreateTag)
def run_create_tag(cmd: commands.CreateTag, catalog: Catalog) -> dict[str, Any]:
    table = catalog.get_table(cmd.table)
    if cmd.snapshot is None and table.latest_snapshot_id() is None:
        # a table nothing was written to yet: no latest snapshot to tag (as Paimon's automatic tag creation, a
        # scheduled tag job has nothing to do); an explicit --snapshot that does not exist still fails
        log.info("%s has no snapshot yet: tag %s not created", table.identifier, cmd.tag)
        return {"tag": None, "snapshot_id": None, "requested_tag": cmd.tag, "reason": "no snapshot yet"}
    existing = TagManager.of(table.store).get(cmd.tag)
    if existing is None:
        try:
            snap = table.create_tag(cmd.tag, cmd.snapshot, cmd.time_retained_millis, creator=cmd.creator)
            return {"tag": cmd.tag, "snapshot_id": snap.id, "already_existed": False}
        except TagAlreadyExistError:  # created concurrently: judged below like any existing tag
            existing = TagManager.of(table.store).get_or_raise(cmd.tag)
    return _existing_tag(cmd, table, existing)


def _existing_tag(cmd: commands.CreateTag, table: Table, existing: Tag) -> dict[str, Any]:
    """``create-tag`` when the tag exists: success if it is the requested one or ``--creator``'s; else
    ``--if-exists`` (see :class:`~table_engine.ops.commands.CreateTag`)."""
    requested = cmd.snapshot if cmd.snapshot is not None else table.latest_snapshot_id()
    found = {"tag": cmd.tag, "snapshot_id": existing.snapshot_id, "already_existed": True}
    if cmd.creator is not None and existing.creator == cmd.creator:
        log.info("%s: tag %s (snapshot %d) was created by %s already: nothing to do", table.identifier, cmd.tag,
                 existing.snapshot_id, cmd.creator)
        return found
    if existing.snapshot_id == requested:
        log.info("%s: tag %s tags snapshot %d already: nothing to do", table.identifier, cmd.tag, requested)
        return found
    by = f"created by {existing.creator}" if existing.creator else "creator unknown"
    if cmd.if_exists == "skip":
        log.info("%s: tag %s exists at snapshot %d (%s), not %s: left as it is (if_exists=skip)", table.identifier,
                 cmd.tag, existing.snapshot_id, by, requested)
        return {**found, "skipped": True}
    if cmd.if_exists == "replace":
        snap = table.replace_tag(cmd.tag, cmd.snapshot, cmd.time_retained_millis, creator=cmd.creator)
        log.info("%s: tag %s moved from snapshot %d to %d (if_exists=replace)", table.identifier, cmd.tag,
                 existing.snapshot_id, snap.id)
        return {"tag": cmd.tag, "snapshot_id": snap.id, "already_existed": True, "replaced": existing.snapshot_id}
    raise TagAlreadyExistError(f"tag {cmd.tag!r} of table {table.identifier} exists already at snapshot "
                               f"{existing.snapshot_id} ({by}), not at snapshot {requested}: choose if_exists "
                               "'replace' or 'skip', or another tag name")


@runs(commands.ExpireTags)
def run_expire_tags(cmd: commands.ExpireTags, catalog: Catalog) -> dict[str, Any]:
    return {"expired_tags": catalog.get_table(cmd.table).maintenance.expire_tags(cmd.older_than_millis)}


@runs(commands.ExpirePartitions)
def run_expire_partitions(cmd: commands.ExpirePartitions, catalog: Catalog) -> dict[str, Any]:
    table = catalog.get_table(cmd.table)
    overrides = {k: v for k, v in (("expiration_time", cmd.expiration_time_millis), ("strategy", cmd.strategy),
                                   ("timestamp_formatter", cmd.timestamp_formatter),
                                   ("timestamp_pattern", cmd.timestamp_pattern),
                                   ("max_expires", cmd.max_expires)) if v is not None}
    result = table.maintenance.expire_partitions(dry_run=cmd.dry_run, **overrides)
    return {"expired_partitions": result.partitions, "snapshot_ids": result.snapshot_ids,
            "snapshot_id": result.snapshot_ids[-1] if result.snapshot_ids else None, "dry_run": cmd.dry_run,
            "commit": commits_facts(table, result.snapshot_ids)}


@runs(commands.RemoveOrphanFiles)
def run_remove_orphan_files(cmd: commands.RemoveOrphanFiles, catalog: Catalog) -> dict[str, Any]:
    result = catalog.get_table(cmd.table).maintenance.remove_orphan_files(cmd.older_than_millis, cmd.dry_run)
    return {"orphan_files": result.count, "bytes": result.total_bytes, "dry_run": result.dry_run,
            "files": result.paths[:100]}


@runs(commands.Health)
def run_health(cmd: commands.Health, catalog: Catalog) -> dict[str, Any]:
    health = catalog.get_table(cmd.table).maintenance.health(list(cmd.partitions) or None, orphans=cmd.orphans,
                                                 max_orphan_files=cmd.max_orphan_files,
                                                 orphans_older_than_millis=cmd.orphans_older_than_millis)
    return {"snapshot_id": health.snapshot_id, "health": health.to_dict()}


@runs(commands.History)
def run_history(cmd: commands.History, catalog: Catalog) -> dict[str, Any]:
    from table_engine.ops.history import history

    page = history(catalog.get_table(cmd.table), kinds=cmd.kinds, since_millis=cmd.since_millis,
                   until_millis=cmd.until_millis, before_snapshot=cmd.before_snapshot, limit=cmd.limit)
    return page.to_dict()


@runs(commands.Rollback)
def run_rollback(cmd: commands.Rollback, catalog: Catalog) -> dict[str, Any]:
    table = catalog.get_table(cmd.table)
    target: int | str = cmd.snapshot if cmd.snapshot is not None else str(cmd.tag)
    result = table.rollback_to(target)
    commit = {"commit_kind": "ROLLBACK", "removed_snapshots": len(result.removed_snapshot_ids)}
    return {"snapshot_id": result.snapshot_id, "commit": commit, "removed_snapshots": result.removed_snapshot_ids,
            "removed_tags": result.removed_tags, "deleted_files": result.deleted_files}


@runs(commands.ConsumeChangelog)
def run_consume_changelog(cmd: commands.ConsumeChangelog, catalog: Catalog) -> dict[str, Any]:
    return consume_changelog(cmd, catalog)


@runs(commands.DeleteTag)
def run_delete_tag(cmd: commands.DeleteTag, catalog: Catalog) -> dict[str, Any]:
    result = catalog.get_table(cmd.table).delete_tag(cmd.tag, cmd.ignore_if_not_exists)
    return {"deleted_tags": result.deleted_tags, "deleted_files": result.deleted_files}


@runs(commands.DropPartitions)
def run_drop_partitions(cmd: commands.DropPartitions, catalog: Catalog) -> dict[str, Any]:
    table = catalog.get_table(cmd.table)
    sid = table.maintenance.drop_partitions(list(cmd.partitions), cmd.ignore_if_missing)
    return {"snapshot_id": sid, "dropped": sid is not None, "commit": commit_facts(table, sid)}


@runs(commands.MarkPartitionDone)
def run_mark_partition_done(cmd: commands.MarkPartitionDone, catalog: Catalog) -> dict[str, Any]:
    result = catalog.get_table(cmd.table).maintenance.mark_partitions_done(list(cmd.partitions))
    return {"partitions": result.partitions, "actions": result.actions}


@runs(commands.RewriteFileIndex)
def run_rewrite_file_index(cmd: commands.RewriteFileIndex, catalog: Catalog) -> dict[str, Any]:
    sid = catalog.get_table(cmd.table).maintenance.rewrite_file_index(list(cmd.partitions) or None, cmd.commit_user)
    return {"snapshot_id": sid}


@runs(commands.Rescale)
def run_rescale(cmd: commands.Rescale, catalog: Catalog) -> dict[str, Any]:
    table = catalog.get_table(cmd.table)
    sid = table.maintenance.rescale(cmd.bucket_num, list(cmd.partitions) or None, cmd.commit_user)
    return {"snapshot_id": sid, "bucket_num": cmd.bucket_num}


@runs(commands.CheckTable)
def run_check(cmd: commands.CheckTable, catalog: Catalog) -> dict[str, Any]:
    from table_engine.ops.checks.definitions import parse_checks
    from table_engine.ops.checks.runner import run_checks

    table = catalog.get_table(cmd.table)
    run = run_checks(table, parse_checks(cmd.checks), cmd.snapshot, cmd.since_snapshot)
    if run.since_snapshot is not None:
        log.info("%s: checking the rows added after snapshot %s up to snapshot %s", table.identifier,
                 run.since_snapshot, run.snapshot_id)
    for r in run.results:
        log.log(logging.INFO if r.passed else logging.WARNING, "%s: check %s %s: %s (expected %s)", table.identifier,
                r.name, "passed" if r.passed else "FAILED", r.message, r.expected)
    return {"snapshot_id": run.snapshot_id, "since_snapshot": run.since_snapshot, "passed": run.passed,
            "failed": [r.name for r in run.failed], "checks": [r.to_dict() for r in run.results]}
# ---- branches ---------------------------------------------------------------------------------------------------
@runs(commands.CreateBranch)
def run_create_branch(cmd: commands.CreateBranch, catalog: Catalog) -> dict[str, Any]:
    table = catalog.get_table(cmd.table)
    manager = BranchManager.of(table.store)
    found = {"branch": cmd.branch, "tag": cmd.tag, "already_existed": True}
    if manager.exists(cmd.branch):
        if manager.made_from(cmd.branch, cmd.tag):
            log.info("%s: branch %s was made from %s already: nothing to do", table.identifier, cmd.branch,
                     f"tag {cmd.tag}" if cmd.tag else "no tag")
            return found
        if cmd.if_exists == "skip":
            log.info("%s: branch %s exists (made otherwise): left as it is (if_exists=skip)", table.identifier,
                     cmd.branch)
            return {**found, "skipped": True}
        raise BranchAlreadyExistError(f"branch {cmd.branch!r} of table {table.identifier} exists already and was "
                                      f"not made from {f'tag {cmd.tag!r}' if cmd.tag else 'nothing (empty)'}: "
                                      "choose if_exists 'skip', or another branch name")
    table.create_branch(cmd.branch, cmd.tag)
    return {"branch": cmd.branch, "tag": cmd.tag, "already_existed": False,
            "snapshot_id": table.branch_table(cmd.branch).latest_snapshot_id()}


@runs(commands.DeleteBranch)
def run_delete_branch(cmd: commands.DeleteBranch, catalog: Catalog) -> dict[str, Any]:
    deleted = catalog.get_table(cmd.table).delete_branch(cmd.branch, ignore_if_missing=cmd.ignore_if_missing)
    return {"branch": cmd.branch, "deleted": deleted}


@runs(commands.RenameBranch)
def run_rename_branch(cmd: commands.RenameBranch, catalog: Catalog) -> dict[str, Any]:
    table = catalog.get_table(cmd.table)
    branches = table.list_branches()
    if cmd.branch not in branches and cmd.to in branches:
        log.info("%s: branch %s is named %s already: nothing to do", table.identifier, cmd.branch, cmd.to)
        return {"branch": cmd.to, "renamed_from": cmd.branch, "already_done": True}
    table.rename_branch(cmd.branch, cmd.to)
    return {"branch": cmd.to, "renamed_from": cmd.branch, "already_done": False}


@runs(commands.FastForward)
def run_fast_forward(cmd: commands.FastForward, catalog: Catalog) -> dict[str, Any]:
    table = catalog.get_table(cmd.table)
    manager = BranchManager.of(table.store)
    if manager.is_fast_forwarded(cmd.branch):
        sid = table.latest_snapshot_id()
        log.info("%s is at branch %s's latest snapshot %s already: nothing to do", table.identifier, cmd.branch, sid)
        return {"branch": cmd.branch, "snapshot_id": sid, "already_done": True, "discarded_snapshots": [],
                "commit": commit_facts(table, sid)}
    discarded = manager.discarded_by_fast_forward(cmd.branch)
    if cmd.check_unchanged and discarded:
        raise BranchError(f"{table.identifier} has snapshots {discarded} that are not branch {cmd.branch}'s (it "
                          "moved on since the branch was made): a fast-forward would discard them; not done")
    sid = table.fast_forward(cmd.branch)
    return {"branch": cmd.branch, "snapshot_id": sid, "already_done": False, "discarded_snapshots": discarded,
            "commit": commit_facts(table, sid)}


@runs(commands.Maintain)
def run_maintain(cmd: commands.Maintain, catalog: Catalog) -> dict[str, Any]:
    from table_engine.ops.maintain import maintain

    return maintain(cmd, catalog)

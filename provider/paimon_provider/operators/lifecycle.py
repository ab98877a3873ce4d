"""Table upkeep with the Spark application: snapshot/tag/partition expiry, tags, orphan files, rollback, marking
partitions done."""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from airflow.sdk.exceptions import AirflowSkipException

from paimon_provider.operators.base import CommittingOperator, PaimonSparkOperator, is_retry, task_commit_user
from paimon_provider.utils.arguments import (
    as_bool,
    as_duration_millis,
    as_optional_int,
    as_optional_text,
    as_time_millis,
    partition_texts,
)

if TYPE_CHECKING:
    from airflow.sdk import Context

    from table_engine.ops import (
        CreateTag,
        DeleteTag,
        DropPartitions,
        ExpirePartitions,
        ExpireSnapshots,
        ExpireTags,
        MarkPartitionDone,
        RemoveOrphanFiles,
        RewriteFileIndex,
        Rollback,
    )


class PaimonExpireSnapshotsOperator(PaimonSparkOperator["ExpireSnapshots"]):
    """Expire snapshots (then changelogs) by the table's retention options or these overrides.

    :param retain_min: keep at least this many snapshots (templated).
    :param retain_max: keep at most this many snapshots (templated).
    :param older_than: expire snapshots committed before this time (datetime, ISO text or epoch ms) (templated).
    :param max_deletes: expire at most this many snapshots in one run (templated).
    """

    template_fields: Sequence[str] = (*PaimonSparkOperator.template_fields, "retain_min", "retain_max",
                                      "older_than", "max_deletes")

    def __init__(self, *, retain_min: int | str | None = None, retain_max: int | str | None = None,
                 older_than: datetime.datetime | str | int | None = None, max_deletes: int | str | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.retain_min = retain_min
        self.retain_max = retain_max
        self.older_than = older_than
        self.max_deletes = max_deletes

    def build_command(self, warehouse: str) -> ExpireSnapshots:
        from table_engine.ops import ExpireSnapshots

        return ExpireSnapshots(warehouse=warehouse, table=self.table,
                               retain_min=as_optional_int(self.retain_min, "retain_min"),
                               retain_max=as_optional_int(self.retain_max, "retain_max"),
                               older_than_millis=as_time_millis(self.older_than, "older_than"),
                               max_deletes=as_optional_int(self.max_deletes, "max_deletes"))


class PaimonCreateTagOperator(PaimonSparkOperator["CreateTag"]):
    """Tag a snapshot (the latest by default), e.g. a daily tag consumers can read with ``scan.tag-name``.

    A table that has no snapshot yet (created, nothing written) has nothing to tag: the task ends as *skipped*
    ("no snapshot yet"), and so do tasks that need the tag. A table that does not exist, or a ``snapshot_id``
    that does not exist, fails the task.

    Retries converge (docs/retries.md): the tag records its creator, the task instance
    (:func:`~paimon_provider.operators.base.task_commit_user`), so a later try of the same task instance finds its
    own tag and succeeds, even when "latest" has moved on since; a tag that already tags the requested snapshot is
    success too. A tag of that name made by someone else at another snapshot fails the task unless ``if_exists``
    says otherwise.

    :param tag: the tag name (templated; use ``{{ dag_run.run_after | ds }}``-style values, not ``ds``, so that
        runs triggered from the UI, which have no logical date, work).
    :param snapshot_id: the snapshot to tag (templated).
    :param time_retained: how long to keep the tag (``"7 d"``) (templated).
    :param if_exists: ``"error"`` (default), ``"replace"`` (point the tag at the requested snapshot) or ``"skip"``
        (leave it) for a tag of that name made by someone else at another snapshot (templated).
    """

    template_fields: Sequence[str] = (*PaimonSparkOperator.template_fields, "tag", "snapshot_id", "time_retained",
                                      "if_exists")

    def __init__(self, *, tag: str, snapshot_id: int | str | None = None, time_retained: str | None = None,
                 if_exists: str = "error", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.tag = tag
        self.snapshot_id = snapshot_id
        self.time_retained = time_retained
        self.if_exists = if_exists
        self._creator: str | None = None

    def build_command(self, warehouse: str) -> CreateTag:
        from table_engine.ops import CreateTag

        tag = as_optional_text(self.tag)
        if not tag:
            raise ValueError("create-tag needs a tag name")
        return CreateTag(warehouse=warehouse, table=self.table, tag=tag,
                         snapshot=as_optional_int(self.snapshot_id, "snapshot_id"),
                         time_retained_millis=as_duration_millis(self.time_retained, "time_retained"),
                         creator=self._creator, if_exists=as_optional_text(self.if_exists) or "error")

    def execute(self, context: Context) -> dict[str, Any] | None:
        self._creator = task_commit_user(context)
        result = super().execute(context)
        if result is not None and result.get("tag") is None and result.get("reason") == "no snapshot yet":
            self.log.info("%s has no snapshot yet: nothing to tag (tag %s not created)", self.table,
                          result.get("requested_tag"))
            raise AirflowSkipException(f"{self.table} has no snapshot yet: nothing to tag")
        return result


class PaimonExpireTagsOperator(PaimonSparkOperator["ExpireTags"]):
    """Delete tags past their retention (or created before ``older_than``).

    :param older_than: also delete tags created before this time (templated).
    """

    template_fields: Sequence[str] = (*PaimonSparkOperator.template_fields, "older_than")

    def __init__(self, *, older_than: datetime.datetime | str | int | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.older_than = older_than

    def build_command(self, warehouse: str) -> ExpireTags:
        from table_engine.ops import ExpireTags

        return ExpireTags(warehouse=warehouse, table=self.table,
                          older_than_millis=as_time_millis(self.older_than, "older_than"))


class PaimonExpirePartitionsOperator(PaimonSparkOperator["ExpirePartitions"]):
    """Drop partitions whose time (from their values or their last update) is older than ``expiration_time``.

    :param expiration_time: e.g. ``"30 d"``; default: the table's ``partition.expiration-time`` (templated).
    :param timestamp_formatter: how partition values read as time (``"yyyy-MM-dd"``) (templated).
    :param timestamp_pattern: how partition columns compose the time (``"$dt"``) (templated).
    :param strategy: ``values-time`` or ``update-time`` (templated).
    :param max_expires: at most this many partitions per run (templated).
    :param dry_run_only: only report what would be dropped (templated).
    """

    template_fields: Sequence[str] = (*PaimonSparkOperator.template_fields, "expiration_time",
                                      "timestamp_formatter", "timestamp_pattern", "strategy", "max_expires",
                                      "dry_run_only")

    def __init__(self, *, expiration_time: str | None = None, timestamp_formatter: str | None = None,
                 timestamp_pattern: str | None = None, strategy: str | None = None,
                 max_expires: int | str | None = None, dry_run_only: bool | str = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.expiration_time = expiration_time
        self.timestamp_formatter = timestamp_formatter
        self.timestamp_pattern = timestamp_pattern
        self.strategy = strategy
        self.max_expires = max_expires
        self.dry_run_only = dry_run_only

    def build_command(self, warehouse: str) -> ExpirePartitions:
        from table_engine.ops import ExpirePartitions

        return ExpirePartitions(warehouse=warehouse, table=self.table,
                                expiration_time_millis=as_duration_millis(self.expiration_time, "expiration_time"),
                                timestamp_formatter=as_optional_text(self.timestamp_formatter),
                                timestamp_pattern=as_optional_text(self.timestamp_pattern),
                                strategy=as_optional_text(self.strategy),
                                max_expires=as_optional_int(self.max_expires, "max_expires"),
                                dry_run=as_bool(self.dry_run_only))


class PaimonRemoveOrphanFilesOperator(PaimonSparkOperator["RemoveOrphanFiles"]):
    """Delete files no snapshot, tag or changelog references (left by failed or killed jobs).

    :param older_than: only files older than this time (default in the application: one day ago) (templated).
    :param dry_run_only: only list them (templated).
    """

    template_fields: Sequence[str] = (*PaimonSparkOperator.template_fields, "older_than", "dry_run_only")

    def __init__(self, *, older_than: datetime.datetime | str | int | None = None, dry_run_only: bool | str = False,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.older_than = older_than
        self.dry_run_only = dry_run_only

    def build_command(self, warehouse: str) -> RemoveOrphanFiles:
        from table_engine.ops import RemoveOrphanFiles

        return RemoveOrphanFiles(warehouse=warehouse, table=self.table,
                                 older_than_millis=as_time_millis(self.older_than, "older_than"),
                                 dry_run=as_bool(self.dry_run_only))


class PaimonRollbackOperator(PaimonSparkOperator["Rollback"]):
    """Roll a table back to a snapshot or a tag (newer snapshots and tags are removed). Emits the table's Asset
    only when snapshots were removed (a rollback to the latest snapshot changes no data).

    :param version: the snapshot id or the tag to roll back to in one text, as Paimon's ``rollback`` procedure
        takes it: all digits is a snapshot id, anything else a tag; ``tag:<name>`` for a tag whose name is all
        digits (templated).
    :param snapshot_id: or the snapshot to roll back to (templated).
    :param tag: or the tag to roll back to (templated). Exactly one of the three.
    """

    writes_table = True
    template_fields: Sequence[str] = (*PaimonSparkOperator.template_fields, "version", "snapshot_id", "tag")

    def __init__(self, *, version: str | int | None = None, snapshot_id: int | str | None = None,
                 tag: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.version = version
        self.snapshot_id = snapshot_id
        self.tag = tag

    def build_command(self, warehouse: str) -> Rollback:
        from table_engine import rollback_version
        from table_engine.ops import Rollback

        given = {name: value for name, value in (("version", as_optional_text(self.version)),
                                                 ("snapshot_id", as_optional_int(self.snapshot_id, "snapshot_id")),
                                                 ("tag", as_optional_text(self.tag))) if value is not None}
        if len(given) != 1:
            got = ", ".join(f"{k} {v!r}" for k, v in given.items()) or "none of them"
            raise ValueError(f"rollback needs exactly one of version, snapshot_id and tag, got {got}: give the "
                             "snapshot id or the tag to roll back to")
        snapshot_id, tag = rollback_version(str(given["version"])) if "version" in given else (
            given.get("snapshot_id"), given.get("tag"))
        return Rollback(warehouse=warehouse, table=self.table, snapshot=snapshot_id,  # type: ignore[arg-type]
                        tag=tag)  # type: ignore[arg-type]


class PaimonDeleteTagOperator(PaimonSparkOperator["DeleteTag"]):
    """Delete tags (and the files only they kept alive).

    A tag that does not exist fails the first try (unless ``ignore_if_missing``); on a later try of the task
    instance (a retry, or a re-run after clearing) it is success, with a log line: an earlier try deleted it.

    :param tag: the tag name, comma-separated for several (templated).
    :param ignore_if_missing: a tag that does not exist is no error, on the first try too (templated).
    """

    template_fields: Sequence[str] = (*PaimonSparkOperator.template_fields, "tag", "ignore_if_missing")

    def __init__(self, *, tag: str, ignore_if_missing: bool | str = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.tag = tag
        self.ignore_if_missing = ignore_if_missing
        self._retry = False

    def build_command(self, warehouse: str) -> DeleteTag:
        from table_engine.ops import DeleteTag

        tag = as_optional_text(self.tag)
        if not tag:
            raise ValueError("delete-tag needs a tag name")
        return DeleteTag(warehouse=warehouse, table=self.table, tag=tag,
                         ignore_if_not_exists=as_bool(self.ignore_if_missing) or self._retry)

    def execute(self, context: Context) -> dict[str, Any] | None:
        self._retry = is_retry(context)
        result = super().execute(context)
        deleted = set((result or {}).get("deleted_tags") or [])
        gone = [t for t in (n.strip() for n in str(as_optional_text(self.tag)).split(",")) if t and t not in deleted]
        if result is not None and gone:
            self.log.info("tag(s) %s of %s did not exist (%s): nothing to delete", ", ".join(gone), self.table,
                          "deleted by an earlier try" if self._retry else "ignore_if_missing")
        return result


class PaimonDropPartitionsOperator(PaimonSparkOperator["DropPartitions"]):
    """Drop partitions in one OVERWRITE commit; emits the table's Asset with its snapshot id.

    On the first try a spec that matches no partition fails the task and drops nothing (unless
    ``ignore_if_missing``); on a later try of the task instance (a retry, or a re-run after clearing) it is success,
    with a log line: an earlier try dropped it.

    :param partitions: the partitions, as :class:`~paimon_provider.operators.compact.PaimonCompactOperator`'s
        ``partitions`` (templated).
    :param ignore_if_missing: a spec that matches no partition is no error, on the first try too (templated).
    """

    writes_table = True
    template_fields: Sequence[str] = (*PaimonSparkOperator.template_fields, "partitions", "ignore_if_missing")

    def __init__(self, *, partitions: Sequence[Mapping[str, Any]] | Mapping[str, Any] | str,
                 ignore_if_missing: bool | str = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.partitions = partitions
        self.ignore_if_missing = ignore_if_missing
        self._retry = False

    def build_command(self, warehouse: str) -> DropPartitions:
        from table_engine.ops import DropPartitions

        return DropPartitions(warehouse=warehouse, table=self.table, partitions=tuple(partition_texts(self.partitions)),
                              ignore_if_missing=as_bool(self.ignore_if_missing) or self._retry)

    def execute(self, context: Context) -> dict[str, Any] | None:
        self._retry = is_retry(context)
        result = super().execute(context)
        if result is not None and result.get("dropped") is False:
            self.log.info("partitions %s of %s did not exist (%s): nothing dropped", self.partitions, self.table,
                          "dropped by an earlier try" if self._retry else "ignore_if_missing")
        return result


class PaimonMarkPartitionDoneOperator(PaimonSparkOperator["MarkPartitionDone"]):
    """Mark partitions done (Paimon's ``mark_partition_done``) by the table's ``partition.mark-done-action``: the
    ``success-file`` action writes Paimon's ``_SUCCESS`` file into each partition directory, which
    :class:`~paimon_provider.sensors.partition.PaimonPartitionSensor` (``require="done"``) and Paimon's own readers
    wait for; the other actions fail the task before anything is written (docs/partitions.md). Commits no snapshot
    (no Asset event); a retry marks again, which converges.

    :param partitions: the partitions, every partition key given, as
        :class:`~paimon_provider.operators.compact.PaimonCompactOperator`'s ``partitions``, e.g. ``"dt={{ ds }}"``
        (templated).
    """

    template_fields: Sequence[str] = (*PaimonSparkOperator.template_fields, "partitions")

    def __init__(self, *, partitions: Sequence[Mapping[str, Any]] | Mapping[str, Any] | str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.partitions = partitions

    def build_command(self, warehouse: str) -> MarkPartitionDone:
        from table_engine.ops import MarkPartitionDone

        return MarkPartitionDone(warehouse=warehouse, table=self.table,
                                 partitions=tuple(partition_texts(self.partitions)))


class PaimonRewriteFileIndexOperator(CommittingOperator["RewriteFileIndex"]):
    """(Re)build the file indexes of existing data files per the table's ``file-index.*`` options (Paimon's
    ``sys.rewrite_file_index``) in one COMPACT commit.

    :param partitions: only files of these partitions (as the compact operator's ``partitions``) (templated).
    :param commit_user: the commit user (templated); default derived from the task instance (idempotent retries).
    """

    writes_table = True
    changes_data = False  # indexes only: no Asset event
    template_fields: Sequence[str] = (*CommittingOperator.template_fields, "partitions")

    def __init__(self, *, partitions: Sequence[Mapping[str, Any]] | Mapping[str, Any] | str | None = None,
                 commit_user: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.partitions = partitions
        self.commit_user = commit_user

    def build_command(self, warehouse: str) -> RewriteFileIndex:
        from table_engine.ops import RewriteFileIndex

        return RewriteFileIndex(warehouse=warehouse, table=self.table,
                                partitions=tuple(partition_texts(self.partitions)),
                                commit_user=as_optional_text(self.commit_user))

"""Metadata hygiene with the engine's CLI (Paimon's procedures): long-lived changelog expiry, consumers, manifest
compaction, data files missing on storage and hint repair.

Each is a metadata-only command (it runs with the engine, no Spark), and a retry of it is a no-op success.
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from paimon_provider.operators.base import CommittingOperator, PaimonSparkOperator
from paimon_provider.utils.arguments import as_bool, as_optional_int, as_optional_text, as_time_millis

if TYPE_CHECKING:
    from table_engine.ops import (
        ClearConsumers,
        CompactManifest,
        ExpireChangelogs,
        RemoveUnexistingFiles,
        Repair,
        ResetConsumer,
    )


class PaimonExpireChangelogsOperator(PaimonSparkOperator["ExpireChangelogs"]):
    """Paimon's ``expire_changelogs``: expire the changelogs kept past their snapshots (a decoupled changelog
    lifecycle, ``changelog.num-retained.*``/``changelog.time-retained``) by the table's options or these overrides.

    :param retain_min: keep at least this many changelogs (templated).
    :param retain_max: keep at most this many changelogs (templated).
    :param older_than: expire changelogs committed before this time (datetime, ISO text, epoch ms or
        ``'<duration> ago'``) (templated).
    :param max_deletes: expire at most this many changelogs in one run (templated).
    :param delete_all: expire every long-lived changelog (no other setting with it) (templated).
    """

    template_fields: Sequence[str] = (*PaimonSparkOperator.template_fields, "retain_min", "retain_max",
                                      "older_than", "max_deletes", "delete_all")

    def __init__(self, *, retain_min: int | str | None = None, retain_max: int | str | None = None,
                 older_than: datetime.datetime | str | int | None = None, max_deletes: int | str | None = None,
                 delete_all: bool | str = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.retain_min = retain_min
        self.retain_max = retain_max
        self.older_than = older_than
        self.max_deletes = max_deletes
        self.delete_all = delete_all

    def build_command(self, warehouse: str) -> ExpireChangelogs:
        from table_engine.ops import ExpireChangelogs

        return ExpireChangelogs(warehouse=warehouse, table=self.table,
                                retain_min=as_optional_int(self.retain_min, "retain_min"),
                                retain_max=as_optional_int(self.retain_max, "retain_max"),
                                older_than_millis=as_time_millis(self.older_than, "older_than"),
                                max_deletes=as_optional_int(self.max_deletes, "max_deletes"),
                                delete_all=as_bool(self.delete_all))


class PaimonClearConsumersOperator(PaimonSparkOperator["ClearConsumers"]):
    """Paimon's ``clear_consumers``: delete the consumers whose id fully matches ``including_consumers`` (default:
    all) and not ``excluding_consumers``; the snapshots they protected become expirable.

    :param including_consumers: regular expression of the consumer ids to delete (templated).
    :param excluding_consumers: regular expression of the consumer ids to keep (templated).
    :param dry_run_only: only list the consumers that would be deleted (templated; ``dry_run`` is Airflow's).
    """

    template_fields: Sequence[str] = (*PaimonSparkOperator.template_fields, "including_consumers",
                                      "excluding_consumers", "dry_run_only")

    def __init__(self, *, including_consumers: str | None = None, excluding_consumers: str | None = None,
                 dry_run_only: bool | str = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.including_consumers = including_consumers
        self.excluding_consumers = excluding_consumers
        self.dry_run_only = dry_run_only

    def build_command(self, warehouse: str) -> ClearConsumers:
        from table_engine.ops import ClearConsumers

        return ClearConsumers(warehouse=warehouse, table=self.table,
                              including_consumers=as_optional_text(self.including_consumers),
                              excluding_consumers=as_optional_text(self.excluding_consumers),
                              dry_run=as_bool(self.dry_run_only))


class PaimonResetConsumerOperator(PaimonSparkOperator["ResetConsumer"]):
    """Paimon's ``reset_consumer``: the consumer reads from ``next_snapshot_id`` on (a snapshot of the table, or
    the latest + 1); without it the consumer is deleted.

    :param consumer_id: the consumer (templated).
    :param next_snapshot_id: the next snapshot it reads; None deletes the consumer (templated).
    """

    template_fields: Sequence[str] = (*PaimonSparkOperator.template_fields, "consumer_id", "next_snapshot_id")

    def __init__(self, *, consumer_id: str, next_snapshot_id: int | str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.consumer_id = consumer_id
        self.next_snapshot_id = next_snapshot_id

    def build_command(self, warehouse: str) -> ResetConsumer:
        from table_engine.ops import ResetConsumer

        return ResetConsumer(warehouse=warehouse, table=self.table,
                             consumer_id=as_optional_text(self.consumer_id) or "",
                             next_snapshot_id=as_optional_int(self.next_snapshot_id, "next_snapshot_id"))


class PaimonCompactManifestOperator(CommittingOperator["CompactManifest"]):
    """Paimon's ``compact_manifest``: rewrite the latest snapshot's data manifests into full ones in a COMPACT
    snapshot that changes no data; nothing is committed when they are compact already.

    :param dry_run_only: only report whether a compaction is needed (Paimon's ``dry_run``; ``dry_run`` is Airflow's
        method) (templated).
    :param commit_user: the commit user (templated); default derived from the task instance.
    """

    template_fields: Sequence[str] = (*CommittingOperator.template_fields, "dry_run_only")

    def __init__(self, *, dry_run_only: bool | str = False, commit_user: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.dry_run_only = dry_run_only
        self.commit_user = commit_user

    def build_command(self, warehouse: str) -> CompactManifest:
        from table_engine.ops import CompactManifest

        return CompactManifest(warehouse=warehouse, table=self.table, dry_run=as_bool(self.dry_run_only),
                               commit_user=as_optional_text(self.commit_user))


class PaimonRemoveUnexistingFilesOperator(CommittingOperator["RemoveUnexistingFiles"]):
    """Paimon's ``remove_unexisting_files``: the latest snapshot's data files missing on storage; with
    ``dry_run_only=False`` their removal from the metadata is committed in one OVERWRITE snapshot (their rows leave
    the table). A dry run by default: the result lists the files (``files``, ``missing_files``, ``rows``).

    :param dry_run_only: only list the missing files (default True; Paimon's ``dry_run``) (templated).
    :param commit_user: the commit user (templated); default derived from the task instance.
    """

    template_fields: Sequence[str] = (*CommittingOperator.template_fields, "dry_run_only")

    def __init__(self, *, dry_run_only: bool | str = True, commit_user: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.dry_run_only = dry_run_only
        self.commit_user = commit_user

    def build_command(self, warehouse: str) -> RemoveUnexistingFiles:
        from table_engine.ops import RemoveUnexistingFiles

        return RemoveUnexistingFiles(warehouse=warehouse, table=self.table, remove=not as_bool(self.dry_run_only),
                                     commit_user=as_optional_text(self.commit_user))


class PaimonRepairOperator(PaimonSparkOperator["Repair"]):
    """``repair`` of a table in a filesystem warehouse: its snapshot and changelog hint files (``LATEST``,
    ``EARLIEST``) rewritten from the files present (Paimon's procedure syncs a metastore, which a filesystem
    catalog does not have)."""

    def build_command(self, warehouse: str) -> Repair:
        from table_engine.ops import Repair

        return Repair(warehouse=warehouse, table=self.table)

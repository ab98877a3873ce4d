"""Tables from elsewhere: ``PaimonCloneOperator`` (the ``clone`` command, Paimon's ``clone``) copies tables between
warehouses, ``PaimonMigrateTableOperator`` (``migrate-table``, Paimon's ``migrate_table``) turns a directory of
Parquet or ORC files into a Paimon table in place."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from paimon_provider.operators.base import CommittingOperator, PaimonSparkOperator
from paimon_provider.utils.arguments import as_bool, as_optional_int, as_optional_text

if TYPE_CHECKING:
    from table_engine.ops import Clone, MigrateDatabase, MigrateTable

__all__ = ["PaimonCloneOperator", "PaimonMigrateDatabaseOperator", "PaimonMigrateTableOperator"]


class PaimonCloneOperator(PaimonSparkOperator["Clone"]):
    """Paimon's ``clone``: copy ``table`` (or, given a database name, every table of it matching
    ``including_tables`` and not ``excluding_tables``) to ``target_warehouse``: the schemas and the data files of
    its latest snapshot (or ``snapshot`` / ``tag``), then one snapshot there that publishes them, so readers of the
    copy never see it half-copied. A re-run (or a retry) copies only the data files the copy lacks and publishes the
    newer snapshot. Runs with the engine on the worker (file copies, no Spark); the log shows the files and bytes
    copied. XCom ``return_value``: each table's ``source_snapshot_id``, ``snapshot_id``, ``files_copied``,
    ``bytes_copied``. A target table holding data a clone did not write, external data paths and row tracking are
    refused before anything is copied (docs/lifecycle.md, "Clone").

    :param target_warehouse: the copy's warehouse path or URI (templated).
    :param target_table: ``database.table`` of the copy, or its database for a database clone (templated; default:
        the source's names).
    :param target_catalog_options: catalog options of the target warehouse (``s3.endpoint``...) (templated).
    :param snapshot: clone this snapshot id (templated).
    :param tag: clone the snapshot of this tag (templated).
    :param including_tables: database clone: regular expression of the full names to clone (templated).
    :param excluding_tables: database clone: regular expression of the full names not to clone (templated).
    """

    template_fields: Sequence[str] = (*PaimonSparkOperator.template_fields, "target_warehouse", "target_table",
                                      "target_catalog_options", "snapshot", "tag", "including_tables",
                                      "excluding_tables")
    ui_color = "#e8dcf5"

    def __init__(self, *, target_warehouse: str, target_table: str | None = None,
                 target_catalog_options: Mapping[str, str] | None = None, snapshot: int | str | None = None,
                 tag: str | None = None, including_tables: str | None = None, excluding_tables: str | None = None,
                 **kwargs: Any) -> None:
        spark = dict(kwargs.pop("spark", None) or {})
        spark.setdefault("runner", "local")  # file copies and one commit: the engine on the worker, never Spark
        super().__init__(spark=spark, **kwargs)
        self.target_warehouse, self.target_table = target_warehouse, target_table
        self.target_catalog_options = dict(target_catalog_options or {})
        _refuse_secrets(self.target_catalog_options)
        self.snapshot, self.tag = snapshot, tag
        self.including_tables, self.excluding_tables = including_tables, excluding_tables

    def build_command(self, warehouse: str) -> Clone:
        from table_engine.ops import Clone

        _refuse_secrets(self.target_catalog_options)  # rendered templates too
        return Clone(warehouse=warehouse, table=self.table, target_warehouse=self.target_warehouse,
                     target_table=as_optional_text(self.target_table),
                     target_catalog_options={str(k): str(v) for k, v in self.target_catalog_options.items()},
                     snapshot=as_optional_int(self.snapshot, "snapshot"), tag=as_optional_text(self.tag),
                     including_tables=as_optional_text(self.including_tables),
                     excluding_tables=as_optional_text(self.excluding_tables))


class PaimonMigrateTableOperator(CommittingOperator["MigrateTable"]):
    """Paimon's ``migrate_table``: the Parquet or ORC files under ``source`` (Hive-style ``k=v/`` partition
    directories allowed), or of the format table ``source_table``, become the new append table ``table``
    (``bucket`` = -1) without copying data:
    each file is renamed into the table and recorded in its first snapshot, with stats. Runs with the engine on the
    worker, which must see ``source`` on the warehouse's file system (a rename; object stores are refused). Every
    file is read first; a failure leaves the source as it was (files renamed back, the new table dropped). Emits the
    table's Asset event (its first snapshot adds the rows). XCom ``return_value``: ``snapshot_id``, ``files``,
    ``rows``, ``bytes``, ``partitions``.

    :param source: the directory of the files (templated).
    :param source_table: or a Parquet / ORC format table of the connection's catalog (templated).
    :param format: ``parquet`` (default) or ``orc`` (templated).
    :param table_options: options of the new table (Paimon's ``options``; ``bucket`` must stay -1) (templated).
    :param delete_origin: delete the source directory once the table is committed (templated).
    :param commit_user: the commit user (templated); default derived from the task instance.
    """

    writes_table = True
    template_fields: Sequence[str] = (*CommittingOperator.template_fields, "source", "source_table", "format",
                                      "table_options", "delete_origin")

    def __init__(self, *, source: str | None = None, source_table: str | None = None, format: str = "parquet",
                 table_options: Mapping[str, str] | None = None, delete_origin: bool | str = False,
                 commit_user: str | None = None, **kwargs: Any) -> None:
        spark = dict(kwargs.pop("spark", None) or {})
        spark.setdefault("runner", "local")  # renames and one commit: the engine on the worker, never Spark
        super().__init__(spark=spark, **kwargs)
        self.source, self.source_table, self.format = source, source_table, format
        self.table_options = dict(table_options or {})
        self.delete_origin, self.commit_user = delete_origin, commit_user

    def build_command(self, warehouse: str) -> MigrateTable:
        from table_engine.ops import MigrateTable

        return MigrateTable(warehouse=warehouse, table=self.table, source=as_optional_text(self.source),
                            source_table=as_optional_text(self.source_table), format=self.format,
                            options={str(k): str(v) for k, v in self.table_options.items()},
                            delete_origin=as_bool(self.delete_origin), commit_user=self.commit_user)


class PaimonMigrateDatabaseOperator(CommittingOperator["MigrateDatabase"]):
    """Paimon's ``migrate_database``: every Parquet or ORC format table of ``database`` (in the connection's
    catalog) is replaced by a Paimon append table made in place from its files, as
    :class:`PaimonMigrateTableOperator` with ``source_table`` = ``table`` does, one after the other, on the worker.
    csv or json format tables fail the task before anything moves. A retry converges. Emits no Asset event (the
    tables are known from the result only). XCom ``return_value``: ``migrated`` (each table's ``snapshot_id``,
    ``files``, ``rows``).

    :param database: the database (templated).
    :param table_options: options of each new table (templated).
    :param commit_user: the commit user (templated); default derived from the task instance.
    """

    template_fields: Sequence[str] = (*CommittingOperator.template_fields, "table_options")

    def __init__(self, *, database: str, table_options: Mapping[str, str] | None = None,
                 commit_user: str | None = None, **kwargs: Any) -> None:
        spark = dict(kwargs.pop("spark", None) or {})
        spark.setdefault("runner", "local")
        super().__init__(table=database, spark=spark, **kwargs)  # the command's "table" field is the database
        self.table_options = dict(table_options or {})
        self.commit_user = commit_user

    @property
    def database(self) -> str:
        """The database (rendered: ``table`` is the templated field)."""
        return self.table

    def build_command(self, warehouse: str) -> MigrateDatabase:
        from table_engine.ops import MigrateDatabase

        return MigrateDatabase(warehouse=warehouse, table=self.table,
                               options={str(k): str(v) for k, v in self.table_options.items()},
                               commit_user=self.commit_user)


def _refuse_secrets(options: Mapping[str, Any]) -> None:
    """A secret in ``target_catalog_options`` would be a rendered template field and travel in a job's command
    line: refused, naming the key only. The target's object-store credentials come from the worker's environment
    (the AWS variables, as for the source's)."""
    from table_engine.catalog import is_secret

    secret = sorted(str(k) for k in options if is_secret(str(k)))
    if secret:
        raise ValueError(f"target_catalog_options must not hold secrets ({', '.join(secret)}): they would show in "
                         "the rendered template and the job's command line; give the target's credentials through "
                         "the worker's environment (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY)")

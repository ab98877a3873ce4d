"""Write rows into a Paimon table with the Spark application's ``write`` command."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from paimon_provider.operators.base import CommittingOperator
from paimon_provider.utils.arguments import as_bool, as_columns, as_optional_int, as_optional_text

MAIN_BRANCH = "main"
"""Paimon's default branch (``table_engine.io.paths.MAIN_BRANCH``, not imported: DAG files build operators at parse
time)."""

if TYPE_CHECKING:

    from table_engine.ops import Write


class PaimonWriteOperator(CommittingOperator["Write"]):
    """Append (or overwrite) rows read from files or given by a Spark SQL query; can create the table on first
    write from the source's schema. Emits the table's Asset with the committed snapshot id.

    With ``branch`` the rows go into that branch of the table (``db.t$branch_<branch>``, which must exist:
    :class:`~paimon_provider.operators.PaimonCreateBranchOperator`); such a write emits no Asset event: a branch
    (an audit branch of write-audit-publish, docs/wap.md) is not data for the readers of the main branch, whose
    Asset the branch's fast-forward emits.

    The job is idempotent per task instance: its commit user defaults to one derived from the DAG run and task,
    so a retry after a successful commit (e.g. the worker died before recording success) does not write twice.

    :param source: files to read (a path, directory or URI) (templated).
    :param sql: or a Spark SQL query giving the rows (templated).
    :param source_format: ``parquet``, ``csv``, ``json``, ``orc`` (templated).
    :param source_options: reader options of ``source`` (``{"header": "true"}`` for csv) (templated).
    :param mode: ``append`` or ``overwrite`` (dynamic: replaces the partitions present in the data) (templated).
    :param create_if_missing: create the table from the source's schema (default: when keys or options are
        given) (templated).
    :param primary_keys: primary key columns, for creating the table (list or ``a,b``) (templated).
    :param partition_keys: partition columns, for creating the table (templated).
    :param table_options: table options, for creating the table (``{"bucket": "4"}``) (templated).
    :param commit_user: the commit user (templated); default ``airflow:<dag>:<task>:<run id>[:<map index>]``.
    :param parallelism: Spark writer tasks for primary-key tables (templated).
    :param branch: write into this branch of ``table`` (templated; default, empty or ``main``: the main branch).
    """

    writes_table = True
    template_fields: Sequence[str] = (*CommittingOperator.template_fields, "source", "sql", "source_format",
                                      "source_options", "mode", "create_if_missing", "primary_keys",
                                      "partition_keys", "table_options", "parallelism", "branch")
    template_fields_renderers = {**CommittingOperator.template_fields_renderers, "sql": "sql",
                                 "table_options": "json", "source_options": "json"}

    def __init__(
        self,
        *,
        source: str | None = None,
        sql: str | None = None,
        source_format: str = "parquet",
        source_options: Mapping[str, Any] | None = None,
        mode: str = "append",
        create_if_missing: bool | str | None = None,
        primary_keys: Sequence[str] | str | None = None,
        partition_keys: Sequence[str] | str | None = None,
        table_options: Mapping[str, Any] | None = None,
        commit_user: str | None = None,
        parallelism: int | str | None = None,
        branch: str | None = None,
        **kwargs: Any,
    ) -> None:
        self.branch = branch  # before the base class, which asks asset_table for the outlets
        super().__init__(**kwargs)
        if (source is None) == (sql is None):
            raise ValueError("PaimonWriteOperator needs exactly one of source and sql")
        self.source = source
        self.sql = sql
        self.source_format = source_format
        self.source_options = dict(source_options or {})
        self.mode = mode
        self.create_if_missing = create_if_missing
        self.primary_keys = primary_keys
        self.partition_keys = partition_keys
        self.table_options = dict(table_options or {})
        self.commit_user = commit_user
        self.parallelism = parallelism

    @property
    def target_branch(self) -> str | None:
        """The branch written (None: the main branch)."""
        name = as_optional_text(self.branch)
        return None if name is None or name == MAIN_BRANCH else name

    @property
    def asset_table(self) -> str | None:
        """The table, for a write into its main branch; None (no Asset event) for a write into a branch."""
        return None if self.target_branch is not None or "$" in self.table else self.table

    def build_command(self, warehouse: str) -> Write:
        from table_engine import branch_identifier
        from table_engine.ops import Write

        mode = str(self.mode).strip().lower()
        if mode not in ("append", "overwrite"):
            raise ValueError(f"mode must be 'append' or 'overwrite', got {self.mode!r}")
        source = as_optional_text(self.source)
        sql = None
        if source is None:
            sql = as_optional_text(self.sql)
            if sql is None:
                raise ValueError("PaimonWriteOperator: the rendered sql is empty")
        primary_keys = as_columns(self.primary_keys)
        partition_keys = as_columns(self.partition_keys)
        create = as_bool(self.create_if_missing) if self.create_if_missing is not None else \
            bool(primary_keys or partition_keys or self.table_options)
        table = self.table if self.target_branch is None else branch_identifier(self.table, self.target_branch)
        return Write(warehouse=warehouse, table=table, source=source, sql=sql,
                     format=str(self.source_format).strip().lower() if source is not None else "parquet",
                     source_options={str(k): str(v) for k, v in self.source_options.items()} if source else {},
                     mode=mode, create_if_missing=create, primary_keys=primary_keys if create else (),
                     partition_keys=partition_keys if create else (),
                     options={str(k): str(v) for k, v in self.table_options.items()} if create else {},
                     commit_user=as_optional_text(self.commit_user),
                     parallelism=as_optional_int(self.parallelism, "parallelism"))

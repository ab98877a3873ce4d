"""Dedicated compaction of a Paimon table with the Spark application's ``compact`` command."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from paimon_provider.operators.base import CommittingOperator
from paimon_provider.utils.arguments import (
    as_bool,
    as_columns,
    as_duration_millis,
    as_optional_int,
    as_optional_text,
    partition_texts,
)

if TYPE_CHECKING:

    from table_engine.ops import Compact, CompactDatabase, Rescale


class PaimonCompactOperator(CommittingOperator["Compact"]):
    r"""Compact a primary-key or append table, so that writers can run with ``write-only`` (Paimon's dedicated
    compaction). Emits the table's Asset (with the COMPACT snapshot id and its facts) only when the compaction
    produced changelog records (``changelog-producer`` = ``lookup`` or ``full-compaction``): a compaction that
    only merges files changes no data, and DAGs scheduled on the table must not run for it (docs/adr/0021).
    Append tables: the small files of each bucket (each partition with ``bucket`` = -1) are rewritten into files
    near ``target-file-size`` once ``compaction.min.file-num`` of them are there.

    :param full: full compaction (each bucket into one sorted run at the top level; append tables: every small
        file) instead of a minor one that follows the table's compaction strategy (templated; ``"full"``/
        ``"minor"`` and ``"True"``/``"False"`` accepted).
    :param partitions: only these partitions: a ``{column: value}`` mapping, a list of them, or ``k=v,k2=v2``
        text (several separated by ``;``; ``\`` escapes ``,``, ``=`` and ``;`` in values) (templated). Values are
        typed against the partition columns (``dt=2024-01-01`` on a DATE column); a value that does not parse, or
        a spec that matches no partition, fails the task.
    :param idle_time: only partitions without new data for this long (``"1 d"``) (templated). Needs the
        application's ``--idle-time`` option.
    :param buckets: only these buckets of a fixed-bucket table: Paimon's ``"0-99,200-299"`` text or a list of
        numbers (templated); keeps one run of a big table within memory. A bucket outside ``[0, bucket)`` fails
        the task.
    :param commit_user: the commit user (templated); default derived from the task instance (idempotent retries).
    :param parallelism: Spark compaction tasks (templated).
    :param order_strategy: ``"order"``, ``"zorder"`` or ``"hilbert"``: a sort compaction of an append table with
        ``bucket`` = -1 instead (Paimon's ``order_strategy``): the rows of each selected partition sorted together
        by ``order_by``, so that filters on those columns read fewer files (templated; docs/layout.md).
    :param order_by: the columns of a sort compaction: a list or ``"a,b"`` text (templated).
    """

    writes_table = True
    template_fields: Sequence[str] = (*CommittingOperator.template_fields, "full", "partitions", "idle_time",
                                      "buckets", "parallelism", "order_strategy", "order_by")

    def __init__(
        self,
        *,
        full: bool | str = False,
        partitions: Sequence[Mapping[str, Any]] | Mapping[str, Any] | str | None = None,
        idle_time: str | None = None,
        buckets: str | Sequence[int] | None = None,
        commit_user: str | None = None,
        parallelism: int | str | None = None,
        order_strategy: str | None = None,
        order_by: str | Sequence[str] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.order_strategy = order_strategy
        self.order_by = order_by
        self.full = full
        self.partitions = partitions
        self.idle_time = idle_time
        self.buckets = buckets
        self.commit_user = commit_user
        self.parallelism = parallelism

    def build_command(self, warehouse: str) -> Compact:
        from table_engine.ops import Compact

        full = self.full
        if isinstance(full, str) and full.strip().lower() in ("full", "minor"):
            full = full.strip().lower() == "full"
        return Compact(warehouse=warehouse, table=self.table, full=as_bool(full),
                       partitions=tuple(partition_texts(self.partitions)),
                       idle_time_millis=as_duration_millis(self.idle_time, "idle_time"),
                       buckets=bucket_ranges(self.buckets),
                       commit_user=as_optional_text(self.commit_user),
                       parallelism=as_optional_int(self.parallelism, "parallelism"),
                       order_strategy=as_optional_text(self.order_strategy),
                       order_by=as_columns(self.order_by))


def bucket_ranges(value: str | Sequence[int] | None) -> str | None:
    """The ``buckets`` argument as Paimon's ranges text: a list of numbers joined with commas, blank text None."""
    if value is None or isinstance(value, str):
        return as_optional_text(value)
    return ",".join(str(b).strip() for b in value)


class PaimonCompactDatabaseOperator(CommittingOperator["CompactDatabase"]):
    """Paimon's ``compact_database``: compact every table of ``database`` whose full name (``db.t``) wholly matches
    ``including_tables`` and not ``excluding_tables`` (regular expressions), one after the other, each as
    :class:`PaimonCompactOperator` would on the worker (the ``compact-database`` command; big tables: a
    :class:`PaimonCompactOperator` each, on Spark). Upkeep: emits no Asset event. A retry converges (the tables
    compacted by an earlier try have nothing left to do). A pattern that does not compile fails the task.

    :param database: the database (templated).
    :param including_tables: regular expression of the full names to compact (templated; default all).
    :param excluding_tables: regular expression of the full names not to compact (templated).
    :param full: full compaction, as :class:`PaimonCompactOperator`'s (templated).
    :param idle_time: only partitions without new data for this long (``"1 d"``) (templated).
    :param commit_user: the commit user (templated); default derived from the task instance.
    """

    template_fields: Sequence[str] = (*CommittingOperator.template_fields, "including_tables", "excluding_tables",
                                      "full", "idle_time")

    def __init__(
        self,
        *,
        database: str,
        including_tables: str | None = None,
        excluding_tables: str | None = None,
        full: bool | str = False,
        idle_time: str | None = None,
        commit_user: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(table=database, **kwargs)  # the command's "table" field is the database
        self.including_tables = including_tables
        self.excluding_tables = excluding_tables
        self.full = full
        self.idle_time = idle_time
        self.commit_user = commit_user

    @property
    def database(self) -> str:
        """The database (rendered: ``table`` is the templated field)."""
        return self.table

    def build_command(self, warehouse: str) -> CompactDatabase:
        from table_engine.ops import CompactDatabase

        full = self.full
        if isinstance(full, str) and full.strip().lower() in ("full", "minor"):
            full = full.strip().lower() == "full"
        return CompactDatabase(warehouse=warehouse, table=self.database, full=as_bool(full),
                               including_tables=as_optional_text(self.including_tables),
                               excluding_tables=as_optional_text(self.excluding_tables),
                               idle_time_millis=as_duration_millis(self.idle_time, "idle_time"),
                               commit_user=as_optional_text(self.commit_user))


class PaimonRescaleOperator(CommittingOperator["Rescale"]):
    """Paimon's ``rescale``: rewrite the data of partitions into ``bucket_num`` buckets in one OVERWRITE commit (it
    fails, changing nothing, if a compaction or another rewrite was committed meanwhile). Upkeep: it changes where
    rows are, not which, so it emits no Asset event (docs/adr/0021). On a postpone bucket table
    (``bucket`` = -2) this changes a partition's bucket count; its postponed rows stay for the next compaction.

    :param bucket_num: the new bucket count (templated); required on postpone tables, on fixed-bucket tables the
        table's ``bucket`` (the default).
    :param partitions: only these partitions, as :class:`PaimonCompactOperator`'s ``partitions`` (templated);
        a spec that matches no partition fails the task.
    :param commit_user: the commit user (templated); default derived from the task instance.
    """

    writes_table = True
    changes_data = False
    template_fields: Sequence[str] = (*CommittingOperator.template_fields, "bucket_num", "partitions")

    def __init__(
        self,
        *,
        bucket_num: int | str | None = None,
        partitions: Sequence[Mapping[str, Any]] | Mapping[str, Any] | str | None = None,
        commit_user: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.bucket_num = bucket_num
        self.partitions = partitions
        self.commit_user = commit_user

    def build_command(self, warehouse: str) -> Rescale:
        from table_engine.ops import Rescale

        return Rescale(warehouse=warehouse, table=self.table,
                       bucket_num=as_optional_int(self.bucket_num, "bucket_num"),
                       partitions=tuple(partition_texts(self.partitions)),
                       commit_user=as_optional_text(self.commit_user))


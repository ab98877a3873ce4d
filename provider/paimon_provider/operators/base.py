"""The shared shape of every Paimon Spark operator: render arguments, build one SparkJobSpec, submit it.

An operator is generic over its command class (:mod:`table_engine.ops`), as Airflow's amazon operators are over
their hook class: ``class PaimonCompactOperator(CommittingOperator["Compact"])``. It builds the command's dataclass
(``Compact(full=..., partitions=...)``, checked by mypy) from its own rendered arguments in
:meth:`PaimonSparkOperator.build_command`, at execute time; the application gets the command as one JSON object.
The argument is the class's name in :mod:`table_engine.ops`, resolved at first use (:func:`command_class_of`):
DAG files load no engine when parsed (ADR 0003). Spark-level settings (master, conf, memory, ...) are one
templated ``spark`` mapping whose keys are :class:`~paimon_provider.utils.job_spec.SparkJobSpec` fields, so no operator
redeclares them.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import functools
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar, cast

from airflow.sdk import Asset, AssetAlias, BaseOperator
from airflow.sdk.exceptions import AirflowException, AirflowFailException, AirflowSkipException

from paimon_provider.utils.arguments import as_optional_text
from paimon_provider.utils.assets import table_asset, writes_alias
from paimon_provider.utils.connection import DEFAULT_CONN_ID
from paimon_provider.utils.job_spec import SparkJobSpec
from paimon_provider.utils.partitions import add_partition_keys
from paimon_provider.utils.results import JobFailedError

if TYPE_CHECKING:
    from airflow.sdk import Context
    from pydantic import JsonValue

    from paimon_provider.hooks.spark import PaimonSparkHook
    from paimon_provider.utils.connection import PaimonConnectionConfig
    from paimon_provider.utils.lineage import LineageIO
    from table_engine.ops import Command
    from table_engine.run_identity import RunIdentity

MAX_EVENT_PARTITIONS = 100
"""At most this many partitions in an Asset event's extra (it is stored in the metadata database)."""

_EVENT_FACTS = ("commit_kind", "added_rows", "deleted_rows", "changelog_records", "published_rows", "compacted",
                "partitions")
"""The commit facts of a result line (``commit``) an Asset event's extra carries."""

SPARK_OPTION_KEYS = frozenset(f.name for f in dataclasses.fields(SparkJobSpec)) - {"command", "args"}
"""Keys accepted in an operator's ``spark`` mapping."""


METRIC_PREFIX = "paimon.table"
"""Metric names: ``paimon.table.<database>.<table>.commit.<Paimon's metric>`` (Paimon's own scope, ``paimon.table.
<table>.commit``) and ``paimon.table.<database>.<table>.<command>.duration`` (docs/metrics.md)."""


def report_metrics(table: str, command: str, result: Mapping[str, Any] | None) -> None:
    """Report a job result's commit metrics (its ``commit.metrics``, Paimon's names) as gauges and the job's
    duration as a timing, through Airflow's metrics (StatsD or OpenTelemetry, as ``[metrics]`` configures it; nothing
    when neither is on)."""
    from airflow.sdk.observability.stats import Stats

    if not result:
        return
    scope = f"{METRIC_PREFIX}.{table}"
    commit = result.get("commit")
    metrics = commit.get("metrics") if isinstance(commit, Mapping) else None
    for name, value in (metrics or {}).items():
        if isinstance(value, int) and not isinstance(value, bool):
            Stats.gauge(f"{scope}.commit.{name}", value)
    seconds = result.get("seconds")
    if isinstance(seconds, (int, float)) and not isinstance(seconds, bool):
        Stats.timing(f"{scope}.{command}.duration", datetime.timedelta(seconds=float(seconds)))


def snapshot_id_of(result: Mapping[str, Any] | None) -> int | None:
    """The snapshot a job committed, from its result line (``snapshot_id``)."""
    value = (result or {}).get("snapshot_id")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def changed_data(result: Mapping[str, Any] | None) -> bool:
    """Did the commit a job reports change the table's data (records added or deleted, or changelog records
    produced)? From its result line's ``commit`` facts (:func:`table_engine.ops.facts.commit_facts`): a compaction
    changes data only when it produced changelog or published postponed rows (``bucket`` = -2); a rollback when
    it removed snapshots. A result without facts (an older application) counts any committed snapshot."""
    commit = (result or {}).get("commit")
    if commit is None:
        return True  # no facts: the caller's committed snapshot decides
    if not isinstance(commit, Mapping) or not commit:
        return False

    def count(key: str) -> int:
        value = commit.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    if commit.get("commit_kind") == "ROLLBACK":
        return count("removed_snapshots") > 0
    if count("changelog_records") > 0 or count("published_rows") > 0:
        return True
    return commit.get("commit_kind") != "COMPACT" and (count("added_rows") > 0 or count("deleted_rows") > 0)


def task_commit_user(context: Context) -> str:
    """``airflow:<dag>:<task>:<run id>[:<map index>]``: the commit user an operator names for its task instance,
    the same for every try of it, so the application skips a commit an earlier try already made. A named user is
    used as is; only a job that names none gets the engine's default
    (:func:`table_engine.core_options.default_commit_user`: ``commit.user-prefix`` and a fresh UUID)."""
    ti = context["ti"]
    parts = ["airflow", ti.dag_id, ti.task_id, ti.run_id]
    map_index = getattr(ti, "map_index", -1)
    if map_index is not None and map_index >= 0:
        parts.append(str(map_index))
    return ":".join(parts)


def is_retry(context: Context) -> bool:
    """Is this a later try of the task instance (a retry, or a re-run after the task was cleared)? Airflow counts
    tries from 1 and gives a cleared task instance a new try number too."""
    try_number = getattr(context["ti"], "try_number", None)
    return isinstance(try_number, int) and try_number > 1


FAILURE_MARK = "paimon_task_failure"
"""Attribute set on the exceptions :meth:`PaimonSparkOperator.failure` makes: failures the task's log explains in
its last two lines, whose stack frames say nothing more (ADR 0022)."""


_Execute = TypeVar("_Execute", bound=Callable[..., Any])
C = TypeVar("C", bound="Command")
"""An operator's command class."""


def trimmed_failures(execute: _Execute) -> _Execute:
    """``execute`` re-raising the operator's own failures (:data:`FAILURE_MARK`) without the provider's stack
    frames: Airflow's task runner logs every failure with its traceback (apache/airflow#19983; Airflow 2 trimmed it
    to the DAG's code, #20731, the task SDK of Airflow 3 does not), so the frames left are the runner's and this
    one. Any other exception (a bug) keeps every frame."""

    @functools.wraps(execute)
    def run(self: Any, context: Any) -> Any:
        try:
            return execute(self, context)
        except AirflowException as e:
            if getattr(e, FAILURE_MARK, False):
                raise e.with_traceback(None) from None
            raise

    return cast("_Execute", run)


@functools.cache
def command_class_of(operator: type[PaimonSparkOperator[Any]]) -> type[Command]:
    """The command class ``operator`` names as its generic argument (``CommittingOperator["Compact"]``: the class
    of that name in :mod:`table_engine.ops`, the engine's command registry); a TypeError if it names none."""
    for klass in operator.__mro__:
        for base in klass.__dict__.get("__orig_bases__", ()):
            origin, args = typing.get_origin(base), typing.get_args(base)
            if not (isinstance(origin, type) and issubclass(origin, PaimonSparkOperator) and args):
                continue
            arg = args[0]
            if isinstance(arg, typing.ForwardRef):
                import table_engine.ops

                arg = getattr(table_engine.ops, arg.__forward_arg__, None)
            if isinstance(arg, type):
                return arg
    raise TypeError(f"{operator.__name__} names no command class: subclass PaimonSparkOperator[\"<command class of "
                    f"table_engine.ops>\"]")


class _CommandClass:
    """:attr:`PaimonSparkOperator.command_class`, read from the class or an instance (:func:`command_class_of`)."""

    def __get__(self, obj: PaimonSparkOperator[C] | None, owner: type[PaimonSparkOperator[C]]) -> type[C]:
        return cast("type[C]", command_class_of(owner))


class PaimonSparkOperator(BaseOperator, Generic[C]):
    """Base class: submit one command of the Paimon Spark application and return its final JSON line (XCom).

    :param table: ``database.table`` (templated).
    :param paimon_conn_id: the ``paimon`` connection (warehouse, catalog options, Spark connection).
    :param warehouse: overrides the connection's warehouse (templated).
    :param spark: Spark settings, keys of :class:`~paimon_provider.utils.job_spec.SparkJobSpec` (``master``, ``conf``,
        ``driver_memory``, ``spark_conn_id``, ``py_files``, ``runner``, ...) (templated). Metadata-only commands
        (tags, expiry, orphan files, rollback) run with the engine in the task's process in client mode, where
        the application's driver would run them anyway; ``{"runner": "spark"}`` forces spark-submit.
        ``{"connect": "sc://host:15002"}`` runs Spark jobs in the task's process as clients of a Spark Connect
        server instead of spark-submit (docs/spark.md, "Execution modes").
    :param extra_args: more options appended to the command, verbatim (templated). With them the command is sent
        as a command line (derived from the command) instead of one JSON object.
    :param emit_asset: for writing commands, emit an Asset event for the table when the commit changed data
        (:func:`changed_data`: records added or deleted, or changelog produced; upkeep such as a compaction
        without changelog or a rollback that removed nothing emits none, docs/adr/0021): through the table's Asset
        when the table is known at parse time, else through :func:`paimon_provider.utils.assets.writes_alias` (also
        when that alias is already among ``outlets``, as mapped operators should declare it). The extra:
        ``table``, ``command``, ``snapshot_id``, ``commit_kind``, ``added_rows``, ``deleted_rows``,
        ``changelog_records``, ``published_rows`` (compactions), ``compacted`` (a write its writer compacted right
        after: the facts are its data commit's) and ``partitions`` (the first
        :data:`MAX_EVENT_PARTITIONS`; more: ``partition_count`` says how many).
    :param snapshot_properties: for commands that commit snapshots, more properties of each snapshot the job
        commits (templated; Paimon 1.2's snapshot ``properties``). Every such snapshot also carries the task try's
        run identity (``airflow.dag-id``, ``airflow.run-id``, ``airflow.task-id``, ``airflow.map-index``,
        ``airflow.try-number``; keys under ``airflow.`` are refused here), docs/run-identity.md.
    :param partition_events: the table's Asset event names the partitions the commit changed as partition keys
        (``dt=2026-11-27``; Airflow records one event per key; Task SDK of Airflow 3.3+, else one event as
        before; not through an alias): for tables read by DAGs scheduled per partition
        (:func:`paimon_provider.utils.partitions.partitioned_schedule`). Off by default, as Airflow queues a DAG
        scheduled on the plain Asset only for events without a partition key (docs/partitions.md).
    :param skip_if_no_commit: for writing commands, end as *skipped* when the job committed no snapshot (nothing
        to write or compact): no Asset event, so DAGs scheduled on the table do not run for nothing, and
        downstream tasks are skipped. The result line is logged (a skipped task has no XCom). In cluster deploy
        mode the driver's output is not available here (no result): do not combine the two.
    :param openlineage_inject_parent_job_info: give a spark-submit the ``spark.openlineage.parent*`` and
        ``rootParent*`` conf of this task's OpenLineage run, so the OpenLineage Spark listener (when the cluster has
        it) links its run to the task's; default: the OpenLineage provider's ``[openlineage]
        spark_inject_parent_job_info`` (docs/lineage.md). A conf the ``spark`` mapping gives already wins.
    :param openlineage_inject_transport_info: likewise the ``spark.openlineage.transport.*`` conf of the
        provider's HTTP transport (``[openlineage] spark_inject_transport_info``).

    Every operator reports OpenLineage datasets (``get_openlineage_facets_on_start/_on_complete/_on_failure``):
    what :meth:`lineage_io` says the command reads and writes, named and described by
    :mod:`paimon_provider.utils.lineage`.
    """

    command_class = _CommandClass()
    """The operator's command class (:mod:`table_engine.ops`), its generic argument."""
    writes_table: ClassVar[bool] = False
    """Writing commands add the table's Asset (or, for a templated table, an AssetAlias) to the outlets."""
    changes_data: ClassVar[bool] = True
    """False for commands whose commits only reorganize data (rescale, file index): they emit no Asset event."""

    template_fields: Sequence[str] = ("table", "warehouse", "spark", "extra_args", "snapshot_properties")
    template_fields_renderers = {"spark": "json"}
    ui_color = "#c9e4f7"

    def __init__(
        self,
        *,
        table: str,
        paimon_conn_id: str = DEFAULT_CONN_ID,
        warehouse: str | None = None,
        spark: Mapping[str, Any] | None = None,
        extra_args: Sequence[str] | None = None,
        emit_asset: bool = True,
        partition_events: bool = False,
        skip_if_no_commit: bool = False,
        snapshot_properties: Mapping[str, Any] | None = None,
        openlineage_inject_parent_job_info: bool | None = None,
        openlineage_inject_transport_info: bool | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.table = table
        self.paimon_conn_id = paimon_conn_id
        self.warehouse = warehouse
        self.spark = dict(spark or {})
        self.extra_args = list(extra_args or [])
        self.emit_asset = emit_asset
        self.partition_events = partition_events
        self.skip_if_no_commit = skip_if_no_commit
        self.snapshot_properties = dict(snapshot_properties or {})
        self._run: RunIdentity | None = None
        unknown = set(self.spark) - SPARK_OPTION_KEYS
        if unknown:
            raise ValueError(f"{type(self).__name__}: unknown spark settings {sorted(unknown)}; "
                             f"allowed: {sorted(SPARK_OPTION_KEYS)}")
        self.openlineage_inject_parent_job_info = openlineage_inject_parent_job_info
        self.openlineage_inject_transport_info = openlineage_inject_transport_info
        self._hook: PaimonSparkHook | None = None
        self._declared_outlets: list[Any] | None = None
        self._lineage_command: Command | None = None
        self._lineage_result: dict[str, Any] | None = None
        target = self.asset_table
        if emit_asset and target is not None and not any(self._is_own_alias(o) for o in self.outlets):
            self.outlets.append(self._declared_outlet(target))

    # ---- assets ------------------------------------------------------------------------------------------------
    @property
    def asset_table(self) -> str | None:
        """The table whose Asset this operator updates (None: it updates none)."""
        return self.table if self.writes_table else None

    def _is_templated(self, table: str) -> bool:
        return any(mark in text for text in (table, self.paimon_conn_id) for mark in ("{{", "{%"))

    def _alias(self) -> AssetAlias:
        return writes_alias(self.paimon_conn_id)

    def _is_own_alias(self, outlet: object) -> bool:
        return isinstance(outlet, AssetAlias) and outlet.name == self._alias().name

    def _declared_outlet(self, table: str) -> Asset | AssetAlias:
        """The table's Asset when the table is known at parse time, else an alias resolved at run time."""
        if self._is_templated(table):
            return self._alias()
        return table_asset(table, self.paimon_conn_id)

    def _emit_table_event(self, context: Context, table: str, result: Mapping[str, Any] | None) -> None:
        """The table's Asset event for a commit that changed data; for upkeep (or nothing committed) none: the
        alias gets no event and the table's static Asset is taken off this task instance's outlets, of which
        Airflow emits an event for each when the task succeeds."""
        asset = table_asset(table, self.paimon_conn_id)
        commit = (result or {}).get("commit")
        facts = {k: v for k, v in commit.items() if k in _EVENT_FACTS} if isinstance(commit, Mapping) else {}
        partitions = facts.get("partitions")
        if isinstance(partitions, list) and len(partitions) > MAX_EVENT_PARTITIONS:
            facts.update(partitions=partitions[:MAX_EVENT_PARTITIONS], partition_count=len(partitions))
        extra: dict[str, JsonValue] = {"table": table, "command": self.command,
                                       "snapshot_id": self.result_snapshot_id(result), **facts}
        data = self.changes_data and extra["snapshot_id"] is not None and self.result_changed_data(result)
        if not data:
            self.log.info("%s of %s changed no data (%s): no Asset event, so DAGs scheduled on the table do not run",
                          self.command, table, facts or "nothing committed")
            self.outlets = [o for o in self.outlets if not (isinstance(o, Asset) and o.uri == asset.uri)]
            return
        events = context["outlet_events"]
        listed = commit.get("partitions") if isinstance(commit, Mapping) else None
        changed = [p for p in listed if isinstance(p, str)] if isinstance(listed, list) else []
        for outlet in self.outlets:
            if isinstance(outlet, Asset) and outlet.uri == asset.uri:
                events[outlet].extra.update(extra)
                if self.partition_events:  # one event per changed partition (Airflow 3.3+)
                    add_partition_keys(events[outlet], changed)
            elif self._is_own_alias(outlet):
                events[outlet].add(asset, extra=extra)

    def result_changed_data(self, result: Mapping[str, Any] | None) -> bool:
        """Did the job's commit change :attr:`asset_table`'s data (:func:`changed_data`)?"""
        return changed_data(result)

    def result_snapshot_id(self, result: Mapping[str, Any] | None) -> int | None:
        """The snapshot of :attr:`asset_table` the job committed (for the Asset event's extra)."""
        return snapshot_id_of(result)

    # ---- the job -----------------------------------------------------------------------------------------------
    @property
    def command(self) -> str:
        """The command's name (``compact``), the command class's :attr:`~table_engine.ops.Command.name`."""
        return self.command_class.name

    def build_command(self, warehouse: str) -> C:
        """The command's dataclass (:mod:`table_engine.ops`) on ``warehouse``, from the rendered arguments; a
        ValueError (the command's :class:`~table_engine.errors.CommandError`) naming a bad one."""
        raise NotImplementedError(f"{type(self).__name__} does not build its {self.command} command")

    def build_spec(self, warehouse: str | None = None) -> SparkJobSpec:
        """The job, from rendered template fields; ``warehouse``: the operator's, else this one, else the Paimon
        connection's (looked up)."""
        unknown = set(self.spark) - SPARK_OPTION_KEYS
        if unknown:
            raise ValueError(f"unknown spark settings {sorted(unknown)}; allowed: {sorted(SPARK_OPTION_KEYS)}")
        settings = dict(self.spark)
        for key in ("py_files", "files", "jars"):
            if isinstance(settings.get(key), str):
                settings[key] = [p for p in settings[key].split(",") if p]
        target = as_optional_text(self.warehouse) or warehouse
        if target is None:
            from paimon_provider.hooks.table import load_connection_config

            target = load_connection_config(self.paimon_conn_id).warehouse
        from paimon_provider.utils.run_identity import with_run_identity

        command = with_run_identity(self.build_command(target), self.snapshot_properties, self._run)
        return SparkJobSpec(command=command, args=list(map(str, self.extra_args)), **settings)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "execute" in cls.__dict__:  # the outermost execute of a task cuts the provider's frames off its failures
            cls.execute = trimmed_failures(cls.__dict__["execute"])  # type: ignore[method-assign]

    @trimmed_failures
    def execute(self, context: Context) -> dict[str, Any] | None:
        from paimon_provider.hooks.spark import PaimonSparkHook
        from paimon_provider.utils.run_identity import run_identity

        # an upkeep commit takes the table's Asset off the outlets (see _emit_table_event): every run starts from
        # the declared ones
        if self._declared_outlets is None:
            self._declared_outlets = list(self.outlets)
        self.outlets = list(self._declared_outlets)
        self._hook = PaimonSparkHook(paimon_conn_id=self.paimon_conn_id)
        self._run = run_identity(context)
        warehouse = as_optional_text(self.warehouse) or self._hook.get_conn().warehouse
        try:
            spec = self.build_spec(warehouse)
        except (ValueError, TypeError) as e:  # the engine's bad-input errors are ValueErrors too
            # arguments render the same on every try: retrying cannot fix them
            raise self.failure("its arguments are invalid", str(e), retryable=False) from None
        self._lineage_command, self._lineage_result = spec.command, None
        spec = self._with_openlineage_conf(spec, context)
        self._precheck(spec, self._hook.get_conn())
        try:
            result = self._hook.submit(spec)
        except JobFailedError as e:
            raise self.failure(e.summary, e.reason, retryable=e.retryable) from None
        self._lineage_result = result
        report_metrics(self.table, self.command, result)
        target = self.asset_table
        if self.skip_if_no_commit and target is not None and self.result_snapshot_id(result) is None:
            self.log.info("%s committed nothing to %s (%s): skipping", self.command, target, result)
            raise AirflowSkipException(f"{self.command} committed nothing to {target}")
        if self.emit_asset and target is not None:
            self._emit_table_event(context, target, result)
        return result

    def _precheck(self, spec: SparkJobSpec, config: PaimonConnectionConfig) -> None:
        """Fail before any job starts (no spark-submit, no JVM) on what the worker checks cheaply from the table's
        schema (:func:`table_engine.ops.precheck.precheck`: an unknown table, a created table's bad option, a
        partition naming a column that is not a partition column), with the engine's one-line error, as the job
        itself would report it. A check that fails for another reason (the store unreachable for a moment) is left
        to the job, which meets the same problem and reports it with its retry rule."""
        from table_engine.errors import TableEngineError, is_retryable
        from table_engine.ops.argv import one_line
        from table_engine.ops.precheck import precheck

        cmd = spec.command
        try:
            with contextlib.closing(dataclasses.replace(config, warehouse=cmd.warehouse).open_catalog(
                    cmd.catalog_options)) as catalog:
                precheck(cmd, catalog)
        except Exception as e:  # noqa: BLE001 - only the engine's bad-input errors fail here; the job sees the rest
            if isinstance(e, TableEngineError) and not is_retryable(e):
                raise self.failure(f"{type(e).__name__}, found before starting any job", str(e),
                                   retryable=False) from None
            self.log.warning("could not check %s before starting the job (%s): the job checks it", cmd.table,
                             one_line(f"{type(e).__name__}: {e}"))

    def failure(self, summary: str, reason: str, *, retryable: bool) -> AirflowException:
        """The task's failure: a line naming the command, the table and what failed, then the engine's one-line
        error (``error: <message>``), the last lines of the task log, below the job's output. AirflowFailException
        (no retry) when retrying cannot fix it (bad input: an unknown table, option, snapshot or tag, a malformed
        value), else AirflowException (retried)."""
        from table_engine.ops.argv import one_line

        headline = f"{self.command} of table {self.table} failed: {one_line(summary)}"
        if not retryable:
            headline += " (not retried: running it again cannot fix this)"
        error = f"error: {one_line(reason)}"
        # two records, each once: the last lines of the operator's log, at ERROR (the UI's Error filter shows them)
        self.log.error("%s", headline)
        self.log.error("%s", error)
        message = f"{headline}\n{error}"
        failure = AirflowException(message) if retryable else AirflowFailException(message)
        setattr(failure, FAILURE_MARK, True)
        return failure

    def on_kill(self) -> None:
        if self._hook is not None:
            self._hook.on_kill()

    # ---- OpenLineage -------------------------------------------------------------------------------------------
    def _with_openlineage_conf(self, spec: SparkJobSpec, context: Context) -> SparkJobSpec:
        """``spec`` with the OpenLineage parent-run (and transport) Spark conf when asked for, as the Spark
        provider's SparkSubmitOperator adds it (the OpenLineage provider's helpers; without that provider:
        unchanged, a warning). Only a spark-submit uses it: the engine's CLI and small jobs run no Spark listener."""
        try:
            from airflow.sdk.configuration import conf
        except ImportError:  # an Airflow whose task SDK has no configuration module of its own
            from airflow.configuration import conf

        parent, transport = self.openlineage_inject_parent_job_info, self.openlineage_inject_transport_info
        if parent is None:
            parent = conf.getboolean("openlineage", "spark_inject_parent_job_info", fallback=False)
        if transport is None:
            transport = conf.getboolean("openlineage", "spark_inject_transport_info", fallback=False)
        if not (parent or transport):
            return spec
        try:
            from airflow.providers.openlineage.utils.spark import (
                inject_parent_job_information_into_spark_properties,
                inject_transport_information_into_spark_properties,
            )
        except ImportError:
            self.log.warning("OpenLineage Spark conf asked for, but apache-airflow-providers-openlineage is not "
                             "installed: the job gets none")
            return spec
        props: dict[str, Any] = dict(spec.conf)
        if parent:
            props = inject_parent_job_information_into_spark_properties(props, context)
        if transport:
            props = inject_transport_information_into_spark_properties(props, context)
        return dataclasses.replace(spec, conf={str(k): str(v) for k, v in props.items()})

    def lineage_io(self, cmd: Command, result: Mapping[str, Any] | None) -> LineageIO:
        """What ``cmd`` reads and writes, with the snapshots and commit facts of its ``result`` (None: not run, or
        failed): :func:`paimon_provider.utils.lineage.command_io`, derived from the command's definition. An operator
        whose command reads or writes more than its definition says overrides this."""
        from paimon_provider.utils.lineage import command_io

        return command_io(cmd, result)

    def _openlineage(self, *, completed: bool) -> Any:
        """The OperatorLineage of this task: after a successful run with the result's snapshots, statistics and
        each table's schema (read from the warehouse); before or after a failed run the same datasets, unread."""
        from paimon_provider.utils.lineage import operator_lineage, without_versions

        cmd = self._lineage_command
        if cmd is None:  # not run yet (on start): the command from the rendered arguments and the connection
            cmd = self.build_spec().command
        io = self.lineage_io(cmd, self._lineage_result if completed else None)
        catalog = None
        if completed:
            from table_engine.catalog import create_catalog

            config = self._hook.get_conn() if self._hook is not None else None
            engine_options = config.engine_options() if config is not None else {}
            catalog = create_catalog(cmd.warehouse, {**engine_options, **dict(cmd.catalog_options)})
        else:
            io = without_versions(io)
        try:
            return operator_lineage(cmd.warehouse, io, catalog)
        finally:
            if catalog is not None:
                catalog.close()

    def get_openlineage_facets_on_start(self) -> Any:
        """OpenLineage (START): the datasets the command will read and write."""
        return self._openlineage(completed=False)

    def get_openlineage_facets_on_complete(self, task_instance: Any) -> Any:
        """OpenLineage (COMPLETE): the datasets with the snapshots read or written (``version``), the commit's
        statistics, schemas and lifecycle changes."""
        return self._openlineage(completed=self._lineage_result is not None)

    def get_openlineage_facets_on_failure(self, task_instance: Any) -> Any:
        """OpenLineage (FAIL): the datasets the command was to read and write; a job that gave its result and then
        failed the task (data-quality checks that did not pass) reports them as after a run, its results with
        them."""
        return self._openlineage(completed=self._lineage_result is not None)


class CommittingOperator(PaimonSparkOperator[C]):
    """An operator whose command commits under ``commit_user`` (templated): by default the task instance's
    (:func:`task_commit_user`), so that a later try of the same task instance finds the commit of an earlier one
    (docs/retries.md)."""

    template_fields: Sequence[str] = (*PaimonSparkOperator.template_fields, "commit_user")
    commit_user: str | None

    def execute(self, context: Context) -> dict[str, Any] | None:
        if self.commit_user is None:
            self.commit_user = task_commit_user(context)
        return super().execute(context)

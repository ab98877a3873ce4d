"""Row-level changes from Airflow: ``PaimonDeleteOperator``, ``PaimonUpdateOperator`` and ``PaimonMergeIntoOperator``
(the ``delete``, ``update`` and ``merge-into`` commands; docs/row-level-changes.md).

They run on the worker with the engine by default (``spark={"runner": "local"}``: the change is computed where the
files are read, no Spark job starts; ``"auto"`` sends it to the Spark application, which runs it on its driver); a
merge whose source is a Spark SQL query (``sql``) needs Spark and runs as a Spark job. Each commits under the task
instance's commit user, so a retry after a successful commit changes nothing again (docs/retries.md), and emits the
table's Asset with the committed snapshot.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from paimon_provider.operators.base import CommittingOperator
from paimon_provider.utils.arguments import as_columns, as_optional_text

if TYPE_CHECKING:
    from table_engine.ops import Delete, MergeInto, Update

__all__ = ["PaimonDeleteOperator", "PaimonMergeIntoOperator", "PaimonUpdateOperator"]


def _json(value: Any, name: str) -> Any:
    """A templated JSON argument: the value itself, or its rendered text parsed."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            raise ValueError(f"{name} must be JSON, got {value!r}") from None
    return value


def _conditions(value: Any, name: str) -> tuple[Any, ...]:
    parsed = _json(value, name)
    if parsed is None:
        return ()
    if not isinstance(parsed, Sequence) or isinstance(parsed, str):
        raise ValueError(f"{name} must be a list of [column, op, value], got {value!r}")
    return tuple(list(c) if isinstance(c, tuple) else c for c in parsed)


def _on_worker(kwargs: dict[str, Any]) -> dict[str, Any]:
    spark = dict(kwargs.pop("spark", None) or {})
    spark.setdefault("runner", "local")
    return spark


class PaimonDeleteOperator(CommittingOperator["Delete"]):
    """Delete the rows ``where`` selects: ``DELETE FROM table WHERE where``.

    :param where: the condition: a list of ``[column, op, value]`` (ANDed; a value may be ``{"column": name}``),
        or its JSON text; ``[]`` deletes every row (templated).
    :param commit_user: the commit user (templated); default: the task instance's.
    """

    writes_table = True
    template_fields: Sequence[str] = (*CommittingOperator.template_fields, "where")
    template_fields_renderers = {**CommittingOperator.template_fields_renderers, "where": "json"}
    ui_color = "#f4c7c3"

    def __init__(self, *, where: Sequence[Any] | str, commit_user: str | None = None, **kwargs: Any) -> None:
        super().__init__(spark=_on_worker(kwargs), **kwargs)
        self.where = where
        self.commit_user = commit_user

    def build_command(self, warehouse: str) -> Delete:
        from table_engine.ops import Delete

        return Delete(warehouse=warehouse, table=self.table, where=_conditions(self.where, "where"),
                      commit_user=as_optional_text(self.commit_user))


class PaimonUpdateOperator(CommittingOperator["Update"]):
    """Set columns of the rows ``where`` selects: ``UPDATE table SET set_values WHERE where``.

    :param set_values: column -> a literal or ``{"column": name}``, or its JSON text (templated).
    :param where: the condition as :class:`PaimonDeleteOperator`'s; None: every row (templated).
    :param commit_user: the commit user (templated); default: the task instance's.
    """

    writes_table = True
    template_fields: Sequence[str] = (*CommittingOperator.template_fields, "set_values", "where")
    template_fields_renderers = {**CommittingOperator.template_fields_renderers, "set_values": "json",
                                 "where": "json"}
    ui_color = "#f9e0b7"

    def __init__(self, *, set_values: Mapping[str, Any] | str, where: Sequence[Any] | str | None = None,
                 commit_user: str | None = None, **kwargs: Any) -> None:
        super().__init__(spark=_on_worker(kwargs), **kwargs)
        self.set_values = set_values
        self.where = where
        self.commit_user = commit_user

    def build_command(self, warehouse: str) -> Update:
        from table_engine.ops import Update

        values = _json(self.set_values, "set_values")
        if not isinstance(values, Mapping):
            raise ValueError(f"set_values must map columns to values, got {self.set_values!r}")
        return Update(warehouse=warehouse, table=self.table, set_values=dict(values),
                      where=_conditions(self.where, "where") if self.where is not None else None,
                      commit_user=as_optional_text(self.commit_user))


class PaimonMergeIntoOperator(CommittingOperator["MergeInto"]):
    """Merge a source's rows into the table: ``MERGE INTO table USING source ON on WHEN ...``.

    The source is one of ``source`` (files), ``source_table`` (a table of the same catalog) or ``sql`` (a Spark SQL
    query: runs as a Spark job). Each clause list holds ``{"action": ..., "condition": [...], "set": {...}}``
    objects; conditions name ``target.<column>`` and ``source.<column>``.

    :param on: the matching columns: names, or ``[target, source]`` pairs (templated).
    :param when_matched: clauses for matched target rows: ``update`` / ``delete`` (templated).
    :param when_not_matched: clauses for unmatched source rows: ``insert`` (templated).
    :param when_not_matched_by_source: clauses for unmatched target rows: ``update`` / ``delete`` (templated).
    :param source: files to read (templated). :param source_format: their format (templated).
    :param source_options: reader options of ``source`` (templated).
    :param source_table: a table of the same catalog (``db.t``) (templated).
    :param sql: a Spark SQL query giving the source rows (templated).
    :param commit_user: the commit user (templated); default: the task instance's.
    """

    writes_table = True
    template_fields: Sequence[str] = (*CommittingOperator.template_fields, "on", "when_matched", "when_not_matched",
                                      "when_not_matched_by_source", "source", "source_format", "source_options",
                                      "source_table", "sql")
    template_fields_renderers = {**CommittingOperator.template_fields_renderers, "sql": "sql", "on": "json",
                                 "when_matched": "json", "when_not_matched": "json",
                                 "when_not_matched_by_source": "json", "source_options": "json"}
    ui_color = "#d9c2ef"

    def __init__(self, *, on: Sequence[Any] | str, when_matched: Sequence[Any] | str = (),
                 when_not_matched: Sequence[Any] | str = (), when_not_matched_by_source: Sequence[Any] | str = (),
                 source: str | None = None, source_format: str = "parquet",
                 source_options: Mapping[str, Any] | None = None, source_table: str | None = None,
                 sql: str | None = None, commit_user: str | None = None, **kwargs: Any) -> None:
        if sum(x is not None for x in (source, source_table, sql)) != 1:
            raise ValueError("PaimonMergeIntoOperator needs exactly one of source, source_table and sql")
        spark = dict(kwargs.pop("spark", None) or {})
        if sql is None:
            spark.setdefault("runner", "local")
        super().__init__(spark=spark, **kwargs)
        self.on, self.when_matched, self.when_not_matched = on, when_matched, when_not_matched
        self.when_not_matched_by_source = when_not_matched_by_source
        self.source, self.source_format, self.source_options = source, source_format, dict(source_options or {})
        self.source_table, self.sql = source_table, sql
        self.commit_user = commit_user

    def build_command(self, warehouse: str) -> MergeInto:
        from table_engine.ops import MergeInto

        try:
            on = _json(self.on, "on")
        except ValueError:  # plain column names: "id" or "id,dt"
            on = list(as_columns(str(self.on)))
        on = (on,) if isinstance(on, str) else tuple(list(x) if isinstance(x, tuple) else x for x in on)
        def clauses(name: str) -> tuple[Any, ...]:
            return tuple(_json(getattr(self, name), name) or ())

        source = as_optional_text(self.source)
        return MergeInto(warehouse=warehouse, table=self.table, source=source,
                         source_table=as_optional_text(self.source_table), sql=as_optional_text(self.sql),
                         format=str(self.source_format).strip().lower(),
                         source_options={str(k): str(v) for k, v in self.source_options.items()} if source else {},
                         on=on, when_matched=clauses("when_matched"), when_not_matched=clauses("when_not_matched"),
                         when_not_matched_by_source=clauses("when_not_matched_by_source"),
                         commit_user=as_optional_text(self.commit_user))

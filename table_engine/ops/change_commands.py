"""The row-level commands: ``delete``, ``update`` and ``merge-into`` (SQL's DELETE, UPDATE and MERGE INTO, with
Paimon's semantics per table kind: docs/row-level-changes.md).

Conditions are the engine's predicates as JSON, ``[["column", "op", value], ...]`` (ANDed; a value may be
``{"column": "other"}``); assignments map columns to a literal or ``{"column": name}``. What they mean is
:mod:`table_engine.store.row_level.clauses`; the runners are in :mod:`table_engine.ops.run_changes`. No pyarrow at
import (see :mod:`table_engine.ops.base`): the spec is checked when a command is made, by the engine's parser.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from table_engine.ops.base import arg, command
from table_engine.ops.commands import SOURCE_FORMATS, CommittingCommand

__all__ = ["Delete", "MergeInto", "Update"]

_WHERE = ("the condition: a JSON array of [column, op, value] (ANDed; op one of = != < <= > >= in, not in, is null, "
          "is not null; a value may be {\"column\": name}), e.g. '[[\"user_id\", \"in\", [7, 9]]]'")


@command("delete", help="delete the rows of a table a condition selects (SQL's DELETE FROM ... "
         "WHERE; docs/row-level-changes.md)")
@dataclass(frozen=True, kw_only=True)
class Delete(CommittingCommand):
    """``DELETE FROM table WHERE where``: a primary-key table gets ``-D`` rows (merge engines as Paimon allows), an
    append table deletion vectors (``deletion-vectors.enabled``) or its touched files rewritten. ``where`` is
    required; ``[]`` deletes every row."""

    where: tuple[Any, ...] = arg(_WHERE, kind="json", required=True, metavar="JSON")
    commit_user: str | None = arg("commit user; a re-run with the same one finds the change committed and does "
                                  "nothing (the provider's default: the task instance's)")

    def __post_init__(self) -> None:
        super().__post_init__()
        _check_condition(self.name, self.where)


@command("update", help="set columns of the rows of a table a condition selects (SQL's UPDATE ... "
         "SET ... WHERE; docs/row-level-changes.md)")
@dataclass(frozen=True, kw_only=True)
class Update(CommittingCommand):
    """``UPDATE table SET set_values WHERE where`` (no ``where``: every row): a primary-key table (deduplicate or
    partial-update) gets ``+U`` rows, its key and partition columns fixed; an append table deletion vectors or its
    touched files rewritten, plus the updated rows."""

    set_values: Mapping[str, Any] = arg("the assignments: a JSON object of column -> literal or {\"column\": name}, "
                                        "e.g. '{\"status\": \"closed\"}'", flag="--set", kind="json", required=True,
                                        metavar="JSON")
    where: tuple[Any, ...] | None = arg(_WHERE + " (default: every row)", kind="json", metavar="JSON")
    commit_user: str | None = arg("commit user; a re-run with the same one finds the change committed and does "
                                  "nothing (the provider's default: the task instance's)")

    def __post_init__(self) -> None:
        super().__post_init__()
        from table_engine.errors import CommandError
        from table_engine.store.row_level.clauses import Clause

        if not isinstance(self.set_values, Mapping) or not self.set_values:
            raise CommandError(f"{self.name}: --set must be a JSON object of at least one column")
        with _as_command_error(self.name):
            Clause.parse({"action": "update", "set": dict(self.set_values)}, self.name)
        _check_condition(self.name, self.where or ())


@command("merge-into", spark_job=True, groups={"source": True},
         help="merge a source's rows into a table (SQL's MERGE INTO; docs/row-level-changes.md)")
@dataclass(frozen=True, kw_only=True)
class MergeInto(CommittingCommand):
    """``MERGE INTO table USING source ON on WHEN ...``: the source is files (``source``, ``format``), another
    table of the catalog (``source_table``, its latest snapshot) or a Spark SQL query (``sql``, spark-submit only);
    it is held in memory (on the Spark driver for a Spark job). Each clause list is a JSON array of
    ``{"action": ..., "condition": [...], "set": {...}}`` (conditions name ``target.c`` / ``source.c``)."""

    source: str | None = arg("path of the source files", group="source")
    source_table: str | None = arg("a table of the same catalog as the source (database.table)", group="source")
    sql: str | None = arg("Spark SQL query giving the source rows (spark-submit only)", group="source")
    format: str = arg("format of --source", kind="choice", choices=SOURCE_FORMATS, default="parquet")
    source_options: Mapping[str, str] = arg("reader option of --source (repeatable)", flag="--source-option",
                                            kind="key_value", metavar="K=V")
    on: tuple[Any, ...] = arg("the columns matching target and source rows: a JSON array of names (the same on "
                              "both sides) or [target, source] pairs, e.g. '[\"id\"]'", kind="json", required=True,
                              metavar="JSON")
    when_matched: tuple[Any, ...] = arg("clauses for target rows a source row matches: update or delete, e.g. "
                                        "'[{\"action\": \"update\"}]'", kind="json", metavar="JSON", default=())
    when_not_matched: tuple[Any, ...] = arg("clauses for source rows no target row matches: insert, e.g. "
                                            "'[{\"action\": \"insert\"}]'", kind="json", metavar="JSON", default=())
    when_not_matched_by_source: tuple[Any, ...] = arg("clauses for target rows no source row matches: update or "
                                                      "delete", kind="json", metavar="JSON", default=())
    commit_user: str | None = arg("commit user; a re-run with the same one finds the change committed and does "
                                  "nothing (the provider's default: the task instance's)")

    def __post_init__(self) -> None:
        super().__post_init__()
        from table_engine.store.row_level.clauses import MergeSpec

        with _as_command_error(self.name):
            MergeSpec.parse(self.spec())

    def needs_spark(self) -> bool:
        """Only a ``--sql`` source needs Spark; files and tables are read by the engine (``runner='local'``)."""
        return self.sql is not None

    def spec(self) -> dict[str, Any]:
        """The merge spec (:meth:`MergeSpec.parse <table_engine.store.row_level.clauses.MergeSpec.parse>`'s form)."""
        return {"on": list(self.on), "when_matched": list(self.when_matched),
                "when_not_matched": list(self.when_not_matched),
                "when_not_matched_by_source": list(self.when_not_matched_by_source)}


def _check_condition(name: str, where: Any) -> None:
    from table_engine.errors import CommandError
    from table_engine.predicate import parse_filters

    if not isinstance(where, (list, tuple)):
        raise CommandError(f"{name}: --where must be a JSON array of [column, op, value], got {where!r}")
    with _as_command_error(f"{name} --where"):
        parse_filters([tuple(c) if isinstance(c, list) else c for c in where], references=True)


@contextlib.contextmanager
def _as_command_error(where: str) -> Iterator[None]:
    """A malformed condition or clause is a bad argument of the command: CommandError, naming it."""
    from table_engine.errors import CommandError
    from table_engine.predicate import PredicateError

    try:
        yield
    except PredicateError as e:
        raise CommandError(f"{where}: {e}") from None

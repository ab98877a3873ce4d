"""Data-quality checks on a table or branch: typed definitions (:mod:`~table_engine.ops.checks.definitions`, no
pyarrow: DAG files build them) and their runner over one snapshot (:mod:`~table_engine.ops.checks.runner`). The
``check`` command (:class:`~table_engine.ops.commands.Check`) runs them; docs/checks.md describes every check."""

from table_engine.ops.checks.definitions import (
    CHECKS,
    Check,
    CheckResult,
    NoDuplicateKeys,
    NullFraction,
    RowCount,
    RowPredicate,
    RowsAdded,
    ValuesInRange,
    ValuesInSet,
    parse_check,
    parse_checks,
)

__all__ = ["CHECKS", "Check", "CheckResult", "NoDuplicateKeys", "NullFraction", "RowCount", "RowPredicate",
           "RowsAdded", "ValuesInRange", "ValuesInSet", "parse_check", "parse_checks"]

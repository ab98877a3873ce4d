"""Operators are generic over their command class (``CommittingOperator["Compact"]``): each names a registered
command of table_engine.ops, the command's name comes from it, and an operator naming none fails loudly."""

from __future__ import annotations

import pytest
from paimon_provider import operators
from paimon_provider.operators.base import CommittingOperator, PaimonSparkOperator, command_class_of

from table_engine.ops import REGISTRY, Compact, RewriteFileIndex


def test_every_operator_names_a_registered_command_class_of_its_own() -> None:
    classes = [getattr(operators, n) for n in operators.__all__]
    spark_ops = [c for c in classes if issubclass(c, PaimonSparkOperator) and c is not PaimonSparkOperator]
    named = {c: c.command_class for c in spark_ops}
    assert all(REGISTRY[cls.name] is cls for cls in named.values())
    assert len(set(named.values())) == len(spark_ops)  # one operator per command
    assert operators.PaimonCompactOperator.command_class is Compact
    op = operators.PaimonCompactOperator(task_id="c", table="db.t")
    assert op.command_class is Compact and op.command == Compact.name == "compact"


def test_rewrite_file_index_commits_as_the_task_instance() -> None:
    assert issubclass(operators.PaimonRewriteFileIndexOperator, CommittingOperator)
    assert operators.PaimonRewriteFileIndexOperator.command_class is RewriteFileIndex


def test_an_operator_naming_no_command_class_is_a_type_error() -> None:
    class Unnamed(PaimonSparkOperator):  # type: ignore[type-arg]
        pass

    with pytest.raises(TypeError, match="Unnamed names no command class"):
        command_class_of(Unnamed)

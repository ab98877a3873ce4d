"""Operators running commands of the Paimon Spark application (``table_engine/spark/app.py``)."""

from __future__ import annotations

from provider.operators.base import PaimonSparkOperator
from provider.operators.changelog import PaimonConsumeChangelogOperator
from provider.operators.compact import PaimonCompactOperator
from provider.operators.lifecycle import (
    PaimonCreateTagOperator,
    PaimonExpirePartitionsOperator,
    PaimonExpireSnapshotsOperator,
    PaimonExpireTagsOperator,
    PaimonRemoveOrphanFilesOperator,
    PaimonRollbackOperator,
)
from provider.operators.table import PaimonCreateTableOperator
from provider.operators.write import PaimonWriteOperator

__all__ = [
    "PaimonCompactOperator",
    "PaimonConsumeChangelogOperator",
    "PaimonCreateTableOperator",
    "PaimonCreateTagOperator",
    "PaimonExpirePartitionsOperator",
    "PaimonExpireSnapshotsOperator",
    "PaimonExpireTagsOperator",
    "PaimonRemoveOrphanFilesOperator",
    "PaimonRollbackOperator",
    "PaimonSparkOperator",
    "PaimonWriteOperator",
]

"""Operators running commands of the Paimon Spark application (``table_engine/spark/app.py``)."""

from __future__ import annotations

from provider.operators.base import PaimonSparkOperator
from provider.operators.changelog import PaimonConsumeChangelogOperator
from provider.operators.compact import PaimonCompactOperator, PaimonRescaleOperator
from provider.operators.lifecycle import (
    PaimonCreateTagOperator,
    PaimonDeleteTagOperator,
    PaimonDropPartitionsOperator,
    PaimonExpirePartitionsOperator,
    PaimonExpireSnapshotsOperator,
    PaimonExpireTagsOperator,
    PaimonRemoveOrphanFilesOperator,
    PaimonRewriteFileIndexOperator,
    PaimonRollbackOperator,
)
from provider.operators.table import PaimonCreateTableOperator
from provider.operators.write import PaimonWriteOperator

__all__ = [
    "PaimonCompactOperator",
    "PaimonConsumeChangelogOperator",
    "PaimonCreateTableOperator",
    "PaimonCreateTagOperator",
    "PaimonDeleteTagOperator",
    "PaimonDropPartitionsOperator",
    "PaimonExpirePartitionsOperator",
    "PaimonExpireSnapshotsOperator",
    "PaimonExpireTagsOperator",
    "PaimonRemoveOrphanFilesOperator",
    "PaimonRescaleOperator",
    "PaimonRewriteFileIndexOperator",
    "PaimonRollbackOperator",
    "PaimonSparkOperator",
    "PaimonWriteOperator",
]

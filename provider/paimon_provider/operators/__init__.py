"""Operators running commands of the Paimon Spark application (``table_engine/spark/app.py``)."""

from __future__ import annotations

from paimon_provider.operators.alter import PaimonAlterTableOperator
from paimon_provider.operators.base import PaimonSparkOperator
from paimon_provider.operators.branches import (
    PaimonCreateBranchOperator,
    PaimonDeleteBranchOperator,
    PaimonFastForwardOperator,
    PaimonRenameBranchOperator,
)
from paimon_provider.operators.changelog import PaimonConsumeChangelogOperator
from paimon_provider.operators.changes import PaimonDeleteOperator, PaimonMergeIntoOperator, PaimonUpdateOperator
from paimon_provider.operators.check import PaimonTableCheckOperator
from paimon_provider.operators.compact import (
    PaimonCompactDatabaseOperator,
    PaimonCompactOperator,
    PaimonRescaleOperator,
)
from paimon_provider.operators.health import PaimonTableHealthOperator
from paimon_provider.operators.history import PaimonTableHistoryOperator
from paimon_provider.operators.hygiene import (
    PaimonClearConsumersOperator,
    PaimonCompactManifestOperator,
    PaimonExpireChangelogsOperator,
    PaimonRemoveUnexistingFilesOperator,
    PaimonRepairOperator,
    PaimonResetConsumerOperator,
)
from paimon_provider.operators.lifecycle import (
    PaimonCreateTagOperator,
    PaimonDeleteTagOperator,
    PaimonDropPartitionsOperator,
    PaimonExpirePartitionsOperator,
    PaimonExpireSnapshotsOperator,
    PaimonExpireTagsOperator,
    PaimonMarkPartitionDoneOperator,
    PaimonRemoveOrphanFilesOperator,
    PaimonRewriteFileIndexOperator,
    PaimonRollbackOperator,
)
from paimon_provider.operators.maintain import PaimonMaintenanceOperator
from paimon_provider.operators.migration import (
    PaimonCloneOperator,
    PaimonMigrateDatabaseOperator,
    PaimonMigrateTableOperator,
)
from paimon_provider.operators.object_table import PaimonRefreshObjectTableOperator
from paimon_provider.operators.table import PaimonCreateTableOperator
from paimon_provider.operators.write import PaimonWriteOperator

__all__ = [
    "PaimonAlterTableOperator",
    "PaimonClearConsumersOperator",
    "PaimonCloneOperator",
    "PaimonCompactDatabaseOperator",
    "PaimonCompactManifestOperator",
    "PaimonCompactOperator",
    "PaimonConsumeChangelogOperator",
    "PaimonCreateBranchOperator",
    "PaimonCreateTableOperator",
    "PaimonCreateTagOperator",
    "PaimonDeleteBranchOperator",
    "PaimonDeleteOperator",
    "PaimonDeleteTagOperator",
    "PaimonDropPartitionsOperator",
    "PaimonExpireChangelogsOperator",
    "PaimonExpirePartitionsOperator",
    "PaimonExpireSnapshotsOperator",
    "PaimonExpireTagsOperator",
    "PaimonFastForwardOperator",
    "PaimonMarkPartitionDoneOperator",
    "PaimonMergeIntoOperator",
    "PaimonMigrateDatabaseOperator",
    "PaimonMigrateTableOperator",
    "PaimonRefreshObjectTableOperator",
    "PaimonRemoveOrphanFilesOperator",
    "PaimonRemoveUnexistingFilesOperator",
    "PaimonRenameBranchOperator",
    "PaimonMaintenanceOperator",
    "PaimonRepairOperator",
    "PaimonRescaleOperator",
    "PaimonResetConsumerOperator",
    "PaimonRewriteFileIndexOperator",
    "PaimonRollbackOperator",
    "PaimonSparkOperator",
    "PaimonTableCheckOperator",
    "PaimonTableHealthOperator",
    "PaimonTableHistoryOperator",
    "PaimonUpdateOperator",
    "PaimonWriteOperator",
]

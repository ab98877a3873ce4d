"""Write-audit-publish at its documented import path for DAG files (docs/wap.md): :mod:`paimon_provider.utils.wap`."""

from paimon_provider.utils.wap import *  # noqa: F403

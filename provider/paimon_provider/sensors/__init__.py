"""Sensors over Paimon table metadata (snapshots, partitions); both can defer to a trigger."""

from __future__ import annotations

from paimon_provider.sensors.partition import PaimonPartitionSensor
from paimon_provider.sensors.snapshot import PaimonSnapshotSensor

__all__ = ["PaimonPartitionSensor", "PaimonSnapshotSensor"]

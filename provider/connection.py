"""The ``paimon`` connection: a warehouse, its catalog options, and the Spark connection jobs on it use.

Fields live in the connection's extra (declared as ``conn-fields`` in the provider info, so the Airflow UI shows a
form for them). This module only parses values; fetching the connection is the hooks' job, at execute time.

Example, as an environment variable::

    AIRFLOW_CONN_PAIMON_DEFAULT='{"conn_type": "paimon", "extra": {"warehouse": "s3://lake/warehouse",
        "catalog_options": {"fs.s3.region": "eu-west-1"}, "spark_conn_id": "spark_cluster"}}'
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

CONN_TYPE = "paimon"
DEFAULT_CONN_ID = "paimon_default"
DEFAULT_SPARK_CONN_ID = "spark_default"


def _extra_value(extra: Mapping[str, Any], name: str) -> Any:
    """A field as stored by the UI form (plain name) or by older forms (``extra__paimon__<name>``)."""
    value = extra.get(name)
    if value in (None, ""):
        value = extra.get(f"extra__{CONN_TYPE}__{name}")
    return None if value == "" else value


def _string_map(value: Any, what: str, conn_id: str) -> dict[str, str]:
    if value in (None, ""):
        return {}
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError as e:
            raise ValueError(f"connection {conn_id!r}: {what} must be a JSON object: {e}") from e
    if not isinstance(value, Mapping):
        raise ValueError(f"connection {conn_id!r}: {what} must be a JSON object, got {type(value).__name__}")
    return {str(k): str(v) for k, v in value.items()}


@dataclass(frozen=True)
class PaimonConnectionConfig:
    """A resolved ``paimon`` connection.

    :param conn_id: the connection id.
    :param warehouse: warehouse URI (a local path, ``file://``, ``s3://``, ... any pyarrow filesystem URI).
    :param catalog_options: catalog options passed to the engine and the Spark application.
    :param spark_conn_id: the Spark connection Spark jobs on this warehouse use.
    :param python: the Python interpreter on the Spark cluster (``spark.pyspark.python``), if not Airflow's.
    :param spark_conf: Spark configuration for every job on this warehouse (e.g. object-store credentials).
    """

    conn_id: str
    warehouse: str
    catalog_options: dict[str, str] = field(default_factory=dict)
    spark_conn_id: str = DEFAULT_SPARK_CONN_ID
    python: str | None = None
    spark_conf: dict[str, str] = field(default_factory=dict)

    @staticmethod
    def from_connection_fields(conn_id: str, host: str | None, extra: Mapping[str, Any]) -> PaimonConnectionConfig:
        """Parse a connection: ``warehouse`` from the extra (or, failing that, the host field)."""
        warehouse = _extra_value(extra, "warehouse") or host
        if not warehouse:
            raise ValueError(f"connection {conn_id!r} has no warehouse: set the 'warehouse' field")
        return PaimonConnectionConfig(
            conn_id=conn_id,
            warehouse=str(warehouse),
            catalog_options=_string_map(_extra_value(extra, "catalog_options"), "catalog_options", conn_id),
            spark_conn_id=str(_extra_value(extra, "spark_conn_id") or DEFAULT_SPARK_CONN_ID),
            python=_extra_value(extra, "python"),
            spark_conf=_string_map(_extra_value(extra, "spark_conf"), "spark_conf", conn_id),
        )

"""The streaming-lake layer DAGs on a JDBC catalog (``metastore`` = ``jdbc``, SQLite: no server) and on a Hive
Metastore catalog (``metastore`` = ``hive``, the session's Hive Metastore 2.3.10): one batch flows
ODS -> DWD -> DWS -> ADS with ``dag.test()``, its jobs with the engine on the worker (``LAPTOP_SPARK_CONF``, as
``make demo``), every table created, written, compacted and tagged through the catalog the connection names: the
tables are the JDBC catalog's (registered there), and hold what the reference model says
(tests/dags/test_lake_dags.py runs both batches on the filesystem catalog, the second through spark-submit)."""

from __future__ import annotations

import pathlib
from typing import Any

import example_lake as sample
import pytest

from tests import airflow_env
from tests.dags.test_lake_dags import latest_orders, run

pytestmark = [pytest.mark.airflow, pytest.mark.slow, pytest.mark.timeout(1200)]


@pytest.mark.parametrize("metastore", ["jdbc", pytest.param("hive", marks=pytest.mark.integration)])
def test_one_batch_through_the_layers_on_a_metastore_catalog(dagbag: Any, airflow_db: None, lake: dict[str, str],
                                                             monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path,
                                                             request: pytest.FixtureRequest, metastore: str) -> None:
    from table_engine.catalog import create_catalog

    if metastore == "jdbc":
        uri = f"jdbc:sqlite:{tmp_path / 'catalog.db'}"
    else:  # each test's own databases: the session's metastore is shared
        uri = request.getfixturevalue("hive_metastore").uri
    options = {"metastore": metastore, "uri": uri, "lock.enabled": "true"}
    monkeypatch.setenv("AIRFLOW_CONN_PAIMON_DEFAULT", airflow_env.paimon_connection(
        lake["warehouse"], spark_conf=sample.LAPTOP_SPARK_CONF, metastore=metastore, uri=uri, lock_enabled=True))
    run(dagbag, "paimon_lake_ods", {"batch": 1, "landing_dir": lake["landing"]})
    run(dagbag, "paimon_lake_dwd")
    run(dagbag, "paimon_lake_dws")
    run(dagbag, "paimon_lake_ads")

    with create_catalog(lake["warehouse"], options) as catalog:
        assert {"ods", "dwd", "dws"} <= set(catalog.list_databases())
        assert "order_events" in catalog.list_tables("ods") and "user_daily" in catalog.list_tables("dws")
        assert catalog.get_table("ods.order_events").read().num_rows == len(sample.order_event_rows(1))
        dwd = catalog.get_table("dwd.orders")
        got = {(r["order_id"], r["dt"]): (r["status"], r["amount"]) for r in dwd.read().to_pylist()}
        assert got == latest_orders((1,))
        dws = catalog.get_table("dws.user_daily")
        totals = {(r["user_id"], r["dt"]): (r["quantity"], round(r["amount"], 2)) for r in dws.read().to_pylist()}
        assert totals == sample.expected_user_daily((1,))
        assert len(dws.list_tags()) == 1
        assert "ADS: dws.user_daily at tag ads-" in sample.report(lake["warehouse"], options=options)

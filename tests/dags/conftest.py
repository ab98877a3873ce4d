"""DAG tests: the session Airflow home (see tests/airflow_env.py); the DagBag of dags/ is loaded once."""

from __future__ import annotations

import pathlib
from collections.abc import Iterator
from typing import Any

import pytest
from example_lake import SMALL_LOCAL_SPARK_CONF

from tests import airflow_env

airflow_env.configure()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Running DAGs goes through Airflow's API server code, whose dependencies (starlette, ...) emit deprecation
    warnings; the suite's filterwarnings=error would turn them into failures of these tests only.

    The tests that use the live Airflow (``live``) run last among these, one after the other, so that it is up only
    while they run (it is stopped when this folder's tests end)."""
    here = pathlib.Path(__file__).parent
    ours = [item for item in items if here in pathlib.Path(str(item.fspath)).parents]
    for item in ours:
        item.add_marker(pytest.mark.filterwarnings("ignore::DeprecationWarning"))
        item.add_marker(pytest.mark.filterwarnings("ignore::PendingDeprecationWarning"))
        item.add_marker(pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`"))
    live = [item for item in ours if "live" in getattr(item, "fixturenames", ())]
    if live and len(live) < len(ours):
        moved, own = {id(item) for item in live}, {id(item) for item in ours}
        rest = [item for item in items if id(item) not in moved]
        end = 1 + max(i for i, item in enumerate(rest) if id(item) in own)
        items[:] = [*rest[:end], *live, *rest[end:]]


@pytest.fixture(scope="session")
def airflow_db() -> None:
    airflow_env.migrate()


@pytest.fixture(scope="session")
def dagbag() -> Any:
    from airflow.dag_processing.dagbag import DagBag

    bag = DagBag(dag_folder=str(airflow_env.DAGS_FOLDER))
    for dag in bag.dags.values():
        _each_run_from_the_defaults(dag)
    return bag


def _each_run_from_the_defaults(dag: Any) -> None:
    """``dag.test(run_conf=...)`` keeps a run's values in the DAG's Param objects (Airflow 3.3: ``ParamsDict``'s
    ``__setitem__`` resolves them in place), so a later run of the same DAG object that leaves a field out would
    take the last run's value, not its default (a sort asked for by one test ran in the next). Every test run
    starts from the defaults the DAG file gives, as a run triggered from the UI does."""
    def has_default(key: str, value: Any) -> bool:  # a required field (no default) stays for the test to give
        kinds = dag.params.get_param(key).schema.get("type")
        return value is not None or "null" in (kinds if isinstance(kinds, list) else [kinds])

    defaults = {k: v for k, v in dag.params.dump().items() if has_default(k, v)}
    test = dag.test

    def run_from_defaults(*args: Any, run_conf: dict[str, Any] | None = None, **kwargs: Any) -> Any:
        return test(*args, run_conf={**defaults, **(run_conf or {})}, **kwargs)

    dag.test = run_from_defaults


@pytest.fixture
def lake(monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path) -> Iterator[dict[str, str]]:
    """Connections for a fresh local warehouse on Spark ``local[2]``, and a landing directory."""
    warehouse = str(tmp_path / "warehouse")
    landing = str(tmp_path / "landing")
    monkeypatch.setenv("AIRFLOW_CONN_PAIMON_DEFAULT", airflow_env.paimon_connection(
        warehouse, spark_conf=SMALL_LOCAL_SPARK_CONF))
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_DEFAULT", airflow_env.spark_connection("local[2]"))
    monkeypatch.setenv("PAIMON_LANDING_DIR", landing)
    yield {"warehouse": warehouse, "landing": landing}


@pytest.fixture(scope="package")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, dict[str, str]]]:
    """The live Airflow (:mod:`tests.live_airflow`, as ``make airflow`` runs it) and its lake (``warehouse``,
    ``landing``): started once for the tests of this folder that use it (run last, see above), always stopped."""
    from tests.live_airflow import start_live_airflow

    airflow, lake = start_live_airflow(tmp_path_factory.mktemp("live-airflow"))
    try:
        yield airflow, lake
    finally:
        airflow.stop()

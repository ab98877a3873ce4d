"""The provider as a deployment sees it, run by the Python of a compat venv (``make test-compat``) in which the built
wheel is installed: nothing of the repository is importable here except the DAG files it parses and runs.

Checks, each printed as one line: the provider is registered (``airflow providers list``) from the installed wheel;
every DAG in ``dags/`` parses (DagBag, no import errors); the ``paimon`` connection form has the fields the provider
declares; ``dag.test()`` of the ODS -> DWD layers (``paimon_lake_ods``, ``paimon_lake_dwd``: the tables then hold
the batch) and of ``paimon_compact`` succeeds with their Spark jobs run through ``spark-submit`` (counted by a
``spark-submit`` wrapper first on PATH, which runs the venv's own). Exit code 0 when all pass.

    python scripts/compat_check.py --dags dags [--work DIR]
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

DISTRIBUTION = "airflow-provider-paimon"
CONN_TYPE = "paimon"
LAYERS = ("paimon_lake_ods", "paimon_lake_dwd")
COMPACT_DAG = "paimon_compact"
SPARK_CONF = {"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "2",
              "spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"}
BIN = pathlib.Path(sys.executable).parent


def configure(work: pathlib.Path, dags: pathlib.Path) -> pathlib.Path:
    """Airflow home, connections and Spark environment for this process and its children (before ``import
    airflow``); a ``spark-submit`` wrapper that logs each call to the returned file, first on PATH."""
    home, shim = work / "airflow-home", work / "bin"
    home.mkdir(parents=True)
    shim.mkdir()
    calls = work / "spark-submit.calls"
    wrapper = shim / "spark-submit"
    wrapper.write_text(f'#!/bin/sh\necho "$*" >> "{calls}"\nexec "{BIN / "spark-submit"}" "$@"\n')
    wrapper.chmod(0o755)
    os.environ.update({
        "AIRFLOW_HOME": str(home),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__CORE__DAGS_FOLDER": str(dags),
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{home}/airflow.db",
        "AIRFLOW__CORE__UNIT_TEST_MODE": "False",
        "AIRFLOW__CORE__DAGS_ARE_PAUSED_AT_CREATION": "False",
        "AIRFLOW_CONN_PAIMON_DEFAULT": json.dumps({"conn_type": CONN_TYPE, "extra": {
            "warehouse": str(work / "warehouse"), "spark_conn_id": "spark_default", "spark_conf": SPARK_CONF}}),
        "AIRFLOW_CONN_SPARK_DEFAULT": json.dumps({"conn_type": "spark", "host": "local[2]"}),
        "PYSPARK_PYTHON": sys.executable,
        "PYSPARK_DRIVER_PYTHON": sys.executable,
        "SPARK_LOCAL_IP": "127.0.0.1",
        "PATH": os.pathsep.join([str(shim), str(BIN), os.environ.get("PATH", "")]),
    })
    for name in ("PYTHONPATH", "SPARK_HOME"):
        os.environ.pop(name, None)
    return calls


def check_installed() -> str:
    """The provider registers from the installed wheel (not from a source tree)."""
    dist = importlib.metadata.distribution(DISTRIBUTION)
    (entry,) = [e for e in dist.entry_points if e.group == "apache_airflow_provider"]
    module = importlib.import_module(entry.value.partition(":")[0])
    path = pathlib.Path(str(module.__file__)).resolve()
    site = pathlib.Path(str(dist.locate_file(""))).resolve()
    assert site in path.parents, f"{entry.value} is imported from {path}, not from the installed wheel in {site}"
    out = subprocess.run([str(BIN / "airflow"), "providers", "list"], capture_output=True, text=True, timeout=300,
                         check=True).stdout
    assert DISTRIBUTION in out, f"airflow providers list does not show {DISTRIBUTION}:\n{out}"
    return f"{DISTRIBUTION} {dist.version} registered ({entry.value}, {path.parent})"


def dagbag(dags: pathlib.Path) -> Any:
    # the DAG folder on sys.path, as Airflow's DAG bundle puts it there (the DAGs import dags/example_lake.py)
    if str(dags) not in sys.path:
        sys.path.insert(0, str(dags))
    try:
        from airflow.dag_processing.dagbag import DagBag
    except ImportError:  # before Airflow 3.1
        from airflow.models.dagbag import DagBag  # type: ignore[no-redef]
    return DagBag(dag_folder=str(dags))  # examples are off (AIRFLOW__CORE__LOAD_EXAMPLES)


def check_dags(bag: Any) -> str:
    assert not bag.import_errors, f"DAG import errors: {bag.import_errors}"
    missing = [d for d in (*LAYERS, COMPACT_DAG) if d not in bag.dags]
    assert bag.dags and not missing, f"DAGs missing: {missing} (found {sorted(bag.dags)})"
    return f"{len(bag.dags)} DAGs parse, no import errors"


def check_connection_form() -> str:
    """Every field the provider declares for its connection type is in the form Airflow serves."""
    from airflow.providers_manager import ProvidersManager

    dist = importlib.metadata.distribution(DISTRIBUTION)
    (entry,) = [e for e in dist.entry_points if e.group == "apache_airflow_provider"]
    info = entry.load()()
    (conn,) = [c for c in info["connection-types"] if c["connection-type"] == CONN_TYPE]
    manager = ProvidersManager()  # type: ignore[no-untyped-call]
    widgets = set(manager.connection_form_widgets)
    missing = [f for f in conn["conn-fields"] if f"extra__{CONN_TYPE}__{f}" not in widgets]
    assert not missing, f"connection form of {CONN_TYPE!r} lacks fields {missing}"
    behaviour = manager.field_behaviours.get(CONN_TYPE) or {}
    hidden = conn["ui-field-behaviour"]["hidden-fields"]
    assert sorted(behaviour.get("hidden_fields", [])) == sorted(hidden), f"field behaviour: {behaviour}"
    return f"connection form {CONN_TYPE!r}: {len(conn['conn-fields'])} fields, {len(hidden)} hidden"


def run_dag(bag: Any, dag_id: str, calls: pathlib.Path, conf: dict[str, Any] | None = None) -> str:
    before = _calls(calls)
    started = time.monotonic()
    run = bag.dags[dag_id].test(run_conf=conf)
    states = {ti.task_id: str(ti.state) for ti in run.get_task_instances()}
    assert str(run.state) in ("success", "DagRunState.SUCCESS"), f"{dag_id}: {run.state} {states}"
    submits = _calls(calls) - before
    assert submits > 0, f"{dag_id}: no job went through spark-submit"
    return f"dag.test({dag_id}): success, {submits} spark-submit jobs, {time.monotonic() - started:.0f} s"


def check_rows(warehouse: pathlib.Path) -> str:
    """The layers' Spark jobs moved the batch: ODS holds it, DWD its orders (deduplicated by key)."""
    from table_engine import Catalog

    catalog = Catalog(str(warehouse))
    ods, dwd = (catalog.get_table(t).read().num_rows for t in ("ods.order_events", "dwd.orders"))
    assert 0 < dwd <= ods, f"ods.order_events has {ods} rows, dwd.orders {dwd}"
    return f"ods.order_events: {ods} rows, dwd.orders: {dwd} rows"


def _calls(calls: pathlib.Path) -> int:
    return len(calls.read_text().splitlines()) if calls.exists() else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dags", required=True, type=pathlib.Path)
    parser.add_argument("--work", type=pathlib.Path, help="scratch directory (default: a temporary one, removed)")
    args = parser.parse_args(argv)
    work = args.work or pathlib.Path(tempfile.mkdtemp(prefix="paimon-compat-"))
    try:
        calls = configure(work, args.dags.resolve())
        import pyspark
        from airflow import __version__ as airflow_version

        print(f"[compat] Airflow {airflow_version}, pyspark {pyspark.__version__}, {sys.executable}", flush=True)
        subprocess.run([str(BIN / "airflow"), "db", "migrate"], check=True, capture_output=True, timeout=600)
        bag = dagbag(args.dags.resolve())
        steps: list[tuple[str, Callable[[], str]]] = [
            ("provider", check_installed),
            ("dags", lambda: check_dags(bag)),
            ("connection form", check_connection_form),
            ("ods", lambda: run_dag(bag, LAYERS[0], calls, {"batch": 1, "landing_dir": str(work / "landing")})),
            ("dwd", lambda: run_dag(bag, LAYERS[1], calls)),
            ("rows", lambda: check_rows(work / "warehouse")),
            ("compact", lambda: run_dag(bag, COMPACT_DAG, calls, {"tables": ["ods.order_events", "dwd.orders"],
                                                                   "mode": "full"})),
        ]
        failed = 0
        for name, step in steps:
            try:
                print(f"[compat] ok   {step()}", flush=True)
            except Exception as e:  # report every failing check, not only the first
                failed += 1
                print(f"[compat] FAIL {name}: {type(e).__name__}: {e}", flush=True)
        return 1 if failed else 0
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

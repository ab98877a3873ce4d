"""What a DAG file's import pulls in at parse time (the DAG processor parses files often): the provider's
operators, sensors and hooks load no pyarrow, no pyspark and nothing of the engine but its error tree; the engine
(and Arrow) is imported where a task or a trigger runs."""

from __future__ import annotations

import subprocess
import sys

ALLOWED_ENGINE_MODULES = {"table_engine", "table_engine.errors"}


def test_provider_modules_a_dag_file_imports_load_no_pyarrow_and_no_engine_store() -> None:
    from tests.airflow_env import DAGS_FOLDER

    code = ("import sys, runpy\n"
            f"sys.path.insert(0, {str(DAGS_FOLDER)!r})  # as Airflow puts the DAG folder on sys.path\n"
            "import paimon_provider, paimon_provider.operators, paimon_provider.sensors, paimon_provider.hooks.table\n"
            f"for f in {sorted(str(p) for p in DAGS_FOLDER.glob('*.py'))!r}: runpy.run_path(f)\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pyspark', 'pyarrow', 'table_engine')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300)
    loaded = set(eval(out.stdout.strip().splitlines()[-1]))  # noqa: S307 - our own subprocess's list of names
    assert loaded <= ALLOWED_ENGINE_MODULES, sorted(loaded - ALLOWED_ENGINE_MODULES)

"""Layers point one way: io -> format -> lsm -> store -> table facade -> spark -> provider.

A module may import only from its own layer or the layers below it; ``table_engine`` never imports Airflow, and
never imports pyspark outside ``table_engine/spark``.
"""

from __future__ import annotations

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]
# rank of each table_engine sub-package; top-level modules not listed are shared foundations (rank 0)
RANKS = {"errors": 0, "types": 0, "predicate": 0,
         "options": 0, "core_options": 0, "core_enums": 0, "io": 1, "format": 2, "lsm": 3, "store": 4,
         "schema_change": 5, "table": 5, "table_source": 5, "catalog": 6, "system_tables": 5,
         "ops": 7, "cli": 7, "spark": 8}


def _layer(module: str) -> int | None:
    parts = module.split(".")
    if parts[0] != "table_engine" or len(parts) < 2:
        return None
    return RANKS.get(parts[1], 0)


def _imports(path: pathlib.Path) -> list[str]:
    tree = ast.parse(path.read_text())
    out: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.append(node.module)
    return out


def _dag_modules() -> set[str]:
    """The top-level names of the DAG folder's modules (Airflow puts the folder on sys.path)."""
    return {p.stem for p in (ROOT / "dags").glob("*.py")}


def test_table_engine_layers_point_one_way() -> None:
    problems = []
    for path in sorted((ROOT / "table_engine").rglob("*.py")):
        rel = path.relative_to(ROOT).with_suffix("")
        module = ".".join(rel.parts).removesuffix(".__init__")
        own = _layer(module)
        if own is None:
            continue
        for imp in _imports(path):
            top = imp.split(".")[0]
            if top == "airflow":
                problems.append(f"{module} imports {imp}: table_engine never imports Airflow")
            if top == "paimon_provider" or top in _dag_modules():
                problems.append(f"{module} imports {imp}: the provider and the DAGs sit above the engine")
            if top == "pyspark" and not module.startswith("table_engine.spark"):
                problems.append(f"{module} imports {imp}: only table_engine.spark may import pyspark")
            other = _layer(imp)
            if other is not None and other > own:
                problems.append(f"{module} (layer {own}) imports {imp} (layer {other})")
    assert not problems, "\n".join(problems)


# table_engine.store's subpackages, in order: each may import only the shared store modules (store/*.py, rank 0)
# and the subpackages before it
STORE_ORDER = ("indexes", "reading", "committing", "compaction", "writing", "changes", "lifecycle")


def _store_rank(module: str) -> int | None:
    parts = module.split(".")
    if parts[:2] != ["table_engine", "store"]:
        return None
    return STORE_ORDER.index(parts[2]) + 1 if len(parts) > 2 and parts[2] in STORE_ORDER else 0


def test_store_subpackages_point_one_way() -> None:
    store = ROOT / "table_engine" / "store"
    assert sorted(p.name for p in store.iterdir() if (p / "__init__.py").exists()) == sorted(STORE_ORDER)
    problems = []
    for path in sorted(store.rglob("*.py")):
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        own = _store_rank(module)
        assert own is not None
        for imp in _imports(path):
            other = _store_rank(imp)
            if other is not None and other > own:
                problems.append(f"{module} imports {imp}: store/{STORE_ORDER[other - 1]} comes after it")
    assert not problems, "\n".join(problems)


# table_engine.spark: two rooms, and the runtime at the package's top (compat, connect_server) beneath both: the
# runtime imports neither room (app.py, the application, and the package face may)
SPARK_ROOMS = ("datasource", "jobs")
SPARK_RUNTIME = ("compat", "connect_server")


def test_spark_runtime_sits_beneath_its_rooms() -> None:
    spark = ROOT / "table_engine" / "spark"
    assert sorted(p.name for p in spark.iterdir() if (p / "__init__.py").exists()) == sorted(SPARK_ROOMS)
    problems = []
    for name in SPARK_RUNTIME:
        for imp in _imports(spark / f"{name}.py"):
            parts = imp.split(".")
            if parts[:2] == ["table_engine", "spark"] and len(parts) > 2 and parts[2] in SPARK_ROOMS:
                problems.append(f"table_engine.spark.{name} imports {imp}: the runtime sits beneath the rooms")
    assert not problems, "\n".join(problems)

"""Spark fixtures: one local[2] SparkSession for the whole test session, and running the application through
real ``spark-submit`` processes.

Executors run this interpreter (``PYSPARK_PYTHON``), so the Python workers import the same ``table_engine``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.interop.conftest import paimon_java, pypaimon  # noqa: F401  (session fixtures, for the interop tests)

pytest.importorskip("pyspark")

REPO_ROOT = Path(__file__).resolve().parents[2]
APP = REPO_ROOT / "table_engine" / "spark" / "app.py"
BIN = Path(sys.executable).parent
SPARK_WARNINGS = ("ignore:PySpark does not yet fully support pandas:FutureWarning",
                  "ignore::DeprecationWarning:pyspark.*", "ignore::ResourceWarning")


def spark_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """Environment for Spark processes: this venv's python for driver and workers, loopback networking."""
    env = dict(os.environ)
    env.update({
        "PYSPARK_PYTHON": sys.executable,
        "PYSPARK_DRIVER_PYTHON": sys.executable,
        "SPARK_LOCAL_IP": "127.0.0.1",
        "PATH": f"{BIN}{os.pathsep}{env.get('PATH', '')}",
        "PYTHONPATH": f"{REPO_ROOT}{os.pathsep}{env.get('PYTHONPATH', '')}",
    })
    env.pop("SPARK_HOME", None)  # the wheel's own
    env.update(extra or {})
    return env


@pytest.hookimpl(tryfirst=True)  # before ``-m`` deselects: a test that starts the JVM is in the spark tier
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "spark" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.spark)
        if "tests/spark/" in str(item.fspath).replace(os.sep, "/"):
            for spec in SPARK_WARNINGS:
                item.add_marker(pytest.mark.filterwarnings(spec))


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """The session's SparkSession: local[2], the ``paimon`` source registered, filter pushdown on."""
    import warnings

    os.environ.update({k: v for k, v in spark_env().items()
                       if k in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "SPARK_LOCAL_IP")})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from pyspark.sql import SparkSession

        session = (SparkSession.builder.master("local[2]").appName("table-engine-tests")
                   .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
                   .config("spark.sql.shuffle.partitions", "2").config("spark.default.parallelism", "2")
                   .config("spark.sql.session.timeZone", "UTC")
                   .config("spark.driver.extraJavaOptions", "-Dlog4j2.level=WARN")
                   .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    from table_engine.spark import register

    register(session)
    yield session
    session.stop()


@dataclass
class SubmitResult:
    returncode: int
    result: dict[str, Any] | None
    stdout: str
    stderr: str
    seconds: float

    def ok(self) -> dict[str, Any]:
        assert self.returncode == 0 and self.result is not None and self.result.get("status") == "ok", (
            f"exit {self.returncode}, result {self.result}\n--- stderr (tail)\n{self.stderr[-6000:]}")
        return self.result


def last_json(stdout: str) -> dict[str, Any] | None:
    for line in reversed(stdout.splitlines()):
        line = line.strip()
        if line.startswith("{") and line.endswith("}"):
            value = json.loads(line)
            return value if isinstance(value, dict) else None
    return None


def spark_submit(args: Sequence[str], master: str = "local[2]", env: dict[str, str] | None = None,
                 conf: dict[str, str] | None = None, timeout: float = 600) -> SubmitResult:
    """``spark-submit --master <master> table_engine/spark/app.py <args>`` (the venv's spark-submit)."""
    cmd = [str(BIN / "spark-submit"), "--master", master, "--conf", "spark.ui.enabled=false",
           "--conf", "spark.ui.showConsoleProgress=false", "--conf", "spark.sql.shuffle.partitions=2"]
    for k, v in (conf or {}).items():
        cmd += ["--conf", f"{k}={v}"]
    cmd += [str(APP), *args]
    started = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=spark_env(env),
                          cwd=str(REPO_ROOT), check=False)
    return SubmitResult(proc.returncode, last_json(proc.stdout), proc.stdout, proc.stderr,
                        time.monotonic() - started)


def run_cli(args: Sequence[str]) -> SubmitResult:
    """The ``table-engine`` console script."""
    started = time.monotonic()
    proc = subprocess.run([str(BIN / "table-engine"), *args], capture_output=True, text=True, timeout=300,
                          env=spark_env(), check=False)
    return SubmitResult(proc.returncode, last_json(proc.stdout), proc.stdout, proc.stderr,
                        time.monotonic() - started)

"""``make test-compat``: the provider installed from its built wheel into the Airflow and Spark that users run.

Builds the sdist and wheel (``python -m build``; ``twine check``), installs the wheel into two venvs and runs
``scripts/compat_check.py`` in each (providers list, DAG parsing, connection form, ``dag.test()`` through
spark-submit):

* ``oldest``: the floors of the ``airflow`` and ``spark`` extras in pyproject.toml, exactly (oldest Airflow, the
  Spark provider that still works with pyspark 3.5, pyspark 3.5), with the caps of ``constraints-oldest.txt``;
* ``newest``: the extras under the versions the development venv is made with (``constraints-newest.txt``).

Each venv holds the requirement set only (the wheel's dependencies from pyproject.toml, the pinned Airflow and
Spark, ``build`` and ``twine``) and is kept between runs under a stamp of that set: a warm run reinstalls only the
wheel (``--no-deps``), then ``pip check`` proves its declared dependencies are met. Every child process has a
timeout; the scratch directories are removed.

    python scripts/test_compat.py --newest-file constraints-newest.txt --oldest-file constraints-oldest.txt \
        [--only oldest|newest] [--python python3.11]
"""

from __future__ import annotations

import argparse
import concurrent.futures
import hashlib
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import tomllib

REPO = pathlib.Path(__file__).resolve().parents[1]
EXTRAS = ("airflow", "spark")
TOOLS = ("build>=1.2", "twine>=5")
AT_FLOOR = ("apache-airflow", "apache-airflow-providers-apache-spark", "pyspark")
PIP_TIMEOUT = 1800
CHECK_TIMEOUT = 1800
_FLOOR = re.compile(r"^([A-Za-z0-9_.\-\[\]]+)\s*>=\s*([^,;\s]+)")


def pyproject() -> dict[str, object]:
    with open(REPO / "pyproject.toml", "rb") as f:
        project: dict[str, object] = tomllib.load(f)["project"]
    return project


def floors(requirements: list[str]) -> list[str]:
    """``name>=x,<y`` -> ``name==x``: Airflow, the Spark provider and pyspark at the oldest version their range
    allows (other requirements keep their range)."""
    out = []
    for req in requirements:
        name = re.split(r"[\[<>=!~;,\s]", req, maxsplit=1)[0].lower()
        if name not in AT_FLOOR:
            out.append(req)
            continue
        m = _FLOOR.match(req)
        if m is None:
            raise SystemExit(f"pyproject.toml: {req!r} has no '>=' floor to test the oldest version of")
        out.append(f"{m.group(1)}=={m.group(2)}")
    return out


def read_pins(path: pathlib.Path) -> list[str]:
    """The requirement lines of a constraints file (comments and blank lines left out)."""
    lines = [line.split("#")[0].strip() for line in path.read_text().splitlines()]
    return [line for line in lines if line]


def requirement_sets(oldest_caps: list[str], newest: list[str]) -> dict[str, tuple[list[str], list[str]]]:
    """Per venv: (requirements, constraints). Both hold the wheel's dependencies and the ``airflow`` and ``spark``
    extras; ``oldest`` at the extras' floors (with ``oldest_caps``), ``newest`` constrained by ``newest``."""
    project = pyproject()
    base = list(project["dependencies"])  # type: ignore[call-overload]
    extras: dict[str, list[str]] = project["optional-dependencies"]  # type: ignore[assignment]
    ranged = [r for e in EXTRAS for r in extras[e]]
    return {"oldest": ([*base, *floors(ranged), *TOOLS], oldest_caps),
            "newest": ([*base, *ranged, *TOOLS], newest)}


def run(cmd: list[str], timeout: float, **kwargs: object) -> None:
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, timeout=timeout, **kwargs)  # type: ignore[call-overload]


def run_group(cmd: list[str], cwd: str, timeout: float) -> int:
    """Run ``cmd`` in its own process group (it starts Airflow tasks, spark-submit, JVMs); on timeout or
    interruption the whole group is killed. The exit code."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SPARK_HOME", "VIRTUAL_ENV")}
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, start_new_session=True)
    try:
        return proc.wait(timeout=timeout)
    except BaseException:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        raise


def pin_of(requirements: list[str], name: str) -> str | None:
    """``name==version`` from the first exact pin of ``name`` (extras dropped)."""
    for req in requirements:
        project, _, version = req.partition("==")
        if version and project.split("[")[0].strip().lower() == name:
            return f"{name}=={version.strip()}"
    return None


def ensure_venv(path: pathlib.Path, python: str, requirements: list[str], constraints: list[str]) -> str:
    """The venv at ``path`` with ``requirements`` installed under ``constraints``, reused when its stamp matches;
    'warm' or 'cold'."""
    version = subprocess.run([python, "-c", "import sys; print(sys.version)"], capture_output=True, text=True,
                             check=True, timeout=60).stdout
    stamp_text = version + "\n".join(sorted(requirements)) + "\n-c\n" + "\n".join(sorted(constraints))
    digest = hashlib.sha256(stamp_text.encode()).hexdigest()
    stamp = path / ".compat-stamp"
    if stamp.is_file() and stamp.read_text() == digest:
        return "warm"
    shutil.rmtree(path, ignore_errors=True)
    run([python, "-m", "venv", str(path)], 300)
    pip = [str(path / "bin" / "python"), "-m", "pip", "install", "--quiet"]
    run([*pip, "--upgrade", "pip"], PIP_TIMEOUT)
    path.joinpath("constraints.txt").write_text("".join(f"{c}\n" for c in constraints))
    run([*pip, "-c", str(path / "constraints.txt"), *requirements], PIP_TIMEOUT)
    # the Spark provider 6.x brings pyspark-client, which overwrites pyspark's Python files with its own version
    pyspark = pin_of([*requirements, *constraints], "pyspark")
    if pyspark and subprocess.run([str(path / "bin" / "python"), "-m", "pip", "show", "-q", "pyspark-client"],
                                  capture_output=True, timeout=120).returncode == 0:
        run([*pip, "--force-reinstall", "--no-deps", pyspark], PIP_TIMEOUT)
    stamp.write_text(digest)
    return "cold"


def build(python: pathlib.Path, out: pathlib.Path) -> pathlib.Path:
    run([str(python), "-m", "build", "--outdir", str(out), str(REPO)], PIP_TIMEOUT, stdout=subprocess.DEVNULL)
    dists = sorted(out.iterdir())
    run([str(python), "-m", "twine", "check", "--strict", *map(str, dists)], 300)
    (wheel,) = [d for d in dists if d.suffix == ".whl"]
    return wheel


def _terminate(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--newest-file", required=True, type=pathlib.Path,
                        help="constraints of the newest Airflow/Spark set (the development venv's)")
    parser.add_argument("--oldest-file", required=True, type=pathlib.Path,
                        help="constraints added to the floors of the oldest set")
    parser.add_argument("--only", choices=("oldest", "newest"), action="append")
    parser.add_argument("--python", default=sys.executable, help="interpreter the venvs are made with")
    parser.add_argument("--venv-prefix", default=str(REPO / ".venv-compat-"))
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, _terminate)  # so that a stopped run kills its checks' process groups too
    sets = requirement_sets(read_pins(args.oldest_file), read_pins(args.newest_file))
    names = args.only or list(sets)
    venvs = {n: pathlib.Path(args.venv_prefix + n) for n in names}
    started = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(len(names)) as pool:  # downloads and installs overlap
        states = dict(zip(names, pool.map(lambda n: ensure_venv(venvs[n], args.python, *sets[n]), names)))
    print(f"[compat] venvs {states} in {time.monotonic() - started:.0f} s", flush=True)
    failed = []
    with tempfile.TemporaryDirectory(prefix="paimon-dist-") as dist:
        wheel = build(venvs[names[0]] / "bin" / "python", pathlib.Path(dist))
        print(f"[compat] built {wheel.name} (twine check passed)", flush=True)
        for name in names:
            py = str(venvs[name] / "bin" / "python")
            t0 = time.monotonic()
            run([py, "-m", "pip", "install", "--quiet", "--no-deps", "--force-reinstall", str(wheel)], PIP_TIMEOUT)
            run([py, "-m", "pip", "check"], 300)
            with tempfile.TemporaryDirectory(prefix="paimon-compat-") as scratch:
                # from a scratch directory and without PYTHONPATH: only the installed wheel is importable
                code = run_group([py, str(REPO / "scripts" / "compat_check.py"), "--dags", str(REPO / "dags"),
                                  "--work", scratch], scratch, CHECK_TIMEOUT)
            print(f"[compat] {name}: {'passed' if code == 0 else 'FAILED'} in {time.monotonic() - t0:.0f} s",
                  flush=True)
            if code:
                failed.append(name)
    print(f"[compat] {'FAILED: ' + ', '.join(failed) if failed else 'all passed'} "
          f"({time.monotonic() - started:.0f} s in all)", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

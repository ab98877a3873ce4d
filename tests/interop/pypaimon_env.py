"""Provision the isolated pypaimon 2.1.0 virtualenv used by the interop tests and the benchmark.

pypaimon pins ``pyarrow<20``, ``pandas<3`` and ``fsspec<2026``, so it never shares the project's venv: it lives in
``<repo>/.venv-pypaimon`` and is driven through a subprocess (``tests/interop/pypaimon_driver.py``).

* ``ensure_pypaimon_python()`` creates the venv on first use (idempotent, guarded by an ``flock`` so parallel
  pytest-xdist workers do not race) and returns the path of its ``python``.
* The environment variable ``PYPAIMON_PYTHON`` short-circuits everything: it names an existing interpreter that
  already has pypaimon 2.1.0 (e.g. a venv prepared elsewhere).
* ``python tests/interop/pypaimon_env.py`` pre-creates the venv (used by the Makefile) and prints the interpreter.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from pathlib import Path

PYPAIMON_VERSION = "2.1.0"
REPO_ROOT = Path(__file__).resolve().parents[2]
VENV_DIR = REPO_ROOT / ".venv-pypaimon"
ENV_VAR = "PYPAIMON_PYTHON"
# Written last, after a successful install + import check: its presence means the venv is complete.
_READY_MARKER = VENV_DIR / f".ready-pypaimon-{PYPAIMON_VERSION}"
_LOCK_FILE = VENV_DIR / ".provision.lock"


class PypaimonEnvError(RuntimeError):
    """The pypaimon virtualenv could not be created or is unusable."""


def _venv_python(venv: Path) -> Path:
    return venv / "bin" / "python"


def _run(cmd: list[str], timeout: float) -> None:
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    if proc.returncode != 0:
        raise PypaimonEnvError(
            f"command failed ({proc.returncode}): {' '.join(cmd)}\n--- stdout\n{proc.stdout[-4000:]}"
            f"\n--- stderr\n{proc.stderr[-4000:]}"
        )


def _check_interpreter(python: str) -> None:
    """Raise unless ``python`` imports pypaimon at the pinned version."""
    code = (
        "import importlib.metadata as m, pyarrow, pypaimon; "
        "v = m.version('pypaimon'); "
        f"assert v == {PYPAIMON_VERSION!r}, 'pypaimon ' + v; print(v, pyarrow.__version__)"
    )
    _run([python, "-c", code], timeout=120)


def _create(venv: Path) -> None:
    python = _venv_python(venv)
    if not python.exists():
        # Same interpreter version as the project (3.11); --clear is not used so the lock file survives.
        _run([sys.executable, "-m", "venv", str(venv)], timeout=300)
    pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    _run([*pip, f"pypaimon=={PYPAIMON_VERSION}"], timeout=900)
    _check_interpreter(str(python))


def ensure_pypaimon_python() -> str:
    """Return the path of a python interpreter with pypaimon 2.1.0, creating ``<repo>/.venv-pypaimon`` if needed."""
    override = os.environ.get(ENV_VAR)
    if override:
        if not Path(override).exists():
            raise PypaimonEnvError(f"{ENV_VAR}={override!r} does not exist")
        return override

    python = _venv_python(VENV_DIR)
    if _READY_MARKER.exists() and python.exists():
        return str(python)

    VENV_DIR.mkdir(parents=True, exist_ok=True)
    with open(_LOCK_FILE, "w") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)  # blocks while another process provisions
        try:
            if not (_READY_MARKER.exists() and python.exists()):
                _create(VENV_DIR)
                _READY_MARKER.write_text(PYPAIMON_VERSION)
        finally:
            fcntl.flock(lock.fileno(), fcntl.LOCK_UN)
    return str(python)


def main() -> int:
    try:
        python = ensure_pypaimon_python()
    except PypaimonEnvError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(python)
    return 0


if __name__ == "__main__":
    sys.exit(main())

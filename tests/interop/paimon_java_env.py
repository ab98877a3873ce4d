"""Provision the isolated venv holding Paimon Java (the reference implementation) for the interop tests.

No Java artifact repository is reachable from CI, but the PyPI wheel ``paimon-python-ali==0.1.1`` ships one fat jar,
``paimon_python_java/java_dependencies/paimon-python-java-bridge.jar``, with Paimon 1.0 (paimon-bundle, paimon-core)
and Hadoop 2.8.5. Only that jar is used (``tests/interop/java/PaimonJavaDriver.java`` is compiled against it), so the
wheel is installed with ``--no-deps`` into ``<repo>/.venv-paimon-java``.

* ``ensure_paimon_java_venv()`` creates the venv on first use (idempotent, guarded by an ``flock`` so parallel
  pytest-xdist workers do not race) and returns the path of its ``python``.
* ``find_bridge_jar()`` returns the jar's path; ``PAIMON_JAVA_PYTHON`` short-circuits the venv creation: it names an
  existing interpreter whose site-packages hold the wheel (e.g. a venv prepared elsewhere or by ``make``).
* ``python tests/interop/paimon_java_env.py`` pre-creates the venv (used by the Makefile) and prints the jar path.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from pathlib import Path

PAIMON_JAVA_WHEEL = "paimon-python-ali"
PAIMON_JAVA_WHEEL_VERSION = "0.1.1"
REPO_ROOT = Path(__file__).resolve().parents[2]
VENV_DIR = REPO_ROOT / ".venv-paimon-java"
ENV_VAR = "PAIMON_JAVA_PYTHON"
JAR_RELATIVE = Path("paimon_python_java") / "java_dependencies" / "paimon-python-java-bridge.jar"
# Written last, after a successful install + jar check: its presence means the venv is complete.
_READY_MARKER = VENV_DIR / f".ready-paimon-java-{PAIMON_JAVA_WHEEL_VERSION}"
_LOCK_FILE = VENV_DIR / ".provision.lock"


class PaimonJavaEnvError(RuntimeError):
    """The Paimon Java virtualenv could not be created, or its jar is missing."""


def _venv_python(venv: Path) -> Path:
    return venv / "bin" / "python"


def _run(cmd: list[str], timeout: float) -> str:
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    if proc.returncode != 0:
        raise PaimonJavaEnvError(
            f"command failed ({proc.returncode}): {' '.join(cmd)}\n--- stdout\n{proc.stdout[-4000:]}"
            f"\n--- stderr\n{proc.stderr[-4000:]}"
        )
    return proc.stdout


def _jar_of(python: str) -> Path:
    """The bridge jar inside ``python``'s site-packages (found without importing the package)."""
    code = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    purelib = Path(_run([python, "-c", code], timeout=60).strip())
    jar = purelib / JAR_RELATIVE
    if not jar.is_file():
        wheel = f"{PAIMON_JAVA_WHEEL}=={PAIMON_JAVA_WHEEL_VERSION}"
        raise PaimonJavaEnvError(f"{jar} does not exist: is {wheel} installed?")
    return jar


def _create(venv: Path) -> None:
    python = _venv_python(venv)
    if not python.exists():
        # --clear is not used so the lock file survives.
        _run([sys.executable, "-m", "venv", str(venv)], timeout=300)
    pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-deps"]
    _run([*pip, f"{PAIMON_JAVA_WHEEL}=={PAIMON_JAVA_WHEEL_VERSION}"], timeout=900)
    _jar_of(str(python))


def ensure_paimon_java_venv() -> str:
    """Return the python of a venv holding the Paimon Java wheel, creating ``<repo>/.venv-paimon-java`` if needed."""
    override = os.environ.get(ENV_VAR)
    if override:
        if not Path(override).exists():
            raise PaimonJavaEnvError(f"{ENV_VAR}={override!r} does not exist")
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
                _READY_MARKER.write_text(PAIMON_JAVA_WHEEL_VERSION)
        finally:
            fcntl.flock(lock.fileno(), fcntl.LOCK_UN)
    return str(python)


def find_bridge_jar() -> Path:
    """Path of ``paimon-python-java-bridge.jar`` (Paimon 1.0 + Hadoop), provisioning the venv if needed."""
    return _jar_of(ensure_paimon_java_venv())


def main() -> int:
    try:
        jar = find_bridge_jar()
    except PaimonJavaEnvError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(jar)
    return 0


if __name__ == "__main__":
    sys.exit(main())

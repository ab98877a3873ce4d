"""Provision the isolated venv holding Paimon Java (the reference implementation) for the interop tests.

No Java artifact repository is reachable from CI, but the PyPI wheel ``paimon-python-ali==0.1.1`` ships one fat jar,
``paimon_python_java/java_dependencies/paimon-python-java-bridge.jar``, with Paimon 1.0 (paimon-bundle, paimon-core)
and Hadoop 2.8.5. Only that jar is used (``tests/interop/java/PaimonJavaDriver.java`` is compiled against it), so the
wheel is installed with ``--no-deps`` into ``<repo>/.venv-paimon-java``.

* ``ensure_paimon_java_venv()`` creates the venv on first use (see :class:`side_venv.SideVenv`) and returns the path
  of its ``python``.
* ``find_bridge_jar()`` returns the jar's path; ``PAIMON_JAVA_PYTHON`` short-circuits the venv creation: it names an
  existing interpreter whose site-packages hold the wheel (e.g. a venv prepared elsewhere or by ``make``).
* ``python tests/interop/paimon_java_env.py`` pre-creates the venv (used by the Makefile) and prints the jar path.
"""

from __future__ import annotations

import sys
from pathlib import Path

try:
    from tests.interop.side_venv import SideVenv, SideVenvError, run, script_main
except ImportError:  # run as a script (the Makefile)
    from side_venv import SideVenv, SideVenvError, run, script_main  # type: ignore[no-redef]

PAIMON_JAVA_WHEEL = "paimon-python-ali"
PAIMON_JAVA_WHEEL_VERSION = "0.1.1"
ENV_VAR = "PAIMON_JAVA_PYTHON"
JAR_RELATIVE = Path("paimon_python_java") / "java_dependencies" / "paimon-python-java-bridge.jar"


class PaimonJavaEnvError(SideVenvError):
    """The Paimon Java virtualenv could not be created, or its jar is missing."""


def _jar_of(python: str) -> Path:
    """The bridge jar inside ``python``'s site-packages (found without importing the package)."""
    code = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    jar = Path(run([python, "-c", code], 60, PaimonJavaEnvError).strip()) / JAR_RELATIVE
    if not jar.is_file():
        raise PaimonJavaEnvError(f"{jar} does not exist: is {PAIMON_JAVA_WHEEL}=={PAIMON_JAVA_WHEEL_VERSION} "
                                 "installed?")
    return jar


VENV = SideVenv(".venv-paimon-java", f"{PAIMON_JAVA_WHEEL}=={PAIMON_JAVA_WHEEL_VERSION}", ENV_VAR, _jar_of,
                pip_args=("--no-deps",), error=PaimonJavaEnvError)


def ensure_paimon_java_venv() -> str:
    """Return the python of a venv holding the Paimon Java wheel, creating ``<repo>/.venv-paimon-java`` if needed."""
    return VENV.ensure()


def find_bridge_jar() -> Path:
    """Path of ``paimon-python-java-bridge.jar`` (Paimon 1.0 + Hadoop), provisioning the venv if needed."""
    return _jar_of(ensure_paimon_java_venv())


if __name__ == "__main__":
    sys.exit(script_main(find_bridge_jar, PaimonJavaEnvError))

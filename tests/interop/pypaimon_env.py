"""Provision the isolated pypaimon 2.1.0 virtualenv used by the interop tests and the benchmark.

pypaimon pins ``pyarrow<20``, ``pandas<3`` and ``fsspec<2026``, so it never shares the project's venv: it lives in
``<repo>/.venv-pypaimon`` and is driven through a subprocess (``tests/interop/pypaimon_driver.py``).

* ``ensure_pypaimon_python()`` creates the venv on first use (see :class:`side_venv.SideVenv`) and returns the path
  of its ``python``.
* The environment variable ``PYPAIMON_PYTHON`` short-circuits everything: it names an existing interpreter that
  already has pypaimon 2.1.0 (e.g. a venv prepared elsewhere).
* ``python tests/interop/pypaimon_env.py`` pre-creates the venv (used by the Makefile) and prints the interpreter.
"""

from __future__ import annotations

import sys

try:
    from tests.interop.side_venv import SideVenv, SideVenvError, run, script_main
except ImportError:  # run as a script (the Makefile) or imported from benchmarks/ with tests/interop on sys.path
    from side_venv import SideVenv, SideVenvError, run, script_main  # type: ignore[no-redef]

PYPAIMON_VERSION = "2.1.0"
ENV_VAR = "PYPAIMON_PYTHON"


class PypaimonEnvError(SideVenvError):
    """The pypaimon virtualenv could not be created or is unusable."""


def _check_interpreter(python: str) -> None:
    """Raise unless ``python`` imports pypaimon at the pinned version."""
    code = ("import importlib.metadata as m, pyarrow, pypaimon; v = m.version('pypaimon'); "
            f"assert v == {PYPAIMON_VERSION!r}, 'pypaimon ' + v; print(v, pyarrow.__version__)")
    run([python, "-c", code], 120, PypaimonEnvError)


VENV = SideVenv(".venv-pypaimon", f"pypaimon=={PYPAIMON_VERSION}", ENV_VAR, _check_interpreter,
                error=PypaimonEnvError)


def ensure_pypaimon_python() -> str:
    """Return the path of a python interpreter with pypaimon 2.1.0, creating ``<repo>/.venv-pypaimon`` if needed."""
    return VENV.ensure()


if __name__ == "__main__":
    sys.exit(script_main(ensure_pypaimon_python, PypaimonEnvError))

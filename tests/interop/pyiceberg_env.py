"""Provision the isolated pyiceberg virtualenv: the Iceberg reader that judges the Iceberg metadata we write.

pyiceberg's pins (pyarrow, pydantic, fsspec) are its own, so it never shares the project's venv: it lives in
``<repo>/.venv-pyiceberg`` and is driven through a subprocess (``tests/interop/pyiceberg_driver.py``).

* ``ensure_pyiceberg_python()`` creates the venv on first use (see :class:`side_venv.SideVenv`) and returns the path
  of its ``python``.
* The environment variable ``PYICEBERG_PYTHON`` short-circuits everything: it names an existing interpreter that
  already has pyiceberg at the pinned version.
* ``python tests/interop/pyiceberg_env.py`` pre-creates the venv (used by the Makefile) and prints the interpreter.
"""

from __future__ import annotations

import sys

try:
    from tests.interop.side_venv import SideVenv, SideVenvError, run, script_main
except ImportError:  # run as a script (the Makefile)
    from side_venv import SideVenv, SideVenvError, run, script_main  # type: ignore[no-redef]

PYICEBERG_VERSION = "0.12.0"
ENV_VAR = "PYICEBERG_PYTHON"


class PyicebergEnvError(SideVenvError):
    """The pyiceberg virtualenv could not be created or is unusable."""


def _check_interpreter(python: str) -> None:
    """Raise unless ``python`` imports pyiceberg at the pinned version, with pyarrow."""
    code = ("import importlib.metadata as m, pyarrow, pyiceberg; v = m.version('pyiceberg'); "
            f"assert v == {PYICEBERG_VERSION!r}, 'pyiceberg ' + v; print(v, pyarrow.__version__)")
    run([python, "-c", code], 120, PyicebergEnvError)


VENV = SideVenv(".venv-pyiceberg", f"pyiceberg[pyarrow]=={PYICEBERG_VERSION}", ENV_VAR, _check_interpreter,
                error=PyicebergEnvError)


def ensure_pyiceberg_python() -> str:
    """Return the path of a python interpreter with pyiceberg, creating ``<repo>/.venv-pyiceberg`` if needed."""
    return VENV.ensure()


if __name__ == "__main__":
    sys.exit(script_main(ensure_pyiceberg_python, PyicebergEnvError))

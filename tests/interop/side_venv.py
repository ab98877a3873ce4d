"""A virtualenv beside the project's, for a judge whose pins clash with ours (pypaimon, the Paimon Java wheel).

:class:`SideVenv` creates ``<repo>/<name>`` on first use (idempotent; an ``flock`` keeps parallel test processes
from racing), installs its requirement, checks it, and writes a ready marker last: its presence means the venv is
complete. An environment variable naming an existing interpreter short-circuits everything.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]


class SideVenvError(RuntimeError):
    """A side virtualenv could not be created or is unusable."""


def run(cmd: Sequence[str], timeout: float, error: type[Exception] = SideVenvError) -> str:
    """``cmd``'s stdout; ``error`` with the tails of both streams when it fails."""
    proc = subprocess.run(list(cmd), capture_output=True, text=True, timeout=timeout, check=False)
    if proc.returncode != 0:
        raise error(f"command failed ({proc.returncode}): {' '.join(cmd)}\n--- stdout\n{proc.stdout[-4000:]}"
                    f"\n--- stderr\n{proc.stderr[-4000:]}")
    return proc.stdout


@dataclass(frozen=True)
class SideVenv:
    """``requirement`` installed (with ``pip_args``) into ``<repo>/<name>``, then verified by ``check(python)``."""

    name: str
    requirement: str
    env_var: str
    check: Callable[[str], object]
    pip_args: tuple[str, ...] = ()
    error: type[Exception] = SideVenvError

    @property
    def directory(self) -> Path:
        return REPO_ROOT / self.name

    @property
    def python(self) -> Path:
        return self.directory / "bin" / "python"

    @property
    def _ready_marker(self) -> Path:
        return self.directory / f".ready-{self.requirement.replace('==', '-')}"

    def ensure(self) -> str:
        """The venv's interpreter (or the one ``env_var`` names), creating the venv if needed."""
        override = os.environ.get(self.env_var)
        if override:
            if not Path(override).exists():
                raise self.error(f"{self.env_var}={override!r} does not exist")
            return override
        if self._ready_marker.exists() and self.python.exists():
            return str(self.python)
        self.directory.mkdir(parents=True, exist_ok=True)
        with open(self.directory / ".provision.lock", "w") as lock:
            fcntl.flock(lock.fileno(), fcntl.LOCK_EX)  # blocks while another process provisions
            try:
                if not (self._ready_marker.exists() and self.python.exists()):
                    self._create()
                    self._ready_marker.write_text(self.requirement)
            finally:
                fcntl.flock(lock.fileno(), fcntl.LOCK_UN)
        return str(self.python)

    def _create(self) -> None:
        if not self.python.exists():
            # the project's interpreter version (3.11); no --clear, so the lock file survives
            run([sys.executable, "-m", "venv", str(self.directory)], 300, self.error)
        pip = [str(self.python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *self.pip_args]
        run([*pip, self.requirement], 900, self.error)
        self.check(str(self.python))


def script_main(produce: Callable[[], object], error: type[Exception]) -> int:
    """Entry point of a provisioning script: print what ``produce`` returns, or ``error: ...`` and exit 1."""
    try:
        print(produce())
    except error as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0

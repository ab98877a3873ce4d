"""``python -m tests.simulation``: see :mod:`tests.simulation.cli` (``--help``)."""

from __future__ import annotations

import os
import sys

from tests.simulation.cli import main

if __name__ == "__main__":
    if os.environ.get("PYTHONHASHSEED") != "0":  # set iteration order of file names must not differ between runs
        os.environ["PYTHONHASHSEED"] = "0"
        os.execv(sys.executable, [sys.executable, "-m", "tests.simulation", *sys.argv[1:]])
    sys.exit(main())

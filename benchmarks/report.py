"""The end of a benchmark's ``main``: the result stamped with the machine, its load and the date, printed as JSON
and written to ``--out`` when given."""

from __future__ import annotations

import json
import os
import platform
import time
from pathlib import Path
from typing import Any


def finish_report(result: dict[str, Any], out: str | None) -> dict[str, Any]:
    """Stamp ``result`` (machine, cpus, load average, UTC date), print it as JSON, write it to ``out``; returns it."""
    result.update({"machine": platform.platform(), "cpus": os.cpu_count(), "load": os.getloadavg(),
                   "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())})
    print(json.dumps(result, indent=2))
    if out:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        Path(out).write_text(json.dumps(result, indent=2))
    return result

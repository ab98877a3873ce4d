"""The Spark application prints one final JSON object line: find it in the job's stdout."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any


def last_json_object(lines: Iterable[str]) -> dict[str, Any] | None:
    """The last line that parses as a JSON object (other output, logs included, is ignored)."""
    found: dict[str, Any] | None = None
    for line in lines:
        text = line.strip()
        if not (text.startswith("{") and text.endswith("}")):
            continue
        try:
            value = json.loads(text)
        except ValueError:
            continue
        if isinstance(value, dict):
            found = value
    return found

"""How many random examples a property test draws: all of them in ``make test`` and CI, a quarter in ``make test-fast``.

``make test-fast`` sets ``PAIMON_TEST_TIER=fast``; the inner loop still runs every property test, on fewer examples.
Hypothesis keeps the examples that failed before and replays them first, so a failure found in the full run is still
found in the fast one.
"""

from __future__ import annotations

import os

FAST = os.environ.get("PAIMON_TEST_TIER") == "fast"


def examples(full: int) -> int:
    """``full`` in the whole suite; a quarter of it (at least 5) in the fast tier."""
    return max(5, full // 4) if FAST and full > 5 else full

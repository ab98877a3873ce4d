"""``python -m table_engine.ops --markdown``: print ``docs/commands.md`` (generated from the registry)."""

from __future__ import annotations

import sys

from table_engine.ops.docs import render_markdown

if __name__ == "__main__":
    if sys.argv[1:] != ["--markdown"]:
        print("usage: python -m table_engine.ops --markdown", file=sys.stderr)
        sys.exit(2)
    sys.stdout.write(render_markdown())

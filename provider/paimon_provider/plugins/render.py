"""HTML of the Paimon pages: escaped text, tables and inline SVG charts (no JavaScript build, no external asset; one
inline script, :data:`NAVIGATE_SCRIPT`, for links to Airflow's own pages)."""

from __future__ import annotations

import datetime
import html
from collections.abc import Sequence
from urllib.parse import quote

STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:16px;color:#1a202c;font-size:14px}
h1{font-size:20px;margin:0 0 8px} h2{font-size:16px;margin:20px 0 6px;border-bottom:1px solid #e2e8f0}
table{border-collapse:collapse;margin:4px 0 8px} td,th{border:1px solid #e2e8f0;padding:3px 8px;text-align:left}
th{background:#f7fafc} td.n{text-align:right;font-variant-numeric:tabular-nums}
.cards{display:flex;flex-wrap:wrap;gap:8px} .card{border:1px solid #e2e8f0;border-radius:6px;padding:6px 10px}
.card b{display:block;font-size:18px} .muted{color:#718096} .err{color:#c53030} a{color:#2b6cb0}
"""


NAVIGATE_SCRIPT = """
document.addEventListener('click', function (e) {
  var a = e.target.closest && e.target.closest('a[data-airflow]');
  if (!a || e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  var top = window.top;
  if (top === window) return;
  try { top.location.pathname; } catch (err) { return; }
  e.preventDefault();
  var state = top.history.state || {};
  top.history.pushState({usr: null, key: Math.random().toString(36).slice(2, 10), idx: (state.idx || 0) + 1}, '',
                        a.getAttribute('href'));
  top.dispatchEvent(new PopStateEvent('popstate', {state: top.history.state}));
});
"""
"""Links to Airflow's pages (``data-airflow``) inside the UI's plugin frame. Airflow 3 shows the page in an iframe
sandboxed without top navigation or pop-ups, so ``target=_top`` does nothing, and a link the frame follows itself is
blanked by the UI (it leaves the plugin's routes). The frame is same-origin with scripts allowed: the click pushes
the address onto the top window's history and tells its router (a ``popstate``), as the UI's own links do. Outside
a frame (the page opened directly) the link is a plain link."""


def airflow_link(href: str, text: str) -> str:
    """A link to one of Airflow's pages (``href`` already absolute in the site, ``text`` already escaped)."""
    return f"<a data-airflow href='{esc(href)}'>{text}</a>"


def esc(value: object) -> str:
    """``value`` as escaped HTML text (None: an em dash)."""
    return "\u2014" if value is None else html.escape(str(value))


def url(*parts: str) -> str:
    """A path of URL-quoted segments (each segment quoted whole: a ``/`` in a name stays inside its segment)."""
    return "/".join(quote(p, safe="") for p in parts)


def millis(ms: int | None) -> str:
    """Epoch milliseconds as UTC ``YYYY-MM-DD HH:MM:SS``."""
    if ms is None:
        return "\u2014"
    return datetime.datetime.fromtimestamp(ms / 1000, datetime.UTC).strftime("%Y-%m-%d %H:%M:%S")


SHORT_TEXT = 40
"""Characters of a long value (a commit user) a table cell shows; the whole value is its tooltip."""


def shortened(text: str | None, limit: int = SHORT_TEXT) -> str:
    """``text`` escaped, its middle cut to fit ``limit`` characters (the whole of it as the cell's tooltip)."""
    if text is None or len(text) <= limit:
        return esc(text)
    head, tail = text[: limit * 2 // 3], text[-(limit // 3 - 1):]
    return f"<span title='{esc(text)}'>{esc(head)}\u2026{esc(tail)}</span>"


def size(n: int) -> str:
    """Bytes in binary units."""
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} B"


def page(title: str, body: str) -> str:
    """A whole HTML document."""
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{esc(title)}</title>"
            f"<style>{STYLE}</style><script>{NAVIGATE_SCRIPT}</script></head><body>{body}</body></html>")


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], numeric: Sequence[int] = (),
          empty: str = "none") -> str:
    """A table of already-escaped cells; columns at ``numeric`` right-aligned."""
    if not rows:
        return f"<p class='muted'>{esc(empty)}</p>"
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td class='n'>{c}</td>" if i in numeric else f"<td>{c}</td>"
                                    for i, c in enumerate(row)) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def cards(items: Sequence[tuple[str, str]]) -> str:
    """Figures as cards: (label, escaped value)."""
    return "<div class='cards'>" + "".join(f"<div class='card'><span class='muted'>{esc(label)}</span><b>{value}</b>"
                                           "</div>" for label, value in items) + "</div>"


SERIES_COLOURS = {"level 0": "#dd6b20", "higher levels": "#3182ce", "postpone": "#805ad5", "files": "#718096",
                  "APPEND": "#38a169", "COMPACT": "#d69e2e", "OVERWRITE": "#d53f8c", "ANALYZE": "#319795"}
"""One colour per meaning on every chart of the page (a series name means the same colour wherever it is drawn)."""
OTHER_COLOURS = ("#2c5282", "#9c4221", "#276749", "#702459")
"""Colours of series without one of their own, in order (none of them is a named series' colour)."""


def series_colours(names: Sequence[str]) -> list[str]:
    """The colour of each series: its own (:data:`SERIES_COLOURS`), else the next of :data:`OTHER_COLOURS`."""
    others = iter(OTHER_COLOURS * (len(names) // len(OTHER_COLOURS) + 1))
    return [SERIES_COLOURS.get(name) or next(others) for name in names]


def stacked_bars(title: str, labels: Sequence[str], series: Sequence[tuple[str, Sequence[int]]]) -> str:
    """A horizontal stacked bar chart as inline SVG: one bar per label, one segment per series (name, values)."""
    if not labels:
        return ""
    bar_h, gap, label_w, width = 16, 4, 180, 420
    total = [sum(values[i] for _, values in series) for i in range(len(labels))]
    top = max(max(total), 1)
    colours = series_colours([name for name, _ in series])
    height = (bar_h + gap) * len(labels) + 24
    parts = [f"<svg xmlns='http://www.w3.org/2000/svg' role='img' width='{label_w + width + 60}' height='{height}'>"
             f"<title>{esc(title)}</title>"]
    for i, label in enumerate(labels):
        y = i * (bar_h + gap)
        parts.append(f"<text x='0' y='{y + 12}' font-size='11'>{esc(label)}</text>")
        x = float(label_w)
        for (name, values), colour in zip(series, colours, strict=True):
            w = width * values[i] / top
            if w > 0:
                parts.append(f"<rect x='{x:.1f}' y='{y}' width='{w:.1f}' height='{bar_h}' fill='{colour}'>"
                             f"<title>{esc(name)}: {values[i]}</title></rect>")
            x += w
        parts.append(f"<text x='{x + 4:.1f}' y='{y + 12}' font-size='11'>{total[i]}</text>")
    legend_y = len(labels) * (bar_h + gap) + 14
    x = float(label_w)
    for (name, _), colour in zip(series, colours, strict=True):
        parts.append(f"<rect x='{x}' y='{legend_y - 9}' width='10' height='10' fill='{colour}'/>"
                     f"<text x='{x + 14}' y='{legend_y}' font-size='11'>{esc(name)}</text>")
        x += 14 + 7 * len(name) + 16
    parts.append("</svg>")
    return "".join(parts)

"""Self-contained HTML reports: figures are embedded as base64 PNG, no external assets."""

from __future__ import annotations

import base64
import html
import io
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from jinja2 import Environment, PackageLoader  # noqa: E402

from fairpath._io import atomic_write_text  # noqa: E402
from fairpath._version import __version__  # noqa: E402
from fairpath.report._style import DPI, styled  # noqa: E402

# Every template is HTML, whatever its name ends in (select_autoescape(["html"]) missed ".html.j2"): escape always.
_ENV = Environment(loader=PackageLoader("fairpath.report", "templates"), autoescape=True)


def figure_to_data_uri(fig, dpi: int = DPI) -> str:
    """Render a matplotlib figure to a ``data:image/png;base64,...`` URI; a figure that pyplot manages (one made
    with ``plt.subplots``) is closed, so that pyplot lets it go."""
    buffer = io.BytesIO()
    with styled():
        fig.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight")
    if fig.canvas.manager is not None:
        import matplotlib.pyplot as plt  # already loaded: only pyplot gives a figure a manager

        plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def format_ci(low: float, high: float, digits: int = 4, percent: bool = False) -> str:
    """An interval ``[low, high]`` that does not break across lines (non-breaking space after the comma)."""
    if percent:
        return f"[{100 * low:+.{max(digits - 2, 1)}f}%,\u00a0{100 * high:+.{max(digits - 2, 1)}f}%]"
    return f"[{low:+.{digits}f},\u00a0{high:+.{digits}f}]"


# A cell holding only a number, an interval, a p-value or a mean ± sd ("< 1e-16", "[-0.01,\u00a0+0.03]", "2.1%"):
# digits with signs, brackets, separators, exponents and units of measure, nothing else.
_NUMERIC_CELL = re.compile(r"[\s\u00a0\u2011\u2212\u2013\[\]()<>≤≥=~±+\-,.%0-9eE]*[0-9][\s\u00a0\u2011\u2212\u2013\[\]()<>≤≥=~±+\-,.%0-9eE]*")


def _cell_text(value, float_format: str) -> str:
    if isinstance(value, (float, np.floating)):
        return "" if np.isnan(value) else float_format.format(value)
    return "" if value is None or value is pd.NA or value is pd.NaT else str(value)


def _cell_html(text: str) -> str:
    numeric = _NUMERIC_CELL.fullmatch(text) is not None
    return f'<td class="num">{html.escape(text, quote=False)}</td>' if numeric else f"<td>{html.escape(text, quote=False)}</td>"


def format_count(n: int, noun: str, plural: str | None = None) -> str:
    """``1 seed``, ``2 seeds``: a count with its noun in the right number."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def table_html(frame: pd.DataFrame, float_format: str = "{:.4f}") -> str:
    """A table as HTML in a wrapper that scrolls sideways inside its card; cells holding a number, interval or
    p-value get the class ``num``, which never wraps (a number broken across lines, "5.31e-" over "12", misreads)."""
    head = "".join(f"<th>{html.escape(str(column), quote=False)}</th>" for column in frame.columns)
    rows = "".join("<tr>" + "".join(_cell_html(_cell_text(value, float_format)) for value in row) + "</tr>\n"
                   for row in frame.itertuples(index=False, name=None))
    return f'<div class="table-scroll"><table class="table"><thead><tr>{head}</tr></thead>\n<tbody>\n{rows}</tbody></table></div>'


def compact_digits(values, significant: int = 3) -> int:
    """Decimals that show the largest of ``values`` with ``significant`` significant digits (0 for salaries in the
    thousands, 3 for effects below 1): a verdict matrix's cells must stay narrow."""
    largest = max((abs(float(v)) for v in values if np.isfinite(v)), default=0.0)
    return 0 if largest == 0 else int(min(max(significant - 1 - np.floor(np.log10(largest)), 0), 6))


def matrix_html(cells: pd.DataFrame, legend: dict[str, str], corner: str = "") -> str:
    """A verdict matrix: ``cells`` holds (text, tone) pairs, its index and columns name the rows and columns; a cell's
    background is its tone (``strong``, ``weak``, ``none``, ``bad``, ``good``, ``na``: colours of the report template),
    explained by ``legend`` ({tone: meaning}) above the table; a line break in a cell's text starts a new line."""
    head = f"<th>{html.escape(corner, quote=False)}</th>" + "".join(
        f"<th>{html.escape(str(column), quote=False)}</th>" for column in cells.columns)
    body = "".join(
        f"<tr><th>{html.escape(str(name), quote=False)}</th>"
        + "".join(f'<td class="tone-{tone}">{html.escape(text, quote=False).replace(chr(10), "<br>")}</td>' for text, tone in row)
        + "</tr>\n"
        for name, row in zip(cells.index, cells.itertuples(index=False, name=None)))
    key = " ".join(f'<span class="tone-{tone} key">{html.escape(meaning, quote=False)}</span>' for tone, meaning in legend.items())
    return (f'<p class="legend">{key}</p><div class="table-scroll"><table class="table matrix"><thead><tr>{head}</tr></thead>\n'
            f"<tbody>\n{body}</tbody></table></div>")


@dataclass
class Section:
    """One section of a report: a heading, a short text, then figures and tables (HTML snippets).

    ``text`` (like ``render_report``'s ``summary``) is markup that fairpath builds, inserted as is: every string
    from the user's input in it must be escaped (``html.escape``). The title, figure and table captions and the
    settings are plain text, escaped by the template; tables come escaped from pandas.

    ``anchor`` is the section's HTML id (for links and tests); by default ``section-<position>``.
    """

    title: str
    text: str = ""
    figures: list[tuple[str, str]] = field(default_factory=list)  # (data URI, caption)
    tables: list[tuple[str, str]] = field(default_factory=list)  # (HTML, caption)
    matrices: list[tuple[str, str]] = field(default_factory=list)  # (HTML, caption): verdict matrices, shown before the figures
    anchor: str = ""

    def add_figure(self, fig, caption: str = "") -> "Section":
        self.figures.append((figure_to_data_uri(fig), caption))
        return self

    def add_matrix(self, cells: pd.DataFrame, legend: dict[str, str], caption: str = "", corner: str = "") -> "Section":
        """A verdict matrix (see :func:`matrix_html`)."""
        self.matrices.append((matrix_html(cells, legend, corner), caption))
        return self

    def add_table(self, frame: pd.DataFrame, caption: str = "", float_format: str = "{:.4f}") -> "Section":
        self.tables.append((table_html(frame, float_format), caption))
        return self


def render_report(title: str, sections: list[Section], summary: str = "", settings: dict | None = None) -> str:
    """Render sections into one self-contained HTML page."""
    return _ENV.get_template("report.html.j2").render(
        title=title,
        summary=summary,
        sections=sections,
        settings=settings or {},
        version=__version__,
        created=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
    )


def write_report(path: str | Path, title: str, sections: list[Section], summary: str = "", settings: dict | None = None) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(render_report(title, sections, summary, settings), path)
    return path

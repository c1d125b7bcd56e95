"""Self-contained HTML reports: figures are embedded as base64 PNG, no external assets."""

from __future__ import annotations

import base64
import io
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd  # noqa: E402
from jinja2 import Environment, PackageLoader  # noqa: E402

from fairpath._io import atomic_write_text  # noqa: E402
from fairpath._version import __version__  # noqa: E402
from fairpath.report._style import DPI, styled  # noqa: E402

# Every template is HTML, whatever its name ends in (select_autoescape(["html"]) missed ".html.j2"): escape always.
_ENV = Environment(loader=PackageLoader("fairpath.report", "templates"), autoescape=True)


def figure_to_data_uri(fig, dpi: int = DPI) -> str:
    """Render a matplotlib figure to a ``data:image/png;base64,...`` URI and close it."""
    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    with styled():
        fig.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight")
    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def format_ci(low: float, high: float, digits: int = 4, percent: bool = False) -> str:
    """An interval ``[low, high]`` that does not break across lines (non-breaking space after the comma)."""
    if percent:
        return f"[{100 * low:+.{max(digits - 2, 1)}f}%,\u00a0{100 * high:+.{max(digits - 2, 1)}f}%]"
    return f"[{low:+.{digits}f},\u00a0{high:+.{digits}f}]"


def table_html(frame: pd.DataFrame, float_format: str = "{:.4f}") -> str:
    """A pandas table as HTML with the report's table class."""
    return frame.to_html(index=False, classes="table", border=0, float_format=float_format.format, na_rep="")


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
    anchor: str = ""

    def add_figure(self, fig, caption: str = "") -> "Section":
        self.figures.append((figure_to_data_uri(fig), caption))
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

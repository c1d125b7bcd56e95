"""Figures and self-contained HTML reports."""

from fairpath._stats import format_p
from fairpath.report._html import Section, compact_digits, figure_to_data_uri, format_ci, format_count, render_report, table_html, write_report
from fairpath.report._style import FULL_WIDTH, HALF_WIDTH, SERIES_COLOURS, legend_below, new_figure, styled, subplots
from fairpath.report._provenance import api_call, file_record, package_versions, provenance, provenance_lines

__all__ = [
    "FULL_WIDTH",
    "HALF_WIDTH",
    "SERIES_COLOURS",
    "legend_below",
    "new_figure",
    "styled",
    "subplots",
    "Section",
    "compact_digits",
    "api_call",
    "figure_to_data_uri",
    "format_ci",
    "format_count",
    "format_p",
    "file_record",
    "package_versions",
    "provenance",
    "provenance_lines",
    "render_report",
    "table_html",
    "write_report",
]

"""Figures and self-contained HTML reports."""

from fairpath.report._html import Section, figure_to_data_uri, render_report, table_html, write_report
from fairpath.report._provenance import file_record, package_versions, provenance, provenance_lines

__all__ = [
    "Section",
    "figure_to_data_uri",
    "file_record",
    "package_versions",
    "provenance",
    "provenance_lines",
    "render_report",
    "table_html",
    "write_report",
]

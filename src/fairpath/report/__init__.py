"""Figures and self-contained HTML reports."""

from fairpath.report._html import Section, figure_to_data_uri, render_report, table_html, write_report

__all__ = ["Section", "figure_to_data_uri", "render_report", "table_html", "write_report"]

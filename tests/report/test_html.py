"""Self-contained reports: section ids, embedded figures, settings."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from fairpath.report import Section, render_report


def test_sections_carry_their_anchor_or_a_numbered_id():
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    sections = [
        Section("Named", "<p>text</p>", anchor="verdicts").add_figure(fig, "a line"),
        Section("Unnamed").add_table(pd.DataFrame({"a": [1.23456]}), "numbers"),
    ]
    html = render_report("Title", sections, settings={"seed": 3})
    assert '<section id="verdicts">' in html and '<section id="section-2">' in html
    assert html.count("data:image/png;base64,") == 1
    assert "1.2346" in html and "<dd>3</dd>" in html


def test_p_values_and_intervals_for_display():
    from fairpath.report import format_ci, format_p

    assert format_p(0.0) == "< 1e-16" and format_p(3e-20) == "< 1e-16"
    assert format_p(0.04567) == "0.0457" and format_p(1.0) == "1" and format_p(float("nan")) == "n/a"
    assert format_ci(-0.01234, 0.5) == "[-0.0123,\u00a0+0.5000]"  # a non-breaking space: one line in every table
    assert format_ci(-0.01234, 0.5, digits=3, percent=True) == "[-1.2%,\u00a0+50.0%]"


def test_a_p_clause_never_prints_zero():
    from fairpath._stats import p_clause

    assert p_clause("Holm p", 0.0) == "Holm p < 1e-16" and p_clause("Holm p", 3e-96) == "Holm p < 1e-16" and p_clause("p", 3e-10) == "p = 3e-10"
    assert p_clause("p", 0.04567) == "p = 0.0457"


def test_tables_scroll_inside_their_card_and_numeric_cells_never_wrap():
    from fairpath.report import table_html

    frame = pd.DataFrame({"predictor": ["score <a>", "noise"], "estimate": [0.123456, float("nan")], "p (Holm)": ["< 1e-16", "5.31e-12"],
                          "95% CI": ["[-0.0123,\u00a0+0.5000]", "[+0.0100,\u00a0+0.0300]"], "mean ± sd": ["+0.0100 ± 0.0020", "+0.0100"],
                          "seeds": [2, 1], "verdict": ["FAIL: violation shown on DE", "SUCCESS"]})
    page = table_html(frame)
    assert page.startswith('<div class="table-scroll"><table class="table">') and page.endswith("</table></div>")
    assert "<td>score &lt;a&gt;</td>" in page and '<td class="num">0.1235</td><td class="num">&lt; 1e-16</td>' in page
    assert '<td></td><td class="num">5.31e-12</td>' in page  # a missing value is an empty cell
    assert '<td class="num">[-0.0123,\u00a0+0.5000]</td><td class="num">+0.0100 ± 0.0020</td><td class="num">2</td>' in page
    assert "<td>FAIL: violation shown on DE</td>" in page and page.count('class="num"') == 9
    html = render_report("Title", [Section("Table").add_table(frame)])
    assert ".table-scroll { overflow-x: auto;" in html and "td.num { white-space: nowrap;" in html


def test_counts_take_the_noun_in_the_right_number():
    from fairpath.report import format_count

    assert format_count(1, "seed") == "1 seed" and format_count(2, "seed") == "2 seeds" and format_count(0, "repeat") == "0 repeats"
    assert format_count(3, "series", "series") == "3 series"

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

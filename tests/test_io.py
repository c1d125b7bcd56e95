"""Atomic writes: a result file is replaced whole or not at all."""

from __future__ import annotations

import os
import stat

import pandas as pd
import pytest

from fairpath._io import atomic_path, atomic_write_text, save_figure, write_csv
from fairpath._results import write_json


def test_atomic_write_replaces_the_file_and_leaves_no_temporary(tmp_path):
    path = tmp_path / "sub" / "result.json"
    write_json({"a": float("nan"), "b": 1}, path)
    assert path.read_text() == '{\n  "a": null,\n  "b": 1\n}'
    atomic_write_text("second", path)
    assert path.read_text() == "second"
    assert sorted(p.name for p in path.parent.iterdir()) == ["result.json"]
    mode = stat.S_IMODE(os.stat(path).st_mode)
    umask = os.umask(0)
    os.umask(umask)
    assert mode == 0o666 & ~umask  # not mkstemp's private 0600


def test_a_failing_writer_keeps_the_old_file(tmp_path):
    path = tmp_path / "table.csv"
    write_csv(pd.DataFrame({"a": [1, 2]}), path)
    with pytest.raises(RuntimeError, match="disk full"):
        with atomic_path(path) as temporary:
            temporary.write_text("a\n1\n")  # half of the new content
            raise RuntimeError("disk full")
    assert path.read_text() == "a\n1\n2\n"
    assert [p.name for p in tmp_path.iterdir()] == ["table.csv"]


def test_figures_keep_their_format_through_the_temporary_name(tmp_path):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    path = save_figure(fig, tmp_path / "figure.png", dpi=50)
    plt.close(fig)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

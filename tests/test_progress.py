"""The progress helper: a bar on a terminal, plain stage lines otherwise, off with enabled=False or --quiet."""

from __future__ import annotations

import io
import sys
import time

from fairpath import _progress
from fairpath.cli import main


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_bar_shows_on_a_terminal_and_quiet_turns_it_off(monkeypatch):
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert list(_progress.progress(range(3), desc="work")) == [0, 1, 2]
    assert "work: 100%" in terminal.getvalue()
    assert _progress.progress(range(3), desc="off", enabled=False).disable
    _progress.set_quiet(True)
    try:
        assert _progress.progress(range(3), desc="quiet").disable
    finally:
        _progress.set_quiet(False)


def test_a_quick_step_prints_nothing_when_stderr_is_not_a_terminal(capsys):
    # (was: no output at all when not a terminal, which left `frontier` silent for 70 s in a log)
    assert list(_progress.progress(range(3), desc="piped")) == [0, 1, 2]
    assert capsys.readouterr().err == ""


def test_a_step_over_two_seconds_prints_plain_stage_lines_when_stderr_is_not_a_terminal(capsys, monkeypatch):
    monkeypatch.setattr(_progress, "LINE_EVERY_S", 1.0)
    with _progress.progress(total=3, desc="frontier") as bar:
        bar.set_postfix_str("adapt ZW, seed 0")
        time.sleep(_progress.STAGE_AFTER_S + 0.5)  # the first run of a step is still going: the timer's line
        bar.update()
        time.sleep(1.1)
        bar.update(2)  # a second later: one more line, rate-limited to one per LINE_EVERY_S
    err = capsys.readouterr().err
    lines = [line.rsplit(", ", 1) for line in err.splitlines()]  # (state and count, elapsed seconds)
    assert [text for text, _ in lines] == ["frontier: running, 0/3 done (adapt ZW, seed 0)", "frontier: running, 3/3 done (adapt ZW, seed 0)",
                                           "frontier: done, 3/3 done (adapt ZW, seed 0)"]
    seconds = [int(elapsed.removesuffix(" s")) for _, elapsed in lines]
    assert seconds[0] >= 2 and seconds[1] >= 3 and seconds[2] >= seconds[1]
    assert "\r" not in err


def test_quiet_and_disabled_steps_print_no_stage_lines(capsys):
    _progress.set_quiet(True)
    try:
        bar = _progress.progress(total=1, desc="quiet")
    finally:
        _progress.set_quiet(False)
    assert bar.disable and _progress.progress(total=1, desc="off", enabled=False).disable
    time.sleep(_progress.STAGE_AFTER_S + 0.3)
    bar.close()
    assert capsys.readouterr().err == ""


def test_every_command_takes_quiet(tmp_path, capsys):
    from fairpath.cli import build_parser
    from fairpath.cli.__init__ import _leaf_parsers

    commands = [parser.prog for parser in _leaf_parsers(build_parser()) if parser.prog != "fairpath"]
    assert {"fairpath decompose", "fairpath audit", "fairpath demo", "fairpath repair", "fairpath frontier",
            "fairpath reproduce theorem1", "fairpath text audit"} <= set(commands)
    for parser in _leaf_parsers(build_parser()):
        if parser.prog != "fairpath":
            assert "--quiet" in parser._option_string_actions, parser.prog
    # The flag reaches the helper for the run and is reset afterwards.
    assert main(["decompose", str(tmp_path / "none.csv"), "--x", "x", "--x0", "a", "--x1", "b", "--y", "y", "--quiet"]) == 2
    assert not _progress._quiet


def test_the_decomposition_cross_fit_reports_progress(monkeypatch):
    from fairpath.causal import decompose
    from fairpath.datasets import make_binary_sfm

    sample = make_binary_sfm(200, seed=0)
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    decompose(sample.data, sample.sfm, learner="linear", n_folds=2, progress=True)
    # 2 folds x (propensities + Y); tqdm redraws at most every 0.1 s, so the bar's last state may not be drawn before it clears
    assert "cross-fitting" in terminal.getvalue() and "/4 [" in terminal.getvalue()
    quiet = _Terminal()
    monkeypatch.setattr(sys, "stderr", quiet)
    decompose(sample.data, sample.sfm, learner="linear", n_folds=2, progress=False)
    assert quiet.getvalue() == ""


def test_an_announcement_prints_one_line_unless_quiet(capsys):
    _progress.announce("converting a model once")
    _progress.set_quiet(True)
    try:
        _progress.announce("not shown")
    finally:
        _progress.set_quiet(False)
    assert capsys.readouterr().err == "converting a model once\n"


def test_a_slow_stage_ends_with_its_rows_per_second_when_stderr_is_not_a_terminal(capsys, monkeypatch):
    monkeypatch.setattr(_progress, "STAGE_AFTER_S", 0.05)
    with _progress.stage("reading big.csv") as reading:
        time.sleep(0.2)
        reading.rows = 1_000_000  # known once the file is read
    lines = capsys.readouterr().err.splitlines()
    assert lines[0].startswith("reading big.csv: running, 0 done")
    rate = int(lines[-1].split("(")[1].split(" rows/s")[0].replace(",", ""))
    assert lines[-1].startswith("reading big.csv: done, 1000000 done (") and 1_000_000 / 0.5 < rate < 1_000_000 / 0.2


def test_rows_fitted_per_second_are_counted_across_threads(capsys, monkeypatch):
    monkeypatch.setattr(_progress, "STAGE_AFTER_S", 0.05)
    with _progress.progress(total=2, desc="cross-fitting") as bar:
        rate = _progress.RowRate(bar)
        time.sleep(0.1)
        for _ in range(4):
            rate.add(25_000)
        bar.update(2)
    assert rate.rows == 100_000
    last = capsys.readouterr().err.splitlines()[-1]
    assert last.startswith("cross-fitting: done, 2/2 done (") and last.split("(")[1].split(" rows/s fitted")[0].replace(",", "").isdigit()

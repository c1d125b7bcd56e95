"""Running the command line in a test: its exit status and stderr, with no traceback allowed."""

from __future__ import annotations

from fairpath.cli import main


def run_cli(argv, capsys) -> tuple[int, str]:
    """Exit status and stderr of ``fairpath ARGV`` (argparse's own errors exit through SystemExit); a traceback on
    stderr fails the test."""
    try:
        code = main(argv)
    except SystemExit as stop:
        code = stop.code
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return code, err

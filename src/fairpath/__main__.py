"""``python -m fairpath``: the command line."""

import sys

from fairpath.cli import main

sys.exit(main())

import sys

from fairpath.cli import main

sys.exit(main())

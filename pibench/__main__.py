"""``python -m pibench``: the command line (:mod:`pibench.cli`)."""

import sys

from pibench.cli import main

sys.exit(main())

"""``python -m pibench``: the command line (:mod:`pibench.benchmarks.cli`)."""

import sys

from pibench.benchmarks.cli import main

sys.exit(main())

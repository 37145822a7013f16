"""``python -m pibench``: the command line (:mod:`pibench.cli`)."""

import sys

try:
    from pibench.cli import main
except KeyboardInterrupt:  # Ctrl-C while the package loads: a line, as later (pibench.cli.main)
    print("pibench: interrupted before anything ran.", file=sys.stderr)
    sys.exit(130)

sys.exit(main())

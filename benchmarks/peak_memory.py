"""Peak resident memory of a command and all its child processes (e.g. joblib workers).

    python -m benchmarks.peak_memory -- pibench run --suite fesp -j 2

Polls /proc every ``--interval`` seconds and prints the peak of the summed RSS
of the process tree. Linux only.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path


def _children(pid: int) -> list[int]:
    out = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            out += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            pass
    return out


def tree_rss_bytes(root: int) -> int:
    """Summed RSS of ``root`` and its descendants."""
    total, stack = 0, [root]
    while stack:
        pid = stack.pop()
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
        except OSError:
            continue
        stack += _children(pid)
    return total


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--interval", type=float, default=0.5)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command to measure after --")
    tic = time.perf_counter()
    proc = subprocess.Popen(command)
    peak = 0
    while proc.poll() is None:
        peak = max(peak, tree_rss_bytes(proc.pid))
        time.sleep(args.interval)
    print(f"peak memory (RSS of the process tree): {peak / 2**30:.2f} GiB; wall {time.perf_counter() - tic:.0f} s",
          file=sys.stderr)
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env bash
# The GPU session's one prepared command (benchmarks/device_run.py says what it runs):
#   bash benchmarks/device_run.sh [--stages ...] [--budget S] [--resume .device/resume/*.tar.gz] [--dry-run]
# On a bare GPU machine (torch with CUDA installed, no network): installs the wheels carried in .device/wheels
# (staged here by `python -m pibench.benchmarks.device_run stage`), reads data from .device/data, writes to $OUT.
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PIBENCH_PYTHON:-python3}
CARRY=${PIBENCH_CARRY:-.device}
case "$CARRY" in /*) ;; *) CARRY="$PWD/$CARRY" ;; esac
if compgen -G "$CARRY/wheels/*.whl" >/dev/null; then
  SITE=$(mktemp -d /tmp/pibench-site.XXXXXX)
  "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$SITE" "$CARRY"/wheels/*.whl \
    || { echo "device_run.sh: could not install the carried wheels in $CARRY/wheels" >&2; exit 2; }
  export PYTHONPATH="$SITE${PYTHONPATH:+:$PYTHONPATH}"
  echo "device_run.sh: installed $(ls "$CARRY"/wheels/*.whl | wc -l) carried wheel(s) into $SITE"
fi
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
if [ -z "${PIBENCH_DATA:-}" ] && [ -d "$CARRY/data" ]; then export PIBENCH_DATA="$CARRY/data"; fi
export PYTHONUNBUFFERED=1
exec "$PY" -m pibench.benchmarks.device_run run --out "${OUT:-$PWD/device_out}" "$@"

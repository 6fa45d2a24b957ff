#!/usr/bin/env bash
# Reproduces every round-94a case (36 real runs, one at a time, ~15-20 min on 2 cores).
# Needs a venv with torch==2.13.0 (CPU) + numpy:  python3 -m venv $VENV && $VENV/bin/pip install torch==2.13.0 numpy
# Case folders are built under $OUT, then copied into tests/blind/stage94/ by exact id.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
export VENV=${VENV:-/work/h94/venv} WORK=${WORK:-/work/h94/work} OUT=${OUT:-/work/h94/build}
STAGE=${STAGE:-$HERE/../../../../blind/stage94}
mkdir -p "$WORK" "$OUT" "$STAGE"
"$VENV/bin/python" -c 'import torch; assert torch.__version__ == "2.13.0+cpu", torch.__version__'
python3 "$HERE/run_cases.py" "${@:-all}"
for id in $(python3 "$HERE/run_cases.py" --list | cut -d' ' -f1); do
  if [ -f "$OUT/$id/label.json" ]; then rm -rf "${STAGE:?}/$id"; cp -r "$OUT/$id" "$STAGE/$id"; fi
done

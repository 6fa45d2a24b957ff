#!/bin/bash
# Round 98a (output plumbing): reproduce every case, or only the ids given.
#   VENV=/work/h98/venv WORK=/work/h98/work OUT=/work/main/tests/blind/stage98 bash run_all.sh [case-id ...]
# VENV: a virtualenv with torch==2.13.0 (CPU), numpy, tqdm.  WORK: scratch dir the jobs run in (its path and
# VENV's are rewritten to /home/user/job and /opt/venv in the logs).  Runs cases one at a time (2-4 ranks each).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
export VENV=${VENV:-/work/h98/venv} WORK=${WORK:-/work/h98/work} OUT=${OUT:-/work/main/tests/blind/stage98}
mkdir -p "$WORK" "$OUT"
"$VENV/bin/python" "$HERE/cases.py" "$@"
rc=$?
# leftover ranks are killed by pid inside cases.py (processes carrying its marker variable)
exit $rc

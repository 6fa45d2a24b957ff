#!/usr/bin/env bash
# Reproduce round-27b cases: two torchrun "nodes" (node-a, node-b) on one host, combined into ONE log
# by collector.py in the format of a real log collector.
# usage: run_all.sh [case-id ...]     (no args: all cases)
#   OUT=/some/dir  (default /tmp/round27b-out)   VENV=/path/to/venv with torch 2.13.0 (default /work/helpers/venv27b)
set -u
HERE="$(cd "$(dirname "$0")" && pwd)"
OUT="${OUT:-/tmp/round27b-out}"
export VENV="${VENV:-/work/helpers/venv27b}"
declare -A ARGS=(
  [run27b-pdsh-raise]="--format pdsh --scenario raise --fault-local-rank 1 --fault-step 4"
  [run27b-journal-raise]="--format journal --scenario raise --fault-local-rank 0 --fault-step 3 --rdzv static"
  [run27b-cri-sigkill]="--format cri --scenario sigkill --fault-local-rank 1 --fault-step 5"
  [run27b-journal-sigkill]="--format journal --scenario sigkill --fault-local-rank 0 --fault-step 4"
  [run27b-kubectl-prefix-hang]="--format kubectl-prefix --scenario hang --fault-local-rank 1 --fault-step 3"
  [run27b-docker-json-hang]="--format docker-json --scenario hang --fault-local-rank 0 --fault-step 4 --rdzv static"
  [run27b-journal-mismatch]="--format journal --scenario mismatch --mismatch-op broadcast --fault-local-rank 0 --fault-step 3 --rdzv static"
  [run27b-pdsh-mismatch-detail]="--format pdsh --scenario mismatch --fault-local-rank 0 --fault-step 4 --detail"
  [run27b-docker-json-nodekill]="--format docker-json --scenario nodekill --fault-step 4"
  [run27b-cri-nodekill]="--format cri --scenario nodekill --fault-step 5 --rdzv static"
  [run27b-plain-rdzv]="--format plain --scenario rdzv"
  [run27b-kubectl-prefix-rdzv-static]="--format kubectl-prefix --scenario rdzv --rdzv static"
  [run27b-plain-healthy]="--format plain --scenario healthy"
  [run27b-cri-healthy]="--format cri --scenario healthy --rdzv static"
  [run27b-docker-json-healthy]="--format docker-json --scenario healthy"
  [run27b-kubectl-prefix-raise]="--format kubectl-prefix --scenario raise --fault-local-rank 1 --fault-step 6"
)
ORDER="run27b-pdsh-raise run27b-journal-raise run27b-kubectl-prefix-raise run27b-cri-sigkill run27b-journal-sigkill
 run27b-kubectl-prefix-hang run27b-docker-json-hang run27b-journal-mismatch run27b-pdsh-mismatch-detail
 run27b-docker-json-nodekill run27b-cri-nodekill run27b-plain-rdzv run27b-kubectl-prefix-rdzv-static
 run27b-plain-healthy run27b-cri-healthy run27b-docker-json-healthy"
CASES="${*:-$ORDER}"
for c in $CASES; do
  [ -n "${ARGS[$c]:-}" ] || { echo "unknown case $c" >&2; continue; }
  mkdir -p "$OUT/$c"
  echo "== $c: collector.py ${ARGS[$c]}"
  "$VENV/bin/python" "$HERE/collector.py" ${ARGS[$c]} --out "$OUT/$c/log.txt"
  # only machine-specific paths are rewritten
  sed -i -e "s#$VENV#/opt/venv#g" -e "s#$HERE#/home/user/job#g" "$OUT/$c/log.txt"
  # collector.py SIGKILLs (by pid) every torchrun/rank still alive at its end; just report strays here
  pgrep -f "^$VENV/bin/python3 -u train.py" >/dev/null && echo "WARNING: stray train.py processes left" >&2 || true
done

#!/bin/bash
# run_all.sh [case-id ...] - reproduce the round-41a cases, one at a time, into $OUT/<case-id>/log.txt
# Messy multi-rank output on purpose: PYTHONUNBUFFERED is UNSET, so every rank's stdout is block-buffered
# while stderr is unbuffered, and all ranks write into one file or pipe.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
VENV=${VENV:-/work/helpers/venv41a}
OUT=${OUT:-/work/helpers/stage41}
WORK=${WORK:-/tmp/w41a}
PY=$VENV/bin/python
mkdir -p "$OUT" "$WORK"
unset PYTHONUNBUFFERED
export MASTER_ADDR=127.0.0.1

# launchers -------------------------------------------------------------------------------------------
spawn()    { $PY "$HERE/job.py" --spawn "$1"; }                    # mp.spawn N ranks, inherited stdout/stderr
shellloop() {                                                       # plain shell loop, env rendezvous
  local n=$1; export WORLD_SIZE=$n
  for r in $(seq 0 $((n - 1))); do RANK=$r $PY "$HERE/job.py" & done; wait; }
shellappend() {                                                     # each rank appends to the same file itself
  local n=$1 f=$2; export WORLD_SIZE=$n
  for r in $(seq 0 $((n - 1))); do RANK=$r $PY "$HERE/job.py" >> "$f" 2>&1 & done; wait; }
torchrun_plain() { $VENV/bin/torchrun --nnodes 1 --nproc-per-node "$1" --master-port "$MASTER_PORT" "$HERE/job.py"; }
torchrun_redir() { RECORD=1 $VENV/bin/torchrun --nnodes 1 --nproc-per-node "$1" --master-port "$MASTER_PORT" \
                     --redirects 3 "$HERE/job.py"; }

export PY VENV HERE
export -f spawn shellloop shellappend torchrun_plain torchrun_redir
cd "$WORK"

# cases: id | env | command --------------------------------------------------------------------------
CASES='
run41a-spawn-raise-r2|FAULT=raise FAIL_RANK=2 FAIL_STEP=4|spawn 4
run41a-spawn-sigkill-r1|FAULT=sigkill FAIL_RANK=1 FAIL_STEP=3|spawn 3
run41a-spawn-hang-r3|FAULT=hang FAIL_RANK=3 FAIL_STEP=2 PG_TIMEOUT=15|spawn 4
run41a-spawn-mismatch-r2|FAULT=mismatch FAIL_RANK=2 FAIL_STEP=3 EXTRA=4096|spawn 3
run41a-spawn-mismatch-detail-r1|FAULT=mismatch FAIL_RANK=1 FAIL_STEP=2 NO_DDP=1 TORCH_DISTRIBUTED_DEBUG=DETAIL|spawn 3
run41a-spawn-healthy|FAULT=none|spawn 4
run41a-shell-raise-r1|FAULT=raise FAIL_RANK=1 FAIL_STEP=5|shellloop 3
run41a-shell-sigkill-r2|FAULT=sigkill FAIL_RANK=2 FAIL_STEP=2|shellloop 3
run41a-shell-hang-r1|FAULT=hang FAIL_RANK=1 FAIL_STEP=3 PG_TIMEOUT=15|shellloop 3
run41a-shell-mismatch-r3|FAULT=mismatch FAIL_RANK=3 FAIL_STEP=4 EXTRA=4096|shellloop 4
run41a-shell-mismatch-detail-r2|FAULT=mismatch FAIL_RANK=2 FAIL_STEP=3 NO_DDP=1 TORCH_DISTRIBUTED_DEBUG=DETAIL|shellloop 3
run41a-shell-healthy|FAULT=none STEPS=10|shellloop 3
run41a-shellappend-raise-r2|FAULT=raise FAIL_RANK=2 FAIL_STEP=3|shellappend 4 LOG
run41a-shellappend-healthy|FAULT=none|shellappend 4 LOG
run41a-shellpipe-sigkill-r1|FAULT=sigkill FAIL_RANK=1 FAIL_STEP=4|PIPE shellloop 3
run41a-torchrun-raise-r2|FAULT=raise FAIL_RANK=2 FAIL_STEP=3|torchrun_plain 4
run41a-torchrun-sigkill-r1|FAULT=sigkill FAIL_RANK=1 FAIL_STEP=3|torchrun_plain 3
run41a-torchrun-hang-r2|FAULT=hang FAIL_RANK=2 FAIL_STEP=2 PG_TIMEOUT=15|torchrun_plain 3
run41a-torchrun-mismatch-r2|FAULT=mismatch FAIL_RANK=2 FAIL_STEP=2 EXTRA=4096|torchrun_plain 3
run41a-torchrun-mismatch-detail-r1|FAULT=mismatch FAIL_RANK=1 FAIL_STEP=3 NO_DDP=1 TORCH_DISTRIBUTED_DEBUG=DETAIL|torchrun_plain 3
run41a-torchrun-healthy|FAULT=none|torchrun_plain 3
run41a-torchrun-redirects-raise-r1|FAULT=raise FAIL_RANK=1 FAIL_STEP=4|torchrun_redir 3
run41a-torchrun-redirects-sigkill-r2|FAULT=sigkill FAIL_RANK=2 FAIL_STEP=3|torchrun_redir 3
run41a-torchrun-redirects-hang-r1|FAULT=hang FAIL_RANK=1 FAIL_STEP=2 PG_TIMEOUT=15|torchrun_redir 3
'

port=29650
while IFS="|" read -r id envs cmd <&3; do
  [ -z "$id" ] && continue
  port=$((port + 1))
  if [ $# -gt 0 ] && ! printf '%s\n' "$@" | grep -qx "$id"; then continue; fi
  d=$OUT/$id; rm -rf "$d"; mkdir -p "$d"
  echo "== $id: $envs $cmd" >&2
  export MASTER_PORT=$port
  set -m   # give the case its own process group, so leftovers can be killed by that group's id
  case "$cmd" in   # each branch: how the output reaches log.txt
    PIPE*)   ( env $envs timeout -k 10 240 bash -c "${cmd#PIPE }" 2>&1 | tee "$d/log.txt" >/dev/null ) & ;;  # via a pipe
    *" LOG") ( env $envs timeout -k 10 240 bash -c "${cmd% LOG} $d/log.txt" ) & ;;   # ranks append to the file
    *)       ( env $envs timeout -k 10 240 bash -c "$cmd" > "$d/log.txt" 2>&1 ) & ;;  # one redirect for all
  esac
  pg=$!; wait $pg; echo "   exit $?" >&2
  kill -KILL -- -$pg 2>/dev/null   # no orphan ranks
  set +m
  sleep 2
  # machine-specific paths only
  sed -i -e "s#$VENV#/opt/venv#g" -e "s#$HERE#/home/user/job#g" -e "s#$WORK#/home/user/job#g" "$d/log.txt"
done 3< <(echo "$CASES")

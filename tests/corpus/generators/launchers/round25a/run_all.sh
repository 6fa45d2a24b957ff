#!/usr/bin/env bash
# Round 25a: torch.compile (Inductor C++ backend, CPU) faults on ONE rank of a gloo job; reproduce every case,
# rewrite machine paths (venv -> /opt/venv, job dir -> /home/user/job). Labels: python make_labels.py.
#   bash run_all.sh                 # all cases
#   bash run_all.sh <case-id> ...   # some cases
# env: VENV (default /work/helpers/venv25a), JOB (work dir, default /work/helpers/w25a/job),
#      STAGE (output, default /work/helpers/stage25a)
set -u
HERE="$(cd "$(dirname "$0")" && pwd)"
VENV="${VENV:-/work/helpers/venv25a}"
JOB="${JOB:-/work/helpers/w25a/job}"
STAGE="${STAGE:-/work/helpers/stage25a}"
export PATH="$VENV/bin:$PATH"
mkdir -p "$JOB/out" "$STAGE"
cp "$HERE/train25a.py" "$JOB/"

tr() { echo "torchrun --nnodes 1 --nproc-per-node $1 --master-port $2 train25a.py"; }
sp() { echo "python train25a.py --launcher spawn --nproc $1 --port $2"; }
declare -A CMD=(
  [run25a-torchrun-customop]="$(tr 3 29741) --fault customop --bad-rank 1 --step 2"
  [run25a-torchrun-recompile]="$(tr 3 29742) --fault recompile --bad-rank 2 --step 2"
  [run25a-torchrun-dynshape]="$(tr 2 29743) --fault dynshape --bad-rank 1 --step 3"
  [run25a-torchrun-fullgraph-print]="$(tr 3 29744) --fault print --bad-rank 0 --step 2"
  [run25a-torchrun-cachedir]="$(tr 3 29745) --fault cachedir --bad-rank 2 --per-rank-cache $JOB/rank_cache"
  [run25a-torchrun-cachedir-readonly]="$(tr 3 29748) --fault cachedir --bad-rank 0 --per-rank-cache $JOB/rank_cache"
  [run25a-torchrun-usererror]="$(tr 2 29746) --fault usererror --bad-rank 1 --step 3"
  [run25a-torchrun-logdir-dynshape]="torchrun --nnodes 1 --nproc-per-node 3 --master-port 29747 --log-dir $JOB/tlogs --redirects 3 train25a.py --fault dynshape --bad-rank 2 --step 2"
  [run25a-spawn-customop]="$(sp 2 29751) --fault customop --bad-rank 0 --step 2"
  [run25a-spawn-recompile]="$(sp 2 29752) --fault recompile --bad-rank 1 --step 2 --limit-name cache_size_limit"
  [run25a-spawn-dynshape]="$(sp 3 29753) --fault dynshape --bad-rank 1 --step 2"
  [run25a-spawn-fullgraph-print]="$(sp 3 29754) --fault print --bad-rank 2 --step 3"
  [run25a-spawn-cachedir]="$(sp 2 29755) --fault cachedir --bad-rank 1 --per-rank-cache $JOB/rank_cache"
  [run25a-spawn-usererror]="$(sp 3 29756) --fault usererror --bad-rank 0 --step 2"
  [run25a-torchrun-ok-graphbreak]="$(tr 3 29761) --graph-break"
  [run25a-spawn-ok-recompile]="$(sp 2 29762) --ragged-ranks 1 --step 4"
  [run25a-torchrun-ok-dynamic]="$(tr 2 29763) --dynamic auto --ragged-ranks 0 --step 3 --graph-break"
)
# TORCH_LOGS per case (the rest run without)
declare -A LOGS=(
  [run25a-torchrun-recompile]=recompiles [run25a-spawn-recompile]=recompiles
  [run25a-spawn-fullgraph-print]=graph_breaks [run25a-torchrun-ok-graphbreak]=graph_breaks
  [run25a-spawn-ok-recompile]=recompiles [run25a-torchrun-ok-dynamic]=recompiles,graph_breaks
)
ORDER="run25a-torchrun-customop run25a-torchrun-recompile run25a-torchrun-dynshape run25a-torchrun-fullgraph-print
 run25a-torchrun-cachedir run25a-torchrun-cachedir-readonly
 run25a-torchrun-usererror run25a-torchrun-logdir-dynshape run25a-spawn-customop
 run25a-spawn-recompile run25a-spawn-dynshape run25a-spawn-fullgraph-print run25a-spawn-cachedir
 run25a-spawn-usererror run25a-torchrun-ok-graphbreak run25a-spawn-ok-recompile run25a-torchrun-ok-dynamic"
IDS="${*:-$ORDER}"

rewrite() { sed -i -e "s#$VENV#/opt/venv#g" -e "s#$JOB#/home/user/job#g" "$1"; }

for id in $IDS; do
  cmd="${CMD[$id]}"
  d="$STAGE/$id"
  umount "$JOB"/rank_cache/rank* 2>/dev/null
  rm -rf "$d" "$JOB/tlogs" "$JOB/rank_cache"
  mkdir -p "$d"
  # shared Inductor cache for the job (per-rank cache dirs in the cachedir cases instead)
  envs="TORCHINDUCTOR_CACHE_DIR=$JOB/inductor_cache"
  [[ -n "${LOGS[$id]:-}" ]] && envs="$envs TORCH_LOGS=${LOGS[$id]}"
  if [[ "$id" == *cachedir-readonly ]]; then
    # rank_cache/rank<bad> is a directory bind-mounted read-only (needs root), so Inductor can't create inductor/ in it
    bad=$(sed -E 's/.*--bad-rank ([0-9]+).*/\1/' <<< "$cmd")
    mkdir -p "$JOB/rank_cache/rank$bad" && mount --bind -o ro "$JOB/rank_cache/rank$bad" "$JOB/rank_cache/rank$bad"
  fi
  if [[ "$id" == *cachedir ]]; then
    # rank_cache/rank<bad> is a stale regular file, so that rank's cache dir rank<bad>/inductor can't be made
    bad=$(sed -E 's/.*--bad-rank ([0-9]+).*/\1/' <<< "$cmd")
    mkdir -p "$JOB/rank_cache"; echo "stale lock from a previous job" > "$JOB/rank_cache/rank$bad"
  fi
  echo "== $id: $envs $cmd"
  echo "$envs $cmd" > "$JOB/out/$id.cmd"
  # own session/process group, so everything the launcher started can be killed by its group id afterwards
  (cd "$JOB" && exec setsid env $envs timeout 400 $cmd > "$d/log.txt" 2>&1) &
  pid=$!
  wait $pid; rc=$?; echo $rc > "$JOB/out/$id.rc"; echo "   rc=$rc"
  kill -9 -- -"$pid" 2>/dev/null || true
  umount "$JOB"/rank_cache/rank* 2>/dev/null
  rewrite "$d/log.txt"
  if [[ -d "$JOB/tlogs" ]]; then
    # torchrun --log-dir writes <log-dir>/<run_id>/attempt_0/<rank>/{stdout,stderr}.log: keep the layout below run_id
    run=$(ls "$JOB/tlogs" | head -1)
    cp -r "$JOB/tlogs/$run" "$d/ranks"
    find "$d/ranks" -type f | while read -r f; do rewrite "$f"; done
  fi
done

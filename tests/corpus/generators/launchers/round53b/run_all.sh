#!/bin/bash
# Round 53b: p2p / async communication failing on one rank (the rank that prints the error is mostly NOT the
# culprit).  Usage: run_all.sh VENV POOL [case-id ...]   (no ids: every case).  Writes POOL/<id>/log.txt
# (and POOL/<id>/ranks/ for torchrun --log-dir cases); labels are written afterwards by make_labels.py.
VENV=${1:?venv}; POOL=${2:?pool}; shift 2
HERE=$(cd "$(dirname "$0")" && pwd); cd "$HERE"
export PATH=$VENV/bin:$PATH PYTHONUNBUFFERED=1
WANT=("$@")
want() { [ ${#WANT[@]} -eq 0 ] && return 0; for w in "${WANT[@]}"; do [ "$w" = "$1" ] && return 0; done; return 1; }
fix() { sed -i -e "s#$VENV#/opt/venv#g" -e "s#$HERE#/home/user/job#g" "$@"; }

run_case() {  # id, then the command.  The run gets its own session; its process group is killed afterwards.
    local id=$1; shift
    want "$id" || return 0
    rm -rf "$POOL/$id"; mkdir -p "$POOL/$id"; echo "== $id"
    setsid timeout 150 "$@" > "$POOL/$id/log.txt" 2>&1 &
    local pid=$!; wait $pid; echo "   rc=$?"
    kill -KILL -- -$pid 2>/dev/null; sleep 1
    fix "$POOL/$id/log.txt"
    if [ -n "$LOGDIR" ] && [ -d "$LOGDIR" ]; then     # torchrun --log-dir: keep attempt_0/<rank>/... layout
        mkdir -p "$POOL/$id/ranks"; cp -r "$LOGDIR"/*/attempt_* "$POOL/$id/ranks/"
        find "$POOL/$id/ranks" -type f -exec sed -i -e "s#$VENV#/opt/venv#g" -e "s#$HERE#/home/user/job#g" {} +
        rm -rf "$LOGDIR"
    fi
}
TR="torchrun --standalone --nproc-per-node 4"
SP="env LAUNCH=spawn NPROC=4 MASTER_ADDR=127.0.0.1"

# ---- torchrun, console ----
run_case run-r53b-torchrun-pipe-raise        env MODE=pipe FAULT=raise FAULT_RANK=2 FAULT_STEP=3 $TR pp.py
run_case run-r53b-torchrun-pipe-sigkill      env MODE=pipe FAULT=sigkill FAULT_RANK=1 FAULT_STEP=4 $TR pp.py
run_case run-r53b-torchrun-pipe-shape        env MODE=pipe FAULT=shape FAULT_RANK=1 FAULT_STEP=3 PG_TIMEOUT=20 $TR pp.py
run_case run-r53b-torchrun-ring-wrongpeer    env MODE=ring FAULT=wrongpeer FAULT_RANK=2 FAULT_STEP=3 WAIT_S=12 $TR pp.py
run_case run-r53b-torchrun-async-uneven      env MODE=async FAULT=uneven FAULT_RANK=3 STEPS=6 HANG_S=45 PG_TIMEOUT=18 $TR pp.py
run_case run-r53b-torchrun-pplib-raise       env MODE=pplib FAULT=raise FAULT_RANK=1 FAULT_STEP=2 $TR pp.py
run_case run-r53b-torchrun-healthy-pipe-noisy env MODE=pipe NOISY=1 LOGLEVEL=INFO $TR pp.py
# ---- torchrun --log-dir D --tee 3 (ranks/ tree copied) ----
LOGDIR=/tmp/h53b/ld1 run_case run-r53b-torchrun-logdir-pipe-hang env MODE=pipe FAULT=hang FAULT_PHASE=bwd FAULT_RANK=3 FAULT_STEP=2 HANG_S=50 $TR --log-dir /tmp/h53b/ld1 --tee 3 pp.py
LOGDIR=/tmp/h53b/ld2 run_case run-r53b-torchrun-logdir-ring-batch-skipsend env MODE=ring RING_API=batch FAULT=skipsend FAULT_RANK=2 FAULT_STEP=4 WAIT_S=15 $TR --log-dir /tmp/h53b/ld2 --tee 3 pp.py
# ---- mp.spawn ----
run_case run-r53b-spawn-pipe-raise-bwd       $SP MASTER_PORT=29731 MODE=pipe FAULT=raise FAULT_PHASE=bwd FAULT_RANK=3 FAULT_STEP=2 python pp.py
run_case run-r53b-spawn-pipe-hang            $SP MASTER_PORT=29732 MODE=pipe FAULT=hang FAULT_RANK=1 FAULT_STEP=3 HANG_S=45 PG_TIMEOUT=20 python pp.py
run_case run-r53b-spawn-pipe-dtype           $SP MASTER_PORT=29733 MODE=pipe FAULT=dtype FAULT_RANK=2 FAULT_STEP=5 python pp.py
run_case run-r53b-spawn-ring-batch-skipsend  $SP MASTER_PORT=29734 MODE=ring RING_API=batch FAULT=skipsend FAULT_RANK=3 FAULT_STEP=3 WAIT_S=10 python pp.py
run_case run-r53b-spawn-async-raise          $SP MASTER_PORT=29735 MODE=async FAULT=raise FAULT_RANK=1 FAULT_STEP=4 python pp.py
run_case run-r53b-spawn-healthy-ring-noisy   $SP MASTER_PORT=29736 MODE=ring NOISY=1 python pp.py
# ---- shell loop with sed -u "s/^/[rankN] /" prefixes ----
run_case run-r53b-shell-pipe-sigkill         env MASTER_PORT=29741 MODE=pipe FAULT=sigkill FAULT_RANK=2 FAULT_STEP=3 ./loop.sh
run_case run-r53b-shell-pipe-shape-bwd       env MASTER_PORT=29742 MODE=pipe FAULT=shape FAULT_PHASE=bwd FAULT_RANK=3 FAULT_STEP=4 ./loop.sh
run_case run-r53b-shell-ring-skipsend        env MASTER_PORT=29743 MODE=ring FAULT=skipsend FAULT_RANK=1 FAULT_STEP=3 WAIT_S=10 ./loop.sh
run_case run-r53b-shell-ring-batch-wrongpeer env MASTER_PORT=29744 MODE=ring RING_API=batch FAULT=wrongpeer FAULT_RANK=3 FAULT_STEP=2 WAIT_S=15 ./loop.sh
run_case run-r53b-shell-pplib-raise          env MASTER_PORT=29745 MODE=pplib FAULT=raise FAULT_RANK=2 FAULT_STEP=3 ./loop.sh
run_case run-r53b-shell-healthy-async-noisy  env MASTER_PORT=29746 MODE=async NOISY=1 LOGFMT='%(asctime)s %(levelname)s %(name)s: %(message)s' ./loop.sh
exit 0

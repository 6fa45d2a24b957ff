#!/bin/bash
# Round 66a: PyTorch parallelism APIs (pipelining, tensor parallel, functional collectives, DTensor) on CPU/gloo,
# one rank failing.  Usage: run_all.sh VENV POOL [case-id ...]   (no ids: every case).
# Writes POOL/<id>/log.txt (and POOL/<id>/ranks/ for torchrun --log-dir cases); labels come from make_labels.py.
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
    [ -n "$LOGDIR" ] && rm -rf "$LOGDIR"
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
L=/tmp/h66a/logdir

# ---- torchrun, plain console ----
run_case run-r66a-pp-gpipe-raise     env MODE=pp SCHED=gpipe FAULT=raise FAULT_RANK=2 FAULT_STEP=2 FAULT_MB=1 $TR par66.py
run_case run-r66a-pp-gpipe-shape     env MODE=pp SCHED=gpipe FAULT=shape FAULT_RANK=1 FAULT_STEP=2 FAULT_MB=1 $TR par66.py
run_case run-r66a-pp-1f1b-sigkill    env MODE=pp SCHED=1f1b FAULT=sigkill FAULT_RANK=3 FAULT_STEP=2 FAULT_MB=2 $TR par66.py
run_case run-r66a-tp-shape           env MODE=tp FAULT=shape FAULT_RANK=2 $TR par66.py
run_case run-r66a-funcol-shape       env MODE=funcol FAULT=shape FAULT_RANK=3 FAULT_STEP=2 $TR par66.py
run_case run-r66a-dtensor-shape      env MODE=dtensor FAULT=shape FAULT_RANK=1 FAULT_STEP=3 $TR par66.py
run_case run-r66a-tp-raise-rank0     env MODE=tp FAULT=raise FAULT_RANK=0 FAULT_STEP=2 $TR par66.py
run_case run-r66a-healthy-funcol     env MODE=funcol $TR par66.py
# ---- torchrun --tee 3 ([rank]: prefixes on every line) ----
run_case run-r66a-tee-pp-interleaved-raise env MODE=pp SCHED=interleaved FAULT=raise FAULT_RANK=1 FAULT_STAGE=5 FAULT_STEP=1 FAULT_MB=2 $TR --tee 3 par66.py
run_case run-r66a-tee-pp-1f1b-hang   env MODE=pp SCHED=1f1b FAULT=hang FAULT_RANK=2 FAULT_STEP=2 FAULT_MB=1 HANG_S=45 $TR --tee 3 par66.py
run_case run-r66a-tee-tp2d-sigkill   env MODE=tp2d FAULT=sigkill FAULT_RANK=1 FAULT_STEP=3 $TR --tee 3 par66.py
run_case run-r66a-tee-funcol-shape-detail env TORCH_DISTRIBUTED_DEBUG=DETAIL MODE=funcol FAULT=shape FAULT_RANK=2 FAULT_STEP=1 $TR --tee 3 par66.py
run_case run-r66a-tee-pptrace-raise-rank0 env MODE=pptrace FAULT=raise FAULT_RANK=0 FAULT_STEP=3 $TR --tee 3 par66.py
run_case run-r66a-tee-tp-hang        env MODE=tp FAULT=hang FAULT_RANK=3 FAULT_STEP=2 HANG_S=45 $TR --tee 3 par66.py
run_case run-r66a-tee-healthy-pp-interleaved-noisy env MODE=pp SCHED=interleaved NOISY=1 $TR --tee 3 par66.py
# ---- torchrun --log-dir D --redirects 3 (per-rank files copied into ranks/) ----
LOGDIR=$L run_case run-r66a-logdir-pp-interleaved-shape env MODE=pp SCHED=interleaved FAULT=shape FAULT_RANK=2 FAULT_STAGE=6 FAULT_STEP=1 FAULT_MB=0 $TR --log-dir $L --redirects 3 par66.py
LOGDIR=$L run_case run-r66a-logdir-tp2d-raise  env MODE=tp2d FAULT=raise FAULT_RANK=3 FAULT_STEP=2 $TR --log-dir $L --redirects 3 par66.py
LOGDIR=$L run_case run-r66a-logdir-tp2d-hang-rank0 env MODE=tp2d FAULT=hang FAULT_RANK=0 FAULT_STEP=2 HANG_S=45 $TR --log-dir $L --redirects 3 par66.py
LOGDIR=$L run_case run-r66a-logdir-pptrace-sigkill env MODE=pptrace FAULT=sigkill FAULT_RANK=2 FAULT_STEP=2 $TR --log-dir $L --redirects 3 par66.py
LOGDIR=$L run_case run-r66a-logdir-tp2d-shape  env MODE=tp2d FAULT=shape FAULT_RANK=2 $TR --log-dir $L --redirects 3 par66.py
LOGDIR=$L run_case run-r66a-logdir-healthy-tp2d-noisy env MODE=tp2d NOISY=1 $TR --log-dir $L --redirects 3 par66.py
exit 0

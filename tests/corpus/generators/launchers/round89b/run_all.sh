#!/bin/bash
# Reproduces the round89b cases: torch.compile features (FlexAttention, torch.export Dim specs, AOTInductor,
# torch.library.custom_op fake kernels, while_loop/cond, torch._check, mark_dynamic, dynamic=True + .item(),
# fullgraph on untraceable code, compiled optimizer step, compiled autograd, recompile limit) failing or warning,
# torch 2.13 CPU (Inductor C++ backend); half single-process `python compile89.py`, half one rank of a 3-rank
# torchrun/gloo job.
# Usage: run_all.sh [case-id ...]   (default: all).  Env: VENV (venv with torch 2.13.0), POOL (output dir), JOB.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
VENV=${VENV:-/tmp/h89b/venv}
POOL=${POOL:-/tmp/h89b/pool}
JOB=${JOB:-/tmp/h89b/job}            # work dir; rewritten to /home/user/job in logs
PY=$VENV/bin/python
TR="$VENV/bin/torchrun --nnodes 1 --nproc-per-node 3 --master-addr 127.0.0.1"
mkdir -p "$JOB" "$POOL"; cp "$HERE"/compile89.py "$JOB"/
export OMP_NUM_THREADS=1 PYTHONUNBUFFERED=1

cleanup() {  # kill leftovers of this job by pid (only processes running $JOB/compile89.py)
  local p; for p in $(pgrep -f "$JOB/compile89.py"); do kill -9 "$p" 2>/dev/null; done
}
# run ID ENV... -- CMD... : runs CMD in $JOB with ENV and a fresh Inductor cache; log -> $POOL/ID/log.txt
run() {
  local id=$1; shift; local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  local out=$POOL/$id; rm -rf "$out" "$JOB/cache/$id"; mkdir -p "$out" "$JOB/cache/$id"
  echo "== $id: ${envs[*]} $*" >&2
  (cd "$JOB" && env TORCHINDUCTOR_CACHE_DIR="$JOB/cache/$id" PKG_DIR="$JOB/cache/$id" "${envs[@]}" \
     timeout -k 10 400 "$@" > "$out/log.txt" 2>&1); echo "   rc=$?" >&2
  cleanup
  sed -i -e "s#$VENV#/opt/venv#g" -e "s#$JOB#/home/user/job#g" "$out/log.txt"
}
S=$JOB/compile89.py

case_() {
case $1 in
# ---------------- single process: python compile89.py ----------------
run89-python-flex-blockmask)      # block mask built for 64 tokens, step 3 feeds a packed 128-token batch
  run $1 SCEN=flex_blockmask FAIL_RANK=0 FAIL_STEP=3 -- $PY $S ;;
run89-python-flex-scoremod-item-warn)  # score_mod branches on alibi.item(): graph-break warning, job finishes
  run $1 SCEN=flex_scoremod_item FAIL_RANK=-1 STEPS=4 -- $PY $S ;;
run89-python-export-specialize)   # export with Dim batch, forward reshapes with the config batch size (4)
  run $1 SCEN=export_special -- $PY $S ;;
run89-python-aoti-range)          # AOTI package exported with batch<=32, serving batch of 64 at step 2
  run $1 SCEN=aoti_range FAIL_RANK=0 FAIL_STEP=2 AOTI_RUNTIME_CHECK_INPUTS=1 -- $PY $S ;;
run89-python-customop-nofake)     # custom_op without register_fake, compiled from step 2 on
  run $1 SCEN=customop_nofake FAIL_RANK=0 FAIL_STEP=2 -- $PY $S ;;
run89-python-customop-mutation)   # custom_op mutates its input without mutates_args; opcheck before training
  run $1 SCEN=customop_mutation -- $PY $S ;;
run89-python-while-mismatch)      # torch.while_loop body grows the carried tensor, enabled from step 4
  run $1 SCEN=while_mismatch FAIL_RANK=0 FAIL_STEP=4 -- $PY $S ;;
run89-python-check-closure)       # torch._check message lambda closes over a tensor, fullgraph, from step 1
  run $1 SCEN=check_closure FAIL_RANK=0 FAIL_STEP=1 -- $PY $S ;;
run89-python-check-item)          # torch._check(k <= batch) on a captured .item() fails at trace time, step 3
  run $1 SCEN=check_item FAIL_RANK=0 FAIL_STEP=3 -- $PY $S ;;
run89-python-fullgraph-cext)      # zlib.crc32 (C extension) inside a fullgraph region, from step 2
  run $1 SCEN=fullgraph_cext FAIL_RANK=0 FAIL_STEP=2 -- $PY $S ;;
run89-python-optim-fullgraph)     # clip + optimizer.step compiled with fullgraph=True from step 3 (step graph-breaks)
  run $1 SCEN=optim_fullgraph FAIL_RANK=0 FAIL_STEP=3 -- $PY $S ;;
run89-python-recompile-warn)      # dynamic=False encoder fed a new seq length each step: recompile_limit warning
  run $1 SCEN=recompile_warn FAIL_RANK=0 STEPS=11 -- $PY $S ;;
run89-python-compiled-autograd-warn)  # compiled autograd; grad hook with .item() -> graph-break warning, job finishes
  run $1 SCEN=autograd_hookwarn FAIL_RANK=-1 STEPS=4 -- $PY $S ;;
# ---------------- torchrun, 3 ranks, gloo ----------------
run89-torchrun-healthy)           # compiled FlexAttention with a correct causal block mask on every rank
  run $1 SCEN=healthy FAIL_RANK=-1 STEPS=4 -- $TR --master-port 29891 $S ;;
run89-torchrun-flex-maskfloat)    # rank 2 rebuilds its block mask at step 2 with a float-valued mask_mod
  run $1 SCEN=flex_maskfloat FAIL_RANK=2 FAIL_STEP=2 -- $TR --master-port 29892 $S ;;
run89-torchrun-export-range)      # exported head (batch<=16); rank 2 scores a 24-row batch at step 3
  run $1 SCEN=export_range FAIL_RANK=2 FAIL_STEP=3 -- $TR --master-port 29893 $S ;;
run89-torchrun-customop-wrongfake) # fake kernel n//2 rows vs real (n+1)//2; rank 1 gets a 7-row batch at step 3
  run $1 SCEN=customop_wrongfake FAIL_RANK=1 FAIL_STEP=3 -- $TR --master-port 29894 $S ;;
run89-torchrun-cond-dtype)        # rank 1 at step 1 takes the torch.cond path whose branches return float vs bool
  run $1 SCEN=cond_dtype FAIL_RANK=1 FAIL_STEP=1 -- $TR --master-port 29895 $S ;;
run89-torchrun-markdyn-specialize) # rank 1 marks a ragged batch dynamic at step 2; the model specialises on it
  run $1 SCEN=markdyn FAIL_RANK=1 FAIL_STEP=2 -- $TR --master-port 29896 $S ;;
run89-torchrun-dynitem)           # rank 2 at step 4 calls a dynamic=True fullgraph fn that branches on .item()
  run $1 SCEN=dynitem FAIL_RANK=2 FAIL_STEP=4 -- $TR --master-port 29897 $S ;;
run89-torchrun-fullgraph-disable) # rank 0 logs stats at step 2 through a torch.compiler.disable'd fn in fullgraph
  run $1 SCEN=fullgraph_disable FAIL_RANK=0 FAIL_STEP=2 -- $TR --master-port 29898 $S ;;
run89-torchrun-fullgraph-genarg)  # rank 1 passes a generator into a fullgraph fn at step 3
  run $1 SCEN=fullgraph_genarg FAIL_RANK=1 FAIL_STEP=3 -- $TR --master-port 29899 $S ;;
run89-torchrun-compiled-autograd-hook) # compiled autograd, fullgraph override; rank 2 adds a .item() grad hook at step 1
  run $1 SCEN=autograd_hookfg FAIL_RANK=2 FAIL_STEP=1 -- $TR --master-port 29900 $S ;;
run89-torchrun-recompile-fail)    # rank 1 unpadded seq lengths, dynamic=False, fail_on_recompile_limit_hit
  run $1 SCEN=recompile_fail FAIL_RANK=1 STEPS=11 -- $TR --master-port 29901 $S ;;
*) echo "unknown case $1" >&2 ;;
esac
}

if [ $# -eq 0 ]; then
  set -- $(grep -oE '^run89-[a-z0-9-]+\)' "$0" | tr -d ')')
fi
for c in "$@"; do case_ "$c"; done

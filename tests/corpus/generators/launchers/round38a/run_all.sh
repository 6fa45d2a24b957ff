#!/bin/bash
# Round 38a: HEALTHY jobs run with PyTorch debug/diagnostic output ON (TORCH_LOGS, TORCH_DISTRIBUTED_DEBUG,
# TORCH_CPP_LOG_LEVEL, LOGLEVEL, Python logging at DEBUG, faulthandler repeat dumps, anomaly mode, warnings always,
# TORCH_SHOW_CPP_STACKTRACES, graph breaks / recompiles, checkpoint resume, caught+retried errors), plus a few
# FAILURES with the same settings where one rank fails for real, buried in the debug output.
# Launchers: torchrun (gloo), torch.multiprocessing.spawn, one plain process, accelerate launch, Lightning.
# Cases run ONE at a time (2-core machine).  Usage: run_all.sh [case-id ...]
# OUT defaults to /work/helpers/stage38, VENV to /work/helpers/venv38a.  Exit codes go to $META.
set -u
HERE="$(cd "$(dirname "$0")" && pwd)"
VENV="${VENV:-/work/helpers/venv38a}"
OUT="${OUT:-/work/helpers/stage38}"
META="${META:-/work/helpers/stage38a.meta}"
WROOT="${WROOT:-/tmp/w38a}"

ORDER="run38a-torchrun3-dynamo-debug run38a-torchrun3-graphbreaks-recompiles run38a-torchrun4-distdebug-info
 run38a-torchrun3-agent-loglevel-debug run38a-torchrun3-faulthandler run38a-spawn3-anomaly-warnings
 run38a-spawn3-cppstack-retry run38a-single-inductor-output-code run38a-single-dynamic run38a-torchrun3-ckpt-resume
 run38a-accelerate3-debug run38a-lightning3-debug run38a-single-recompile-limit run38a-torchrun3-detail-noddp
 run38a-spawn4-pylog-debug run38a-torchrun3-kitchen-sink
 run38a-torchrun3-dynamo-debug-raise-r1 run38a-torchrun3-fullgraph-r2 run38a-spawn3-faulthandler-sigkill-r1
 run38a-torchrun4-distdebug-hang-r3 run38a-torchrun3-inductor-cxx-r1 run38a-spawn3-detail-size-r2
 run38a-lightning3-raise-r2"

one() {
  local id="$1" i=0 P
  for x in $ORDER; do [ "$x" = "$id" ] && P=$((29400 + 7 * i)); i=$((i + 1)); done   # fixed port per case
  local W="$WROOT/$id/job" D="$OUT/$id" L="$OUT/$id/log.txt" rc=0
  rm -rf "$WROOT/$id" "$D"; mkdir -p "$W" "$D"; cp "$HERE"/*.py "$W/"
  local TR="torchrun --master-port $P --tee 3 --nproc-per-node"      # + N job.py ...
  local SP="python job.py --launch spawn --port $P --world"          # + N ...
  local AL="accelerate launch --multi_gpu --num_processes 3 --num_machines 1 --mixed_precision no --dynamo_backend no --num_cpu_threads_per_process 1 --main_process_port $P"
  run() { echo "$id: $*" | sed -e "s#$VENV#/opt/venv#g" -e "s#$W#/home/user/job#g" >> "$META.cmds"
          ( cd "$W" && exec env PATH="$VENV/bin:$PATH" OMP_NUM_THREADS=1 TORCHINDUCTOR_CACHE_DIR="$WROOT/$id/ind" \
            timeout -k 5 300 "$@" ) > "$L" 2>&1; rc=$?; }
  case "$id" in
  # ---------------- healthy (exit 0, every rank finishes) ----------------
  run38a-torchrun3-dynamo-debug)          run env TORCH_LOGS=+dynamo $TR 3 job.py --compile eager --steps 5 ;;
  run38a-torchrun3-graphbreaks-recompiles) run env TORCH_LOGS=graph_breaks,recompiles $TR 3 job.py --compile aot_eager --graph-break --vary-shapes --steps 6 ;;
  run38a-torchrun4-distdebug-info)        run env TORCH_DISTRIBUTED_DEBUG=INFO TORCH_CPP_LOG_LEVEL=INFO $TR 4 job.py --steps 6 ;;
  run38a-torchrun3-agent-loglevel-debug)  run env LOGLEVEL=DEBUG TORCH_CPP_LOG_LEVEL=INFO $TR 3 job.py --pylog-debug --steps 6 ;;
  run38a-torchrun3-faulthandler)          run $TR 3 job.py --faulthandler 1.5 --step-sleep 0.5 --steps 8 ;;   # stack dumps every 1.5 s
  run38a-spawn3-anomaly-warnings)         run $SP 3 --anomaly --warnings-always --steps 6 ;;
  run38a-spawn3-cppstack-retry)           run env TORCH_SHOW_CPP_STACKTRACES=1 $SP 3 --retry 2 --steps 6 ;;    # caught RuntimeError, retried
  run38a-single-inductor-output-code)     run env TORCH_LOGS=+inductor,output_code python job.py --launch single --compile inductor --steps 4 ;;
  run38a-single-dynamic)                  run env TORCH_LOGS=dynamic,recompiles python job.py --launch single --compile eager --vary-shapes --steps 6 ;;
  run38a-torchrun3-ckpt-resume)           # unlogged first run writes ckpt.pt (steps 0-3); the logged run resumes at step 4
                                          ( cd "$W" && PATH="$VENV/bin:$PATH" OMP_NUM_THREADS=1 timeout 120 torchrun --master-port $((P+1)) --nproc-per-node 3 job.py --ckpt ckpt.pt --steps 4 ) > "$WROOT/$id/first.log" 2>&1
                                          run env TORCH_DISTRIBUTED_DEBUG=INFO $TR 3 job.py --ckpt ckpt.pt --steps 4 --pylog-debug --warnings-always ;;
  run38a-accelerate3-debug)               run env ACCELERATE_LOG_LEVEL=DEBUG TORCH_DISTRIBUTED_DEBUG=INFO accelerate launch --debug ${AL#accelerate launch } acc_job.py ;;
  run38a-lightning3-debug)                run env TORCH_DISTRIBUTED_DEBUG=INFO MASTER_PORT=$P python lit_job.py ;;
  run38a-single-recompile-limit)          run env TORCH_LOGS=recompiles python job.py --launch single --compile eager --vary-shapes --recompile-limit 3 --steps 8 ;;
  run38a-torchrun3-detail-noddp)          run env TORCH_DISTRIBUTED_DEBUG=DETAIL TORCH_CPP_LOG_LEVEL=INFO $TR 3 job.py --no-ddp --steps 6 ;;
  run38a-spawn4-pylog-debug)              run env TORCH_LOGS=recompiles $SP 4 --pylog-debug --warnings-always --compile eager --vary-shapes --steps 5 ;;
  # (no --faulthandler here: its watchdog dumping stacks while dynamo/AOT compiled segfaulted rank 0 once, exit -11)
  run38a-torchrun3-kitchen-sink)          run env TORCH_LOGS=graph_breaks,recompiles,dynamic TORCH_DISTRIBUTED_DEBUG=INFO TORCH_CPP_LOG_LEVEL=INFO \
                                            TORCH_SHOW_CPP_STACKTRACES=1 LOGLEVEL=DEBUG $TR 3 job.py --step-sleep 0.4 \
                                            --anomaly --warnings-always --retry 3 --compile aot_eager --graph-break --steps 8 ;;
  # ---------------- failures: one rank fails for real, same debug settings ----------------
  run38a-torchrun3-dynamo-debug-raise-r1) run env TORCH_LOGS=+dynamo $TR 3 job.py --compile eager --steps 6 --fault raise --bad-rank 1 --step 3 ;;
  run38a-torchrun3-fullgraph-r2)          run env TORCH_LOGS=graph_breaks,recompiles $TR 3 job.py --compile eager --fullgraph --no-ddp --vary-shapes \
                                            --fault fullgraph --bad-rank 2 --step 3 --steps 6 --pg-timeout 30 ;;
  run38a-spawn3-faulthandler-sigkill-r1)  run $SP 3 --faulthandler 1 --step-sleep 0.4 --steps 8 --fault sigkill --bad-rank 1 --step 4 ;;
  run38a-torchrun4-distdebug-hang-r3)     run env TORCH_DISTRIBUTED_DEBUG=INFO TORCH_CPP_LOG_LEVEL=INFO $TR 4 job.py --steps 6 \
                                            --fault hang --bad-rank 3 --step 2 --pg-timeout 20 --hang-s 90 ;;
  run38a-torchrun3-inductor-cxx-r1)       run env TORCH_LOGS=+inductor $TR 3 job.py --compile inductor --steps 4 --fault cxx --bad-rank 1 ;;
  run38a-spawn3-detail-size-r2)           run env TORCH_DISTRIBUTED_DEBUG=DETAIL TORCH_SHOW_CPP_STACKTRACES=1 $SP 3 --no-ddp --steps 6 \
                                            --fault size --bad-rank 2 --step 2 --pg-timeout 30 ;;
  run38a-lightning3-raise-r2)             run env TORCH_DISTRIBUTED_DEBUG=INFO MASTER_PORT=$P python lit_job.py --fault raise --bad-rank 2 --step 3 --timeout 20 ;;
  *) echo "unknown case $id"; return 1 ;;
  esac
  echo "$id rc=$rc" >> "$META"
  # rewrite machine-specific paths only
  sed -i -e "s#$VENV#/opt/venv#g" -e "s#$W#/home/user/job#g" -e "s#$WROOT/$id#/home/user#g" "$L"   # inductor cache dir -> /home/user/ind
  ps -eo pid,args | grep -F "$W" | grep -v grep && echo "WARNING: leftover processes of $id (kill them by pid)"
  echo "$id rc=$rc lines=$(wc -l < "$L")"
}

for id in ${*:-$ORDER}; do one "$id"; done

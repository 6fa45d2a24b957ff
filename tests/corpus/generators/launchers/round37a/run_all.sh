#!/bin/bash
# Reproduce every round-37a case: LARGE world sizes (8-16 ranks) on one CPU host, gloo, tiny DDP model (train.py),
# so that one culprit rank's output is buried among many ranks' echoes. The faulty rank is never 0 nor the last.
# Launchers: torchrun --tee 3 (console), torchrun --log-dir --redirects 3 (per-rank files, copied to ranks/),
# torch.multiprocessing.spawn, mpirun (Open MPI, env rendezvous, --tag-output), two torchrun agents (--nnodes 2,
# 6 ranks each, both appending to one shared log).  Cases run ONE at a time (2-core machine).
# Usage: run_all.sh [case-id ...]   OUT defaults to /work/helpers/stage37, VENV to /work/helpers/venv37a.
set -u
HERE="$(cd "$(dirname "$0")" && pwd)"
VENV="${VENV:-/work/helpers/venv37a}"
OUT="${OUT:-/work/helpers/stage37}"
META="${META:-/work/helpers/stage37a.meta}"      # commands + exit codes per case (kept out of case folders)
WROOT="${WROOT:-/tmp/w37a}"                      # job dirs, rewritten to /home/user/job
CG=/sys/fs/cgroup/memory                         # cgroup v1 memory controller (hostoom cases)

ORDER="run37a-torchrun16-raise-r9 run37a-torchrun12-sigkill-r7 run37a-torchrun8-segv-r3 run37a-torchrun12-hang-r5
 run37a-torchrun16-size-r11 run37a-torchrun12-size-detail-r7 run37a-torchrun8-exit0-r5 run37a-torchrun12-hostoom-r9
 run37a-torchrun16-healthy-noisy
 run37a-torchrun-logdir12-raise-r7 run37a-torchrun-logdir16-hang-r11 run37a-torchrun-logdir8-sigkill-r5
 run37a-spawn10-sigkill-r3 run37a-spawn8-op-r5 run37a-spawn12-hang-r9 run37a-spawn8-return-r3 run37a-spawn12-raise-r5
 run37a-spawn10-healthy-noisy
 run37a-mpirun12-raise-r5 run37a-mpirun8-segv-r5 run37a-mpirun10-dtype-r7 run37a-mpirun8-hostoom-r3
 run37a-mpirun12-healthy-noisy
 run37a-torchrun2x6-raise-r9 run37a-torchrun2x6-sigkill-r3 run37a-torchrun2x6-healthy-noisy"

one() {
  local id="$1" i=0 P
  for x in $ORDER; do [ "$x" = "$id" ] && P=$((29700 + 7 * i)); i=$((i + 1)); done   # fixed port per case
  local W="$WROOT/$id/job" D="$OUT/$id" L="$OUT/$id/log.txt" rc=0
  rm -rf "$W" "$D"; mkdir -p "$W" "$D"; cp "$HERE/train.py" "$W/"
  local TR="torchrun --master-port $P --tee 3 --nproc-per-node"                    # + N train.py ...
  local TRD="torchrun --master-port $P --log-dir $W/logs --redirects 3 --nproc-per-node"
  local MR="mpirun --allow-run-as-root --oversubscribe --bind-to none --tag-output -x PATH -x OMP_NUM_THREADS
            -x MASTER_ADDR=127.0.0.1 -x MASTER_PORT=$P"
  run() { echo "$id: $*" | tr -s ' \n' ' ' | sed -e "s#$VENV#/opt/venv#g" -e "s#$W#/home/user/job#g" >> "$META.cmds"; echo >> "$META.cmds"
          ( cd "$W" && exec env PATH="$VENV/bin:$PATH" OMP_NUM_THREADS=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=$P \
            timeout -k 5 240 "$@" ) > "$L" 2>&1; rc=$?; }
  # two torchrun agents (node 0 and node 1 of a 2-node job, 6 ranks each, c10d rendezvous), one shared log
  two() { echo "$id: 2 agents: torchrun --nnodes 2 --node-rank {0,1} --nproc-per-node 6 --rdzv-backend c10d --rdzv-endpoint 127.0.0.1:$P --tee 3 train.py $*" >> "$META.cmds"
          : > "$L"
          ( cd "$W" && export PATH="$VENV/bin:$PATH" OMP_NUM_THREADS=1
            for n in 0 1; do
              timeout -k 5 240 torchrun --nnodes 2 --node-rank $n --nproc-per-node 6 --rdzv-backend c10d \
                --rdzv-endpoint 127.0.0.1:$P --rdzv-id job37 --tee 3 train.py "$@" >> "$L" 2>&1 & pids="${pids:-} $!"
            done; r=0; for p in $pids; do wait $p || r=$?; done; exit $r ); rc=$?; }
  local OOMCG="$CG/r37a-$id"
  case "$id" in
  # ---- torchrun, console log (--tee 3)
  run37a-torchrun16-raise-r9)       run $TR 16 train.py --fault raise --bad-rank 9 --step 3 ;;     # IndexError in rank 9's data path
  run37a-torchrun12-sigkill-r7)     run $TR 12 train.py --fault sigkill --bad-rank 7 --step 2 ;;   # rank 7 SIGKILLs itself
  run37a-torchrun8-segv-r3)         run $TR 8 train.py --fault segv --bad-rank 3 --step 2 ;;       # rank 3 reads address 0
  run37a-torchrun12-hang-r5)        run $TR 12 train.py --fault hang --bad-rank 5 --step 2 --pg-timeout 30 --hang-s 150 ;;
  run37a-torchrun16-size-r11)       run $TR 16 train.py --fault size --bad-rank 11 --step 2 --pg-timeout 30 ;;  # 3 vs 2 elements
  run37a-torchrun12-size-detail-r7) run env TORCH_DISTRIBUTED_DEBUG=DETAIL $TR 12 train.py --no-ddp --fault size --bad-rank 7 --step 2 --pg-timeout 30 ;;
  run37a-torchrun8-exit0-r5)        run $TR 8 train.py --fault exit --bad-rank 5 --step 3 --pg-timeout 30 ;;    # sys.exit(0) mid-loop
  run37a-torchrun12-hostoom-r9)     mkdir "$OOMCG"; echo 1G > "$OOMCG/memory.limit_in_bytes"; echo 1G > "$OOMCG/memory.memsw.limit_in_bytes" 2>/dev/null
                                    run env OOM_CGROUP="$OOMCG" $TR 12 train.py --fault hostoom --bad-rank 9 --step 2 ;;
  run37a-torchrun16-healthy-noisy)  run $TR 16 train.py --noisy --bad-rank 6 ;;
  # ---- torchrun, per-rank files (--log-dir --redirects 3); the tree is copied to ranks/
  run37a-torchrun-logdir12-raise-r7)  run $TRD 12 train.py --fault raise --bad-rank 7 --step 2 ;;
  run37a-torchrun-logdir16-hang-r11)  run $TRD 16 train.py --fault hang --bad-rank 11 --step 3 --pg-timeout 30 --hang-s 150 ;;
  run37a-torchrun-logdir8-sigkill-r5) run $TRD 8 train.py --fault sigkill --bad-rank 5 --step 3 ;;
  # ---- torch.multiprocessing.spawn
  run37a-spawn10-sigkill-r3)     run python3 train.py --spawn 10 --fault sigkill --bad-rank 3 --step 2 ;;
  run37a-spawn8-op-r5)           run python3 train.py --spawn 8 --fault op --bad-rank 5 --step 2 --pg-timeout 30 ;;   # broadcast vs all_reduce
  run37a-spawn12-hang-r9)        run python3 train.py --spawn 12 --fault hang --bad-rank 9 --step 2 --pg-timeout 30 --hang-s 150 ;;
  run37a-spawn8-return-r3)       run python3 train.py --spawn 8 --fault exit --exit-return --bad-rank 3 --step 3 --pg-timeout 30 ;;
  run37a-spawn12-raise-r5)       run python3 train.py --spawn 12 --fault raise --bad-rank 5 --step 4 ;;
  run37a-spawn10-healthy-noisy)  run python3 train.py --spawn 10 --noisy --bad-rank 4 ;;
  # ---- mpirun (Open MPI), env rendezvous
  run37a-mpirun12-raise-r5)      run $MR -np 12 python3 train.py --fault raise --bad-rank 5 --step 3 ;;
  run37a-mpirun8-segv-r5)        run $MR -np 8 python3 train.py --fault segv --bad-rank 5 --step 3 ;;
  run37a-mpirun10-dtype-r7)      run $MR -np 10 python3 train.py --fault dtype --bad-rank 7 --step 2 --pg-timeout 30 ;;  # float64 vs float32
  run37a-mpirun8-hostoom-r3)     mkdir "$OOMCG"; echo 1G > "$OOMCG/memory.limit_in_bytes"; echo 1G > "$OOMCG/memory.memsw.limit_in_bytes" 2>/dev/null
                                 run $MR -x OOM_CGROUP="$OOMCG" -np 8 python3 train.py --fault hostoom --bad-rank 3 --step 2 ;;
  run37a-mpirun12-healthy-noisy) run $MR -np 12 python3 train.py --noisy --bad-rank 7 ;;
  # ---- two torchrun agents, 2 x 6 ranks (global ranks 0-11)
  run37a-torchrun2x6-raise-r9)   two --fault raise --bad-rank 9 --step 3 ;;
  run37a-torchrun2x6-sigkill-r3) two --fault sigkill --bad-rank 3 --step 2 ;;
  run37a-torchrun2x6-healthy-noisy) two --noisy --bad-rank 8 ;;
  *) echo "unknown case $id"; return 1 ;;
  esac
  echo "$id rc=$rc" >> "$META"
  # leftovers (ranks): any process whose cwd is the job dir, killed by pid after 10 s
  local k=0 left
  while :; do
    left=$(for d in /proc/[0-9]*; do case "$(readlink "$d/cwd" 2>/dev/null)" in "$W"|"$W"/*) echo "${d#/proc/}";; esac; done)
    [ -z "$left" ] && break
    [ $k -ge 10 ] && { echo "$id killing leftovers: $left" >> "$META"; kill -9 $left 2>/dev/null; sleep 1; break; }
    sleep 1; k=$((k + 1))
  done
  if [ -d "$OOMCG" ]; then echo "$id cgroup $(basename "$OOMCG"): oom_control: $(tr '\n' ' ' < "$OOMCG/memory.oom_control") failcnt=$(cat "$OOMCG/memory.failcnt")" >> "$META"; rmdir "$OOMCG"; fi
  if [ -d "$W/logs" ]; then cp -r "$W/logs" "$D/ranks"; find "$D/ranks" -type f -exec sed -i -e "s#$VENV#/opt/venv#g" -e "s#$W#/home/user/job#g" {} +; fi
  sed -i -e "s#$VENV#/opt/venv#g" -e "s#$W#/home/user/job#g" "$L"
  echo "$id rc=$rc"
  rm -rf "$WROOT/$id"
}
CASES=("$@"); [ ${#CASES[@]} -eq 0 ] && CASES=($ORDER)
for c in "${CASES[@]}"; do one "$c"; done     # one job at a time

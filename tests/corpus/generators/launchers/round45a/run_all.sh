#!/bin/bash
# Reproduce every round-45a case: failures in processes and threads NESTED inside one rank (3-4 ranks, gloo, CPU,
# tiny DDP model, train.py).  The bad rank's own helper fails: multiprocessing.Pool task, ProcessPoolExecutor worker
# (SIGKILL / os._exit), ThreadPoolExecutor future, background prefetch thread, subprocess.run(check=True) of
# prep_shard.py (non-zero exit / OOM-killed in a memory cgroup), DataLoader worker (own Pool / OOM-killed).
# 3 healthy cases: the helper fails once and the job handles it (retry / rebuild).
# Launchers: torchrun --tee 3, torchrun --log-dir --redirects 3 (tree copied to ranks/), mp.spawn, mpirun --tag-output.
# Usage: run_all.sh [case-id ...]   OUT defaults to /work/helpers/stage45, VENV to /work/helpers/venv45a.  One at a time.
set -u
HERE="$(cd "$(dirname "$0")" && pwd)"
VENV="${VENV:-/work/helpers/venv45a}"
OUT="${OUT:-/work/helpers/stage45}"
META="${META:-/work/helpers/stage45a.meta}"      # commands + exit codes per case (kept out of case folders)
WROOT="${WROOT:-/tmp/w45a}"                      # job dirs, rewritten to /home/user/job
CG=/sys/fs/cgroup/memory                         # cgroup v1 memory controller (oom cases)

ORDER="run45a-torchrun-pool-raise-r2 run45a-torchrun-ppe-sigkill-r1 run45a-torchrun-prefetch-hang-r2
 run45a-torchrun-subproc-fail-r3 run45a-torchrun-dl-pool-r1 run45a-torchrun-healthy-pool-retry
 run45a-torchrun-logdir-tpe-atexit-r2 run45a-torchrun-logdir-subproc-oom-r1 run45a-torchrun-logdir-prefetch-hang-r3
 run45a-spawn-ppe-exit-r2 run45a-spawn-pool-raise-r1 run45a-spawn-dl-oom-r2 run45a-spawn-prefetch-hang-r1
 run45a-spawn-healthy-ppe-rebuild
 run45a-mpirun-tpe-raise-r3 run45a-mpirun-subproc-fail-r1 run45a-mpirun-ppe-sigkill-r2 run45a-mpirun-healthy-subproc-retry"

one() {
  local id="$1" i=0 P
  for x in $ORDER; do [ "$x" = "$id" ] && P=$((29400 + 7 * i)); i=$((i + 1)); done   # fixed port per case
  local W="$WROOT/$id/job" D="$OUT/$id" L="$OUT/$id/log.txt" rc=0
  rm -rf "$W" "$D"; mkdir -p "$W" "$D"; cp "$HERE/train.py" "$HERE/prep_shard.py" "$W/"
  local TR="torchrun --master-port $P --tee 3 --nproc-per-node"                    # + N train.py ...
  local TRD="torchrun --master-port $P --log-dir $W/logs --redirects 3 --nproc-per-node"
  local MR="mpirun --allow-run-as-root --oversubscribe --bind-to none --tag-output -x PATH -x OMP_NUM_THREADS
            -x MASTER_ADDR=127.0.0.1 -x MASTER_PORT=$P"
  run() { echo "$id: $*" | tr -s ' \n' ' ' | sed -e "s#$VENV#/opt/venv#g" -e "s#$W#/home/user/job#g" >> "$META.cmds"; echo >> "$META.cmds"
          ( cd "$W" && exec env PATH="$VENV/bin:$PATH" OMP_NUM_THREADS=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=$P \
            timeout -k 5 180 "$@" ) > "$L" 2>&1; rc=$?; }
  local OOMCG="$CG/r45a-$id"
  mkcg() { mkdir "$OOMCG"; echo 1G > "$OOMCG/memory.limit_in_bytes"; echo 1G > "$OOMCG/memory.memsw.limit_in_bytes" 2>/dev/null; }
  case "$id" in
  # ---- torchrun, console log (--tee 3)
  run45a-torchrun-pool-raise-r2)   run $TR 4 train.py --helper pool --fault pool-raise --bad-rank 2 --step 3 ;;    # Pool task KeyError
  run45a-torchrun-ppe-sigkill-r1)  run $TR 3 train.py --helper ppe --fault ppe-sigkill --bad-rank 1 --step 3 ;;   # executor worker SIGKILLed
  run45a-torchrun-prefetch-hang-r2) run $TR 3 train.py --helper prefetch --fault prefetch-hang --bad-rank 2 --step 3 --pg-timeout 20 ;;
  run45a-torchrun-subproc-fail-r3) run $TR 4 train.py --helper subproc --fault subproc-fail --bad-rank 3 --step 3 ;;  # tool exit 2
  run45a-torchrun-dl-pool-r1)      run $TR 3 train.py --helper dl-pool --fault dl-pool --bad-rank 1 ;;            # Pool inside DataLoader worker
  run45a-torchrun-healthy-pool-retry) run $TR 4 train.py --helper pool --healthy pool-retry --bad-rank 1 --step 3 ;;
  # ---- torchrun, per-rank files (--log-dir --redirects 3); the tree is copied to ranks/
  run45a-torchrun-logdir-tpe-atexit-r2) run $TRD 4 train.py --helper tpe --fault tpe-raise --atexit --bad-rank 2 --step 3 ;;
  run45a-torchrun-logdir-subproc-oom-r1) mkcg; run env OOM_CGROUP="$OOMCG" $TRD 3 train.py --helper subproc --fault subproc-oom --bad-rank 1 --step 3 ;;
  run45a-torchrun-logdir-prefetch-hang-r3) run $TRD 4 train.py --helper prefetch --fault prefetch-hang --bad-rank 3 --step 6 --pg-timeout 20 ;;
  # ---- torch.multiprocessing.spawn
  run45a-spawn-ppe-exit-r2)        run python3 train.py --spawn 3 --helper ppe --fault ppe-exit --bad-rank 2 --step 3 ;;
  run45a-spawn-pool-raise-r1)      run python3 train.py --spawn 4 --helper pool --fault pool-raise --bad-rank 1 --step 6 --atexit ;;
  run45a-spawn-dl-oom-r2)          mkcg; run env OOM_CGROUP="$OOMCG" python3 train.py --spawn 3 --helper dl-oom --fault dl-oom --bad-rank 2 ;;
  run45a-spawn-prefetch-hang-r1)   run python3 train.py --spawn 3 --helper prefetch --fault prefetch-hang --bad-rank 1 --step 3 --pg-timeout 20 ;;
  run45a-spawn-healthy-ppe-rebuild) run python3 train.py --spawn 3 --helper ppe --healthy ppe-rebuild --bad-rank 2 --step 3 ;;
  # ---- mpirun (Open MPI), env rendezvous
  run45a-mpirun-tpe-raise-r3)      run $MR -np 4 python3 train.py --helper tpe --fault tpe-raise --bad-rank 3 --step 6 ;;
  run45a-mpirun-subproc-fail-r1)   run $MR -np 3 python3 train.py --helper subproc --fault subproc-fail --bad-rank 1 --step 3 ;;
  run45a-mpirun-ppe-sigkill-r2)    run $MR -np 4 python3 train.py --helper ppe --fault ppe-sigkill --bad-rank 2 --step 6 ;;
  run45a-mpirun-healthy-subproc-retry) run $MR -np 4 python3 train.py --helper subproc --healthy subproc-retry --bad-rank 2 --step 3 ;;
  *) echo "unknown case $id"; return 1 ;;
  esac
  echo "$id rc=$rc" >> "$META"
  # leftovers (ranks and their helpers): any process whose cwd is the job dir, killed by pid after 10 s
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

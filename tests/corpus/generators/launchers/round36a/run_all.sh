#!/bin/bash
# Reproduce every round-36a case: ONE rank's environment differs from the others (as when one node of a cluster is
# set up differently). Launchers: torchrun, torch.multiprocessing.spawn, mpirun (Open MPI). CPU, gloo, tiny DDP
# model (train.py). How the odd rank gets its own environment:
#   torchrun: `torchrun --no-python ... ./node_env.sh python3 train.py`; node_env.sh evals ODD_SETUP in rank ODD_RANK
#   mpirun:   MPMD app contexts with their own -x VAR=..., or the same node_env.sh wrapper
#   mp.spawn: train.py's apply_node_profile() in rank ODD_RANK at start-up (ODD_SET: env changes, setrlimit)
# Read-only checkpoint dirs are ro bind mounts, full ones a 1 MiB tmpfs (needs root); both unmounted after the case.
# Usage: run_all.sh [case-id ...]   OUT defaults to /work/helpers/stage36, VENV to /work/helpers/venv36a.
set -u
export HERE="$(cd "$(dirname "$0")" && pwd)"
export VENV="${VENV:-/work/helpers/venv36a}"
export OUT="${OUT:-/work/helpers/stage36}"
export META="${META:-/work/helpers/stage36a.meta}"   # commands + exit codes per case (kept out of case folders)
export WROOT="${WROOT:-/tmp/w36a}"                   # job dirs, rewritten to /home/user/job in log.txt

ORDER="run36a-torchrun-datadir-missing run36a-torchrun-ckpt-readonly run36a-torchrun-ckpt-diskfull
 run36a-torchrun-no-local-rank run36a-torchrun-omp-threads-list run36a-torchrun-stale-helper-module
 run36a-torchrun-system-python run36a-torchrun-ulimit-v run36a-torchrun-locale-c run36a-torchrun-ulimit-n
 run36a-torchrun-wrong-master-port run36a-torchrun-healthy-omp-warn
 run36a-spawn-datadir-missing run36a-spawn-ulimit-v run36a-spawn-ckpt-diskfull run36a-spawn-ckpt-readonly
 run36a-spawn-healthy-ulimit-n
 run36a-mpirun-stale-helper-module run36a-mpirun-datadir-missing run36a-mpirun-ulimit-v run36a-mpirun-locale-c
 run36a-mpirun-healthy-locale-warn"

one() {
  local id="${1:-}" i=0 P; [ -n "$id" ] || return 0
  for x in $ORDER; do [ "$x" = "$id" ] && P=$((29800 + 10 * i)); i=$((i + 1)); done   # fixed port per case
  local W="$WROOT/$id/job" D="$OUT/$id"
  rm -rf "$W" "$D"; mkdir -p "$W/data" "$D"
  cp "$HERE/train.py" "$HERE/node_env.sh" "$W/"; mkdir -p "$W/lib"; cp "$HERE/jobutils.py" "$W/lib/"   # helper on PYTHONPATH
  cp -r "$HERE/old_jobutils" "$W/"
  echo '{"name": "tiny-cls", "classes": 4}' > "$W/data/config.json"
  printf '<pad>\n<unk>\ncafé\nnaïve\nZürich\n東京\n' > "$W/data/vocab.txt"    # UTF-8 vocab
  mkdir -p "$W/ckpt_ro_src" "$W/ckpt_ro" "$W/ckpt_small"
  mount -o bind,ro "$W/ckpt_ro_src" "$W/ckpt_ro"              # a read-only checkpoint dir
  mount -t tmpfs -o size=1m tmpfs "$W/ckpt_small"              # a 1 MiB (full after one checkpoint) dir
  local L="$D/log.txt" rc=0
  local TR="$VENV/bin/torchrun --nproc-per-node 4 --master-port $P --no-python ./node_env.sh python3 train.py"
  local MR="mpirun --allow-run-as-root --oversubscribe --bind-to none"
  local MX="-x PATH -x PYTHONPATH -x MASTER_ADDR=127.0.0.1 -x MASTER_PORT=$P"
  local SP="python3 train.py --spawn 3"
  run() { echo "$id: $*" | sed -e "s#$VENV#/opt/venv#g" -e "s#$W#/home/user/job#g" >> "$META.cmds"
          ( cd "$W" && exec env PATH="$VENV/bin:$PATH" PYTHONPATH="$W/lib" MASTER_ADDR=127.0.0.1 MASTER_PORT=$P \
            timeout -k 5 150 "$@" ) > "$L" 2>&1; rc=$?; }
  case "$id" in
  # ---- torchrun, 4 ranks; node_env.sh applies ODD_SETUP in rank ODD_RANK only
  run36a-torchrun-datadir-missing)     # rank 2's node has no dataset mount: DATA_DIR points to a missing path
    run env ODD_RANK=2 ODD_SETUP='export DATA_DIR=/mnt/datasets/tiny-cls' $TR ;;
  run36a-torchrun-ckpt-readonly)       # rank 1's checkpoint dir is a read-only mount
    run env ODD_RANK=1 ODD_SETUP="export CKPT_DIR=$W/ckpt_ro" $TR ;;
  run36a-torchrun-ckpt-diskfull)       # rank 3's checkpoint dir is a 1 MiB tmpfs: full at the first save (step 3)
    run env ODD_RANK=3 ODD_SETUP="export CKPT_DIR=$W/ckpt_small" $TR ;;
  run36a-torchrun-no-local-rank)       # rank 2's wrapper drops LOCAL_RANK
    run env ODD_RANK=2 ODD_SETUP='unset LOCAL_RANK' $TR ;;
  run36a-torchrun-omp-threads-list)    # rank 1's node profile sets OMP_NUM_THREADS=4,2 (a nested list): int() fails
    run env ODD_RANK=1 ODD_SETUP='export OMP_NUM_THREADS=4,2' $TR ;;
  run36a-torchrun-stale-helper-module) # rank 3's PYTHONPATH puts an OLD copy of jobutils first (no load_vocab)
    run env ODD_RANK=3 ODD_SETUP="export PYTHONPATH=$W/old_jobutils:\$PYTHONPATH" $TR ;;
  run36a-torchrun-system-python)       # rank 1's PATH finds the system python3 (no torch installed)
    run env ODD_RANK=1 ODD_SETUP='export PATH=/usr/bin:$PATH' $TR ;;
  run36a-torchrun-ulimit-v)            # rank 2: ulimit -v 1.5 GB; every rank preloads 1 GiB of samples
    run env ODD_RANK=2 ODD_SETUP='ulimit -v 1500000' $TR --preload-mb 1024 ;;
  run36a-torchrun-locale-c)            # rank 3's node: LC_ALL=C and PYTHONUTF8=0 -> open() decodes the vocab as ASCII
    run env ODD_RANK=3 ODD_SETUP='export LC_ALL=C PYTHONUTF8=0' $TR ;;
  run36a-torchrun-ulimit-n)            # rank 1: ulimit -n 10 (open files)
    run env ODD_RANK=1 ODD_SETUP='ulimit -n 10' $TR ;;
  run36a-torchrun-wrong-master-port)   # rank 3's env has another MASTER_PORT (nobody listens there); pg timeout 20 s
    run env ODD_RANK=3 ODD_SETUP="export MASTER_PORT=$((P + 5))" $TR --pg-timeout 20 ;;
  run36a-torchrun-healthy-omp-warn)    # healthy; rank 2 has OMP_PROC_BIND=spread-out (invalid: libgomp warns)
    run env ODD_RANK=2 ODD_SETUP='export OMP_PROC_BIND=spread-out' $TR ;;
  # ---- mp.spawn, 3 ranks; train.py applies ODD_SET in rank ODD_RANK at start-up
  run36a-spawn-datadir-missing)        # rank 1: DATA_DIR points to a missing path
    run env ODD_RANK=1 ODD_SET='DATA_DIR=/mnt/datasets/tiny-cls' $SP ;;
  run36a-spawn-ulimit-v)               # rank 2: RLIMIT_AS 1500 MiB; every rank preloads 1 GiB
    run env ODD_RANK=2 ODD_SET='as_mb=1500' $SP --preload-mb 1024 ;;
  run36a-spawn-ckpt-diskfull)          # rank 1's checkpoint dir is a 1 MiB tmpfs
    run env ODD_RANK=1 ODD_SET="CKPT_DIR=$W/ckpt_small" $SP ;;
  run36a-spawn-ckpt-readonly)          # rank 2's checkpoint dir is a read-only mount
    run env ODD_RANK=2 ODD_SET="CKPT_DIR=$W/ckpt_ro" $SP ;;
  run36a-spawn-healthy-ulimit-n)       # healthy: rank 2 runs with RLIMIT_NOFILE 16, which is enough for this job
    run env ODD_RANK=2 ODD_SET='nofile=16' $SP ;;
  # ---- mpirun, 4 ranks; MPMD app contexts (ranks 0-1 | 2 | 3) or node_env.sh
  run36a-mpirun-stale-helper-module)   # rank 2's app context: PYTHONPATH with the old jobutils first
    run $MR $MX -np 2 python3 train.py : -np 1 $MX -x PYTHONPATH="$W/old_jobutils:$W/lib" python3 train.py : -np 1 $MX python3 train.py ;;
  run36a-mpirun-datadir-missing)       # rank 3's app context: DATA_DIR on a missing mount
    run $MR $MX -np 3 python3 train.py : -np 1 $MX -x DATA_DIR=/mnt/datasets/tiny-cls python3 train.py ;;
  run36a-mpirun-ulimit-v)              # rank 1: ulimit -v 1.5 GB via node_env.sh; every rank preloads 1 GiB
    run env ODD_RANK=1 ODD_SETUP='ulimit -v 1500000' $MR $MX -x ODD_RANK -x ODD_SETUP -np 4 ./node_env.sh python3 train.py --preload-mb 1024 ;;
  run36a-mpirun-locale-c)              # rank 1's app context: LC_ALL=C PYTHONUTF8=0
    run $MR $MX -np 1 python3 train.py : -np 1 $MX -x LC_ALL=C -x PYTHONUTF8=0 python3 train.py : -np 2 $MX python3 train.py ;;
  run36a-mpirun-healthy-locale-warn)   # healthy: rank 2's wrapper sets LC_ALL=de_DE.UTF-8 (not installed: bash warns)
    run env ODD_RANK=2 ODD_SETUP='export LC_ALL=de_DE.UTF-8' $MR $MX -x ODD_RANK -x ODD_SETUP -np 4 ./node_env.sh python3 train.py ;;
  esac
  echo "$id rc=$rc" >> "$META"
  # leftovers (ranks, DataLoader workers): any process whose cwd is the job dir, killed by pid after 10 s
  local k=0 left
  while :; do
    left=$(for d in /proc/[0-9]*; do case "$(readlink "$d/cwd" 2>/dev/null)" in "$W"|"$W"/*) echo "${d#/proc/}";; esac; done)
    [ -z "$left" ] && break
    [ $k -ge 10 ] && { echo "$id killing leftovers: $left" >> "$META"; kill -9 $left 2>/dev/null; sleep 1; break; }
    sleep 1; k=$((k + 1))
  done
  umount "$W/ckpt_ro" "$W/ckpt_small"
  sed -i -e "s#$VENV#/opt/venv#g" -e "s#$W#/home/user/job#g" "$L"
  echo "$id rc=$rc"
  rm -rf "$WROOT/$id"
}
export -f one
CASES=("$@"); [ ${#CASES[@]} -eq 0 ] && CASES=($ORDER)
export ORDER
printf '%s\n' "${CASES[@]}" | xargs -P 2 -I{} bash -c 'one "$1"' _ {}

#!/bin/bash
# Reproduces every round38c case: run_all.sh [OUTDIR] [case-id ...]
# Env: VENV (python venv with torch==2.13.0 CPU + submitit), WORK (scratch job dir, rewritten to
# /home/user/job in the logs). Needs root for the hostoom cases (cgroup v1 memory controller).
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${1:-/tmp/r38c/out}; shift
VENV=${VENV:-/work/helpers/venv38c}; WORK=${WORK:-/tmp/r38c/work}
CG=/sys/fs/cgroup/memory/r38c_oom
export PATH=$VENV/bin:$PATH
PORT_BASE=29610

# one ID LAUNCHER NPROC [VAR=value ...]   LAUNCHER: submitit | bashbg | bashtee
one() {
  local id=$1 launcher=$2 n=$3; shift 3
  if [[ -n "$ONLY" && " $ONLY " != *" $id "* ]]; then return; fi
  rm -rf "$WORK"; mkdir -p "$WORK"
  cp "$HERE"/train38c.py "$HERE"/submitit_driver.py "$HERE"/bash_bg.sh "$HERE"/bash_tee.sh "$WORK"/
  PORT_BASE=$((PORT_BASE + 1))
  if [[ " $* " == *" FAULT=hostoom "* ]]; then  # memory cgroup for the one rank that joins it
    mkdir -p $CG; echo 0 > $CG/memory.swappiness 2>/dev/null
    echo $((1536 * 1024 * 1024)) > $CG/memory.limit_in_bytes
    [[ -e $CG/memory.memsw.limit_in_bytes ]] && echo $((1536 * 1024 * 1024)) > $CG/memory.memsw.limit_in_bytes
  fi
  echo "== $id ($launcher, $n ranks, $*)"
  setsid bash -c '
    cd "$1"; launcher=$2; n=$3; shift 3; export PORT='$PORT_BASE' OOM_CGROUP='$CG' "$@"
    case $launcher in
      submitit) timeout -k 10 300 python -u submitit_driver.py "$n" "${MODE:-jobenv}" ;;
      bashbg)   timeout -k 10 300 ./bash_bg.sh "$n" ;;
      bashtee)  timeout -k 10 300 ./bash_tee.sh "$n" ;;
    esac > log.txt 2>&1' _ "$WORK" "$launcher" "$n" "$@" &
  local pg=$!
  wait $pg
  kill -KILL -- -$pg 2>/dev/null   # no orphan ranks left behind (this case's process group only)
  [[ -d $CG ]] && { sleep 1; rmdir $CG; }
  local d="$OUT/$id"; rm -rf "$d"; mkdir -p "$d"
  cp "$WORK/log.txt" "$d/log.txt"
  case $launcher in
    submitit) mkdir -p "$d/ranks"; cp "$WORK"/submitit_logs/*/*_log.* "$d/ranks/" ;;
    bashbg)   mkdir -p "$d/ranks"; cp "$WORK"/logs/rank*.log "$d/ranks/" ;;
  esac
  find "$d" -type f -exec sed -i -e "s#$VENV#/opt/venv#g" -e "s#$WORK#/home/user/job#g" {} +
}

ONLY="$*"
# --- submitit LocalExecutor, JobEnvironment + tcp:// rendezvous ---
one run38c-submitit3-healthy            submitit 3
one run38c-submitit3-raise-r2           submitit 3 FAULT=raise FAIL_RANK=2 FAIL_STEP=3
one run38c-submitit4-sigkill-r1         submitit 4 FAULT=sigkill FAIL_RANK=1 FAIL_STEP=3
one run38c-submitit3-hang-r2            submitit 3 FAULT=hang FAIL_RANK=2 FAIL_STEP=3 PG_TIMEOUT=15 HANG_S=40
one run38c-submitit3-hostoom-r1         submitit 3 FAULT=hostoom FAIL_RANK=1 FAIL_STEP=2
# --- submitit LocalExecutor, helpers.TorchDistributedEnvironment + env:// ---
one run38c-submitit-tde4-healthy        submitit 4 MODE=tde
one run38c-submitit-tde4-raise-r3       submitit 4 MODE=tde FAULT=raise FAIL_RANK=3 FAIL_STEP=4
# --- bash '&' + wait, logs/rank$N.log ---
one run38c-bashbg3-healthy              bashbg 3
one run38c-bashbg3-raise-r1             bashbg 3 FAULT=raise FAIL_RANK=1 FAIL_STEP=2
one run38c-bashbg4-sigkill-r2           bashbg 4 FAULT=sigkill FAIL_RANK=2 FAIL_STEP=3
one run38c-bashbg3-hang-r1              bashbg 3 FAULT=hang FAIL_RANK=1 FAIL_STEP=4 PG_TIMEOUT=15 HANG_S=40
one run38c-bashbg3-hostoom-r2           bashbg 3 FAULT=hostoom FAIL_RANK=2 FAIL_STEP=2
# --- bash '&' + sed "s/^/[N] /" | tee train.log ---
one run38c-bashtee4-healthy             bashtee 4
one run38c-bashtee3-raise-r2            bashtee 3 FAULT=raise FAIL_RANK=2 FAIL_STEP=4
one run38c-bashtee3-sigkill-r1          bashtee 3 FAULT=sigkill FAIL_RANK=1 FAIL_STEP=2
one run38c-bashtee3-hang-r2             bashtee 3 FAULT=hang FAIL_RANK=2 FAIL_STEP=3 PG_TIMEOUT=15 HANG_S=40
one run38c-bashtee4-hostoom-r3          bashtee 4 FAULT=hostoom FAIL_RANK=3 FAIL_STEP=3

#!/usr/bin/env bash
# Reproduces every run-lightning-* and run-accelerate-* case of the blind pool (CPU, gloo, torch 2.13.0).
#
#   bash run_all.sh                 # all cases
#   bash run_all.sh run-lightning-hang run-accelerate-raise   # only these
#
# Needs a venv with torch==2.13.0 (CPU), lightning, accelerate (VENV=..., default /work/venv-fw) and root
# for the hostoom cases (cgroup v1 memory controller at /sys/fs/cgroup/memory).
# Each case: the launcher's combined stdout+stderr -> $POOL/<id>/log.txt, then the venv path is rewritten
# to /opt/venv and this directory to /home/user/job. label.json files are written by hand, not here.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
VENV=${VENV:-/work/venv-fw}
POOL=${POOL:-/work/main/tests/blind/pool}
PY=$VENV/bin/python
ACC=$VENV/bin/accelerate
CG_ROOT=/sys/fs/cgroup/memory
export OMP_NUM_THREADS=1 PYTHONUNBUFFERED=1

# kill (by pid) whatever this case left behind: processes carrying FW_CASE=<id> in their environment
reap() {
  local id=$1 pid
  for pid in $(grep -l -s -z -x -e "FW_CASE=$id" /proc/[0-9]*/environ | cut -d/ -f3); do
    [ "$pid" != "$$" ] && kill -9 "$pid" 2>/dev/null && echo "  reaped leftover pid $pid"
  done
}

make_cgroup() {  # $1 = cgroup name; 1 GiB RAM, no swap
  mkdir -p "$CG_ROOT/$1"
  echo $((1 << 30)) > "$CG_ROOT/$1/memory.limit_in_bytes"
  [ -f "$CG_ROOT/$1/memory.memsw.limit_in_bytes" ] && echo $((1 << 30)) > "$CG_ROOT/$1/memory.memsw.limit_in_bytes"
  echo "$CG_ROOT/$1"
}

drop_cgroup() {
  local cg=$CG_ROOT/$1
  [ -d "$cg" ] || return 0
  echo "  cgroup $1: oom_control: $(tr '\n' ' ' < "$cg/memory.oom_control") failcnt=$(cat "$cg/memory.failcnt")"
  for p in $(cat "$cg/cgroup.procs"); do echo "$p" > "$CG_ROOT/cgroup.procs"; done
  rmdir "$cg"
}

# run_case <id> <timeout_s> <env assignments...> -- <command...>
run_case() {
  local id=$1 to=$2; shift 2
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  if [ -n "$ONLY" ] && [[ " $ONLY " != *" $id "* ]]; then return; fi
  local dir=$POOL/$id
  mkdir -p "$dir"
  echo "== $id: ${envs[*]} $*"
  ( cd "$HERE" && env FW_CASE="$id" "${envs[@]}" timeout -k 15 "$to" "$@" ) > "$dir/log.txt" 2>&1
  echo "  rc=$?"
  sleep 2; reap "$id"
  sed -i -e "s#$VENV#/opt/venv#g" -e "s#$HERE#/home/user/job#g" "$dir/log.txt"
}

ONLY="${*:-}"
PL="$PY pl_job.py --devices 3"
# accelerate launch: multi-process CPU goes through its torchrun path (--multi_gpu); the script uses
# Accelerator(cpu=True), so the state is MULTI_CPU with the gloo backend.
AL="$ACC launch --multi_gpu --num_processes 3 --num_machines 1 --mixed_precision no --dynamo_backend no --num_cpu_threads_per_process 1"

# ---------------- PyTorch Lightning (python pl_job.py; strategy ddp / ddp_spawn) ----------------
run_case run-lightning-healthy     120 SCENARIO=none MASTER_PORT=29810 -- $PL
run_case run-lightning-raise       180 SCENARIO=raise MASTER_PORT=29811 -- $PL
run_case run-lightning-sigkill     180 SCENARIO=sigkill SLOW_LOAD_S=12 MASTER_PORT=29812 -- $PL
run_case run-lightning-sigkill-spawn 180 SCENARIO=sigkill MASTER_PORT=29813 -- $PL --strategy ddp_spawn
run_case run-lightning-hang        240 SCENARIO=hang MASTER_PORT=29814 -- $PL --timeout 20
run_case run-lightning-mismatch    180 SCENARIO=mismatch MASTER_PORT=29815 -- $PL
run_case run-lightning-mismatch-detail 180 SCENARIO=mismatch_detail TORCH_DISTRIBUTED_DEBUG=DETAIL MASTER_PORT=29816 -- $PL
run_case run-lightning-compile     420 SCENARIO=compile MASTER_PORT=29817 -- $PL --compile
if [ -z "$ONLY" ] || [[ " $ONLY " == *" run-lightning-hostoom "* ]]; then
  cg=$(make_cgroup fw_oom_lightning)
  run_case run-lightning-hostoom   240 SCENARIO=hostoom SLOW_LOAD_S=12 OOM_CGROUP=$cg MASTER_PORT=29818 -- $PL
  drop_cgroup fw_oom_lightning
fi

# ---------------- Hugging Face Accelerate (accelerate launch acc_job.py) ----------------
run_case run-accelerate-healthy    120 SCENARIO=none -- $AL --main_process_port 29830 acc_job.py
run_case run-accelerate-raise      180 SCENARIO=raise -- $AL --main_process_port 29831 acc_job.py
run_case run-accelerate-sigkill    180 SCENARIO=sigkill -- $AL --main_process_port 29832 acc_job.py
run_case run-accelerate-hang       240 SCENARIO=hang -- $AL --main_process_port 29834 acc_job.py --timeout 20
run_case run-accelerate-mismatch   180 SCENARIO=mismatch -- $AL --main_process_port 29835 acc_job.py
run_case run-accelerate-mismatch-detail 180 SCENARIO=mismatch_detail TORCH_DISTRIBUTED_DEBUG=DETAIL -- $AL --main_process_port 29836 acc_job.py
# torch.compile(model) before accelerator.prepare (see acc_job.py for why not --dynamo_backend inductor)
run_case run-accelerate-compile    420 SCENARIO=compile -- $AL --main_process_port 29837 acc_job.py --compile
if [ -z "$ONLY" ] || [[ " $ONLY " == *" run-accelerate-hostoom "* ]]; then
  cg=$(make_cgroup fw_oom_accelerate)
  run_case run-accelerate-hostoom  240 SCENARIO=hostoom OOM_CGROUP=$cg -- $AL --main_process_port 29838 acc_job.py
  drop_cgroup fw_oom_accelerate
fi
